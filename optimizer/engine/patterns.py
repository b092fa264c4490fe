"""The pattern Streams formulation: the compressed model with the tasks merged as well, for
sequences in which nothing tells two tasks of one subtopology apart (no stickiness, no lags, no
cost that differs between tasks of a subtopology): balance, standby diversity, subtopology spread,
and costs that depend only on the subtopology.

Such tasks are interchangeable. What an assignment decides for them is how many take each
*pattern*: the client class of the active and the number of standbys in each class (classes as in
`optimizer.engine.compressed`). The variables are those numbers, per task group (subtopology x
stateful), and the compressed model's counts placed on each client (za, zs), tied to them class by
class. Everything a task costs is a function of its pattern: sharing a rack or tag value
(`copies_beyond`) is a coefficient per pattern instead of a variable and a row per task. The
linear relaxation is that of the convex hull of each task's patterns: at least as tight as the
compressed model's, and far smaller. For 1,000 tasks x 50 clients in 9 tag classes with two
standbys, 1,988 variables (patterns and placed counts) instead of the compressed model's 15,236
(docs/engine.md, "The pattern Streams model").

Any assignment maps onto the model with the same goal values, so its optimum bounds the full
model's from below. `decode` hands each group's patterns to its tasks in index order (they are
interchangeable) and spreads every class's copies over its clients with the compressed model's
flows; the engine checks the goals' values on the result as it does for the compressed model.

A goal that asks for something per task (`copies_in`), or prices two tasks of a subtopology
differently, raises `NotCompressible` while encoding: the engine then uses the compressed model.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Literal

import numpy as np

from optimizer.costs import StreamsIndex
from optimizer.engine.compressed import CompressedStreamsFormulation, DecodeError, NotCompressible, client_classes, special_clients
from optimizer.formulation import COUNT_BOUND, UNBOUNDED, LinExpr
from optimizer.goal import APART, Assignment
from optimizer.model.solution import ClientAssignment
from optimizer.model.streams import StreamsProblem

EMPTY = np.empty(0, dtype=np.int64)


def _standby_patterns(class_size: np.ndarray, standbys: int) -> tuple[np.ndarray, np.ndarray]:
    """(active class, standbys per class) of every pattern of a stateful task: its copies on
    distinct clients, so no class gets more than it has clients."""
    n_classes = len(class_size)
    combos = np.array(list(itertools.combinations_with_replacement(range(n_classes), standbys)), dtype=np.int64)
    counts = np.zeros((len(combos), n_classes), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(len(combos)), standbys), combos.ravel()), 1)
    active = np.repeat(np.arange(n_classes), len(combos))
    standby = np.tile(counts, (n_classes, 1))
    copies = standby.copy()
    copies[np.arange(len(active)), active] += 1
    fits = (copies <= class_size[None, :]).all(axis=1)
    return active[fits], standby[fits]


def pattern_variables(
    problem: StreamsProblem, distinguished: list[np.ndarray] | None = None, apart: frozenset[str] = APART, split: bool = False
) -> int | None:
    """Variables of the pattern model before goals add theirs (patterns counted before those that
    do not fit the classes are dropped; `split`: with `split_classes`), or None when some task
    has clients of its own (`special_clients`: the goals tell tasks apart)."""
    index = StreamsIndex.of(problem)
    if special_clients(index, distinguished, apart).any():
        return None
    standbys = problem.effective_standby_replicas if index.stateful.any() else 0
    classes = client_classes(index, problem, apart)
    if split:
        classes = split_classes(classes, 1 + standbys)
    n_classes = int(classes.max(initial=-1)) + 1
    keys = np.unique(index.subtopology * 2 + index.stateful)
    stateful_groups = int((keys % 2 == 1).sum())
    with_standbys = stateful_groups if standbys else 0
    counts = (len(keys) - with_standbys) * n_classes + with_standbys * n_classes * math.comb(n_classes + standbys - 1, standbys)
    placed = len(keys) * len(index.clients) + (len(index.clients) if with_standbys else 0)
    return counts + placed


def split_classes(class_of: np.ndarray, copies: int) -> np.ndarray:
    """Classes with every client of a class of at most `copies` clients in a class of its own.
    In such a class a task's copies can take every client, and which of them is the active
    matters: the counts of the merged class may then not be spreadable (two clients, three tasks
    with an active and a standby there, and the standbys of two tasks with both standbys there
    filling one client, leave the other client more actives than its count). Numbered in the
    order of their first client."""
    size = np.bincount(class_of)
    key = np.where(size[class_of] <= copies, len(size) + np.arange(len(class_of)), class_of)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    return order[inverse].astype(np.int64)


class PatternStreamsFormulation(CompressedStreamsFormulation):
    """The pattern model: per task group, a count per pattern (`count[g]`, patterns in
    `pattern_active[g]` and `pattern_standby[g]`, their copies per class in `pattern_copies[g]`),
    the compressed model's placed counts (za, zs)
    and no direct or routed variable. Goals see the compressed model's members, except
    `copies_in` (`NotCompressible`)."""

    kind: Literal["streams"] = "streams"

    def __init__(self, problem: StreamsProblem, apart: frozenset[str] = APART, split: bool = False):
        self._classes(problem, None, apart)
        if self.special.any():
            raise NotCompressible("some task has clients of its own (state or a goal's pairs): no patterns")
        if split:
            self._set_classes(split_classes(self.class_of, 1 + self.standbys))
        model, c, n_classes = self.model, self.n_clients, self.n_classes
        model.counts = True
        self.da = self.da_rows = self.da_cols = self.da_key = self.ds = self.ds_rows = self.ds_cols = EMPTY
        n_groups = len(self.group_stateful)
        self.group_tasks = [np.flatnonzero(self.group_of == g) for g in range(n_groups)]
        self.with_standbys = self.group_stateful & (self.standbys > 0)
        plain = (np.arange(n_classes), np.zeros((n_classes, n_classes), dtype=np.int64))
        spread = _standby_patterns(self.class_size, self.standbys) if self.with_standbys.any() else plain
        self.pattern_active = [spread[0] if s else plain[0] for s in self.with_standbys]
        self.pattern_standby = [spread[1] if s else plain[1] for s in self.with_standbys]
        one_hot = np.eye(n_classes, dtype=np.int64)
        self.pattern_copies = [standby + one_hot[active] for active, standby in zip(self.pattern_active, self.pattern_standby, strict=True)]
        self.count = [model.add_vars(len(a), 0, len(tasks)) for a, tasks in zip(self.pattern_active, self.group_tasks, strict=True)]
        group_size = np.array([len(tasks) for tasks in self.group_tasks], dtype=np.int64)
        self.za = model.add_vars(n_groups * c, 0, np.repeat(group_size, c)).reshape(n_groups, c)
        n_stateful = len(self.stateful_rows) if self.standbys else 0
        self.zs = model.add_vars(c if n_stateful else 0, 0, n_stateful).reshape(1 if n_stateful else 0, c)
        for g in range(n_groups):
            model.add_rows(np.zeros(len(self.count[g]), dtype=np.int64), self.count[g], 1, [group_size[g]], [group_size[g]])
            # the group's actives in each class are the ones placed on the class's clients
            model.add_rows(
                np.concatenate([self.pattern_active[g], self.class_of]),
                np.concatenate([self.count[g], self.za[g]]),
                np.concatenate([np.ones(len(self.count[g]), dtype=np.int64), -np.ones(c, dtype=np.int64)]),
                np.zeros(n_classes), np.zeros(n_classes),
            )  # fmt: skip
        self.with_standby_in = self.with_copies_in = EMPTY
        if n_stateful:
            self._standby_rows()

    def _standby_rows(self) -> None:
        """Standbys placed in a class are the patterns' standbys there; and per client, Hall's
        condition for a single client: at most one standby per task with a standby in its class,
        at most one copy per stateful task with a copy in its class."""
        model, c, n_classes = self.model, self.n_clients, self.n_classes
        stateful = np.flatnonzero(self.with_standbys)
        counts = np.concatenate([self.count[g] for g in stateful])
        standby = np.concatenate([self.pattern_standby[g] for g in stateful])
        copies = np.concatenate([self.pattern_copies[g] for g in stateful])
        self.with_standby_in = model.add_vars(n_classes, 0, COUNT_BOUND)
        self.with_copies_in = model.add_vars(n_classes, 0, COUNT_BOUND)
        for per_class, matrix in ((None, standby), (self.with_standby_in, standby > 0), (self.with_copies_in, copies > 0)):
            pattern, klass = np.nonzero(matrix)
            if per_class is None:  # sum of patterns' standbys in k - zs over k's clients = 0
                rows = np.concatenate([klass, self.class_of])
                cols = np.concatenate([counts[pattern], self.zs[0]])
                coefs = np.concatenate([matrix[pattern, klass], -np.ones(c, dtype=np.int64)])
            else:  # tasks with a standby (a copy) in k - the variable = 0
                rows = np.concatenate([klass, np.arange(n_classes)])
                cols = np.concatenate([counts[pattern], per_class])
                coefs = np.concatenate([np.ones(len(pattern), dtype=np.int64), -np.ones(n_classes, dtype=np.int64)])
            model.add_rows(rows, cols, coefs, np.zeros(n_classes), np.zeros(n_classes))
        placed = self.za[self.group_stateful]
        rows = np.concatenate([np.arange(c), np.arange(c), np.tile(np.arange(c), len(placed)) + c, np.arange(c) + c, np.arange(c) + c])
        cols = np.concatenate([self.zs[0], self.with_standby_in[self.class_of], placed.ravel(), self.zs[0], self.with_copies_in[self.class_of]])
        coefs = np.concatenate([np.ones(c), -np.ones(c), np.ones(placed.size + c), -np.ones(c)]).astype(np.int64)
        model.add_rows(rows, cols, coefs, np.full(2 * c, -UNBOUNDED), np.zeros(2 * c, dtype=np.int64))

    # ------------------------------------------------------------------ what goals encode with

    def _per_group(self, values: np.ndarray, rows_of: Callable[[int, np.ndarray], np.ndarray | None]) -> list[np.ndarray | None]:
        """Per group, the one row of `values` (rows x classes) that all its tasks share (`rows_of`
        gives their rows; None for a group it gives none, such as stateless groups for standby
        costs); NotCompressible when two tasks of a group differ."""
        shared: list[np.ndarray | None] = []
        for g, tasks in enumerate(self.group_tasks):
            rows = rows_of(g, tasks)
            if rows is None or not len(rows):
                shared.append(None)
                continue
            mine = values[rows]
            if (mine != mine[0]).any():
                raise NotCompressible("a goal prices tasks of one subtopology differently: no patterns")
            shared.append(mine[0])
        return shared

    def active_cost(self, cost: np.ndarray) -> LinExpr:
        values = self._class_values(np.asarray(cost, dtype=np.int64), self.special)
        total = LinExpr.zero()
        for g, row in enumerate(self._per_group(values, lambda g, tasks: tasks)):
            if row is not None:
                total += LinExpr.of(self.count[g], row[self.pattern_active[g]])
        return total

    def standby_cost(self, cost: np.ndarray) -> LinExpr:
        if not self.standbys:
            return LinExpr.zero()
        values = self._class_values(np.asarray(cost, dtype=np.int64), self.special[self.stateful_rows])
        total = LinExpr.zero()
        shared = self._per_group(values, lambda g, tasks: self.stateful_position[tasks] if self.with_standbys[g] else None)
        for g, row in enumerate(shared):
            if row is not None:
                total += LinExpr.of(self.count[g], self.pattern_standby[g] @ row)
        return total

    def copies_in(self, clients: np.ndarray) -> list[np.ndarray]:
        raise NotCompressible("a goal counts copies task by task (copies_in): no patterns")

    def copies_beyond(self, clients: np.ndarray, allowed: int = 1) -> LinExpr:
        classes = np.unique(self.class_of[clients])
        if self.class_size[classes].sum() != len(np.unique(clients)):
            raise NotCompressible("a goal counts copies on part of a rack (and tag values)")
        total = LinExpr.zero()
        for g in np.flatnonzero(self.group_stateful).tolist():
            inside = self.pattern_copies[g][:, classes].sum(axis=1)
            total += LinExpr.of(self.count[g], np.maximum(inside - allowed, 0))
        return total

    # ------------------------------------------------------------------ assignments in and out

    def encode(self, assignment: Assignment) -> np.ndarray | None:
        values = np.zeros(self.model.n_vars, dtype=np.int64)
        tasks, clients = self.index.task_position, self.index.client_position
        active = np.full(self.n_tasks, -1, dtype=np.int64)
        standby = np.zeros((self.n_tasks, self.n_classes), dtype=np.int64)
        for client_id, held in assignment.items():
            k = clients.get(client_id)
            if k is None:
                return None
            for task in held.active:
                active[tasks[task]] = self.class_of[k]
                values[self.za[self.group_of[tasks[task]], k]] += 1
            for task in held.standby:
                t = tasks[task]
                if not self.with_standbys[self.group_of[t]]:
                    return None
                standby[t, self.class_of[k]] += 1
                values[self.zs[0, k]] += 1
        if (active < 0).any():
            return None
        for g, rows in enumerate(self.group_tasks):
            known = {(int(a), s.tobytes()): p for p, (a, s) in enumerate(zip(self.pattern_active[g], self.pattern_standby[g], strict=True))}
            for t in rows.tolist():
                p = known.get((int(active[t]), standby[t].tobytes()))
                if p is None:
                    return None
                values[self.count[g][p]] += 1
        if len(self.with_standby_in):
            copies = standby.copy()
            copies[np.arange(self.n_tasks), active] += 1
            stateful = self.with_standbys[self.group_of]
            values[self.with_standby_in] = (standby[stateful] > 0).sum(axis=0)
            values[self.with_copies_in] = (copies[stateful] > 0).sum(axis=0)
        return values

    def decode(self, solution: np.ndarray) -> dict[str, ClientAssignment]:
        values = np.rint(solution).astype(np.int64)
        routed = np.zeros((self.n_tasks, self.n_classes), dtype=np.int64)
        standby_counts = np.zeros((len(self.stateful_rows), self.n_classes), dtype=np.int64) if self.standbys else None
        for g, tasks in enumerate(self.group_tasks):
            counts = values[self.count[g]]
            if int(counts.sum()) != len(tasks) or (counts < 0).any():
                raise DecodeError("a group's pattern counts do not add up to its tasks")
            which = np.repeat(np.arange(len(counts)), counts)  # the patterns, handed out in index order
            routed[tasks, self.pattern_active[g][which]] = 1
            if standby_counts is not None and self.with_standbys[g]:
                standby_counts[self.stateful_position[tasks]] = self.pattern_standby[g][which]
        active = np.full(self.n_tasks, -1, dtype=np.int64)
        holds = np.zeros((self.n_tasks, self.n_clients), dtype=bool)
        return self._spread_classes(active, holds, [], [], routed, standby_counts, values)
