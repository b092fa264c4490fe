"""What one run of the lexicographic engine carries from stage to stage: the goals' tolerances
(`Tolerance`), the progress a caller with a deadline reads (`Progress`), and the run itself (`Run`:
the problem, its goals, the back-end, the start and the clock), which the model choice
(`optimizer.engine.models`), the stage loop (`optimizer.engine.stages`) and the relaxed pass
(`optimizer.engine.relaxed`) take instead of long parameter lists.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from optimizer.backends import Backend, Session, WorkLimited
from optimizer.deadline import WorkBudget
from optimizer.errors import GoalError
from optimizer.formulation import Formulation, LinearModel
from optimizer.goal import Assignment, Goal
from optimizer.model.problem import Problem
from optimizer.results import SequenceResult, Stage


@dataclass(frozen=True)
class Tolerance:
    """How far a later stage may let a frozen goal rise above its optimum."""

    absolute: int = 0
    relative: float = 0.0

    def limit(self, optimum: int) -> int:
        return optimum + max(self.absolute, math.floor(abs(optimum) * self.relative))

    @classmethod
    def parse(cls, text: str) -> Tolerance:
        text = text.strip()
        try:
            if text.endswith("%"):
                return cls(relative=float(text[:-1]) / 100)
            return cls(absolute=int(text))
        except ValueError:
            raise GoalError(f"tolerance {text!r}: expected a whole number or a percentage like 2%") from None


NO_TOLERANCE = Tolerance()


@dataclass
class Progress:
    """How far a sequence has got, kept up to date as it runs, for a caller that stops it at a
    deadline (`optimizer.engine.policy`): the integer model in use, its latest solution and the
    stages done. `result()` turns that into the sequence's result, as if it had ended there."""

    formulation: Formulation | None = None
    solution: np.ndarray | None = None
    stages: list[Stage] = field(default_factory=list)
    listener: Callable[[Progress], None] | None = None
    """Told of every new point (`changed`): a forked engine hands it to its parent at once."""

    def changed(self) -> None:
        """A stage has a new point (`solution`, with `stages` up to it)."""
        if self.listener is not None and self.solution is not None:
            self.listener(self)

    def result(self, note: str) -> SequenceResult | None:
        """The assignment of the latest solution and the stages that led to it, or None when
        no stage has found one."""
        if self.solution is None or self.formulation is None:
            return None
        try:
            assignment = self.formulation.decode(self.solution)
        except Exception:  # noqa: BLE001 - a compressed model's counts that cannot be spread
            return None
        return SequenceResult(assignment, list(self.stages), [note])


Hint = Callable[[], Assignment | None]
"""A full assignment to start from, computed only when a back-end uses one."""


@dataclass
class Run:
    """One sequence on one linear back-end: every model tried for it shares the goals, the start,
    the progress and one clock."""

    problem: Problem
    """The normalised problem."""
    goals: list[Goal]
    """Priority order."""
    backend: Backend
    """The linear back-end the stages run on."""
    tolerances: dict[str, Tolerance]
    hint: Hint | None
    time_limit: float | None
    """Seconds for the whole sequence, from `started` (None: no limit)."""
    started: float = field(default_factory=time.perf_counter)
    progress: Progress | None = None
    work: WorkBudget | None = None
    """Deterministic work for the whole sequence, shared by the sessions that take it (CP-SAT's,
    `WorkLimited`); None: only the time limit."""

    def start(self, model: LinearModel) -> Session:
        """A session of the run's back-end on `model`, sharing the run's work budget."""
        session = self.backend.start(model)
        if self.work is not None and self.backend.capabilities.work_limited:
            cast(WorkLimited, session).work = self.work
        return session

    def remaining(self) -> float | None:
        """Seconds left of the time limit (0.0 when it is reached; None: no limit)."""
        if self.time_limit is None:
            return None
        return max(0.0, self.time_limit - (time.perf_counter() - self.started))

    def tolerance(self, goal: Goal) -> Tolerance:
        return self.tolerances.get(goal.name, NO_TOLERANCE)

    def limit(self, goal: Goal) -> int:
        """The value a constrained hard goal (one with a hard bound) must not exceed: its bound,
        raised by its tolerance (`--tolerance balance=1`: Streams counts one task beyond KIP-441's
        balance)."""
        bound = goal.hard_bound(self.problem)
        assert bound is not None, f"goal {goal.name!r} is not constrained"
        return self.tolerance(goal).limit(bound)
