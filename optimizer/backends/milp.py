"""MILP with HiGHS (highspy), built from numpy arrays.

The model goes to HiGHS in one piece from the CSR arrays (building it variable by variable is what
makes pulp slow at this size). MIP gaps are set to zero, so `optimal` means proven optimal, and
the status is HiGHS's own model status: a time-limited run is `time_limit`, never `optimal`. A
tie-break goal's stage (`Goal.search_nodes`, `search_gap`) may stop at a node count or a gap; its
point is then `feasible`, with its bound, unless it reaches that bound.

Relaxation first. The assignment models' linear relaxations are tight (their bound is the integer
optimum on every benchmark), and HiGHS's simplex solves one in a fraction of a second where its
branch and bound spends seconds in presolve, cuts and heuristics before it finds the integer point
that meets the bound. So each stage first solves the relaxation on a persistent LP copy of the
model (warm-started from the previous stage's basis); ceil(relaxation) is a proven lower bound on
the stage's integer optimum. An integer point that reaches it is optimal, proven: the start when
it does, the relaxation's own vertex when it is integral, else a small MIP on the relaxation's
support (every 0/1 variable the relaxation leaves at 0 fixed there). Only when none of these
reaches the bound does the full MIP run, from the best point found (for a tie-break goal, only
when none comes within its `search_gap` of the bound). The relaxed pass's search for
one point meeting every frozen bound (`find`) also tries a MIP on the last relaxation's optimal
face (every variable whose reduced cost rules it out of the points that reach the bound fixed: a
restriction that loses none of them). Every point is checked against the model's rows and bounds
in integer arithmetic before it is used.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass

import highspy
import numpy as np

from optimizer.deadline import in_child
from optimizer.formulation import UNBOUNDED, CheckedRows, LinearModel, LinExpr, exact_dot
from optimizer.model.solution import GoalStatus
from optimizer.results import StageResult

IPM_COLUMNS = 5_000
"""Models with more variables solve their relaxations by interior point, smaller ones by simplex."""

IPM_NONZEROS_PER_SECOND = 100_000
"""Interior point only with at least a second of the relaxation's time per this many matrix
entries, else simplex. HiGHS's interior point checks its time limit only between iterations, and
an iteration took 4.5 s on a model of 3.3 million entries (3,000 x 60, weights and rates): with
3 s left it ran 34 s. The simplex stops within its limit."""

SUPPORT_NODES = 30
"""Branch-and-bound nodes the MIP on the relaxation's support may take (a node limit, not a time
limit, so that the answer does not depend on the machine's speed). Where it succeeds it does so
at the root or within a few nodes; where it fails, 500 nodes cost up to 3 s on a 20 x 20
application (fraud-app-003 of the sample fleet) that HiGHS's full branch and bound then solved in
0.3 s."""

COUNT_COLUMNS = 10_000
"""A model of counts (`LinearModel.counts`) with at most this many variables has its integer
points searched for by CP-SAT first."""

SIMPLEX_CHOOSE = 0
"""HiGHS's `simplex_strategy` that picks the primal or the dual simplex by the start's basis."""

SIMPLEX_DUAL = 1
"""HiGHS's default `simplex_strategy`, the dual simplex: a relaxation from scratch."""

MIN_SECONDS = 0.01
"""Below this much time left no relaxation or restricted MIP is started."""

DUAL_TOLERANCE = 1e-7
"""Reduced costs smaller than this count as zero (HiGHS's dual feasibility tolerance)."""

TAME_COEFFICIENT = 2**20
"""The largest coefficient (of a row or the objective) with which HiGHS's own proofs are taken
(`MilpSession._tame`): its feasibility tolerances are relative to the rows' largest coefficient
(about 1e-6 of it, after scaling), so up to here a row it calls met is met within a unit."""

TAME_MAGNITUDE = 2**24
"""The largest objective value (about 1.7e7, without the objective's constant, which HiGHS never
sees) with which HiGHS's own proofs are taken: its relative tolerances (about 1e-9 to 1e-7) then
stay below one unit of the objective. Both limits are conservative readings of its tolerances,
checked by measurement (bench/optimality.py), not proofs."""

CHILD_NONZEROS = 200_000
"""From this many matrix entries on, a MIP with a time limit runs in a forked child process that
is killed OVERRUN_SECONDS past the limit. HiGHS 1.12 does not check its time limit while it builds
the sub-MIPs of its RINS, RENS and root reduced-cost heuristics (fixed upstream after 1.12, by
HiGHS pull request 3237; the version is pinned with OR-Tools'): on the assignment applied now of
a 10,000 x 200 application (49,280 columns, 295,362 entries) it ran 48.5 s at a 23.3 s limit.
Below, a sub-MIP is built in well under a second, and the process stays whole for the many
small MIPs (a fork and its answer cost 7 ms with 1 GB resident, measured)."""

OVERRUN_SECONDS = 1.0
"""Seconds past its time limit after which a MIP run in a child process is killed: HiGHS stops
by itself within a fraction of that (0.05 to 0.3 s measured), returning its best point; only a
run stuck where HiGHS does not look at the clock is killed, and its point is lost."""

CERTIFY_EFFORT = 4.0
"""CP-SAT's deterministic time (about as many seconds on this 2-core VM) to prove a stage that
HiGHS cannot (`MilpSession._certify`): a limit that does not depend on the machine's load."""

DUAL_SCALE = 2**64
"""Row duals are taken as multiples of 1 / DUAL_SCALE for the certified bound: any multipliers
give a valid bound, and this keeps every bit of HiGHS's doubles down to 2^-64."""


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


@dataclass(frozen=True)
class _Run:
    """What a MIP run of HiGHS answered: its model status, dual bound and point (rounded, when
    it has a feasible one)."""

    status: highspy.HighsModelStatus
    dual_bound: float
    point: np.ndarray | None


def _outcome(highs: highspy.Highs) -> tuple[int, float, np.ndarray | None]:
    point = None
    if highs.getInfo().primal_solution_status == 2:  # kSolutionStatusFeasible
        point = np.rint(np.array(highs.getSolution().col_value)).astype(np.int64)
    return int(highs.getModelStatus()), float(highs.getInfo().mip_dual_bound), point


def _run_mip(highs: highspy.Highs, limit: float, entries: int) -> _Run:
    """`highs.run()` of a MIP whose time limit is `limit` seconds (set on it); a model of
    `entries` matrix entries from CHILD_NONZEROS on runs in a child process, killed
    OVERRUN_SECONDS past the limit (then: time limit, no point)."""

    def run() -> tuple[int, float, np.ndarray | None]:
        highs.run()
        return _outcome(highs)

    if not math.isfinite(limit) or entries < CHILD_NONZEROS:
        status, bound, point = run()
    else:
        finished, answer = in_child(run, limit + OVERRUN_SECONDS)
        if not finished or answer is None:
            return _Run(highspy.HighsModelStatus.kTimeLimit, -math.inf, None)
        status, bound, point = answer
    return _Run(highspy.HighsModelStatus(status), bound, point)


@contextlib.contextmanager
def _search_limits(highs: highspy.Highs, nodes: int | None, gap: float | None) -> Iterator[None]:
    """HiGHS's branch and bound within `nodes` nodes and a relative `gap` (None: no limit, a gap
    of 0), back to the session's settings afterwards. A value HiGHS refuses (of the wrong type or
    range, which it says by a status only, and would run on without the limit) raises."""
    for option, value in (("mip_max_nodes", None if nodes is None else int(nodes)), ("mip_rel_gap", None if gap is None else float(gap))):
        if value is not None and highs.setOptionValue(option, value) != highspy.HighsStatus.kOk:
            raise ValueError(f"HiGHS refused {option} = {value!r}")
    try:
        yield
    finally:
        highs.setOptionValue("mip_max_nodes", NO_NODE_LIMIT)
        highs.setOptionValue("mip_rel_gap", 0.0)


NO_NODE_LIMIT = 2**31 - 1
"""HiGHS's default `mip_max_nodes`: no limit."""


def _start_from(highs: highspy.Highs, point: np.ndarray) -> None:
    """Give HiGHS's next MIP `point` as its start."""
    solution = highspy.HighsSolution()
    solution.col_value = point.astype(np.float64).tolist()
    solution.value_valid = True
    highs.setSolution(solution)


class MilpSession:
    def __init__(self, model: LinearModel, presolve: bool = True, threads: int = 1, seed: int = 20261122):
        self.rows = CheckedRows(model.bounds(), model.matrix())
        self.lower, self.upper = self.rows.lower, self.rows.upper
        self.n = n = len(self.lower)
        self.matrix, self.row_lo, self.row_hi = self.rows.matrix, self.rows.row_lo, self.rows.row_hi
        self._serials: list[int] = []  # one per added row, never reused: the relaxations' cache key
        self._added_rows = 0
        self._columns = self.matrix.columns()  # for the certified bound's A^T y
        self._largest = int(np.abs(self.matrix.data).max(initial=0))  # the model's largest row coefficient
        lo, hi = _highs_bounds(self.lower, self.upper)
        rlo, rhi = _highs_bounds(self.row_lo, self.row_hi)
        self.binary = (self.lower == 0) & (self.upper == 1)
        self.counts = model.counts and n <= COUNT_COLUMNS
        self._vertex: np.ndarray | None = None
        self._solved: tuple[tuple, tuple[float | None, np.ndarray | None]] | None = None
        self._face: tuple[np.ndarray, float] | None = None  # reduced costs and gap of the relaxation last solved
        self._costs: np.ndarray | None = None  # its objective
        self._support_tried: tuple | None = None
        self._warm = False  # the relaxation last run ended optimal: its basis is a start for the next
        columns = np.arange(n, dtype=np.int32)
        self.highs = _highs(threads, seed)
        self.lp = _highs(threads, seed)
        # interior point (with crossover, for a vertex) on large models: on the degenerate
        # assignment LPs it is several times faster than the simplex (60 s -> 7 s at 1,000 x 50
        # with two standbys and two tag dimensions); on small ones its start-up costs more.
        # Chosen by the time a relaxation has (IPM_NONZEROS_PER_SECOND), where it does not start
        # from the last one's basis (`_relaxation`).
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

    @property
    def added(self) -> list[tuple[np.ndarray, np.ndarray, int, int]]:
        return self.rows.added

    def add_row(self, expr: LinExpr, lo: int, hi: int) -> None:
        expr = expr.compact()
        self.rows.add(expr, lo, hi)
        self._added_rows += 1
        self._serials.append(self._added_rows)
        (low,), (high,) = _highs_bounds(np.array([lo]), np.array([hi]))
        for highs in (self.highs, self.lp):
            highs.addRow(low - expr.constant, high - expr.constant, len(expr.index), expr.index.astype(np.int32), expr.coef.astype(np.float64))

    def feasible(self, values: np.ndarray | None) -> bool:
        """Whether the integer vector `values` meets every bound and row, in integer arithmetic."""
        return self.rows.feasible(values)

    def minimize(
        self, objective: LinExpr, time_limit: float | None, hint: np.ndarray | None, *, nodes: int | None = None, gap: float | None = None
    ) -> StageResult:
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
            return exact_dot(costs, point) + objective.constant

        bound, vertex = self._relaxation(costs, deadline)
        if bound == math.inf and (hint is not None or not self._tame(costs, objective.constant)):
            # HiGHS says no point exists: with a start that meets every row exactly, or numbers
            # too large for its tolerances, that is not taken as a proof
            bound = None
        if bound is not None:
            bound += objective.constant
            if bound == math.inf:
                return StageResult(GoalStatus.INFEASIBLE, None, None, None, time.perf_counter() - started)
            if any(point is not None and value(point) < bound for point in (hint, vertex)):
                bound = None  # a point below a bound refutes it: none is taken (a bug if it happens)
        if bound is not None:
            for point in (hint, vertex):
                if point is not None and value(point) == bound:
                    return StageResult(GoalStatus.OPTIMAL, point, value(point), float(bound), time.perf_counter() - started)
            # once per objective and rows: asked again (to go on from its point), only the full MIP is left
            key = self._solved[0] if self._solved is not None else None
            point = None
            searched = False  # a point of this stage's own searches below (not only the start)
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
                    hint, searched = counted.solution, True
                if hint is None or value(hint) > bound:
                    point = self._support_mip(costs, hint, deadline)
            self._support_tried = key
            if point is not None and (hint is None or value(point) < value(hint)):
                hint, searched = point, True
            if hint is not None and value(hint) == bound:
                return StageResult(GoalStatus.OPTIMAL, hint, value(hint), float(bound), time.perf_counter() - started)
            if gap is not None and searched and hint is not None and 0 < value(hint) - bound <= gap * abs(value(hint)):
                # a tie-break (`Goal.search_gap`): the point of the searches on the relaxation's
                # support, within its gap, stands unproven; HiGHS's root may cost seconds more (3.3 s
                # on a 1,000 x 50 application's distance to the target, for no better point)
                return StageResult(GoalStatus.FEASIBLE, hint, value(hint), float(bound), time.perf_counter() - started)
        known = [v for v in (bound, None if hint is None else value(hint)) if v is not None]
        tame = self._tame(costs, objective.constant, *known)
        # on a model HiGHS cannot prove, CP-SAT needs time after it: half of what is left
        result = self._mip(costs, objective.constant, deadline, hint, started, 1.0 if tame else 0.5, nodes, gap)
        refuted = result.objective is not None and any(b is not None and b > result.objective for b in (result.bound, bound))
        if refuted or not self._tame(costs, objective.constant, *known, result.objective, result.bound):
            # HiGHS's dual bound above its own point's exact value: its proof holds within its
            # tolerances only (the dual bound's ceiling passed the point); CP-SAT proves in integers
            return self._certify(costs, objective.constant, result, bound, deadline, started)
        if bound is not None and result.bound is not None and result.bound < bound:
            # stopped before its own bound caught up with the relaxation's: report the better one
            result = StageResult(result.status, result.solution, result.objective, float(bound), result.seconds)
        if result.status == GoalStatus.FEASIBLE and result.objective is not None and result.bound is not None and result.objective == result.bound:
            # stopped by a tie-break's node count or gap at a point that reaches a proven bound
            result = StageResult(GoalStatus.OPTIMAL, result.solution, result.objective, result.bound, result.seconds)
        return result

    # ------------------------------------------------------------------ what is proven

    def _tame(self, costs: np.ndarray, constant: int, *values: float | None) -> bool:
        """Whether HiGHS's own proofs (its branch and bound's optimality, dual bound and
        infeasibility) are taken on this stage: every coefficient of the rows and the objective
        at most TAME_COEFFICIENT and the objective's values in play (`values`: bounds and points
        found, the objective's constant included) at most TAME_MAGNITUDE. Beyond them HiGHS's
        tolerances, relative to the numbers, can hide a difference of one: it proved a highest
        load of 11,400,007,200 optimal where 4,010,000,600 is reached, on a 2-member group with
        rates of 1.5 GB/s (its cuts, with coefficients from 1 to 3e9)."""
        largest = max([self._largest, *(int(np.abs(coef).max(initial=0)) for _, coef, _, _ in self.added)])
        if largest > TAME_COEFFICIENT or int(np.abs(costs).max(initial=0)) > TAME_COEFFICIENT:
            return False
        return all(abs(v - constant) <= TAME_MAGNITUDE for v in values if v is not None and math.isfinite(v))

    def _certify(
        self, costs: np.ndarray, constant: int, found: StageResult, bound: float | None, deadline: float | None, started: float
    ) -> StageResult:  # fmt: skip
        """HiGHS's answer (`found`) on a stage it cannot prove (`_tame`): CP-SAT, whose
        arithmetic is exact, proves it or does better from its point within CERTIFY_EFFORT and
        the time left; else the best point is `feasible` (`time_limit` when no time is left)
        with the best proven bound, the relaxation's (`bound`, certified) or CP-SAT's, and
        `optimal` only if it reaches that bound."""
        import optimizer.backends.cpsat as cpsat  # only here: CP-SAT's Python layer takes 0.3 s to load

        point = found.solution if found.solution is not None and self.feasible(found.solution) else None
        proven = bound
        checked = None
        if self._left(deadline) >= MIN_SECONDS:
            try:
                checked = cpsat.point(
                    (self.lower, self.upper), (self.matrix, self.row_lo, self.row_hi), self.added, costs, point,
                    self._left(deadline), first=False, effort=CERTIFY_EFFORT,
                )  # fmt: skip
            except cpsat.ModelInvalid:  # numbers beyond CP-SAT's 64-bit checks: no proof from it
                checked = None
        if checked is not None:
            seconds = time.perf_counter() - started
            if checked.status == GoalStatus.INFEASIBLE and point is None:
                return StageResult(GoalStatus.INFEASIBLE, None, None, None, seconds)
            if checked.solution is not None and self.feasible(checked.solution):
                if checked.status == GoalStatus.OPTIMAL:
                    value = exact_dot(costs, checked.solution) + constant
                    return StageResult(GoalStatus.OPTIMAL, checked.solution, value, float(value), seconds)
                if point is None or exact_dot(costs, checked.solution) < exact_dot(costs, point):
                    point = checked.solution
            if checked.bound is not None and (proven is None or checked.bound + constant > proven):
                proven = float(checked.bound + constant)
        seconds = time.perf_counter() - started
        if point is None:
            return StageResult(GoalStatus.TIME_LIMIT, None, None, proven, seconds)
        value = exact_dot(costs, point) + constant
        if proven is not None and value < proven:
            proven = None  # a point below a bound refutes it (a bug if it happens): nothing is claimed
        if proven is not None and value == proven:
            return StageResult(GoalStatus.OPTIMAL, point, value, proven, seconds)
        status = GoalStatus.TIME_LIMIT if self._left(deadline) < MIN_SECONDS else GoalStatus.FEASIBLE
        return StageResult(status, point, value, proven, seconds)

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
        self.rows.pop()
        self._serials.pop()
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
        key = (costs.tobytes(), tuple(self._serials))
        if self._solved is not None and self._solved[0] == key:
            return self._solved[1]
        if self._left(deadline) < MIN_SECONDS:
            return None, None  # with no time left, HiGHS's interior point still ran 16 s here
        lp = self.lp
        lp.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), costs.astype(np.float64))
        budget = self._left(deadline) / 2
        lp.setOptionValue("time_limit", budget)
        if self._warm and lp.getBasis().valid:
            # the last relaxation's optimal basis, rows added since (deleting one invalidates it;
            # a run stopped by its time limit leaves a basis that depends on the clock, not
            # used): the simplex from there, primal where the basis stays feasible (the relaxed
            # pass's next goal, with the last one's row at its bound: 0.045 s instead of 0.38 s
            # by interior point at 1,000 x 50 with one standby; the dual simplex from it took 0.72 s)
            lp.setOptionValue("solver", "simplex")
            lp.setOptionValue("simplex_strategy", SIMPLEX_CHOOSE)
        else:
            ipm = self.n > IPM_COLUMNS and budget * IPM_NONZEROS_PER_SECOND >= self.matrix.nnz
            lp.setOptionValue("solver", "ipm" if ipm else "simplex")
            lp.setOptionValue("simplex_strategy", SIMPLEX_DUAL)
            lp.clearSolver()
        self._face, self._costs = None, costs
        lp.run()
        status = lp.getModelStatus()
        self._warm = status == highspy.HighsModelStatus.kOptimal
        if status == highspy.HighsModelStatus.kInfeasible:
            return math.inf, None
        if status != highspy.HighsModelStatus.kOptimal:
            return None, None
        optimum = lp.getInfo().objective_function_value
        solution = lp.getSolution()
        bound = self._certified_bound(costs, np.array(solution.row_dual)) if solution.dual_valid else None
        x = np.array(solution.col_value)
        rounded = np.rint(x).astype(np.int64)
        integral = np.abs(x - rounded).max(initial=0.0) < 1e-6 and self.feasible(rounded)
        self._solved = (key, (None if bound is None else float(bound), rounded if integral else None))
        self._face = None if bound is None else (np.array(solution.col_dual), bound - optimum)
        return self._solved[1]

    def _certified_bound(self, costs: np.ndarray, row_dual: np.ndarray) -> int | None:
        """A lower bound on costs . x over the relaxation, proven in integer arithmetic from the
        row multipliers `row_dual` (HiGHS's duals; None when they prove nothing): for any y,
        costs . x = y . Ax + d . x with d = costs - A^T y, and each term is bounded below by the
        row's and the variable's bounds on the side its sign needs. HiGHS's own optimum is
        exact only within its tolerances, which at objectives of 10^9 are more than a unit; this
        bound is exact for the multipliers as HiGHS's doubles give them (taken to 2^-64)."""
        m = self.matrix.shape[0]
        lo = np.concatenate([self.row_lo, np.array([a[2] for a in self.added], dtype=np.int64)])
        hi = np.concatenate([self.row_hi, np.array([a[3] for a in self.added], dtype=np.int64)])
        y = np.asarray(row_dual, dtype=np.float64)[: len(lo)]
        if len(y) != len(lo) or not np.all(np.isfinite(y)):
            return None
        # a multiplier of the wrong sign for a row that is unbounded on that side proves nothing: 0
        y = np.where(((y > 0) & (lo <= -UNBOUNDED)) | ((y < 0) & (hi >= UNBOUNDED)), 0.0, y)
        scaled = np.rint(y * float(DUAL_SCALE))
        multipliers = np.array([int(v) for v in scaled.tolist()], dtype=object)
        reduced = costs.astype(object) * DUAL_SCALE
        columns = self._columns
        if columns.nnz:
            products = columns.data.astype(object) * multipliers[:m][columns.indices]
            used = np.flatnonzero(np.diff(columns.indptr))
            reduced[used] -= np.add.reduceat(products, columns.indptr[used])
        for r, (index, coef, _, _) in enumerate(self.added):
            factor = multipliers[m + r]
            if factor:
                reduced[index] -= coef.astype(object) * factor
        sides = np.where(scaled > 0, lo, np.where(scaled < 0, hi, 0)).astype(object)
        total = int(np.dot(multipliers, sides)) if len(sides) else 0
        positive, negative = reduced > 0, reduced < 0
        if np.any(positive & (self.lower <= -UNBOUNDED)) or np.any(negative & (self.upper >= UNBOUNDED)):
            return None
        total += int(np.dot(reduced[positive], self.lower[positive].astype(object))) if positive.any() else 0
        total += int(np.dot(reduced[negative], self.upper[negative].astype(object))) if negative.any() else 0
        return -((-total) // DUAL_SCALE)

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

        return cpsat.point((self.lower, self.upper), (self.matrix, self.row_lo, self.row_hi), self.added, costs, hint, self._left(deadline) / 2, first)

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
        limit = self._left(deadline) if time_limit is None else time_limit
        highs.setOptionValue("time_limit", limit)
        if hint is not None:
            _start_from(highs, hint)
        try:
            with _search_limits(highs, nodes, None):
                point = _run_mip(highs, limit, self._entries()).point
        finally:
            highs.changeColsBounds(len(columns), columns, lo, hi)
        return point if point is not None and self.feasible(point) else None

    def _entries(self) -> int:
        """Matrix entries of the model and the rows added to it."""
        return int(self.matrix.nnz) + sum(len(index) for index, _, _, _ in self.added)

    def _mip(
        self, costs: np.ndarray, constant: int, deadline: float | None, hint: np.ndarray | None, started: float, share: float = 1.0,
        nodes: int | None = None, gap: float | None = None,
    ) -> StageResult:  # fmt: skip
        """HiGHS's branch and bound, from `hint`, within `share` of the time left and `nodes` nodes
        (None: no limit; 1: the root, its cuts and heuristics), stopped once its point is within
        `gap` of its bound (None: proven). Its point is returned only when it meets every row
        exactly (else `hint`, as `feasible`)."""
        if self._left(deadline) < MIN_SECONDS:
            value = None if hint is None else exact_dot(costs, hint) + constant
            return StageResult(GoalStatus.TIME_LIMIT, hint, value, None, time.perf_counter() - started)
        highs = self.highs
        highs.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), costs.astype(np.float64))
        highs.changeObjectiveSense(highspy.ObjSense.kMinimize)
        limit = self._left(deadline) * share
        highs.setOptionValue("time_limit", limit)
        if hint is not None:
            _start_from(highs, hint)
        with _search_limits(highs, nodes, gap):
            run = _run_mip(highs, limit, self._entries())
        seconds = time.perf_counter() - started
        status = run.status
        if status == highspy.HighsModelStatus.kInfeasible:
            if hint is not None:  # a start that meets every row exactly says otherwise: no proof
                return StageResult(GoalStatus.FEASIBLE, hint, exact_dot(costs, hint) + constant, None, seconds)
            return StageResult(GoalStatus.INFEASIBLE, None, None, None, seconds)
        values = run.point
        # objectives are integers: the dual bound's ceiling (27.000000000000078 is 27)
        bound = float(math.ceil(run.dual_bound - 1e-6) + constant) if np.isfinite(run.dual_bound) else None
        if values is not None and not self.feasible(values):  # within HiGHS's tolerances, not exactly
            values = None
            if hint is not None:
                return StageResult(GoalStatus.FEASIBLE, hint, exact_dot(costs, hint) + constant, bound, seconds)
        if values is None:
            return StageResult(GoalStatus.TIME_LIMIT, None, None, None, seconds)
        value = exact_dot(costs, values) + constant
        if status == highspy.HighsModelStatus.kOptimal and (bound is None or value == bound):
            kind = GoalStatus.OPTIMAL
        elif status == highspy.HighsModelStatus.kTimeLimit:
            kind = GoalStatus.TIME_LIMIT
        else:
            kind = GoalStatus.FEASIBLE
        return StageResult(kind, values, value, bound, seconds)


def start(model: LinearModel) -> MilpSession:
    """The registry's entry point (optimizer.backends): a session with the engine's settings."""
    return MilpSession(model)
