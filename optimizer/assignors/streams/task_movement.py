"""KIP-441's task movements (Kafka's TaskMovement): keep tasks on caught-up clients while the
clients the balanced target chose warm up.

A stateful active whose target client is not caught up (while a more caught-up client exists)
stays with a caught-up client, preferably one holding a standby of it (a swap, free), else the
least-loaded caught-up client, else the most caught-up one; the target gets a warm-up replica while
`max.warmup.replicas` lasts. Standbys move the same way. Every movement asks for a follow-up
(probing) rebalance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from optimizer.assignors.java import JavaPriorityQueue
from optimizer.assignors.streams.client_state import LATEST_OFFSET, ClientState
from optimizer.model.ids import INT64_MAX, TaskKey


@dataclass
class WarmupBudget:
    """`max.warmup.replicas`, shared by active then standby movements (it may go below zero)."""

    remaining: int

    def take(self) -> bool:
        granted = self.remaining > 0
        self.remaining -= 1
        return granted


@dataclass(frozen=True)
class _Movement:
    task: TaskKey
    destination: ClientState
    caught_up_clients: int


class CaughtUp:
    """Which clients are caught up on each stateful task, and all clients ranked by lag.

    Sparse: a client's lag differs from the changelog end offset only where it held the task or
    reported a lag for it, so only those clients are listed per task; when the end offset itself
    is within `acceptable.recovery.lag` (or that is the largest long), every client is caught up.
    """

    def __init__(self, clients: Sequence[ClientState], stateful: Sequence[TaskKey], acceptable: int):
        self._clients = list(clients)
        self._order = {c.id: i for i, c in enumerate(clients)}
        self._acceptable = acceptable
        everyone = acceptable >= INT64_MAX
        holders: dict[TaskKey, list[ClientState]] = {}
        for client in clients:
            for task in client.previous_active | client.previous_standby | client.reported_lags.keys():
                holders.setdefault(task, []).append(client)
        self._holders = holders
        self._everyone: set[TaskKey] = set()
        self.caught_up: dict[TaskKey, list[ClientState]] = {}
        """The caught-up clients of each task (in client order), unless every client is."""
        self._by_lag: dict[TaskKey, list[ClientState]] = {}
        for task in stateful:
            end = clients[0].end_offsets[task] if clients else 0
            if everyone or (end <= acceptable and all(self._within(c, task) for c in holders.get(task, ()))):
                self._everyone.add(task)
            elif end <= acceptable:  # a client reported a lag beyond the end offset: list them all
                self.caught_up[task] = [c for c in clients if self._within(c, task)]
            else:
                self.caught_up[task] = [c for c in holders.get(task, ()) if self._within(c, task)]

    def _within(self, client: ClientState, task: TaskKey) -> bool:
        lag = client.lag(task)
        return lag == LATEST_OFFSET or 0 <= lag <= self._acceptable

    def count(self, task: TaskKey) -> int:
        return len(self._clients) if task in self._everyone else len(self.caught_up[task])

    def is_caught_up(self, task: TaskKey, client: ClientState) -> bool:
        if task in self._everyone:
            return True
        return client in self.caught_up[task]

    def by_lag(self, task: TaskKey) -> list[ClientState]:
        """All clients by (lag, client order), built when first needed."""
        if task not in self._by_lag:
            self._by_lag[task] = sorted(self._clients, key=lambda c: (c.lag(task), self._order[c.id]))
        return self._by_lag[task]

    def needs_move(self, task: TaskKey, client: ClientState) -> bool:
        if self.is_caught_up(task, client):
            return False
        lag = client.lag(task)
        holders = self._holders.get(task, ())
        if len(holders) < len(self._clients) and client.end_offsets[task] < lag:
            return True  # a client without state (lag: the end offset) is ahead
        return any(other.lag(task) < lag for other in holders)

    def least_loaded(self, task: TaskKey, eligible: Callable[[ClientState], bool]) -> ClientState | None:
        """What Kafka's ConstrainedPrioritySet polls: the caught-up eligible client of least
        (assigned load, client order). Tasks that need moving have few caught-up clients, so
        they are scanned instead of popped from a queue of every client (the same client)."""
        best = None
        for client in self.caught_up[task]:
            if eligible(client):
                key = (client.assigned_load, self._order[client.id])
                if best is None or key < best[0]:
                    best = (key, client)
        return None if best is None else best[1]

    def most_caught_up(
        self, task: TaskKey, destination: ClientState, eligible: Callable[[ClientState], bool]
    ) -> ClientState | None:
        """The first eligible client ranked before `destination` by (lag, client order)."""
        for client in self.by_lag(task):
            if client is destination:
                return None
            if eligible(client):
                return client
        return None


def _movement_queue() -> JavaPriorityQueue[_Movement]:
    return JavaPriorityQueue(
        lambda a, b: (a.caught_up_clients, a.task) < (b.caught_up_clients, b.task)
    )


def assign_active_task_movements(
    clients: Sequence[ClientState],
    caught: CaughtUp,
    budget: WarmupBudget,
    warmups: dict[str, set[TaskKey]],
) -> int:
    movements = _movement_queue()
    for client in clients:
        for task in sorted(client.active):
            if task in caught.caught_up and caught.needs_move(task, client):
                movements.offer(_Movement(task, client, caught.count(task)))

    def move_active_and_try_to_warm_up(task: TaskKey, source: ClientState, destination: ClientState):
        source.assign_active(task)
        destination.unassign_active(task)
        if budget.take():
            destination.assign_standby(task)
            warmups.setdefault(destination.id, set()).add(task)

    def swap(task: TaskKey, source: ClientState, destination: ClientState):
        source.unassign_standby(task)
        source.assign_active(task)
        destination.unassign_active(task)
        destination.assign_standby(task)

    count = 0
    while (movement := movements.poll()) is not None:  # polled in priority order, as Kafka does since 3.4.0
        task, destination = movement.task, movement.destination

        def holds_standby(c: ClientState, t: TaskKey = task) -> bool:
            return t in c.standby

        source = caught.least_loaded(task, holds_standby)
        if source is not None:
            swap(task, source, destination)
        else:
            source = caught.least_loaded(task, lambda c: True)
            if source is not None:
                move_active_and_try_to_warm_up(task, source, destination)
            else:
                source = caught.most_caught_up(task, destination, lambda c: True)
                if source is None:
                    raise AssertionError(f"no more caught-up client for task {task}")
                if task in source.standby:
                    swap(task, source, destination)
                else:
                    move_active_and_try_to_warm_up(task, source, destination)
        count += 1
    return count


def assign_standby_task_movements(
    clients: Sequence[ClientState],
    caught: CaughtUp,
    budget: WarmupBudget,
    warmups: dict[str, set[TaskKey]],
) -> int:
    movements = _movement_queue()
    for client in clients:
        for task in sorted(client.standby):
            if task in warmups.get(client.id, ()):
                continue
            if caught.needs_move(task, client):
                movements.offer(_Movement(task, client, caught.count(task)))

    count = 0
    while (movement := movements.poll()) is not None:
        task, destination = movement.task, movement.destination

        def eligible(c: ClientState, t: TaskKey = task) -> bool:
            return not c.holds(t)

        source = caught.least_loaded(task, eligible) or caught.most_caught_up(task, destination, eligible)
        if source is None:
            continue
        source.assign_standby(task)
        if budget.take():
            warmups.setdefault(destination.id, set()).add(task)
        else:
            destination.unassign_standby(task)
        count += 1
    return count
