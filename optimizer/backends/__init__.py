"""Solver back-ends, one module per technology, and their registry: what each can do, as data,
most preferred first.

Two kinds, told apart by their capabilities:
* linear (`milp`, `cpsat`): `start(model)` opens a `Session` on the integer linear model; the
  engine then minimises one goal after another (`minimize`), with rows added between stages
  (`add_row`, which freezes a goal at its optimum);
* flow-only (`flow`): the whole sequence at once; `unsupported(problem, goals, tolerances)` says
  before any work why it cannot take it, `solve_sequence(problem, goals, time_limit)` solves it
  (and raises `optimizer.results.Unsupported` for what only building or solving finds).

Everything that names back-ends reads `REGISTRY`: the solver names `solve()` and the command line
accept, the engine's choice under `exact` (`optimizer.engine.sequence`) and the conformance suite. Adding
a back-end is writing its module and adding one entry here (docs/engine.md). An entry names its
module, imported on first use (as plugins are): the command line starts without loading every
solver's Python layer (CP-SAT's takes 0.3 s, with pandas).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, cast

import numpy as np

from optimizer.deadline import WorkBudget
from optimizer.formulation import LinearModel, LinExpr
from optimizer.goal import Goal
from optimizer.model.problem import Problem
from optimizer.results import SequenceResult, StageResult


class Session(Protocol):
    """A linear back-end's solver, opened on one integer model for a whole sequence."""

    def add_row(self, expr: LinExpr, lo: int, hi: int) -> None:
        """Keep `lo <= expr <= hi` in every later stage (+-UNBOUNDED: no bound on that side)."""

    def minimize(
        self, objective: LinExpr, time_limit: float | None, hint: np.ndarray | None, *, nodes: int | None = None, gap: float | None = None
    ) -> StageResult:
        """Minimise `objective` within `time_limit` seconds (None: no limit), starting from `hint`
        (a full solution vector) when given. The status is the solver's own: `optimal` only when
        proven, `time_limit` when cut short. A returned point meets every row exactly. `nodes`
        and `gap` (given only for a goal with `search_nodes`, `search_gap`): a branch and bound
        stops after that many nodes, or with its point within that fraction of its bound, the
        point `feasible`; a back-end without one ignores them."""

    def feasible(self, values: np.ndarray | None) -> bool:
        """Whether `values` meets every bound and row of the model and every row added, in
        integer arithmetic (`optimizer.formulation.CheckedRows`)."""


class SearchLimits(TypedDict, total=False):
    """`Session.minimize`'s keyword arguments for a tie-break goal (`search_limits`)."""

    nodes: int
    gap: float


def search_limits(goal: Goal) -> SearchLimits:
    """The keyword arguments `Session.minimize` takes for `goal`'s stage: `nodes` and `gap` only
    for a goal with `search_nodes` (and `search_gap`), so a back-end written before them works as
    it did for every other goal."""
    limits = SearchLimits()
    if goal.search_nodes is not None:
        limits["nodes"] = goal.search_nodes
        if goal.search_gap is not None:
            limits["gap"] = goal.search_gap
    return limits


class WorkLimited(Protocol):
    """The session of a back-end that stops on deterministic work (`Capabilities.work_limited`):
    the engine sets `work` to the sequence's `WorkBudget` when it has one; each solve then stops
    within `work.left` units and `spend`s what it took, so that the stages after it get the rest."""

    work: WorkBudget | None


class RelaxingSession(Session, Protocol):
    """The session of a back-end that also solves the linear relaxation (`Capabilities.relaxes`):
    the engine's relaxed pass freezes each goal at its relaxation's bound and searches one integer
    point for all (`optimizer.engine.relaxed`)."""

    def relax(self, objective: LinExpr, time_limit: float | None) -> float | None:
        """The linear relaxation's optimum of `objective` under every row, as a proven integer
        lower bound on the integer optimum: `math.inf` when the relaxation is infeasible, None when
        it was not solved in time (or not proven)."""

    def pop_row(self) -> None:
        """Take back the row added last."""

    def find(self, time_limit: float | None, hint: np.ndarray | None) -> np.ndarray | None:
        """An integer point meeting every row, exactly, within `time_limit`; None when none was
        found (which proves nothing)."""


@dataclass(frozen=True)
class Capabilities:
    """What a back-end can do: the engine decides with these, never with a back-end's name."""

    linear: bool
    """True: solves the integer linear formulation stage by stage (any goal with `encode`),
    through `start`. False: flow-only, solves only goals with a flow encoding, all stages at once,
    through `unsupported` and `solve_sequence`."""
    proves_optimality: bool
    """An `optimal` stage is proven optimal, so `exact` may use it."""
    deterministic: bool
    """The same problem gives the same assignment (fixed seeds, one thread), so `exact` may use it."""
    relaxes: bool = False
    """Linear back-ends: its session is a `RelaxingSession` (solves linear relaxations), so the
    engine may try its relaxed pass before stage by stage."""
    work_limited: bool = False
    """Linear back-ends: its session is `WorkLimited` (stops on deterministic work), so under a
    time limit the engine hands it the sequence's `WorkBudget`."""


LINEAR_ENTRY_POINTS = ("start",)
"""What the module of a linear back-end provides: `start(model: LinearModel) -> Session`."""
FLOW_ENTRY_POINTS = ("unsupported", "solve_sequence")
"""What the module of a flow-only back-end provides: `unsupported(problem, goals, tolerances) ->
str | None` (why it cannot take the sequence) and `solve_sequence(problem, goals, time_limit) ->
SequenceResult` (every stage at once)."""


@dataclass(frozen=True)
class Backend:
    """One registered back-end: its name (as `solve(solver=...)` and `--solver` take it), what it is
    in a note ("min-cost flow not used: ..."), its capabilities, and the module that implements
    the entry points they name."""

    name: str
    summary: str
    capabilities: Capabilities
    module: str
    """The implementing module (`LINEAR_ENTRY_POINTS` or `FLOW_ENTRY_POINTS`), imported on first use."""

    @property
    def entry_points(self) -> tuple[str, ...]:
        return LINEAR_ENTRY_POINTS if self.capabilities.linear else FLOW_ENTRY_POINTS

    def implementation(self) -> ModuleType:
        """The back-end's module; ValueError when it lacks an entry point its capabilities name."""
        module = importlib.import_module(self.module)
        missing = [name for name in self.entry_points if not callable(getattr(module, name, None))]
        if missing:
            raise ValueError(f"back-end {self.name!r}: {self.module} does not provide {', '.join(missing)}")
        return module

    def start(self, model: LinearModel) -> Session:
        """Linear back-ends: a session on the integer model (a `RelaxingSession` when the
        capabilities say `relaxes`)."""
        return cast(Session, self.implementation().start(model))

    def unsupported(self, problem: Problem, goals: Sequence[Goal], tolerances: dict[str, Any]) -> str | None:
        """Flow-only back-ends: why it cannot solve this sequence, or None."""
        return cast("str | None", self.implementation().unsupported(problem, goals, tolerances))

    def solve_sequence(self, problem: Problem, goals: Sequence[Goal], time_limit: float | None) -> SequenceResult:
        """Flow-only back-ends: every stage at once."""
        return cast(SequenceResult, self.implementation().solve_sequence(problem, goals, time_limit))


if TYPE_CHECKING:  # mypy checks the modules the registry names provide its entry points
    from optimizer.backends import cpsat, flow, milp

    _linear_entry_points: tuple[Callable[[LinearModel], Session], ...] = (milp.start, cpsat.start)
    _relaxing_entry_points: tuple[Callable[[LinearModel], RelaxingSession], ...] = (milp.start,)
    _flow_unsupported: Callable[[Problem, Sequence[Goal], dict[str, Any]], str | None] = flow.unsupported
    _flow_solve: Callable[[Problem, Sequence[Goal], float | None], SequenceResult] = flow.solve_sequence


REGISTRY: tuple[Backend, ...] = (
    # One min-cost flow for the whole sequence, when every goal has a flow encoding: the fastest.
    Backend(
        "flow", "min-cost flow", Capabilities(linear=False, proves_optimality=True, deterministic=True),
        "optimizer.backends.flow",
    ),
    # HiGHS proves these assignment models optimal faster than CP-SAT (docs/benchmarks.md).
    Backend("milp", "MILP (HiGHS)", Capabilities(linear=True, proves_optimality=True, deterministic=True, relaxes=True), "optimizer.backends.milp"),
    Backend("cpsat", "CP-SAT", Capabilities(linear=True, proves_optimality=True, deterministic=True, work_limited=True), "optimizer.backends.cpsat"),
)  # fmt: skip
"""Every back-end, most preferred first."""


def named(name: str) -> Backend:
    """The registered back-end called `name` (KeyError when there is none)."""
    return {backend.name: backend for backend in REGISTRY}[name]
