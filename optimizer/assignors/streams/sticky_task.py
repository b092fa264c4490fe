"""Kafka Streams' sticky task assignor of KIP-925 (StickyTaskAssignor in Kafka 3.6 and 3.7,
LegacyStickyTaskAssignor since 3.8), as Kafka runs it.

Actives go back to their previous owners within each client's quota (threads x tasks per thread),
then to previous standby holders within quota, then to the least-loaded client, preferring
clients that do not yet hold a pair with the task. Standbys go to the previous holder or the
least-loaded client without a copy. KIP-925 then optimises actives (stateful: traffic 1,
non-overlap 10 unless configured, favouring stickiness; stateless: 1 and 0) and standbys.

Kafka iterates Java HashMaps and HashSets here, and ties go to the first client or task met, so
those iteration orders are reproduced (`optimizer.assignors.java`). No probing rebalance.

Its two sets of tasks (all, stateful) iterate in hash order, ties within a bucket in the order
they were filled. In a rebalance StreamsPartitionAssignor fills them subtopology by subtopology,
as its HashMaps of Subtopology iterate (`REBALANCE`: `partitionsForTask`'s key set and
`ChangelogTopics`), and that is what `--solver kafka` reproduces. The harness that made the frozen
parity answers filled them in task order (`TASK_ORDER`): where TaskIds of two subtopologies share
a bucket the standbys differ (issue 30; tests/kafka/test_streams_oracle.py checks both against
Kafka 4.4.0's class).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from optimizer.assignors.java import java_hash_map_order, java_task_id_hash, kafka_client_hash
from optimizer.assignors.streams.client_state import ClientState, client_states
from optimizer.assignors.streams.high_availability import StreamsAssignorResult
from optimizer.assignors.streams.kip924_sticky import all_tasks_order, grouper_order
from optimizer.assignors.streams.rack_aware import RackAwareTaskAssignor
from optimizer.model.ids import TaskKey, parse_task_id
from optimizer.model.streams import (
    STATELESS_NON_OVERLAP_COST,
    STATELESS_TRAFFIC_COST,
    StreamsProblem,
    TaskAssignor,
    kip925_costs,
)


def _task_hash(task: TaskKey) -> int:
    return java_task_id_hash(*task)


def _hash_set(items: Iterable, hash_of, presized: bool = False) -> list:
    return java_hash_map_order(list(dict.fromkeys(items)), hash_of, presized)


class _TaskPairs:
    """Pairs of tasks already placed together on some client (Kafka's TaskPairs)."""

    def __init__(self, max_pairs: int):
        self.max_pairs = max_pairs
        self.pairs: set[tuple[TaskKey, TaskKey]] = set()

    def has_new_pair(self, task: TaskKey, others: Iterable[TaskKey]) -> bool:
        if len(self.pairs) >= self.max_pairs:
            return False
        return any(_pair(task, other) not in self.pairs for other in others)

    def add_pairs(self, task: TaskKey, others: Iterable[TaskKey]) -> None:
        for other in others:
            self.pairs.add(_pair(task, other))


def _pair(a: TaskKey, b: TaskKey) -> tuple[TaskKey, TaskKey]:
    return (a, b) if a < b else (b, a)


def _has_more_available_capacity(a: ClientState, b: ClientState) -> bool:
    load_a, load_b = a.assigned_count / a.capacity, b.assigned_count / b.capacity
    if load_a < load_b:
        return True
    return load_a == load_b and a.capacity > b.capacity


TaskSets = Literal["rebalance", "task order"]
REBALANCE: TaskSets = "rebalance"
TASK_ORDER: TaskSets = "task order"


class _StickyTaskAssignor:
    def __init__(self, problem: StreamsProblem, must_preserve_active: bool = False, task_sets: TaskSets = REBALANCE):
        self.problem = problem
        self.task_sets = task_sets
        self.must_preserve = must_preserve_active
        self.sorted_clients = client_states(problem)
        self.by_id = {c.id: c for c in self.sorted_clients}
        # Kafka's StreamsPartitionAssignor keys clients in a HashMap by process id.
        self.client_ids = _hash_set((c.id for c in self.sorted_clients), kafka_client_hash)
        self.all_tasks = sorted(parse_task_id(t.id) for t in problem.tasks)
        self.stateful = sorted(parse_task_id(t.id) for t in problem.tasks if t.stateful)
        n = len(self.all_tasks)
        self.pairs = _TaskPairs(n * (n - 1) // 2)
        self.previous_active: dict[TaskKey, str] = {}
        self.previous_standby: dict[TaskKey, list[str]] = {}
        for client_id in self.client_ids:
            client = self.by_id[client_id]
            for task in sorted(client.previous_active):
                self.previous_active[task] = client_id
            for task in sorted(client.previous_standby):
                self.previous_standby.setdefault(task, []).append(client_id)

    def assign(self) -> StreamsAssignorResult:
        self._assign_active()
        rack_aware = RackAwareTaskAssignor(self.problem)
        config = self.problem.config
        traffic, non_overlap = kip925_costs(config, TaskAssignor.STICKY)
        enabled = rack_aware.can_enable()
        if enabled:
            stateful = set(self.stateful)
            rack_aware.optimize_active_tasks(sorted(stateful), self.sorted_clients, traffic, non_overlap)
            stateless = [t for t in self.all_tasks if t not in stateful]
            rack_aware.optimize_active_tasks(
                stateless, self.sorted_clients, STATELESS_TRAFFIC_COST, STATELESS_NON_OVERLAP_COST
            )
        self._assign_standby(config.num_standby_replicas)
        if enabled and config.num_standby_replicas > 0:
            rack_aware.optimize_standby_tasks(
                self.sorted_clients, traffic, non_overlap, lambda task, source, destination, clients: True
            )
        return StreamsAssignorResult(self.sorted_clients, {}, False, rack_aware.notes)

    def _assign_active(self) -> None:
        total_capacity = sum(c.capacity for c in self.sorted_clients)
        per_thread = len(self.all_tasks) // total_capacity
        assigned = set()
        for task in java_hash_map_order(list(self.previous_active), _task_hash):
            client = self.by_id[self.previous_active[task]]
            if self.must_preserve or len(client.active) < client.capacity * per_thread:
                self._place(task, client, active=True)
                assigned.add(task)
        filled = all_tasks_order(self.all_tasks) if self.task_sets == REBALANCE else self.all_tasks
        unassigned = [t for t in _hash_set(filled, _task_hash, presized=True) if t not in assigned]
        remaining = []
        for task in unassigned:
            holders = _hash_set(self.previous_standby.get(task, ()), kafka_client_hash)
            for client_id in holders:
                client = self.by_id[client_id]
                if len(client.active) < client.capacity * per_thread:
                    self._place(task, client, active=True)
                    break
            else:
                remaining.append(task)
        for task in sorted(remaining):
            self._allocate(task, self.client_ids, active=True)

    def _assign_standby(self, replicas: int) -> None:
        filled = grouper_order(self.stateful) if self.task_sets == REBALANCE else self.stateful
        for task in _hash_set(filled, _task_hash):
            for _ in range(replicas):
                candidates = _hash_set(
                    (cid for cid in self.client_ids if not self.by_id[cid].holds(task)), kafka_client_hash
                )
                if not candidates:
                    break  # Kafka logs: not enough available capacity
                self._allocate(task, candidates, active=False)

    def _place(self, task: TaskKey, client: ClientState, active: bool) -> None:
        self.pairs.add_pairs(task, client.active | client.standby)
        if active:
            client.assign_active(task)
        else:
            client.assign_standby(task)

    def _allocate(self, task: TaskKey, within: Sequence[str], active: bool) -> None:
        self._place(task, self._find_client(task, within), active)

    def _find_client(self, task: TaskKey, within: Sequence[str]) -> ClientState:
        if len(within) == 1:
            return self.by_id[within[0]]
        previous = self._previously_assigned(task, within)
        if previous is None:
            return self._least_loaded_within(task, within)
        if self._should_balance_load(previous):
            standby = self._least_loaded_previous_standby(task, within)
            if standby is None or self._should_balance_load(standby):
                return self._least_loaded_within(task, within)
            return standby
        return previous

    def _least_loaded_within(self, task: TaskKey, within: Sequence[str]) -> ClientState:
        """Kafka's leastLoaded for findClient, whose candidates are never empty (all clients, or the
        standby candidates checked before): one of them is always least loaded."""
        client = self._least_loaded(task, within)
        assert client is not None, "findClient's candidates are never empty"
        return client

    def _previously_assigned(self, task: TaskKey, within: Sequence[str]) -> ClientState | None:
        owner = self.previous_active.get(task)
        if owner is not None and owner in within:
            return self.by_id[owner]
        return self._least_loaded_previous_standby(task, within)

    def _least_loaded_previous_standby(self, task: TaskKey, within: Sequence[str]) -> ClientState | None:
        holders = self.previous_standby.get(task)
        if holders is None:
            return None
        allowed = set(within)
        constrained = _hash_set((h for h in holders if h in allowed), kafka_client_hash, presized=True)
        return self._least_loaded(task, constrained)

    def _should_balance_load(self, client: ClientState) -> bool:
        return client.assigned_count >= client.capacity and any(
            _has_more_available_capacity(self.by_id[other], client) for other in self.client_ids
        )

    def _least_loaded(self, task: TaskKey, ids: Sequence[str]) -> ClientState | None:
        return self._find_least_loaded(task, ids, True) or self._find_least_loaded(task, ids, False)

    def _find_least_loaded(self, task: TaskKey, ids: Sequence[str], check_pairs: bool) -> ClientState | None:
        best = None
        for client_id in ids:
            client = self.by_id[client_id]
            if client.assigned_count == 0:
                return client
            if best is None or _has_more_available_capacity(client, best):
                if not check_pairs or self.pairs.has_new_pair(task, client.active | client.standby):
                    best = client
        return best


def sticky_task_assign(problem: StreamsProblem, task_sets: TaskSets = REBALANCE) -> StreamsAssignorResult:
    """Kafka's LegacyStickyTaskAssignor on `problem`, its task sets filled as in a rebalance (or,
    `TASK_ORDER`, as the frozen parity answers' harness filled them)."""
    return _StickyTaskAssignor(problem, task_sets=task_sets).assign()
