"""Streams assignments as index arrays, and what clients hold of each task's state: KIP-441's
caught-up ranks, who is behind, the changelog offsets a client would replay.

Core layer: the goals (through `goals.common`) and the transition planning both read these.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from optimizer.costs import StreamsIndex
from optimizer.goal import Assignment
from optimizer.model.ids import INT64_MAX
from optimizer.model.solution import ClientAssignment
from optimizer.model.streams import StreamsProblem


@dataclass(frozen=True)
class StreamsPlacement:
    """An assignment as arrays over the problem's canonical task and client order."""

    active: np.ndarray
    """Client position of each task's active (-1: none)."""
    standby_rows: np.ndarray
    """Task position of each standby copy (warm-ups not included)."""
    standby_clients: np.ndarray
    """Client position of each standby copy."""

    def active_cost(self, cost: np.ndarray) -> int:
        """sum of cost[t, k] over tasks t active on client k (cost: tasks x clients): what the
        formulation's `active_cost(cost)` is worth on this assignment."""
        rows = np.flatnonzero(self.active >= 0)
        return int(cost[rows, self.active[rows]].sum())

    def standby_cost(self, cost: np.ndarray) -> int:
        """sum of cost[t, k] over standbys of task t on client k (cost: tasks x clients)."""
        return int(cost[self.standby_rows, self.standby_clients].sum())

    def standby_counts(self, n_clients: int, rows: np.ndarray | None = None) -> np.ndarray:
        clients = self.standby_clients if rows is None else self.standby_clients[np.isin(self.standby_rows, rows)]
        return np.bincount(clients, minlength=n_clients)


def streams_placement(index: StreamsIndex, assignment: Assignment) -> StreamsPlacement:
    active = np.full(len(index.tasks), -1, dtype=np.int64)
    standby_rows: list[np.ndarray] = []
    standby_clients: list[np.ndarray] = []
    clients = index.client_position
    for client_id, held in assignment.items():
        k = clients.get(client_id)
        if k is None:
            continue
        actives, standbys = _positions(index, held)
        active[actives] = k
        standby_rows.append(standbys)
        standby_clients.append(np.full(len(standbys), k, dtype=np.int64))
    empty = np.zeros(0, dtype=np.int64)
    return StreamsPlacement(active, np.concatenate([empty, *standby_rows]), np.concatenate([empty, *standby_clients]))


def _positions(index: StreamsIndex, held: ClientAssignment) -> tuple[np.ndarray, np.ndarray]:
    """The task positions of what a client holds (actives, standbys; tasks of the problem only),
    kept on the index by the assignment's identity: it is immutable, and the assignment applied
    now, the target and their goals' values share most of their clients' (a tenth of a second
    a call at 10,000 tasks with two standbys, called some twenty times a solve)."""
    known = index.held_positions
    entry = known.get(id(held))
    if entry is None or entry[0] is not held:
        tasks = index.task_position
        actives = np.array([tasks[t] for t in held.active if t in tasks], dtype=np.int64)
        standbys = np.array([tasks[t] for t in held.standby if t in tasks], dtype=np.int64)
        entry = known[id(held)] = (held, actives, standbys)
    return entry[1], entry[2]


def caught_up_ranks(problem: StreamsProblem, index: StreamsIndex, offsets: np.ndarray | None = None) -> np.ndarray:
    """tasks x clients: KIP-441's rank of each client on each stateful task (lower is more caught
    up; 0 within acceptable.recovery.lag or running it); 0 everywhere for stateless tasks.

    The lags are `restore_offsets` (given as `offsets` when already at hand), as Kafka reads them:
    reported lag; a previous active without one is running (caught up); a previous standby without
    one is caught up; otherwise the changelog end offset (the largest long when unknown); tasks
    without changelog: every client alike.
    """
    mine = offsets is None and problem is index.problem
    if mine and "caught_up_ranks" in index.memo:
        return index.memo["caught_up_ranks"]
    if offsets is None:
        offsets = restore_offsets(problem, index)
    acceptable = problem.config.acceptable_recovery_lag
    if acceptable >= INT64_MAX:  # everyone is caught up
        return np.zeros_like(offsets)
    lags = np.where(offsets < 0, INT64_MAX, offsets)
    ranks = np.where(lags <= acceptable, 0, lags)
    return _kept(index, "caught_up_ranks", ranks) if mine else ranks


def _kept(index: StreamsIndex, name: str, array: np.ndarray) -> np.ndarray:
    """`array`, read-only, kept on the index under `name` (tasks x clients arrays of the problem's
    own, asked for several times a solve: 0.3 s each at 10,000 tasks x 200 clients)."""
    array.flags.writeable = False
    index.memo[name] = array
    return array


def behind(problem: StreamsProblem, index: StreamsIndex, ranks: np.ndarray | None = None) -> np.ndarray:
    """tasks x clients: 1 where the client is not among the most caught up on the task (`ranks`:
    `caught_up_ranks`, when already at hand)."""
    if ranks is None:
        ranks = caught_up_ranks(problem, index)
    return np.asarray(ranks > ranks.min(axis=1, keepdims=True), dtype=np.int64)


def restore_offsets(problem: StreamsProblem, index: StreamsIndex) -> np.ndarray:
    """tasks x clients: changelog offsets a client replays to hold a copy of each task (its lag).

    The reported lag; 0 for a previous active or standby without one; else the whole changelog
    (`changelog_end_offset`); -1 where that is unknown; 0 for tasks without state or changelog.
    `caught_up_ranks` ranks clients on these."""
    if problem is index.problem and "restore_offsets" in index.memo:
        return index.memo["restore_offsets"]
    logged = np.array([t.stateful and bool(t.changelog_partitions) for t in index.tasks], dtype=bool)
    ends = np.array([-1 if t.changelog_end_offset is None else t.changelog_end_offset for t in index.tasks], dtype=np.int64)
    offsets = np.repeat(np.where(logged, ends, 0)[:, None], len(index.clients), axis=1)
    for k, client in enumerate(index.clients):
        for task in (*client.previous_active, *client.previous_standby):
            held = index.task_position.get(task)
            if held is not None and logged[held]:
                offsets[held, k] = 0
        for task, lag in client.lags.items():
            lagging = index.task_position.get(task)
            if lagging is not None and logged[lagging]:
                offsets[lagging, k] = lag
    return _kept(index, "restore_offsets", offsets) if problem is index.problem else offsets
