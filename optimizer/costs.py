"""Vectorised cost data of a Streams problem (numpy), built once per problem.

Cross-rack traffic depends on the client only through its rack, so the primary array is
tasks x racks; tasks x clients views are taken from it by indexing with each client's rack.
The goals' arrays count what the bill counts: a read crosses racks when no replica that can serve
it (`serving_racks`: the leader's rack unless the brokers serve reads from followers) is in the
client's rack. Kafka's own KIP-925 cost (`active_cost_matrix`, for the reproductions) uses the
replica racks, as Kafka does. Partitions without racks, and clients without a rack, never count as
cross-rack: the rule is `reads_across_racks` (optimizer/model/racks.py), the evaluator's too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from optimizer.model.base import derived
from optimizer.model.ids import milli, task_key
from optimizer.model.racks import cross_by_rack
from optimizer.model.solution import ClientAssignment
from optimizer.model.streams import Client, StreamsProblem, Task, TopicPartition


@dataclass(frozen=True, eq=False)  # kept on its problem (`derived`): compared by identity, never field by field
class StreamsIndex:
    """Tasks and clients in canonical (sorted) order, with their cost arrays.

    Tasks are ordered by Kafka's TaskId order (subtopology, then partition) and clients by id,
    so every array built from this index is independent of the order of the problem's lists.
    """

    problem: StreamsProblem
    tasks: tuple[Task, ...]
    clients: tuple[Client, ...]
    racks: tuple[str, ...]
    """Distinct racks of clients and partitions, sorted."""

    @classmethod
    def of(cls, problem: StreamsProblem) -> StreamsIndex:
        """The problem's index, built once per problem object and kept on it."""
        return _index_of(problem)

    @cached_property
    def task_position(self) -> dict[str, int]:
        return {task.id: i for i, task in enumerate(self.tasks)}

    @cached_property
    def client_position(self) -> dict[str, int]:
        return {client.id: i for i, client in enumerate(self.clients)}

    @cached_property
    def held_positions(self) -> dict[int, tuple[ClientAssignment, np.ndarray, np.ndarray]]:
        """What `optimizer.placement` has read of each client's assignment (kept by identity)."""
        return {}

    @cached_property
    def memo(self) -> dict[str, np.ndarray]:
        """tasks x clients arrays `optimizer.placement` derives from the problem, kept read-only."""
        return {}

    @cached_property
    def client_rack(self) -> np.ndarray:
        """Rack index per client, -1 for a client without rack."""
        position = {rack: i for i, rack in enumerate(self.racks)}
        return np.array([-1 if c.rack is None else position[c.rack] for c in self.clients], dtype=np.int64)

    @cached_property
    def threads(self) -> np.ndarray:
        return np.array([c.threads for c in self.clients], dtype=np.int64)

    @cached_property
    def subtopology(self) -> np.ndarray:
        return np.array([t.subtopology for t in self.tasks], dtype=np.int64)

    @cached_property
    def stateful(self) -> np.ndarray:
        return np.array([t.stateful for t in self.tasks], dtype=bool)

    @cached_property
    def source_cross_by_rack(self) -> np.ndarray:
        """tasks x racks: source partitions of the task read across racks from that rack (no
        serving replica there: `StreamsProblem.serving_racks`)."""
        return self._cross_by_rack([t.source_partitions for t in self.tasks])

    @cached_property
    def changelog_cross_by_rack(self) -> np.ndarray:
        """tasks x racks: changelog partitions of the task read across racks from that rack."""
        return self._cross_by_rack([t.changelog_partitions for t in self.tasks])

    @cached_property
    def source_bytes_by_rack(self) -> np.ndarray:
        """tasks x racks: bytes per second of the task's source partitions read across racks from
        that rack (`StreamsProblem.rate_of`: unknown rates count as the mean known one)."""
        return self._cross_by_rack([t.source_partitions for t in self.tasks], weighted=True)

    @cached_property
    def changelog_bytes_by_rack(self) -> np.ndarray:
        """tasks x racks: bytes per second of the task's changelog partitions read across racks from that rack."""
        return self._cross_by_rack([t.changelog_partitions for t in self.tasks], weighted=True)

    @cached_property
    def source_replica_cross_by_rack(self) -> np.ndarray:
        """tasks x racks: source partitions of the task with no replica in that rack: what Kafka's
        KIP-925 optimisation counts (`active_cost_matrix`), whoever serves the reads."""
        return self._cross_by_rack([t.source_partitions for t in self.tasks], serving=False)

    @cached_property
    def task_weight(self) -> np.ndarray:
        """Per task, its processing weight in thousandths (`milli`)."""
        return np.array([milli(t.weight) for t in self.tasks], dtype=np.int64)

    @cached_property
    def client_capacity(self) -> np.ndarray:
        """Per client, threads x capacity in thousandths: what weighted balance divides its load by."""
        return np.array([c.threads * milli(c.capacity) for c in self.clients], dtype=np.int64)

    def _cross_by_rack(
        self, partitions_per_task: Sequence[tuple[TopicPartition, ...]], weighted: bool = False, serving: bool = True
    ) -> np.ndarray:
        # Exactly one column per rack: without a rack there is nothing to read across (callers
        # add their own column for clients without a rack).
        owners = [task_index for task_index, partitions in enumerate(partitions_per_task) for _ in partitions]
        listed = [p for partitions in partitions_per_task for p in partitions]
        racks_of = self.problem.serving_racks if serving else (lambda p: p.replica_racks)
        by_partition = cross_by_rack([racks_of(p) for p in listed], self.racks)
        if weighted:
            by_partition = by_partition * np.array([self.problem.rate_of(p) for p in listed], dtype=np.int64)[:, None]
        result = np.zeros((len(partitions_per_task), len(self.racks)), dtype=np.int64)
        np.add.at(result, np.array(owners, dtype=np.int64), by_partition)
        return result

    def assignment(
        self, active: Sequence[int], standby_rows: Sequence[int] = (), standby_clients: Sequence[int] = ()
    ) -> dict[str, ClientAssignment]:
        """The assignment of client `active[row]` for each task row, and of a standby of task
        `standby_rows[j]` on client `standby_clients[j]`: by client id, tasks in index order."""
        actives: list[list[str]] = [[] for _ in self.clients]
        for row, k in enumerate(active):
            actives[k].append(self.tasks[row].id)
        standbys: list[list[int]] = [[] for _ in self.clients]
        for row, k in zip(standby_rows, standby_clients, strict=True):
            standbys[k].append(row)
        return {
            client.id: ClientAssignment(
                active=tuple(actives[k]), standby=tuple(self.tasks[row].id for row in sorted(standbys[k]))
            )
            for k, client in enumerate(self.clients)  # clients are in id order
        }

    def by_client(self, by_rack: np.ndarray) -> np.ndarray:
        """tasks x clients view of a tasks x racks array; 0 for clients without a rack."""
        result = np.zeros((by_rack.shape[0], len(self.clients)), dtype=by_rack.dtype)
        has_rack = self.client_rack >= 0
        if by_rack.shape[1]:
            result[:, has_rack] = by_rack[:, self.client_rack[has_rack]]
        return result

    @cached_property
    def previous_holders(self) -> np.ndarray:
        """tasks x clients: True where the client held any copy of the task before."""
        held = np.zeros((len(self.tasks), len(self.clients)), dtype=bool)
        for k, client in enumerate(self.clients):
            for task in (*client.previous_active, *client.previous_standby):
                row = self.task_position.get(task)
                if row is not None:
                    held[row, k] = True
        return held

    @cached_property
    def state_holders(self) -> np.ndarray:
        """tasks x clients: previous holders and clients reporting a lag for the task: the only
        clients whose caught-up rank on the task can differ from the others'."""
        held = self.previous_holders.copy()
        for k, client in enumerate(self.clients):
            for task in client.lags:
                row = self.task_position.get(task)
                if row is not None:
                    held[row, k] = True
        return held

    def previous_active(self) -> np.ndarray:
        """Index of each task's previous active client, -1 when it had none."""
        return self._previous_active.copy()

    @cached_property
    def _previous_active(self) -> np.ndarray:
        owner = np.full(len(self.tasks), -1, dtype=np.int64)
        for task_id, client_id in self.problem.previous_active_client.items():
            owner[self.task_position[task_id]] = self.client_position[client_id]
        return owner


def active_cost_matrix(
    index: StreamsIndex,
    task_rows: np.ndarray,
    traffic_cost: int,
    non_overlap_cost: int,
    current: np.ndarray,
) -> np.ndarray:
    """KIP-925's cost of each (task, client) for active tasks, as an int64 matrix, as Kafka's
    assignors compute it: `traffic_cost` per source partition without a replica in the client's
    rack (whichever replica serves the reads), plus `non_overlap_cost` where the client is not the
    task's `current` client (-1: none).
    """
    cross = index.by_client(index.source_replica_cross_by_rack[task_rows])
    cost = traffic_cost * cross
    if non_overlap_cost:
        elsewhere = np.ones_like(cost, dtype=bool)
        has_owner = current >= 0
        elsewhere[np.flatnonzero(has_owner), current[has_owner]] = False
        cost = cost + non_overlap_cost * elsewhere
    return cost.astype(np.int64)


@derived
def _index_of(problem: StreamsProblem) -> StreamsIndex:
    tasks = tuple(sorted(problem.tasks, key=lambda t: task_key(t.id)))
    clients = tuple(sorted(problem.clients, key=lambda c: c.id))
    racks = {c.rack for c in clients if c.rack is not None}
    for task in tasks:
        for partition in (*task.source_partitions, *task.changelog_partitions):
            racks.update(partition.replica_racks)
            if partition.leader_rack is not None:
                racks.add(partition.leader_rack)
    return StreamsIndex(problem, tasks, clients, tuple(sorted(racks)))
