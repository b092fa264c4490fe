"""Kafka Streams' standby assignors: the default one and the client-tag one of KIP-708."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from optimizer.assignors.java import java_hash_map_order, java_task_id_hash
from optimizer.assignors.streams.client_state import ClientState
from optimizer.assignors.streams.priority import ConstrainedPrioritySet
from optimizer.model.ids import TaskKey, task_id


def _not_holding(client: ClientState, task: TaskKey) -> bool:
    return task not in client.active and task not in client.standby


def _assigned_load(client: ClientState) -> float:
    # ClientState.assigned_load written out: the priority queue reads it at every comparison
    return (len(client.active) + len(client.standby)) / client.capacity


class DefaultStandbyTaskAssignor:
    """Each standby replica to the least-loaded client (active + standby per thread) without one."""

    def assign(
        self, clients: Sequence[ClientState], stateful: Sequence[TaskKey], replicas: int
    ) -> list[str]:
        order = {c.id: i for i, c in enumerate(clients)}
        queue = ConstrainedPrioritySet(_not_holding, _assigned_load, order)
        queue.offer_all(clients)
        shortfalls = []
        for task in stateful:
            remaining = _fill_least_loaded(queue, task, replicas)
            if remaining:
                shortfalls.append(_shortfall(task, remaining, replicas))
        return shortfalls

    def is_allowed_task_movement(self, source: ClientState, destination: ClientState) -> bool:
        return True

    def is_allowed_standby_move(
        self, task: TaskKey, source: ClientState, destination: ClientState, clients: Sequence[ClientState]
    ) -> bool:
        return True


def _fill_least_loaded(queue: ConstrainedPrioritySet, task: TaskKey, remaining: int) -> int:
    while remaining > 0:
        client = queue.poll(task)
        if client is None:
            break
        client.assign_standby(task)
        remaining -= 1
        queue.offer(client)
    return remaining


def _shortfall(task: TaskKey, remaining: int, replicas: int) -> str:
    return (
        f"task {task_id(*task)}: only {replicas - remaining} of {replicas} standby replicas could "
        "be placed (not enough clients)"
    )


class ClientTagAwareStandbyTaskAssignor:
    """KIP-708: standbys on clients whose tag values differ from those already holding the task.

    After k copies are placed, a tag key with at most k distinct values stops constraining (partial
    rack awareness). Replicas that no client satisfying the tags can take are placed by the default
    rule, ignoring tags, in the order of Kafka's HashMap of pending tasks.
    """

    def __init__(self, tag_keys: Sequence[str]):
        self.tag_keys = tuple(tag_keys)

    def assign(
        self, clients: Sequence[ClientState], stateful: Sequence[TaskKey], replicas: int
    ) -> list[str]:
        order = {c.id: i for i, c in enumerate(clients)}
        values_of_key: dict[str, set[str]] = defaultdict(set)
        clients_with: dict[tuple[str, str], set[str]] = defaultdict(set)
        for client in clients:
            for key, value in client.tags.items():
                values_of_key[key].add(value)
                clients_with[key, value].add(client.id)
        queue = ConstrainedPrioritySet(_not_holding, _assigned_load, order)
        pending: dict[TaskKey, int] = {}
        pending_order: list[TaskKey] = []
        for task in stateful:
            pending_order.append(task)
            pending[task] = replicas
            for holder in clients:
                if task not in holder.active:
                    continue
                queue.offer_all(clients)
                left = self._place_with_tags(queue, task, holder, replicas, values_of_key, clients_with)
                if left:
                    pending[task] = left
                else:
                    del pending[task]
        shortfalls = []
        if pending:
            queue.offer_all(clients)
            # Kafka's map held every stateful task before the placed ones were removed, and a
            # HashMap does not shrink: its iteration order is that of the full map.
            in_map_order = java_hash_map_order(pending_order, lambda t: java_task_id_hash(*t))
            for task in [t for t in in_map_order if t in pending]:
                remaining = _fill_least_loaded(queue, task, pending[task])
                if remaining:
                    shortfalls.append(_shortfall(task, remaining, replicas))
        return shortfalls

    def _place_with_tags(
        self,
        queue: ConstrainedPrioritySet,
        task: TaskKey,
        active_client: ClientState,
        replicas: int,
        values_of_key: dict[str, set[str]],
        clients_with: dict[tuple[str, str], set[str]],
    ) -> int:
        used = 1
        remaining = replicas
        excluded: dict[tuple[str, str], set[str]] = {}
        last = active_client
        while True:
            for key, value in last.tags.items():
                if key not in self.tag_keys:
                    continue
                if len(values_of_key[key]) <= used:
                    # Every value of this key already holds a copy: it no longer constrains.
                    for entry in [e for e in excluded if e[0] == key]:
                        del excluded[entry]
                else:
                    excluded[key, value] = clients_with[key, value]
            blocked: set[str] = set().union(*excluded.values()) if excluded else set()

            # Kafka's filter: the poll below calls it at once, so the loop cannot rebind `blocked` under it; bound anyway.
            def on_unused_tag_dimensions(c: ClientState, blocked: set[str] = blocked) -> bool:
                return c.id not in blocked

            client = queue.poll(task, on_unused_tag_dimensions)
            if client is None:
                break
            used += 1
            remaining -= 1
            client.assign_standby(task)
            last = client
            if remaining <= 0:
                break
        return remaining

    def is_allowed_task_movement(self, source: ClientState, destination: ClientState) -> bool:
        """Balancing may move a standby only between clients with equal tags."""
        return all(destination.tags.get(key) == value for key, value in source.tags.items())

    def is_allowed_standby_move(
        self, task: TaskKey, source: ClientState, destination: ClientState, clients: Sequence[ClientState]
    ) -> bool:
        """The rack-aware swap may move a standby if the tag values covering the task do not shrink."""
        others = {
            (key, value)
            for client in clients
            if client is not source and client is not destination and client.holds(task)
            for key, value in client.tags.items()
        }
        with_source = others | set(source.tags.items())
        with_destination = others | set(destination.tags.items())
        return len(with_destination) >= len(with_source)
