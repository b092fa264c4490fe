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

from optimizer.assignors.client_state import ClientState
from optimizer.assignors.java import JavaPriorityQueue
from optimizer.assignors.priority import ConstrainedPrioritySet
from optimizer.model.ids import TaskKey


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
    """Which clients are caught up on each stateful task, and all clients ranked by lag."""

    def __init__(self, clients: Sequence[ClientState], stateful: Sequence[TaskKey], acceptable: int):
        order = {c.id: i for i, c in enumerate(clients)}
        everyone = acceptable >= 2**63 - 1
        self.caught_up: dict[TaskKey, set[str]] = {}
        self.by_lag: dict[TaskKey, list[ClientState]] = {}
        for task in stateful:
            self.caught_up[task] = {
                c.id for c in clients if everyone or c.lags[task] == -2 or 0 <= c.lags[task] <= acceptable
            }
            self.by_lag[task] = sorted(clients, key=lambda c: (c.lags[task], order[c.id]))

    def is_caught_up(self, task: TaskKey, client: ClientState) -> bool:
        return client.id in self.caught_up[task]

    def needs_move(self, task: TaskKey, client: ClientState) -> bool:
        if self.is_caught_up(task, client):
            return False
        return self.by_lag[task][0].lags[task] < client.lags[task]

    def most_caught_up(
        self, task: TaskKey, destination: ClientState, eligible: Callable[[ClientState], bool]
    ) -> ClientState | None:
        """The first eligible client ranked before `destination` by (lag, client order)."""
        for client in self.by_lag[task]:
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
    order = {c.id: i for i, c in enumerate(clients)}
    queue = ConstrainedPrioritySet(lambda c, t: caught.is_caught_up(t, c), lambda c: c.assigned_load, order)
    movements = _movement_queue()
    for client in clients:
        for task in sorted(client.active):
            if task in caught.caught_up and caught.needs_move(task, client):
                movements.offer(_Movement(task, client, len(caught.caught_up[task])))
        queue.offer(client)

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
    for movement in movements:  # Kafka walks the queue's heap array
        task, destination = movement.task, movement.destination
        source = queue.poll(task, lambda c, t=task: t in c.standby)
        if source is not None:
            swap(task, source, destination)
        else:
            source = queue.poll(task)
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
        queue.offer_all([source, destination])
        count += 1
    return count


def assign_standby_task_movements(
    clients: Sequence[ClientState],
    caught: CaughtUp,
    budget: WarmupBudget,
    warmups: dict[str, set[TaskKey]],
) -> int:
    order = {c.id: i for i, c in enumerate(clients)}
    queue = ConstrainedPrioritySet(lambda c, t: caught.is_caught_up(t, c), lambda c: c.assigned_load, order)
    movements = _movement_queue()
    for client in clients:
        for task in sorted(client.standby):
            if task in warmups.get(client.id, ()):
                continue
            if caught.needs_move(task, client):
                movements.offer(_Movement(task, client, len(caught.caught_up[task])))
        queue.offer(client)

    count = 0
    for movement in movements:
        task, destination = movement.task, movement.destination

        def eligible(c: ClientState, t: TaskKey = task) -> bool:
            return not c.holds(t)

        source = queue.poll(task, eligible) or caught.most_caught_up(task, destination, eligible)
        if source is None:
            continue
        source.assign_standby(task)
        if budget.take():
            warmups.setdefault(destination.id, set()).add(task)
        else:
            destination.unassign_standby(task)
        queue.offer_all([source, destination])
        count += 1
    return count
