"""The back-end-neutral model: problem -> integer linear formulation -> back-end -> assignment.

In the style of cvxpy: a problem becomes a `Formulation` (decision variables in numpy index
arrays, the assignment's own constraints), goals add their objective expressions and auxiliary
variables and rows to it, a back-end (CP-SAT, MILP) solves it, and `decode` turns the solution
vector back into an assignment (the inverse data is the variable index arrays).

Streams: `x[t, k]` = 1 when task t is active on client k; `y[i, k]` = 1 when stateful task
`stateful_rows[i]` has a standby on k. Every task has one active, every stateful task exactly
`min(num.standby.replicas, clients - 1)` standbys, and no client holds two copies of a task.
Consumers: one variable per (partition, subscribed member); every partition of a subscribed topic
goes to exactly one subscriber. Everything is integer with integer coefficients.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from optimizer.costs import StreamsIndex
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import partition_id, partition_key
from optimizer.model.solution import ClientAssignment
from optimizer.model.streams import StreamsProblem

UNBOUNDED = 2**40
"""No bound: a row or variable bound at or beyond +-UNBOUNDED is none on that side. The neutral
model keeps it as a number; each back-end translates it to its own infinity in one place (HiGHS
+-inf, CP-SAT the widest row domain). Real bounds (counts, costs, objective values, tolerances)
stay far below it."""

COUNT_BOUND = 10**9
"""Upper bound of an auxiliary count (copies, moves) that has no natural one: a real, finite bound,
because CP-SAT needs finite variable domains, and far below UNBOUNDED, so every back-end keeps it."""


@dataclass
class LinExpr:
    """sum(coef[i] * var[index[i]]) + constant, integer coefficients."""

    index: np.ndarray
    coef: np.ndarray
    constant: int = 0

    @classmethod
    def zero(cls) -> LinExpr:
        return cls(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), 0)

    @classmethod
    def of(cls, index, coef, constant: int = 0) -> LinExpr:
        index = np.asarray(index, dtype=np.int64)
        coef = np.broadcast_to(np.asarray(coef, dtype=np.int64), index.shape).ravel()
        index = index.ravel()
        keep = coef != 0
        return cls(index[keep], coef[keep], int(constant))

    def __add__(self, other: LinExpr) -> LinExpr:
        return LinExpr(
            np.concatenate([self.index, other.index]),
            np.concatenate([self.coef, other.coef]),
            self.constant + other.constant,
        )

    def scaled(self, factor: int) -> LinExpr:
        return LinExpr(self.index, self.coef * factor, self.constant * factor)

    def value(self, solution: np.ndarray) -> int:
        return exact_dot(self.coef, solution[self.index]) + self.constant

    def compact(self) -> LinExpr:
        """Merge repeated variables."""
        if not len(self.index):
            return self
        unique, inverse = np.unique(self.index, return_inverse=True)
        coef = np.zeros(len(unique), dtype=np.int64)
        np.add.at(coef, inverse, self.coef)
        return LinExpr.of(unique, coef, self.constant)


@dataclass
class LinearModel:
    """Integer variables with bounds and ranged linear rows, kept as numpy chunks."""

    lower: list[np.ndarray] = field(default_factory=list)
    upper: list[np.ndarray] = field(default_factory=list)
    n_vars: int = 0
    row_chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    row_lo: list[np.ndarray] = field(default_factory=list)
    row_hi: list[np.ndarray] = field(default_factory=list)
    n_rows: int = 0
    counts: bool = False
    """A model of counts (the pattern model, optimizer.engine.patterns): its integer variables are
    numbers of tasks, not 0/1 choices, and the MILP back-end searches its points with CP-SAT."""

    @property
    def entries(self) -> int:
        """Nonzero coefficients of the rows so far (what loading the model into a solver costs)."""
        return sum(len(cols) for _, cols, _ in self.row_chunks)

    def add_vars(self, count: int, lower=0, upper=1) -> np.ndarray:
        start = self.n_vars
        self.lower.append(np.broadcast_to(np.asarray(lower, dtype=np.int64), (count,)).copy())
        self.upper.append(np.broadcast_to(np.asarray(upper, dtype=np.int64), (count,)).copy())
        self.n_vars += count
        return np.arange(start, start + count, dtype=np.int64)

    def add_rows(self, rows, cols, coefs, lo, hi) -> np.ndarray:
        """Rows `lo[r] <= sum coefs * x[cols] <= hi[r]`; `rows` number them from 0 in this call."""
        rows = np.asarray(rows, dtype=np.int64)
        lo = np.atleast_1d(np.asarray(lo, dtype=np.int64))
        count = len(lo)
        hi = np.broadcast_to(np.asarray(hi, dtype=np.int64), (count,)).copy()
        cols = np.asarray(cols, dtype=np.int64)
        coefs = np.broadcast_to(np.asarray(coefs, dtype=np.int64), cols.shape).copy()
        start = self.n_rows
        self.row_chunks.append((rows + start, cols, coefs))
        self.row_lo.append(lo)
        self.row_hi.append(hi)
        self.n_rows += count
        return np.arange(start, start + count)

    def add_expr_row(self, expr: LinExpr, lo: int, hi: int) -> int:
        """One row `lo <= expr <= hi` (the expression's constant moved to the bounds that are
        not +-UNBOUNDED)."""
        expr = expr.compact()
        return int(
            self.add_rows(
                np.zeros(len(expr.index), dtype=np.int64),
                expr.index,
                expr.coef,
                [max(lo - expr.constant, -UNBOUNDED) if lo > -UNBOUNDED else -UNBOUNDED],
                [min(hi - expr.constant, UNBOUNDED) if hi < UNBOUNDED else UNBOUNDED],
            )[0]
        )

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.lower:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        return np.concatenate(self.lower), np.concatenate(self.upper)

    def matrix(self) -> tuple[SparseRows, np.ndarray, np.ndarray]:
        if self.row_chunks:
            rows = np.concatenate([c[0] for c in self.row_chunks])
            cols = np.concatenate([c[1] for c in self.row_chunks])
            vals = np.concatenate([c[2] for c in self.row_chunks])
            lo, hi = np.concatenate(self.row_lo), np.concatenate(self.row_hi)
        else:
            rows = cols = vals = np.empty(0, dtype=np.int64)
            lo = hi = np.empty(0, dtype=np.int64)
        return SparseRows.of(rows, cols, vals, (self.n_rows, self.n_vars)), lo, hi


@dataclass(frozen=True)
class SparseRows:
    """An integer matrix by rows (compressed sparse rows, as the back-ends load it): row r's
    entries are `data[indptr[r]:indptr[r + 1]]` in the columns `indices[...]`, ascending, each
    column once. numpy only: scipy.sparse, which did this before, took a tenth of a second to
    import, in every command and every service child, before any problem was read."""

    shape: tuple[int, int]
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray

    @classmethod
    def of(cls, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, shape: tuple[int, int]) -> SparseRows:
        """The matrix of the entries (rows[i], cols[i], vals[i]), an entry given twice summed."""
        rows, cols, vals = (np.asarray(a, dtype=np.int64) for a in (rows, cols, vals))
        key = rows * max(shape[1], 1) + cols
        if len(key) and not bool(np.all(key[1:] > key[:-1])):  # the models add rows nearly in order
            order = np.argsort(key, kind="stable")
            key, rows, cols, vals = key[order], rows[order], cols[order], vals[order]
            first = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
            if len(first) < len(key):
                # each entry's sum as a difference of running sums: where these wrap past 2**63,
                # the differences still come out right, as long as each sum itself fits
                running, last = np.cumsum(vals), np.append(first[1:], len(key)) - 1
                rows, cols, vals = rows[first], cols[first], running[last] - np.concatenate(([0], running[last[:-1]]))
        indptr = np.zeros(shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
        return cls(shape, indptr, cols, vals)

    @property
    def nnz(self) -> int:
        return len(self.data)

    def __matmul__(self, values: np.ndarray) -> np.ndarray:
        """Each row's sum of its entries times `values` at their columns (in `values`' type:
        int64 wraps past 2**63, an object array of Python integers does not)."""
        products = self.data * np.asarray(values)[self.indices]
        sums = np.zeros(self.shape[0], dtype=products.dtype)
        used = np.flatnonzero(np.diff(self.indptr))
        if len(used):
            sums[used] = np.add.reduceat(products, self.indptr[used])
        return sums

    def columns(self) -> SparseRows:
        """The same matrix by columns: the rows of its transpose."""
        order = np.argsort(self.indices, kind="stable")  # within a column, rows stay ascending
        rows = np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.indptr))[order]
        indptr = np.zeros(self.shape[1] + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.indices, minlength=self.shape[1]), out=indptr[1:])
        return SparseRows((self.shape[1], self.shape[0]), indptr, rows, self.data[order])

    def head(self, count: int) -> SparseRows:
        """Its first `count` rows."""
        end = int(self.indptr[count])
        return SparseRows((count, self.shape[1]), self.indptr[: count + 1], self.indices[:end], self.data[:end])


class CheckedRows:
    """A model's bounds and rows, with the rows a session added since, for checking a point in
    integer arithmetic: what a back-end returns, or a start it is given, is used only when it
    meets every one of them exactly (a solver's tolerances let through points that miss a row
    with large coefficients by more than one unit)."""

    def __init__(self, bounds: tuple[np.ndarray, np.ndarray], rows: tuple[SparseRows, np.ndarray, np.ndarray]):
        self.lower, self.upper = bounds
        self.matrix, self.row_lo, self.row_hi = rows
        self.added: list[tuple[np.ndarray, np.ndarray, int, int]] = []
        """Rows added since, as (index, coef, lo, hi), the expression's constant moved to the bounds."""
        matrix = self.matrix
        # the largest |row sum| per unit of the largest |value|: beyond 2^62 int64 could overflow
        self._reach = int(np.abs(matrix.data).max()) * int(np.diff(matrix.indptr).max()) if matrix.nnz else 0

    def add(self, expr: LinExpr, lo: int, hi: int) -> None:
        """Keep `lo <= expr <= hi` (+-UNBOUNDED: no bound on that side, kept as such)."""
        expr = expr.compact()
        low = -UNBOUNDED if lo <= -UNBOUNDED else lo - expr.constant
        high = UNBOUNDED if hi >= UNBOUNDED else hi - expr.constant
        self.added.append((expr.index, expr.coef, low, high))

    def pop(self) -> None:
        self.added.pop()

    def feasible(self, values: np.ndarray | None) -> bool:
        """Whether the integer vector `values` meets every bound and row, in integer arithmetic."""
        if values is None or len(values) != len(self.lower) or np.any(values < self.lower) or np.any(values > self.upper):
            return False
        if self.matrix.nnz:
            if self._reach * int(np.abs(values).max(initial=0)) < 2**62:
                sums = self.matrix @ values
            else:
                sums = _exact_products(self.matrix, values)
            if np.any(sums < self.row_lo) or np.any(sums > self.row_hi):
                return False
        return all(lo <= exact_dot(coef, values[index]) <= hi for index, coef, lo, hi in self.added)


def exact_dot(coef: np.ndarray, values: np.ndarray) -> int:
    """sum(coef * values) as a Python integer, without int64 overflow."""
    if not len(coef):
        return 0
    if int(np.abs(coef).max()) * int(np.abs(values).max(initial=0)) * len(coef) < 2**62:
        return int(np.dot(coef, values))
    return sum(int(c) * int(v) for c, v in zip(coef.tolist(), values.tolist(), strict=True))


def _exact_products(matrix: SparseRows, values: np.ndarray) -> np.ndarray:
    """matrix @ values in Python integers (an object array)."""
    products = matrix.data.astype(object) * values[matrix.indices].astype(object)
    sums = np.zeros(matrix.shape[0], dtype=object)
    rows = np.flatnonzero(np.diff(matrix.indptr))
    sums[rows] = np.add.reduceat(products, matrix.indptr[rows])
    return sums


class Formulation:
    """The problem's decision variables and assignment constraints; goals extend it.

    `repairs` holds, per goal, a function that sets the goal's auxiliary variables to their least
    feasible values given the assignment variables: a previous stage leaves them anywhere in their
    bounds, and a start whose objective is the goal's true value helps every back-end.
    """

    kind: str
    problem: StreamsProblem | ConsumerProblem
    model: LinearModel
    repairs: list

    def repair(self, solution: np.ndarray) -> np.ndarray:
        solution = solution.copy()
        for fix in self.repairs:
            fix(solution)
        return solution

    def decode(self, solution: np.ndarray) -> dict[str, ClientAssignment]:
        raise NotImplementedError

    def encode(self, assignment) -> np.ndarray | None:
        """The variable values of an assignment (for hints), or None if it does not fit."""
        raise NotImplementedError


class StreamsFormulation(Formulation):
    kind: Literal["streams"] = "streams"
    problem: StreamsProblem

    def __init__(self, problem: StreamsProblem):
        self.problem = problem
        self.index = StreamsIndex.of(problem)
        self.model = LinearModel()
        self.repairs = []
        self.n_tasks, self.n_clients = len(self.index.tasks), len(self.index.clients)
        self.stateful_rows = np.flatnonzero(self.index.stateful)
        self.standbys = problem.effective_standby_replicas if len(self.stateful_rows) else 0
        model = self.model
        t, c = self.n_tasks, self.n_clients
        self.x = model.add_vars(t * c).reshape(t, c)
        model.add_rows(np.repeat(np.arange(t), c), self.x.ravel(), 1, np.ones(t), np.ones(t))
        n_stateful = len(self.stateful_rows) if self.standbys else 0
        self.y = model.add_vars(n_stateful * c).reshape(n_stateful, c)
        if n_stateful:
            model.add_rows(
                np.repeat(np.arange(n_stateful), c), self.y.ravel(), 1,
                np.full(n_stateful, self.standbys), np.full(n_stateful, self.standbys),
            )  # fmt: skip
            pairs = n_stateful * c
            model.add_rows(
                np.repeat(np.arange(pairs), 2),
                np.stack([self.x[self.stateful_rows].ravel(), self.y.ravel()], axis=1).ravel(),
                1, np.zeros(pairs), np.ones(pairs),
            )  # fmt: skip

    @property
    def clients(self) -> list[str]:
        return [c.id for c in self.index.clients]

    # ------------------------------------------------------------------ what goals encode with

    def active_cost(self, cost: np.ndarray) -> LinExpr:
        """sum of cost[t, k] over tasks t active on client k (cost: tasks x clients)."""
        return LinExpr.of(self.x, cost)

    def standby_cost(self, cost: np.ndarray) -> LinExpr:
        """sum of cost[i, k] over standbys of stateful task `stateful_rows[i]` on client k."""
        return LinExpr.of(self.y, cost) if len(self.y) else LinExpr.zero()

    def client_members(self, which: str) -> list[np.ndarray]:
        """Per client, variables whose sum is its number of actives (`which="active"`) or of
        stateful copies, actives and standbys (`"stateful"`)."""
        if which == "active":
            return [self.x[:, k] for k in range(self.n_clients)]
        copies = self.x[self.stateful_rows]
        return [np.concatenate([copies[:, k], self.y[:, k] if len(self.y) else []]).astype(np.int64) for k in range(self.n_clients)]

    def group_members(self, groups: np.ndarray, pairs: np.ndarray) -> list[np.ndarray]:
        """For each (group, client) of `pairs`, variables whose sum is the number of actives of
        that group (`groups`: one per task) on that client."""
        rows_of = {int(g): np.flatnonzero(groups == g) for g in np.unique(pairs[:, 0])} if len(pairs) else {}
        return [self.x[rows_of[int(g)], int(k)] for g, k in pairs]

    def copies_in(self, clients: np.ndarray) -> list[np.ndarray]:
        """For each stateful task (`stateful_rows` order), variables whose sum is its number of
        copies (active and standbys) on `clients`."""
        active = self.x[self.stateful_rows][:, clients]
        if not len(self.y):
            return list(active)
        return list(np.concatenate([active, self.y[:, clients]], axis=1))

    def copies_beyond(self, clients: np.ndarray, allowed: int = 1) -> LinExpr:
        """Sum over stateful tasks of max(0, copies on `clients` - `allowed`)."""
        return copies_beyond(self, clients, allowed)

    def decode(self, solution: np.ndarray) -> dict[str, ClientAssignment]:
        values = np.rint(solution).astype(np.int64)
        active_at = values[self.x].argmax(axis=1)
        if not len(self.y):
            return self.index.assignment(active_at.tolist())
        rows, cols = np.nonzero(values[self.y])
        return self.index.assignment(active_at.tolist(), self.stateful_rows[rows].tolist(), cols.tolist())

    def encode(self, assignment) -> np.ndarray | None:
        values = np.zeros(self.model.n_vars, dtype=np.int64)
        position = self.index.task_position
        stateful_position = {row: i for i, row in enumerate(self.stateful_rows.tolist())}
        for client_id, held in assignment.items():
            k = self.index.client_position.get(client_id)
            if k is None:
                return None
            for task in held.active:
                values[self.x[position[task], k]] = 1
            for task in held.standby:
                i = stateful_position.get(position[task])
                if i is None or not len(self.y):
                    return None
                values[self.y[i, k]] = 1
        return values


class ConsumerFormulation(Formulation):
    kind: Literal["consumer"] = "consumer"
    problem: ConsumerProblem

    def __init__(self, problem: ConsumerProblem):
        self.problem = problem
        self.model = LinearModel()
        self.repairs = []
        topics = problem.topic_by_name
        self.members = sorted(m.id for m in problem.members)
        member_position = {m: i for i, m in enumerate(self.members)}
        subscribers: dict[str, list[int]] = {}
        for member in problem.members:
            for topic in member.subscriptions:
                if topic in topics:
                    subscribers.setdefault(topic, []).append(member_position[member.id])
        self.partitions: list[str] = []
        pair_partition, pair_member = [], []
        for topic in sorted(subscribers):
            who = sorted(subscribers[topic])
            for p in range(topics[topic].partitions):
                row = len(self.partitions)
                self.partitions.append(partition_id(topic, p))
                pair_partition += [row] * len(who)
                pair_member += who
        self.pair_partition = np.array(pair_partition, dtype=np.int64)
        self.pair_member = np.array(pair_member, dtype=np.int64)
        self.partition_position = {p: i for i, p in enumerate(self.partitions)}
        self.member_position = member_position
        self.x = self.model.add_vars(len(self.pair_partition))
        n = len(self.partitions)
        self.model.add_rows(self.pair_partition, self.x, 1, np.ones(n), np.ones(n))

    def member_sizes(self) -> list[LinExpr]:
        return [LinExpr.of(self.x[self.pair_member == m], 1) for m in range(len(self.members))]

    def pair_of(self) -> dict[tuple[int, int], int]:
        return {
            (int(p), int(m)): int(v)
            for p, m, v in zip(self.pair_partition, self.pair_member, self.x, strict=True)
        }

    def decode(self, solution: np.ndarray) -> dict[str, ClientAssignment]:
        values = np.rint(solution[self.x]).astype(np.int64)
        chosen = np.flatnonzero(values)
        held: dict[int, list[str]] = {m: [] for m in range(len(self.members))}
        for pair in chosen.tolist():
            held[int(self.pair_member[pair])].append(self.partitions[int(self.pair_partition[pair])])
        return {member: ClientAssignment(active=tuple(sorted(held[i], key=partition_key))) for i, member in enumerate(self.members)}

    def encode(self, assignment) -> np.ndarray | None:
        values = np.zeros(self.model.n_vars, dtype=np.int64)
        pairs = self.pair_of()
        for member, held in assignment.items():
            m = self.member_position.get(member)
            if m is None:
                return None
            for partition in held.active:
                var = pairs.get((self.partition_position.get(partition, -1), m))
                if var is None:
                    return None
                values[var] = 1
        return values


def formulate(problem: StreamsProblem | ConsumerProblem) -> StreamsFormulation | ConsumerFormulation:
    if isinstance(problem, StreamsProblem):
        return StreamsFormulation(problem)
    return ConsumerFormulation(problem)


def copies_beyond(formulation, clients: np.ndarray, allowed: int) -> LinExpr:
    """`copies_beyond` from `copies_in`: a variable per stateful task, at least its copies on
    `clients` beyond `allowed` (and repaired to exactly that)."""
    members = formulation.copies_in(clients)
    if not members:
        return LinExpr.zero()
    n = len(members)
    excess = formulation.model.add_vars(n, 0, 1 + formulation.standbys)  # loose: the copies, at most
    lengths = np.array([len(m) for m in members], dtype=np.int64)
    rows = np.repeat(np.arange(n), lengths + 1)
    cols = np.concatenate([np.append(m, v) for m, v in zip(members, excess.tolist(), strict=True)])
    coefs = np.concatenate([np.append(np.ones(len(m), dtype=np.int64), -1) for m in members])
    limits = np.full(n, allowed, dtype=np.int64)
    formulation.model.add_rows(rows, cols, coefs, np.full(n, -UNBOUNDED), limits)
    formulation.repairs.append(excess_repair(excess, members, limits))
    return LinExpr.of(excess, 1)


def excess_repair(variables: np.ndarray, members: list[np.ndarray], limits: np.ndarray):
    """A repair for variables defined as v_r >= sum(members_r) - limit_r, v_r >= 0."""
    flat = np.concatenate(members) if members else np.empty(0, dtype=np.int64)
    starts = np.cumsum([0] + [len(m) for m in members[:-1]]) if members else np.empty(0, dtype=np.int64)
    limits = np.asarray(limits, dtype=np.int64)

    def fix(solution: np.ndarray) -> None:
        if not len(variables):
            return
        sums = np.add.reduceat(solution[flat], starts) if len(flat) else np.zeros(len(variables))
        solution[variables] = np.maximum(sums - limits, 0)

    return fix
