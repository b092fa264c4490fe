"""CP-SAT (OR-Tools): integer objective, hint from the previous stage, fixed seed, one worker.

Also `point`: CP-SAT as the MILP back-end's search for an integer point on models of counts
(optimizer.backends.milp)."""

from __future__ import annotations

import time

import numpy as np
from ortools.sat.python import cp_model

from optimizer.deadline import WorkBudget
from optimizer.formulation import UNBOUNDED, CheckedRows, LinearModel, LinExpr, SparseRows
from optimizer.model.solution import GoalStatus
from optimizer.results import StageResult


def _row_bounds(lo: int, hi: int) -> tuple[int, int]:
    """A row's bounds as CP-SAT's: +-UNBOUNDED and beyond are its widest domain. (Variable bounds
    stay as they are: CP-SAT needs finite variable domains to rule out overflow.)"""
    return (cp_model.INT_MIN if lo <= -UNBOUNDED else lo), (cp_model.INT_MAX if hi >= UNBOUNDED else hi)


SEED = 20261122


class ModelInvalid(RuntimeError):
    """CP-SAT refused the model (its checks that no row's sum can overflow 64 bits, say)."""


class CpSatSession:
    """CP-SAT on the model given as `bounds` (lower, upper) and CSR `rows` (matrix, lo, hi)."""

    def __init__(
        self, bounds: tuple[np.ndarray, np.ndarray], rows: tuple[SparseRows, np.ndarray, np.ndarray], workers: int = 1, seed: int = SEED
    ):  # fmt: skip
        lower, upper = bounds
        matrix, row_lo, row_hi = rows
        self.rows = CheckedRows(bounds, rows)
        self.model = cp_model.CpModel()
        self.vars = [self.model.new_int_var(int(lo), int(hi), "") for lo, hi in zip(lower.tolist(), upper.tolist(), strict=True)]
        indptr, indices, data = matrix.indptr, matrix.indices, matrix.data.astype(np.int64)
        for r in range(matrix.shape[0]):
            start, end = indptr[r], indptr[r + 1]
            terms = cp_model.LinearExpr.weighted_sum(
                [self.vars[i] for i in indices[start:end].tolist()], data[start:end].tolist()
            )
            self.model.add_linear_constraint(terms, *_row_bounds(int(row_lo[r]), int(row_hi[r])))
        self.workers = workers
        self.seed = seed
        self.work: WorkBudget | None = None
        """The sequence's deterministic work left (`optimizer.backends.WorkLimited`): each solve
        stops within it, and spends what it took."""

    def _expr(self, expr: LinExpr):
        expr = expr.compact()
        return cp_model.LinearExpr.weighted_sum([self.vars[i] for i in expr.index.tolist()], expr.coef.tolist()) + expr.constant

    def add_row(self, expr: LinExpr, lo: int, hi: int) -> None:
        self.rows.add(expr, lo, hi)
        self.model.add_linear_constraint(self._expr(expr), *_row_bounds(lo, hi))

    def feasible(self, values: np.ndarray | None) -> bool:
        """Whether the integer vector `values` meets every bound and row, in integer arithmetic."""
        return self.rows.feasible(values)

    def minimize(
        self, objective: LinExpr, time_limit: float | None, hint: np.ndarray | None, effort: float | None = None, first: bool = False,
        *, nodes: int | None = None, gap: float | None = None,
    ) -> StageResult:  # fmt: skip
        """Minimise `objective` within `time_limit` seconds and `effort` units of CP-SAT's
        deterministic time (None: no limit), from `hint`; `first`: stop at the first point found.
        `nodes` and `gap` are ignored: CP-SAT's search has no node count (its work budget bounds
        it), and stopped at a gap it would say optimal."""
        started = time.perf_counter()
        self.model.minimize(self._expr(objective))
        self.model.clear_hints()
        if hint is not None:
            for var, value in zip(self.vars, hint.tolist(), strict=False):
                self.model.add_hint(var, int(value))
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = self.workers
        solver.parameters.random_seed = self.seed
        if time_limit is not None:
            solver.parameters.max_time_in_seconds = max(time_limit, 0.01)
        if self.work is not None:
            effort = max(MIN_WORK, self.work.left if effort is None else min(effort, self.work.left))
        if effort is not None:
            solver.parameters.max_deterministic_time = effort
        solver.parameters.stop_after_first_solution = first
        status = solver.solve(self.model)
        seconds = time.perf_counter() - started
        if self.work is not None:
            self.work.spend(solver.response_proto.deterministic_time)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            solution = np.array([solver.value(v) for v in self.vars], dtype=np.int64)
            if not self.feasible(solution):  # CP-SAT's arithmetic is exact: this would be a bug
                raise RuntimeError("CP-SAT returned a point that misses a row of the model")
            # in integers: CP-SAT reports both as doubles (60,000.000000002 for a bound of 60,000)
            objective_value = objective.compact().value(solution)
            bound = float(objective_value if status == cp_model.OPTIMAL else round(solver.best_objective_bound))
            if status == cp_model.OPTIMAL:
                kind = GoalStatus.OPTIMAL
            else:
                # with one worker, a point short of the proof means a limit stopped it (the clock,
                # the deterministic effort or work), or the first point was asked for
                kind = GoalStatus.FEASIBLE if first else GoalStatus.TIME_LIMIT
            return StageResult(kind, solution, objective_value, bound, seconds)
        if status == cp_model.INFEASIBLE:
            return StageResult(GoalStatus.INFEASIBLE, None, None, None, seconds)
        if status == cp_model.MODEL_INVALID:
            raise ModelInvalid(f"CP-SAT rejected the model: {self.model.validate()}")
        # stopped before any point: CP-SAT's bound is then its default 0, which bounds nothing
        return StageResult(GoalStatus.TIME_LIMIT, None, None, None, seconds)


MIN_WORK = 0.01
"""The least deterministic time a solve is given once its `WorkBudget` is spent, rather than none."""

POINT_EFFORT = 2.0
"""CP-SAT's deterministic time that `point` may take at most (about 1.5-2 s on this 2-core VM):
a limit that does not depend on the machine's load, so the answer does not either, as long as it
binds before the wall-clock limit."""


def point(
    bounds: tuple[np.ndarray, np.ndarray], rows: tuple[SparseRows, np.ndarray, np.ndarray], added: list[tuple[np.ndarray, np.ndarray, int, int]],
    costs: np.ndarray, hint: np.ndarray | None, time_limit: float, first: bool, effort: float = POINT_EFFORT,
) -> StageResult:  # fmt: skip
    """An integer point of the model (`bounds`, CSR `rows` with their bounds, `added` rows as
    (index, coef, lo, hi)) that minimises `costs`, from `hint`: the first found (`first`), else
    the best within the limits (`POINT_EFFORT`, `time_limit`). The status is CP-SAT's: `optimal`
    when proven (with `first`, only if the first point is), `infeasible` when no point exists."""
    session = CpSatSession(bounds, rows)
    for index, coef, lo, hi in added:
        session.add_row(LinExpr(index, coef), int(lo), int(hi))
    used = np.flatnonzero(costs)
    return session.minimize(LinExpr.of(used, np.asarray(costs)[used]), time_limit, hint, effort, first)


def start(model: LinearModel) -> CpSatSession:
    """The registry's entry point (optimizer.backends): a session with the engine's settings."""
    return CpSatSession(model.bounds(), model.matrix())
