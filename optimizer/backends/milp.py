"""MILP with HiGHS (highspy), built from numpy arrays.

The model goes to HiGHS in one piece from the CSR arrays (building it variable by variable is what
makes pulp slow at this size). MIP gaps are set to zero, so `optimal` means proven optimal, and
the status is HiGHS's own model status: a time-limited run is `time_limit`, never `optimal`.

Relaxation first. The assignment models' linear relaxations are tight (their bound is the integer
optimum on every benchmark), and HiGHS's simplex solves one in a fraction of a second where its
branch and bound spends seconds in presolve, cuts and heuristics before it finds the integer point
that meets the bound. So each stage first solves the relaxation on a persistent LP copy of the
model (warm-started from the previous stage's basis); ceil(relaxation) is a proven lower bound on
the stage's integer optimum. An integer point that reaches it is optimal, proven: the start when
it does, the relaxation's own vertex when it is integral, else a small MIP on the relaxation's
support (every 0/1 variable the relaxation leaves at 0 fixed there). Only when none of these
reaches the bound does the full MIP run, from the best point found. The relaxed pass's search for
one point meeting every frozen bound (`find`) also tries a MIP on the last relaxation's optimal
face (every variable whose reduced cost rules it out of the points that reach the bound fixed: a
restriction that loses none of them). Every point is checked against the model's rows and bounds
in integer arithmetic before it is used.
"""

from __future__ import annotations

import math
import time

import highspy
import numpy as np

from optimizer.formulation import UNBOUNDED, LinearModel, LinExpr
from optimizer.model.solution import GoalStatus
from optimizer.results import StageResult

IPM_COLUMNS = 5_000
"""Models with more variables solve their relaxations by interior point, smaller ones by simplex."""

SUPPORT_NODES = 30
"""Branch-and-bound nodes the MIP on the relaxation's support may take (a node limit, not a time
limit, so that the answer does not depend on the machine's speed). Where it succeeds it does so
at the root or within a few nodes; where it fails, 500 nodes cost up to 3 s on a 20 x 20
application (fraud-app-003 of the sample fleet) that HiGHS's full branch and bound then solved in
0.3 s."""

COUNT_COLUMNS = 10_000
"""A model of counts (`LinearModel.counts`) with at most this many variables has its integer
points searched for by CP-SAT first."""

MIN_SECONDS = 0.01
"""Below this much time left no relaxation or restricted MIP is started."""

DUAL_TOLERANCE = 1e-7
"""Reduced costs smaller than this count as zero (HiGHS's dual feasibility tolerance)."""


def _highs_bounds(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The neutral model's bounds as HiGHS's: +-UNBOUNDED and beyond are HiGHS's infinity."""
    inf = highspy.kHighsInf
    return np.where(lower <= -UNBOUNDED, -inf, lower).astype(np.float64), np.where(upper >= UNBOUNDED, inf, upper).astype(np.float64)


def _highs(threads: int, seed: int) -> highspy.Highs:
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("mip_rel_gap", 0.0)
    highs.setOptionValue("mip_abs_gap", 0.999)  # integer objectives: a gap below 1 is proof
    highs.setOptionValue("threads", threads)
    highs.setOptionValue("random_seed", seed)
    return highs


def _start_from(highs: highspy.Highs, point: np.ndarray) -> None:
    """Give HiGHS's next MIP `point` as its start."""
    solution = highspy.HighsSolution()
    solution.col_value = point.astype(np.float64).tolist()
    solution.value_valid = True
    highs.setSolution(solution)


class MilpSession:
    def __init__(self, model: LinearModel, presolve: bool = True, threads: int = 1, seed: int = 20261122):
        self.lower, self.upper = model.bounds()
        self.n = n = len(self.lower)
        self.matrix, self.row_lo, self.row_hi = model.matrix()
        self.added: list[tuple[np.ndarray, np.ndarray, int, int]] = []
        lo, hi = _highs_bounds(self.lower, self.upper)
        rlo, rhi = _highs_bounds(self.row_lo, self.row_hi)
        self.binary = (self.lower == 0) & (self.upper == 1)
        self.counts = model.counts and n <= COUNT_COLUMNS
        self._vertex: np.ndarray | None = None
        self._solved: tuple[tuple, tuple[float | None, np.ndarray | None]] | None = None
        self._face: tuple[np.ndarray, float] | None = None  # reduced costs and gap of the relaxation last solved
        self._costs: np.ndarray | None = None  # its objective
        self._support_tried: tuple | None = None
        columns = np.arange(n, dtype=np.int32)
        self.highs = _highs(threads, seed)
        self.lp = _highs(threads, seed)
        # interior point (with crossover, for a vertex) on large models: on the degenerate
        # assignment LPs it is several times faster than the simplex (60 s -> 7 s at 1,000 x 50
        # with two standbys and two tag dimensions); on small ones its start-up costs more
        self.lp.setOptionValue("solver", "ipm" if n > IPM_COLUMNS else "simplex")
        for highs in (self.highs, self.lp):
            if not presolve:
                highs.setOptionValue("presolve", "off")
            highs.addVars(n, lo, hi)
            if highs is self.highs:
                highs.changeColsIntegrality(n, columns, np.full(n, highspy.HighsVarType.kInteger))
            matrix = self.matrix
            highs.addRows(
                matrix.shape[0], rlo, rhi, matrix.nnz,
                matrix.indptr[:-1].astype(np.int32), matrix.indices.astype(np.int32), matrix.data.astype(np.float64),
            )  # fmt: skip

    def add_row(self, expr: LinExpr, lo: int, hi: int) -> None:
        expr = expr.compact()
        self.added.append((expr.index, expr.coef, lo - expr.constant, hi - expr.constant))
        (low,), (high,) = _highs_bounds(np.array([lo]), np.array([hi]))
        for highs in (self.highs, self.lp):
            highs.addRow(low - expr.constant, high - expr.constant, len(expr.index), expr.index.astype(np.int32), expr.coef.astype(np.float64))

    def feasible(self, values: np.ndarray) -> bool:
        """Whether the integer vector `values` meets every bound and row, in integer arithmetic."""
        if len(values) != self.n or np.any(values < self.lower) or np.any(values > self.upper):
            return False
        sums = self.matrix @ values
        if np.any(sums < self.row_lo) or np.any(sums > self.row_hi):
            return False
        return all(lo <= int(np.dot(coef, values[index])) <= hi for index, coef, lo, hi in self.added)

    def minimize(self, objective: LinExpr, time_limit: float | None, hint: np.ndarray | None) -> StageResult:
        started = time.perf_counter()
        deadline = None if time_limit is None else started + float(time_limit)
        objective = objective.compact()
        costs = np.zeros(self.n, dtype=np.int64)
        costs[objective.index] = objective.coef
        if hint is not None:
            hint = np.asarray(hint, dtype=np.int64)
            if not self.feasible(hint):
                hint = None

        def value(point: np.ndarray) -> int:
            return int(np.dot(costs, point)) + objective.constant

        bound, vertex = self._relaxation(costs, deadline)
        if bound is not None:
            bound += objective.constant
            if bound == math.inf:
                return StageResult(GoalStatus.INFEASIBLE, None, None, None, time.perf_counter() - started)
            for point in (hint, vertex):
                if point is not None and value(point) <= bound:
                    return StageResult(GoalStatus.OPTIMAL, point, value(point), float(bound), time.perf_counter() - started)
            # once per objective and rows: asked again (to go on from its point), only the full MIP is left
            key = self._solved[0] if self._solved is not None else None
            point = None
            if key is None or key != self._support_tried:
                counted = self._count_point(costs, hint, deadline, first=False)
                if counted is not None and counted.status in (GoalStatus.OPTIMAL, GoalStatus.INFEASIBLE):
                    # CP-SAT's own proof, over the same rows
                    seconds = time.perf_counter() - started
                    if counted.solution is None:
                        return StageResult(GoalStatus.INFEASIBLE, None, None, None, seconds)
                    proven = value(counted.solution)
                    return StageResult(GoalStatus.OPTIMAL, counted.solution, proven, float(proven), seconds)
                if counted is not None and counted.solution is not None and (hint is None or value(counted.solution) < value(hint)):
                    hint = counted.solution
                if hint is None or value(hint) > bound:
                    point = self._support_mip(costs, hint, deadline)
            self._support_tried = key
            if point is not None and (hint is None or value(point) < value(hint)):
                hint = point
            if hint is not None and value(hint) <= bound:
                return StageResult(GoalStatus.OPTIMAL, hint, value(hint), float(bound), time.perf_counter() - started)
        result = self._mip(costs, objective.constant, deadline, hint, started)
        if bound is not None and result.bound is not None and result.bound < bound:
            # stopped before its own bound caught up with the relaxation's: report the better one
            result = StageResult(result.status, result.solution, result.objective, float(bound), result.seconds)
        return result

    # ------------------------------------------------------------------ the relaxed pass

    def relax(self, objective: LinExpr, time_limit: float | None) -> float | None:
        """A proven lower bound on `objective` over the integer points of the model: the ceiling
        of its relaxation's optimum (math.inf: no point at all; None: not solved in time)."""
        objective = objective.compact()
        costs = np.zeros(self.n, dtype=np.int64)
        costs[objective.index] = objective.coef
        deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
        bound, self._vertex = self._relaxation(costs, deadline)
        return None if bound is None else bound + objective.constant

    def pop_row(self) -> None:
        """Drop the row added last (`add_row`)."""
        self.added.pop()
        row = np.array([self.matrix.shape[0] + len(self.added)], dtype=np.int32)
        for highs in (self.highs, self.lp):
            highs.deleteRows(1, row)

    def find(self, time_limit: float | None, hint: np.ndarray | None) -> np.ndarray | None:
        """An integer point meeting every row (None if none was found): the last relaxation's
        vertex or `hint` when they are one, else from the MIP on their supports, else from the
        MIP on the last relaxation's optimal face (within half the time), both minimising the last
        relaxation's objective."""
        for point in (self._vertex, hint):
            if point is not None and self.feasible(point):
                return point
        deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
        # the last relaxation's objective, though every point meeting the rows has the same value
        # in it: it steers HiGHS's search (two standbys, two tags: 3 s to a point instead of 20 s)
        costs = self._costs if self._costs is not None else np.zeros(self.n, dtype=np.int64)
        counted = self._count_point(costs, hint, deadline, first=True)
        if counted is not None and counted.status == GoalStatus.INFEASIBLE:
            return None  # proven: no integer point meets the rows
        if counted is not None and counted.solution is not None:
            return counted.solution
        point = self._support_mip(costs, hint, deadline)
        return point if point is not None else self._face_mip(costs, hint, deadline)

    # ------------------------------------------------------------------ steps

    def _left(self, deadline: float | None) -> float:
        return highspy.kHighsInf if deadline is None else max(0.0, deadline - time.perf_counter())

    def _relaxation(self, costs: np.ndarray, deadline: float | None) -> tuple[float | None, np.ndarray | None]:
        """(the ceiling of the relaxation's optimum, math.inf when it is infeasible, None when it
        did not solve; the relaxation's vertex rounded, when it is an integer point of the model).
        Within half the time left, so that what follows it always has the other half. The same
        objective over the same rows is solved once (the relaxed pass asks again for its last goal)."""
        key = (costs.tobytes(), tuple(id(row) for row in self.added))
        if self._solved is not None and self._solved[0] == key:
            return self._solved[1]
        if self._left(deadline) < MIN_SECONDS:
            return None, None  # with no time left, HiGHS's interior point still ran 16 s here
        lp = self.lp
        lp.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), costs.astype(np.float64))
        lp.setOptionValue("time_limit", self._left(deadline) / 2)
        lp.clearSolver()  # from scratch: a warm start after a new row and objective is slower here
        self._face, self._costs = None, costs
        lp.run()
        status = lp.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            return math.inf, None
        if status != highspy.HighsModelStatus.kOptimal:
            return None, None
        optimum = lp.getInfo().objective_function_value
        bound = math.ceil(optimum - 1e-6 * max(1.0, abs(optimum)))
        solution = lp.getSolution()
        x = np.array(solution.col_value)
        rounded = np.rint(x).astype(np.int64)
        integral = np.abs(x - rounded).max(initial=0.0) < 1e-6 and self.feasible(rounded)
        self._solved = (key, (float(bound), rounded if integral else None))
        self._face = (np.array(solution.col_dual), bound - optimum)
        return self._solved[1]

    def _face_bounds(self, reduced: np.ndarray, gap: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(columns, lower, upper): the bounds that reduced-cost fixing gives the columns it
        tightens. A point within `gap` of the relaxation's optimum can raise a variable with
        reduced cost d > 0 above its lower bound by at most gap / d (lower it below its upper
        bound, for d < 0): with gap 0, the relaxation's optimal face, where every point that
        reaches an integral optimum lies."""
        gap = max(gap, 0.0) + 1e-6  # rounding in the bound and the reduced costs: fix fewer, never more
        room = np.floor(gap / np.maximum(np.abs(reduced), DUAL_TOLERANCE))
        lower, upper = self.lower.copy(), self.upper.copy()
        up = (reduced > DUAL_TOLERANCE) & (self.lower > -UNBOUNDED)
        down = (reduced < -DUAL_TOLERANCE) & (self.upper < UNBOUNDED)
        upper[up] = np.minimum(upper[up], lower[up] + room[up])
        lower[down] = np.maximum(lower[down], upper[down] - room[down])
        columns = np.flatnonzero((lower != self.lower) | (upper != self.upper))
        return columns, lower[columns], upper[columns]

    def _count_point(self, costs: np.ndarray, hint: np.ndarray | None, deadline: float | None, first: bool) -> StageResult | None:
        """On a model of counts (`LinearModel.counts`), CP-SAT's search for an integer point
        minimising `costs`: the first it finds (`first`) or its best, within half the time left
        (None when the model is not one, or no time is left). HiGHS's root heuristics are erratic
        there (0.05 to 49 s to a point on five 1,000 x 50 problems with two standbys and two tag
        dimensions, where CP-SAT takes 0.1 to 0.4 s). A point is returned only when it meets every
        row and bound in integer arithmetic."""
        if not self.counts or self._left(deadline) < MIN_SECONDS:
            return None
        import optimizer.backends.cpsat as cpsat  # only here: CP-SAT's Python layer takes 0.3 s to load

        found = cpsat.point((self.lower, self.upper), (self.matrix, self.row_lo, self.row_hi), self.added, costs, hint, self._left(deadline) / 2, first)
        if found.solution is not None and not self.feasible(found.solution):
            return StageResult(GoalStatus.TIME_LIMIT, None, None, None, found.seconds)  # off CP-SAT's tolerance: as if none
        return found

    def _support_mip(self, costs: np.ndarray, hint: np.ndarray | None, deadline: float | None) -> np.ndarray | None:
        """The best integer point (None if none) of the MIP on the relaxation's support and the
        start's: every 0/1 variable at 0 in both fixed there; stopped at the relaxation's bound
        or after SUPPORT_NODES nodes."""
        x = np.array(self.lp.getSolution().col_value)
        fixed = self.binary & (x < 1e-6)
        if hint is not None:
            fixed &= hint == 0
        columns = np.flatnonzero(fixed)
        zeros = np.zeros(len(columns), dtype=np.int64)
        return self._restricted_mip(costs, columns, zeros, zeros, None, hint, deadline, SUPPORT_NODES)

    def _face_mip(self, costs: np.ndarray, hint: np.ndarray | None, deadline: float | None) -> np.ndarray | None:
        """The best integer point (None if none) of the MIP on the last relaxation's optimal face
        (its reduced-cost fixings, `_face_bounds`), within half the time left: no point that
        reaches the relaxation's bound is lost, and presolve removes most of the model. The
        start is kept only where it lies on the face."""
        if self._face is None:
            return None
        columns, lower, upper = self._face_bounds(*self._face)
        if hint is not None and (np.any(hint[columns] < lower) or np.any(hint[columns] > upper)):
            hint = None
        return self._restricted_mip(costs, columns, lower, upper, self._left(deadline) / 2, hint, deadline, None)

    def _restricted_mip(
        self, costs, columns, lower, upper, time_limit: float | None, hint: np.ndarray | None, deadline: float | None, nodes: int | None
    ) -> np.ndarray | None:
        """The best integer point (None if none) of the MIP with `columns` bounded to [lower,
        upper], within `time_limit` (else the time left) and `nodes` branch-and-bound nodes."""
        if self._left(deadline) < MIN_SECONDS:
            return None
        columns = columns.astype(np.int32)
        highs = self.highs
        lo, hi = _highs_bounds(self.lower[columns], self.upper[columns])
        new_lo, new_hi = _highs_bounds(lower, upper)
        highs.changeColsBounds(len(columns), columns, new_lo, new_hi)
        highs.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), costs.astype(np.float64))
        highs.changeObjectiveSense(highspy.ObjSense.kMinimize)
        highs.setOptionValue("time_limit", self._left(deadline) if time_limit is None else time_limit)
        if nodes is not None:
            highs.setOptionValue("mip_max_nodes", nodes)
        if hint is not None:
            _start_from(highs, hint)
        try:
            highs.run()
            point = self._point(highs)
        finally:
            highs.changeColsBounds(len(columns), columns, lo, hi)
            highs.setOptionValue("mip_max_nodes", 2**31 - 1)
        return point if point is not None and self.feasible(point) else None

    def _point(self, highs: highspy.Highs) -> np.ndarray | None:
        if highs.getInfo().primal_solution_status != 2:  # kSolutionStatusFeasible
            return None
        return np.rint(np.array(highs.getSolution().col_value)).astype(np.int64)

    def _mip(self, costs: np.ndarray, constant: int, deadline: float | None, hint: np.ndarray | None, started: float) -> StageResult:
        if self._left(deadline) < MIN_SECONDS:
            value = None if hint is None else int(np.dot(costs, hint)) + constant
            return StageResult(GoalStatus.TIME_LIMIT, hint, value, None, time.perf_counter() - started)
        highs = self.highs
        highs.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), costs.astype(np.float64))
        highs.changeObjectiveSense(highspy.ObjSense.kMinimize)
        highs.setOptionValue("time_limit", self._left(deadline))
        if hint is not None:
            _start_from(highs, hint)
        highs.run()
        seconds = time.perf_counter() - started
        status = highs.getModelStatus()
        info = highs.getInfo()
        if status == highspy.HighsModelStatus.kInfeasible:
            return StageResult(GoalStatus.INFEASIBLE, None, None, None, seconds)
        values = self._point(highs)
        if values is None:
            return StageResult(GoalStatus.TIME_LIMIT, None, None, None, seconds)
        value = int(np.dot(costs, values) + constant)
        bound = float(info.mip_dual_bound) + constant if np.isfinite(info.mip_dual_bound) else None
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
