"""The compressed Streams formulation: the same optimisation as the full tasks x clients model,
with the clients that nothing tells apart merged.

Clients of one class (same rack, same values of the `rack.aware.assignment.tags` keys) are
interchangeable for traffic and for standby diversity. A few clients per task are not: those
that held a copy of it or reported a lag for it (stickiness and caught-up price them). Every
other count a built-in goal takes is per client (balance) or per (subtopology, client) (spread),
never per (task, ordinary client). So instead of a variable per (task, client) and copy kind:

* a direct variable per (task, special client): a copy of the task on that client;
* a routed variable per (task, class): the active on some ordinary client of the class; for
  standbys, how many of them go there;
* a count per (group, client) of routed actives placed on the client (groups: subtopology x
  stateful), and per client of routed standbys, equal to the routed variables class by class.

Any assignment maps onto this model with the same goal values (a copy on a special client is
direct, any other copy routed), so its optimum bounds the full model's from below. `decode` turns
a solution back into an assignment by spreading each class's routed copies over its clients with
min-cost flows (one copy of a task per client, ordinary clients first); the engine then checks
every goal's value on that assignment against the stage values. Equal values prove the assignment
optimal for the full model too; otherwise the engine solves the full model, starting from it.

For 1,000 tasks x 50 clients in 3 racks with one standby this is about 12,000 variables instead
of 85,000, and each stage solves in a fraction of the time (docs/engine.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

import numpy as np
from ortools.graph.python import min_cost_flow

from optimizer.costs import StreamsIndex
from optimizer.formulation import COUNT_BOUND, UNBOUNDED, Formulation, LinearModel, LinExpr, copies_beyond
from optimizer.goal import APART, Assignment
from optimizer.model.solution import ClientAssignment
from optimizer.model.streams import StreamsProblem


class NotCompressible(Exception):
    """A goal prices clients of one class differently (the full model is used instead)."""


class DecodeError(Exception):
    """The routed copies of a class cannot be spread over its clients as the counts say."""


def client_classes(index: StreamsIndex, problem: StreamsProblem, apart: frozenset[str] = APART) -> np.ndarray:
    """Class of each client: clients with the same rack and the same tag values share one (as far
    as `apart` names them: `Goal.apart`)."""
    keys = problem.config.rack_aware_assignment_tags if "tags" in apart else []
    racks = index.client_rack if "rack" in apart else np.zeros(len(index.clients), dtype=np.int64)
    signature = [(int(rack), tuple(str(c.tags.get(key)) for key in keys)) for rack, c in zip(racks, index.clients, strict=True)]
    distinct = {s: i for i, s in enumerate(sorted(set(signature)))}
    return np.array([distinct[s] for s in signature], dtype=np.int64)


def special_clients(index: StreamsIndex, distinguished: list[np.ndarray] | None = None, apart: frozenset[str] = APART) -> np.ndarray:
    """tasks x clients, True where a copy of the task is a direct variable: the clients that held
    it or report a lag for it (when `apart` names "state"), and those a goal prices apart from
    their class (`distinguished`)."""
    special = index.state_holders if "state" in apart else np.zeros((len(index.tasks), len(index.clients)), dtype=bool)
    for mask in distinguished or []:
        special = special | mask
    return special


def sizes(problem: StreamsProblem, distinguished: list[np.ndarray] | None = None, apart: frozenset[str] = APART) -> tuple[int, int]:
    """(variables of the compressed model, variables of the full model), roughly, for choosing."""
    index = StreamsIndex.of(problem)
    n_tasks, n_clients = len(index.tasks), len(index.clients)
    n_classes = int(client_classes(index, problem, apart).max(initial=-1)) + 1
    stateful = np.flatnonzero(index.stateful)
    standbys = problem.effective_standby_replicas if len(stateful) else 0
    groups = len(np.unique(index.subtopology * 2 + index.stateful))
    special = special_clients(index, distinguished, apart)
    compressed = int(special.sum()) + n_tasks * n_classes + groups * n_clients
    full = n_tasks * n_clients
    if standbys:
        compressed += int(special[stateful].sum()) + len(stateful) * n_classes + n_clients
        full += len(stateful) * n_clients
    return compressed, full


def _grouped(keys: np.ndarray, values: np.ndarray) -> dict[int, np.ndarray]:
    """values split by key (keys need not be sorted)."""
    if not len(keys):
        return {}
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    unique, starts = np.unique(keys, return_index=True)
    return dict(zip(unique.tolist(), np.split(values, starts[1:]), strict=True))


class CompressedStreamsFormulation(Formulation):
    kind: Literal["streams"] = "streams"
    problem: StreamsProblem

    def __init__(self, problem: StreamsProblem, room: bool = False, distinguished: list[np.ndarray] | None = None, apart: frozenset[str] = APART):
        self._classes(problem, distinguished, apart)
        model, ordinary = self.model, self.ordinary
        t, c, n_classes = self.n_tasks, self.n_clients, self.n_classes
        n_groups = len(self.group_stateful)

        # actives: direct, routed, placed
        self.da_rows, self.da_cols = np.nonzero(self.special)
        self.da_key = self.da_rows * c + self.da_cols
        self.da = model.add_vars(len(self.da_rows))
        self.ra = model.add_vars(t * n_classes, 0, (ordinary > 0).astype(np.int64).ravel()).reshape(t, n_classes)
        group_size = np.bincount(self.group_of, minlength=n_groups)
        self.za = model.add_vars(n_groups * c, 0, np.repeat(group_size, c)).reshape(n_groups, c)
        model.add_rows(
            np.concatenate([self.da_rows, np.repeat(np.arange(t), n_classes)]),
            np.concatenate([self.da, self.ra.ravel()]), 1, np.ones(t), np.ones(t),
        )  # fmt: skip
        self._link(self.ra, self.group_of, self.za, n_groups)

        # standbys of stateful tasks: the same three kinds
        n_stateful = len(self.stateful_rows) if self.standbys else 0
        special = self.special[self.stateful_rows[:n_stateful]]
        self.ds_rows, self.ds_cols = np.nonzero(special)
        self.ds = model.add_vars(len(self.ds_rows))
        spare = np.minimum(self.standbys, ordinary[self.stateful_rows[:n_stateful]])
        self.rs = model.add_vars(n_stateful * n_classes, 0, spare.ravel()).reshape(n_stateful, n_classes)
        self.zs = model.add_vars(c if n_stateful else 0, 0, n_stateful).reshape(1 if n_stateful else 0, c)
        if n_stateful:
            model.add_rows(
                np.concatenate([self.ds_rows, np.repeat(np.arange(n_stateful), n_classes)]),
                np.concatenate([self.ds, self.rs.ravel()]), 1,
                np.full(n_stateful, self.standbys), np.full(n_stateful, self.standbys),
            )  # fmt: skip
            self._link(self.rs, np.zeros(n_stateful, dtype=np.int64), self.zs, 1)
            # no client holds two copies: direct active and direct standby on one client ...
            pair = np.searchsorted(self.da_key, self.stateful_rows[self.ds_rows] * c + self.ds_cols)
            n = len(pair)
            model.add_rows(np.repeat(np.arange(n), 2), np.stack([self.da[pair], self.ds], axis=1).ravel(), 1, np.zeros(n), np.ones(n))
            # ... and routed copies of a task in a class go to distinct ordinary clients
            rows, classes = np.nonzero(ordinary[self.stateful_rows] < 1 + self.standbys)
            keep = ordinary[self.stateful_rows[rows], classes] > 0
            rows, classes = rows[keep], classes[keep]
            n = len(rows)
            model.add_rows(
                np.repeat(np.arange(n), 2),
                np.stack([self.ra[self.stateful_rows[rows], classes], self.rs[rows, classes]], axis=1).ravel(), 1,
                np.zeros(n), ordinary[self.stateful_rows[rows], classes],
            )  # fmt: skip

        if room:
            self._room_rows()

    def _classes(self, problem: StreamsProblem, distinguished: list[np.ndarray] | None, apart: frozenset[str]) -> None:
        """What every compressed model starts from: the client classes, the special clients, the
        task groups (subtopology x stateful), and an empty model."""
        self.problem = problem
        self.index = index = StreamsIndex.of(problem)
        self.model = LinearModel()
        self.repairs = []
        self.n_tasks, self.n_clients = len(index.tasks), len(index.clients)
        self.stateful_rows = np.flatnonzero(index.stateful)
        self.standbys = problem.effective_standby_replicas if len(self.stateful_rows) else 0
        self.special = special_clients(index, distinguished, apart)
        self._set_classes(client_classes(index, problem, apart))
        keys, group_of = np.unique(index.subtopology * 2 + index.stateful, return_inverse=True)
        self.group_of = group_of.astype(np.int64)
        self.group_stateful = keys % 2 == 1
        self.stateful_position = np.full(self.n_tasks, -1, dtype=np.int64)
        self.stateful_position[self.stateful_rows] = np.arange(len(self.stateful_rows))

    def _set_classes(self, class_of: np.ndarray) -> None:
        """The class of each client (numbered from 0), and what follows from it."""
        self.class_of = class_of
        n_classes = self.n_classes = int(class_of.max(initial=-1)) + 1
        self.class_clients = [np.flatnonzero(class_of == k) for k in range(n_classes)]
        self.class_size = np.bincount(class_of, minlength=n_classes)
        one_hot = np.zeros((len(class_of), n_classes), dtype=np.int64)
        one_hot[np.arange(len(class_of)), class_of] = 1
        self.ordinary = self.class_size[None, :] - self.special.astype(np.int64) @ one_hot  # tasks x classes

    def _room_rows(self) -> None:
        """Valid rows that keep the counts spreadable over the clients (Hall's condition for each
        single client): client k takes routed copies only of tasks for which it is ordinary, and
        one copy per task. Without them the counts could ask a client for a copy of a task that
        it already holds, or for two copies of one task.

        Per client k and class C of k: the copies placed on k are at most the tasks ordinary at k
        with a copy routed to C, that is, the copies routed to C, less each task's copies beyond
        its first (its excess), less the copies of tasks special at k (which go to C's other
        clients), where such a task's excess is not subtracted twice. (It was, until enumeration
        found an optimum the rows had cut off: a task held before by k, its active and standby
        both routed to k's class, took two of k's places instead of none.)"""
        model, c, n_classes = self.model, self.n_clients, self.n_classes
        n_groups = self.za.shape[0]
        klass = self.class_of
        fixes = []

        def total(placed: np.ndarray) -> np.ndarray:
            """One variable per (row of `placed`, class): the sum of `placed` over the class."""
            n = placed.shape[0]
            sums = model.add_vars(n * n_classes, 0, COUNT_BOUND).reshape(n, n_classes)
            rows = (np.arange(n)[:, None] * n_classes + klass[None, :]).ravel()
            model.add_rows(
                np.concatenate([np.arange(n * n_classes), rows]),
                np.concatenate([sums.ravel(), placed.ravel()]),
                np.concatenate([np.ones(n * n_classes, dtype=np.int64), -np.ones(placed.size, dtype=np.int64)]),
                np.zeros(n * n_classes), np.zeros(n * n_classes),
            )  # fmt: skip

            def fix(solution: np.ndarray) -> None:
                values = np.zeros((n, n_classes), dtype=np.int64)
                np.add.at(values, (np.repeat(np.arange(n), c), np.tile(klass, n)), solution[placed.ravel()])
                solution[sums] = values

            fixes.append(fix)
            return sums

        def rows_per_client(
            keys: np.ndarray,
            special_vars: np.ndarray,
            base_terms: Callable[[int], tuple[list[int], list[int]]],
            every: Iterable[int] = (),
            special_signs: np.ndarray | None = None,
        ) -> None:
            """A row per key (those of `keys`, and `every`): base_terms(key) + the special_vars of
            that key (times `special_signs`, 1 by default) <= 0."""
            signs_of = np.ones(len(special_vars), dtype=np.int64) if special_signs is None else special_signs
            grouped = _grouped(keys, np.stack([special_vars, signs_of], axis=1))
            empty = np.empty((0, 2), dtype=np.int64)
            rows: list[int] = []
            cols: list[int] = []
            coefs: list[int] = []
            chosen = sorted(set(grouped) | set(every))
            for r, key in enumerate(chosen):
                variables, signs = base_terms(key)
                extra = grouped.get(key, empty)
                rows += [r] * (len(variables) + len(extra))
                cols += [*variables, *extra[:, 0].tolist()]
                coefs += [*signs, *extra[:, 1].tolist()]
            if rows:
                model.add_rows(rows, cols, coefs, np.full(len(chosen), -UNBOUNDED), np.zeros(len(chosen), dtype=np.int64))

        # actives of one group: z[g, k] + routed actives of tasks special at k <= routed in the class
        routed_actives = total(self.za)
        rows, cols = self.da_rows, self.da_cols
        rows_per_client(
            self.group_of[rows] * c + cols,
            self.ra[rows, klass[cols]],
            lambda key: ([int(self.za[key // c, key % c]), int(routed_actives[key // c, klass[key % c]])], [1, -1]),
        )
        if not self.rs.size:
            self.repairs += fixes
            return
        routed_standbys = total(self.zs)[0]

        def excess(first: np.ndarray | None, limit: int) -> tuple[np.ndarray, np.ndarray]:
            """(per class, the sum over tasks of max(0, copies of the task routed there - 1); per
            stateful task and class, that excess)."""
            n = self.rs.shape[0]
            extra = model.add_vars(n * n_classes, 0, limit).reshape(n, n_classes)
            parts = [self.rs] if first is None else [first, self.rs]
            count = n * n_classes
            model.add_rows(
                np.repeat(np.arange(count), len(parts) + 1),
                np.stack([*(p.ravel() for p in parts), extra.ravel()], axis=1).ravel(),
                np.tile([1] * len(parts) + [-1], count),
                np.full(count, -UNBOUNDED), np.ones(count, dtype=np.int64),
            )  # fmt: skip
            sums = model.add_vars(n_classes, 0, COUNT_BOUND)
            model.add_rows(
                np.concatenate([np.arange(n_classes), np.tile(np.arange(n_classes), n)]),
                np.concatenate([sums, extra.ravel()]),
                np.concatenate([np.ones(n_classes, dtype=np.int64), -np.ones(count, dtype=np.int64)]),
                np.zeros(n_classes), np.zeros(n_classes),
            )  # fmt: skip

            def fix(solution: np.ndarray) -> None:
                copies = sum(solution[p] for p in parts)
                solution[extra] = np.maximum(copies - 1, 0)
                solution[sums] = solution[extra].sum(axis=0)

            fixes.append(fix)
            return sums, extra

        # standbys: z_s[k] + (routed standbys - their excess) of tasks special at k + excess
        # <= routed standbys in the class
        rows, cols = self.ds_rows, self.ds_cols
        ones = np.ones(len(rows), dtype=np.int64)
        keys, special, signs = [cols], [self.rs[rows, klass[cols]]], [ones]
        standby_excess = None
        if self.standbys > 1:
            standby_excess, standby_extra = excess(None, self.standbys - 1)
            keys, special, signs = [cols, cols], [special[0], standby_extra[rows, klass[cols]]], [ones, -ones]

        def standby_terms(k: int) -> tuple[list[int], list[int]]:
            variables = [int(self.zs[0, k]), int(routed_standbys[klass[k]])]
            if standby_excess is None:
                return variables, [1, -1]
            return [*variables, int(standby_excess[klass[k]])], [1, -1, 1]

        every = range(c) if standby_excess is not None else ()
        rows_per_client(np.concatenate(keys), np.concatenate(special), standby_terms, every, np.concatenate(signs))
        # all copies: placed actives and standbys on k + (routed copies - their excess) of tasks
        # special at k + excess <= routed copies in the class
        copies_excess, copies_extra = excess(self.ra[self.stateful_rows], self.standbys)

        def copy_terms(k: int) -> tuple[list[int], list[int]]:
            variables = [*self.za[:, k].tolist(), int(self.zs[0, k]), *routed_actives[:, klass[k]].tolist()]
            signs = [1] * (n_groups + 1) + [-1] * n_groups
            return [*variables, int(routed_standbys[klass[k]]), int(copies_excess[klass[k]])], [*signs, -1, 1]

        rows_per_client(
            np.concatenate([self.da_cols, cols, cols]),
            np.concatenate([self.ra[self.da_rows, klass[self.da_cols]], self.rs[rows, klass[cols]], copies_extra[rows, klass[cols]]]),
            copy_terms,
            range(c),
            np.concatenate([np.ones(len(self.da_rows), dtype=np.int64), ones, -ones]),
        )
        self.repairs += fixes

    def _link(self, routed: np.ndarray, group_of: np.ndarray, placed: np.ndarray, n_groups: int) -> None:
        """sum of routed[t, class] over tasks of a group = sum of placed[group, k] over the
        class's clients, for every (group, class)."""
        n_classes = routed.shape[1]
        rows = (group_of[:, None] * n_classes + np.arange(n_classes)[None, :]).ravel()
        placed_rows = (np.arange(n_groups)[:, None] * n_classes + self.class_of[None, :]).ravel()
        count = n_groups * n_classes
        self.model.add_rows(
            np.concatenate([rows, placed_rows]),
            np.concatenate([routed.ravel(), placed.ravel()]),
            np.concatenate([np.ones(routed.size, dtype=np.int64), -np.ones(placed.size, dtype=np.int64)]),
            np.zeros(count), np.zeros(count),
        )  # fmt: skip

    # ------------------------------------------------------------------ what goals encode with

    def _class_values(self, cost: np.ndarray, special: np.ndarray) -> np.ndarray:
        """rows x classes: the cost of the class's ordinary clients (which must agree)."""
        values = np.zeros((cost.shape[0], self.n_classes), dtype=np.int64)
        for klass, members in enumerate(self.class_clients):
            sub, mask = cost[:, members], special[:, members]
            high = np.where(mask, np.iinfo(np.int64).min, sub).max(axis=1)
            low = np.where(mask, np.iinfo(np.int64).max, sub).min(axis=1)
            some = ~mask.all(axis=1)
            if (high[some] != low[some]).any():
                raise NotCompressible("a goal prices clients of one rack (and tag values) differently")
            values[some, klass] = low[some]
        return values

    def active_cost(self, cost: np.ndarray) -> LinExpr:
        cost = np.asarray(cost, dtype=np.int64)
        return LinExpr.of(self.da, cost[self.da_rows, self.da_cols]) + LinExpr.of(self.ra, self._class_values(cost, self.special))

    def standby_cost(self, cost: np.ndarray) -> LinExpr:
        if not len(self.ds) and not self.rs.size:
            return LinExpr.zero()
        cost = np.asarray(cost, dtype=np.int64)
        special = self.special[self.stateful_rows]
        return LinExpr.of(self.ds, cost[self.ds_rows, self.ds_cols]) + LinExpr.of(self.rs, self._class_values(cost, special))

    def client_members(self, which: str) -> list[np.ndarray]:
        if which == "active":
            direct = _grouped(self.da_cols, self.da)
            placed = self.za
        else:
            stateful = self.index.stateful[self.da_rows]
            direct = _grouped(np.concatenate([self.da_cols[stateful], self.ds_cols]), np.concatenate([self.da[stateful], self.ds]))
            placed = np.concatenate([self.za[self.group_stateful], self.zs], axis=0)
        empty = np.empty(0, dtype=np.int64)
        return [np.concatenate([direct.get(k, empty), placed[:, k]]) for k in range(self.n_clients)]

    def group_members(self, groups: np.ndarray, pairs: np.ndarray) -> list[np.ndarray]:
        groups = np.asarray(groups, dtype=np.int64)
        first = groups[np.unique(self.group_of, return_index=True)[1]]  # the goal's group of each of ours
        if (first[self.group_of] != groups).any():
            raise NotCompressible("a goal's task groups cut across subtopologies")
        direct = _grouped(groups[self.da_rows] * self.n_clients + self.da_cols, self.da)
        mine = _grouped(first, np.arange(len(first)))
        empty = np.empty(0, dtype=np.int64)
        return [np.concatenate([direct.get(int(g) * self.n_clients + int(k), empty), self.za[mine.get(int(g), empty), int(k)]]) for g, k in pairs]

    def copies_in(self, clients: np.ndarray) -> list[np.ndarray]:
        inside = np.zeros(self.n_clients, dtype=bool)
        inside[clients] = True
        classes = np.unique(self.class_of[clients])
        if sum(len(self.class_clients[k]) for k in classes) != int(inside.sum()):
            raise NotCompressible("a goal counts copies on part of a rack (and tag values)")
        stateful_rows = self.stateful_rows
        keep = inside[self.da_cols] & (self.stateful_position[self.da_rows] >= 0)
        direct = _grouped(self.stateful_position[self.da_rows[keep]], self.da[keep])
        if len(self.ds):
            keep = inside[self.ds_cols]
            standby = _grouped(self.ds_rows[keep], self.ds[keep])
        else:
            standby = {}
        empty = np.empty(0, dtype=np.int64)
        result = []
        for i, row in enumerate(stateful_rows.tolist()):
            parts = [direct.get(i, empty), standby.get(i, empty), self.ra[row, classes]]
            if self.rs.size:
                parts.append(self.rs[i, classes])
            result.append(np.concatenate(parts))
        return result

    def copies_beyond(self, clients: np.ndarray, allowed: int = 1) -> LinExpr:
        return copies_beyond(self, clients, allowed)

    # ------------------------------------------------------------------ assignments in and out

    def encode(self, assignment: Assignment) -> np.ndarray | None:
        values = np.zeros(self.model.n_vars, dtype=np.int64)
        tasks, clients = self.index.task_position, self.index.client_position
        ds_key = self.ds_rows * self.n_clients + self.ds_cols
        for client_id, held in assignment.items():
            k = clients.get(client_id)
            if k is None:
                return None
            klass = self.class_of[k]
            for task in held.active:
                t = tasks[task]
                if self.special[t, k]:
                    values[self.da[np.searchsorted(self.da_key, t * self.n_clients + k)]] = 1
                else:
                    values[self.ra[t, klass]] += 1
                    values[self.za[self.group_of[t], k]] += 1
            for task in held.standby:
                i = self.stateful_position[tasks[task]]
                if i < 0 or not self.standbys:
                    return None
                if self.special[tasks[task], k]:
                    values[self.ds[np.searchsorted(ds_key, i * self.n_clients + k)]] = 1
                else:
                    values[self.rs[i, klass]] += 1
                    values[self.zs[0, k]] += 1
        return values

    def decode(self, solution: np.ndarray) -> dict[str, ClientAssignment]:
        values = np.rint(solution).astype(np.int64)
        holds = np.zeros((self.n_tasks, self.n_clients), dtype=bool)
        active = np.full(self.n_tasks, -1, dtype=np.int64)
        chosen = values[self.da] > 0
        active[self.da_rows[chosen]] = self.da_cols[chosen]
        holds[self.da_rows[chosen], self.da_cols[chosen]] = True
        standby_rows, standby_clients = [], []
        if len(self.ds):
            chosen = values[self.ds] > 0
            rows, cols = self.stateful_rows[self.ds_rows[chosen]], self.ds_cols[chosen]
            holds[rows, cols] = True
            standby_rows.append(rows)
            standby_clients.append(cols)
        standby_counts = values[self.rs] if self.rs.size else None
        return self._spread_classes(active, holds, standby_rows, standby_clients, values[self.ra], standby_counts, values)

    def _spread_classes(
        self,
        active: np.ndarray,
        holds: np.ndarray,
        standby_rows: list[np.ndarray],
        standby_clients: list[np.ndarray],
        routed: np.ndarray,
        standby_counts: np.ndarray | None,
        values: np.ndarray,
    ) -> dict[str, ClientAssignment]:
        """The assignment: the direct copies already in `active`, `holds` and the standby lists,
        plus each class's routed copies (`routed`: tasks x classes, 0/1 actives;
        `standby_counts`: stateful tasks x classes, or None) spread over its clients as the
        placed counts (za, zs in `values`) say: actives first, or, when the standbys then do not
        fit, standbys first (an active spread blindly can take the clients a task's standbys need)."""
        for klass, members in enumerate(self.class_clients):
            before = holds[:, members].copy()
            try:
                placed = self._spread_class(klass, members, holds, routed, standby_counts, values, actives_first=True)
            except DecodeError:
                if standby_counts is None:
                    raise
                holds[:, members] = before
                placed = self._spread_class(klass, members, holds, routed, standby_counts, values, actives_first=False)
            (rows, cols), standbys = placed
            active[rows] = cols
            standby_rows.append(standbys[0])
            standby_clients.append(standbys[1])
        if (active < 0).any():
            raise DecodeError("a task has no active")
        if not standby_rows:
            return self.index.assignment(active.tolist())
        return self.index.assignment(active.tolist(), np.concatenate(standby_rows).tolist(), np.concatenate(standby_clients).tolist())

    def _spread_class(
        self, klass: int, members: np.ndarray, holds: np.ndarray, routed: np.ndarray, standby_counts: np.ndarray | None, values: np.ndarray,
        actives_first: bool,
    ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:  # fmt: skip
        """((task rows, clients) of the class's routed actives, the same of its routed standbys)."""
        empty = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))

        def actives() -> tuple[np.ndarray, np.ndarray]:
            parts = []
            for group in range(len(self.group_stateful)):
                tasks = np.flatnonzero((routed[:, klass] > 0) & (self.group_of == group))
                if len(tasks):
                    parts.append(self._spread(tasks, np.ones(len(tasks), dtype=np.int64), members, values[self.za[group, members]], holds))
            if not parts:
                return empty
            rows, clients = zip(*parts, strict=True)
            return np.concatenate(rows), np.concatenate(clients)

        def standbys() -> tuple[np.ndarray, np.ndarray]:
            if standby_counts is None:
                return empty
            counts = standby_counts[:, klass]
            copies = np.flatnonzero(counts > 0)
            if not len(copies):
                return empty
            return self._spread(self.stateful_rows[copies], counts[copies], members, values[self.zs[0, members]], holds)

        if actives_first:
            first = actives()
            return first, standbys()
        second = standbys()
        return actives(), second

    def _spread(self, tasks: np.ndarray, copies: np.ndarray, clients: np.ndarray, slots: np.ndarray, holds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Place `copies[j]` copies of task `tasks[j]` on distinct ordinary `clients` of the task
        not holding it yet, client k taking `slots[k]` of them (a flow). Marks the placements in
        `holds`; returns (task rows, clients) of the copies."""
        total = int(copies.sum())
        if int(slots.sum()) != total:
            raise DecodeError("routed copies and placed counts differ")
        n_items, n_clients = len(tasks), len(clients)
        item, position = np.nonzero(~holds[np.ix_(tasks, clients)] & ~self.special[np.ix_(tasks, clients)])
        sink = n_items + n_clients
        tails = np.concatenate([item, n_items + np.arange(n_clients)])
        heads = np.concatenate([n_items + position, np.full(n_clients, sink)])
        capacities = np.concatenate([np.ones(len(item), dtype=np.int64), slots])
        costs = np.zeros(len(tails), dtype=np.int64)
        flow = min_cost_flow.SimpleMinCostFlow()
        flow.add_arcs_with_capacity_and_unit_cost(tails, heads, capacities, costs)
        supplies = np.zeros(sink + 1, dtype=np.int64)
        supplies[:n_items] = copies
        supplies[sink] = -total
        flow.set_nodes_supplies(np.arange(sink + 1), supplies)
        if flow.solve() != flow.OPTIMAL:
            raise DecodeError("the routed copies of a class do not fit its clients")
        used = flow.flows(np.arange(len(item))) > 0
        rows, cols = tasks[item[used]], clients[position[used]]
        holds[rows, cols] = True
        return rows, cols
