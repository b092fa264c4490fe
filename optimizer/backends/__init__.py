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
accept, the engine's choice under `exact` (`optimizer.sequence`) and the conformance suite. Adding
a back-end is writing its module and adding one entry here (docs/engine.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from optimizer.backends import cpsat, flow, milp
from optimizer.formulation import LinearModel, LinExpr
from optimizer.results import SequenceResult, StageResult


class Session(Protocol):
    """A linear back-end's solver, opened on one integer model for a whole sequence."""

    def add_row(self, expr: LinExpr, lo: int, hi: int) -> None:
        """Keep `lo <= expr <= hi` in every later stage (+-UNBOUNDED: no bound on that side)."""

    def minimize(self, objective: LinExpr, time_limit: float | None, hint: np.ndarray | None) -> StageResult:
        """Minimise `objective` within `time_limit` seconds (None: no limit), starting from `hint`
        (a full solution vector) when given. The status is the solver's own: `optimal` only when
        proven, `time_limit` when cut short."""


@dataclass(frozen=True)
class Capabilities:
    """What a back-end can do: the engine decides with these, never with a back-end's name."""

    linear: bool
    """Solves the integer linear formulation stage by stage (any goal with `encode`): `start`."""
    flow_only: bool
    """Solves only goals with a flow encoding, all stages at once: `unsupported`, `solve_sequence`."""
    proves_optimality: bool
    """An `optimal` stage is proven optimal, so `exact` may use it."""
    deterministic: bool
    """The same problem gives the same assignment (fixed seeds, one thread), so `exact` may use it."""


@dataclass(frozen=True)
class Backend:
    """One registered back-end: its name (as `solve(solver=...)` and `--solver` take it), what it is
    in a note ("min-cost flow not used: ..."), its capabilities, and the entry points they name."""

    name: str
    summary: str
    capabilities: Capabilities
    start: Callable[[LinearModel], Session] | None = None
    """Linear back-ends: a session on the integer model."""
    unsupported: Callable[..., str | None] | None = None
    """Flow-only back-ends: (problem, goals, tolerances) -> why it cannot solve them, or None."""
    solve_sequence: Callable[..., SequenceResult] | None = None
    """Flow-only back-ends: (problem, goals, time_limit) -> every stage at once."""

    def __post_init__(self):
        linear, flow_only = self.capabilities.linear, self.capabilities.flow_only
        if linear == flow_only:
            raise ValueError(f"back-end {self.name!r}: exactly one of linear and flow_only")
        if (self.start is not None) != linear or (self.unsupported is not None and self.solve_sequence is not None) != flow_only:
            raise ValueError(f"back-end {self.name!r}: its entry points do not match its capabilities")


REGISTRY: tuple[Backend, ...] = (
    # One min-cost flow for the whole sequence, when every goal has a flow encoding: the fastest.
    Backend(
        "flow", "min-cost flow", Capabilities(linear=False, flow_only=True, proves_optimality=True, deterministic=True),
        unsupported=flow.unsupported, solve_sequence=flow.solve_sequence,
    ),
    # HiGHS proves these assignment models optimal faster than CP-SAT (docs/benchmarks.md).
    Backend("milp", "MILP (HiGHS)", Capabilities(linear=True, flow_only=False, proves_optimality=True, deterministic=True), start=milp.MilpSession),
    Backend("cpsat", "CP-SAT", Capabilities(linear=True, flow_only=False, proves_optimality=True, deterministic=True), start=cpsat.CpSatSession),
)  # fmt: skip
"""Every back-end, most preferred first."""

NAMES = tuple(backend.name for backend in REGISTRY)
"""The back-ends' names, in registry order."""


def named(name: str) -> Backend:
    """The registered back-end called `name` (KeyError when there is none)."""
    return {backend.name: backend for backend in REGISTRY}[name]
