"""MILP with HiGHS (highspy), built from numpy arrays.

The model goes to HiGHS in one piece from the CSR arrays (building it variable by variable is what
makes pulp slow at this size). MIP gaps are set to zero, so `optimal` means proven optimal, and
the status is HiGHS's own model status: a time-limited run is `time_limit`, never `optimal`.
"""

from __future__ import annotations

import time

import highspy
import numpy as np

from optimizer.formulation import UNBOUNDED, LinearModel, LinExpr
from optimizer.model.solution import GoalStatus
from optimizer.results import StageResult


def _highs_bounds(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The neutral model's bounds as HiGHS's: +-UNBOUNDED and beyond are HiGHS's infinity."""
    inf = highspy.kHighsInf
    return np.where(lower <= -UNBOUNDED, -inf, lower).astype(np.float64), np.where(upper >= UNBOUNDED, inf, upper).astype(np.float64)


class MilpSession:
    def __init__(self, model: LinearModel, presolve: bool = True, threads: int = 1, seed: int = 20261122):
        self.highs = highspy.Highs()
        highs = self.highs
        highs.setOptionValue("output_flag", False)
        highs.setOptionValue("mip_rel_gap", 0.0)
        highs.setOptionValue("mip_abs_gap", 0.999)  # integer objectives: a gap below 1 is proof
        highs.setOptionValue("threads", threads)
        highs.setOptionValue("random_seed", seed)
        if not presolve:
            highs.setOptionValue("presolve", "off")
        lower, upper = model.bounds()
        lo, hi = _highs_bounds(lower, upper)
        self.n = len(lower)
        highs.addVars(self.n, lo, hi)
        highs.changeColsIntegrality(
            self.n, np.arange(self.n, dtype=np.int32), np.full(self.n, highspy.HighsVarType.kInteger)
        )
        matrix, row_lo, row_hi = model.matrix()
        rlo, rhi = _highs_bounds(row_lo, row_hi)
        highs.addRows(
            matrix.shape[0], rlo, rhi, matrix.nnz,
            matrix.indptr[:-1].astype(np.int32), matrix.indices.astype(np.int32), matrix.data.astype(np.float64),
        )  # fmt: skip

    def add_row(self, expr: LinExpr, lo: int, hi: int) -> None:
        expr = expr.compact()
        (low,), (high,) = _highs_bounds(np.array([lo]), np.array([hi]))
        self.highs.addRow(low - expr.constant, high - expr.constant, len(expr.index), expr.index.astype(np.int32), expr.coef.astype(np.float64))

    def minimize(self, objective: LinExpr, time_limit: float | None, hint: np.ndarray | None) -> StageResult:
        started = time.perf_counter()
        objective = objective.compact()
        costs = np.zeros(self.n, dtype=np.float64)
        costs[objective.index] = objective.coef
        highs = self.highs
        highs.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), costs)
        highs.changeObjectiveSense(highspy.ObjSense.kMinimize)
        highs.setOptionValue("time_limit", float(time_limit) if time_limit is not None else highspy.kHighsInf)
        if hint is not None:
            solution = highspy.HighsSolution()
            solution.col_value = hint.astype(np.float64).tolist()
            solution.value_valid = True
            highs.setSolution(solution)
        highs.run()
        seconds = time.perf_counter() - started
        status = highs.getModelStatus()
        info = highs.getInfo()
        has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
        if status == highspy.HighsModelStatus.kInfeasible:
            return StageResult(GoalStatus.INFEASIBLE, None, None, None, seconds)
        if not has_solution:
            return StageResult(GoalStatus.TIME_LIMIT, None, None, None, seconds)
        values = np.rint(np.array(highs.getSolution().col_value)).astype(np.int64)
        value = int(np.dot(costs, values) + objective.constant)
        bound = float(info.mip_dual_bound) + objective.constant if np.isfinite(info.mip_dual_bound) else None
        if status == highspy.HighsModelStatus.kOptimal:
            kind = GoalStatus.OPTIMAL
        elif status == highspy.HighsModelStatus.kTimeLimit:
            kind = GoalStatus.TIME_LIMIT
        else:
            kind = GoalStatus.FEASIBLE
        return StageResult(kind, values, value, bound, seconds)


def start(model: LinearModel) -> MilpSession:
    """The registry's entry point (optimizer.backends): a session with the engine's settings."""
    return MilpSession(model)
