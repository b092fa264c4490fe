"""The goal API: what a goal (built-in or a plugin's) provides to the engine.

A goal has a unique `name`, applies to some problem `kinds`, is `hard` or soft by default, and
provides:
* `evaluate(problem, assignment) -> int`: its value on an assignment, lower is better, computed
  without any solver (the problem is the normalised one, see `optimizer.normalize`);
* `encode(formulation) -> LinExpr`: the same value as a linear expression over the formulation's
  variables (adding auxiliary variables and rows as needed), so that it runs on CP-SAT and MILP;
  what it may use is declared in `optimizer.protocols` (`StreamsFormulationAPI`,
  `ConsumerFormulationAPI`); a Streams goal that never uses the variables `x`/`y` may say
  `compressible = True`;
* optionally `flow(terms) -> bool`: the same value as arc costs of the min-cost-flow network
  (`StreamsFlowTermsAPI`, `ConsumerFlowTermsAPI`), returning False where it cannot;
* `hard_bound(problem) -> int | None`: when hard, the value it must not exceed (None: the goal is
  optimised first and frozen at its optimum);
* `lower_bound() -> int`: a value no assignment goes below (0 by default), which lets the engine
  prove a stage optimal without a solve when its start already reaches it, and guess it before
  any relaxation (docs/engine.md, "Relaxation first");
* optionally `notes(problem) -> list[str]`: what solutions should say about how it counted (for
  example `cross_rack_bytes` in coarser units at terabytes per second);
* Streams, compressible goals: `apart(problem)`, what the compressed model must tell clients apart
  by for the goal ("rack", "tags", "state"; all by default), and `distinguished(index)`, the
  (task, client) pairs it prices apart from their class.

A goal is built from an optional argument string (`movement_budget=10` gives "10").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from optimizer.errors import GoalError
from optimizer.formulation import LinExpr
from optimizer.model.problem import Problem
from optimizer.model.solution import ClientAssignment
from optimizer.protocols import FlowTermsAPI, FormulationAPI

if TYPE_CHECKING:
    import numpy as np

    from optimizer.costs import StreamsIndex

Assignment = Mapping[str, ClientAssignment]
"""Client (or member) id -> what it holds."""

APART = frozenset({"rack", "tags", "state"})
"""Everything the compressed model can tell clients apart by (`Goal.apart`)."""


class Goal:
    """Base class of every goal, built-in or a plugin's; see the module docstring."""

    name: ClassVar[str]
    summary: ClassVar[str] = ""
    kinds: ClassVar[tuple[str, ...]] = ("streams", "consumer")
    hard: ClassVar[bool] = False
    value_unit: ClassVar[str | None] = None
    """What the value counts when it is not a plain count or score: `bytes_per_second` (printed
    as kB/s, MB/s, ...), `partitions`, `offsets`. Recorded with each result (`GoalResult.unit`)."""
    compressible: ClassVar[bool] = False
    """True when `encode` uses only `StreamsFormulationAPI`, never the variables of
    `StreamsVariablesAPI`: the engine may then solve it on the compressed formulation
    (optimizer.engine.compressed)."""
    search_nodes: ClassVar[int | None] = None
    """None: the stage is searched until proven optimal (or its time is up). A whole number: a
    tie-break whose proof costs more than it is worth; a back-end with a branch and bound stops
    after that many nodes (a limit that does not depend on the machine's load, as a clock does),
    and the best point found stands, `feasible` with its bound. The engine's distance to the
    target of the assignment applied now takes 1: HiGHS's root (decision 96)."""
    search_gap: ClassVar[float | None] = None
    """With `search_nodes`: the search may also stop once its point is within this fraction of its
    bound (0.1: 10 %), as deterministic as the node count; then a point that the MILP back-end's
    search on the relaxation's support (or CP-SAT's count point) finds within it stands without
    the branch and bound. The distance to the target takes 0.1 (decision 97)."""

    def __init__(self, argument: str | None = None) -> None:
        if argument is not None:
            raise GoalError(f"goal {self.name!r} takes no argument (got {argument!r})")
        self.argument: str | None = argument

    def __repr__(self) -> str:
        return self.name if self.argument is None else f"{self.name}={self.argument}"

    def applies_to(self, problem: Problem) -> bool:
        return problem.kind in self.kinds

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        """The goal's value on `assignment` (lower is better), without any solver."""
        raise NotImplementedError

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        """The goal's value as a linear expression over `formulation`'s variables."""
        raise NotImplementedError

    def flow(self, terms: FlowTermsAPI) -> bool:
        """Add the goal's value to the min-cost-flow network's `terms`; False when it cannot."""
        return False

    def hard_bound(self, problem: Problem) -> int | None:
        """When hard: the value the goal must not exceed (None: its optimum)."""
        return None

    def lower_bound(self) -> int:
        """A value no assignment goes below (0 for goals that count something)."""
        return 0

    def apart(self, problem: Problem) -> frozenset[str]:
        """Streams, compressible goals: what the compressed model must tell clients apart by for
        this goal's costs: "rack", "tags" (the values of `rack.aware.assignment.tags`), "state"
        (for each task, the clients that held it or report a lag for it). All three by default,
        which is always right; naming fewer gives a smaller model. A goal that prices clients of
        one class differently after all is caught (`NotCompressible`): the full model is used."""
        return APART

    def notes(self, problem: Problem) -> list[str]:
        """What a solution should say about how this goal counted on `problem` (for example in
        coarser units); none by default."""
        return []

    def distinguished(self, index: StreamsIndex) -> np.ndarray | None:
        """Streams, compressible goals: tasks x clients, True where the goal prices a task on a
        client apart from the other clients of its class, beyond the clients that held the task
        or report a lag for it (`StreamsIndex.state_holders`, which the compressed model tells
        apart when a goal's `apart` names "state"); None: no others."""
        return None


def soft(goal: type[Goal]) -> type[Goal]:
    """`goal` as a soft goal: minimised, never a constraint (the engine's soft `balance` for the
    assignment applied now)."""
    return type(f"Soft{goal.__name__}", (goal,), {"hard": False})


def stage_order(problem: Problem, goals: Sequence[Goal]) -> tuple[list[Goal], list[Goal]]:
    """How every engine orders a sequence: (the hard goals with a `hard_bound`, kept as constraints
    throughout; then the hard goals without one, optimised first and frozen, followed by the soft
    goals), each part in the order given."""
    constrained = [g for g in goals if g.hard and g.hard_bound(problem) is not None]
    frozen_first = [g for g in goals if g.hard and g.hard_bound(problem) is None]
    return constrained, frozen_first + [g for g in goals if not g.hard]
