"""What the goal engine and its back-ends return: one solver call's outcome (`StageResult`), one
goal's stage of a sequence (`Stage`), a whole sequence's result (`SequenceResult`), and the
signal that a back-end found, while building or solving, that it cannot take a sequence
(`Unsupported`).

Statuses are the solution file's `GoalStatus`; stages use its subset optimal, feasible,
time_limit and infeasible (`heuristic` is only for Kafka's assignment: `optimizer.solve` sets it under `kafka`, and
`optimizer.engine.policy` when the exact engine falls back to it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from optimizer.goal import Goal
from optimizer.model.solution import ClientAssignment, GoalStatus


@dataclass(frozen=True)
class StageResult:
    """One objective minimised by a linear back-end's session."""

    status: GoalStatus
    solution: np.ndarray | None
    objective: int | None
    bound: float | None
    seconds: float

    @property
    def has_solution(self) -> bool:
        return self.solution is not None


@dataclass
class Stage:
    """One goal's stage of a sequence, as the solution file reports it."""

    goal: Goal
    status: GoalStatus
    objective: int | None = None
    bound: float | None = None
    seconds: float = 0.0
    backend: str = ""

    @property
    def gap(self) -> float | None:
        if self.objective is None or self.bound is None:
            return None
        return max(0.0, (self.objective - self.bound) / max(1.0, abs(self.objective)))


@dataclass
class SequenceResult:
    """The assignment (None when none was found), its stages and notes; `fallback` when the
    goals were not solved as asked (hard goals relaxed, or no model built)."""

    assignment: dict[str, ClientAssignment] | None
    stages: list[Stage]
    notes: list[str] = field(default_factory=list)
    fallback: bool = False


class Unsupported(Exception):
    """A back-end cannot solve this sequence, found only while building or solving it (weights
    overflowing 64-bit costs, no flow within the balance boxes, ...); `exact` then goes on to the
    next back-end, with this reason as a note."""
