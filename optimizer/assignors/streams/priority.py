"""Kafka Streams' ConstrainedPrioritySet: the least-loaded client that may take a task."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from optimizer.assignors.java import JavaPriorityQueue
from optimizer.assignors.streams.client_state import ClientState
from optimizer.model.ids import TaskKey


class ConstrainedPrioritySet:
    """Clients ordered by (weight, client order), weights read live; `poll` takes the first allowed.

    `order` gives each client's position in Kafka's client order (the tie-break).
    """

    def __init__(
        self,
        constraint: Callable[[ClientState, TaskKey], bool],
        weight: Callable[[ClientState], float],
        order: dict[str, int],
    ):
        self._constraint = constraint
        self._members: set[str] = set()

        def less(a: ClientState, b: ClientState) -> bool:  # (weight, order) compared, without building tuples
            first, second = weight(a), weight(b)
            return first < second or (first == second and order[a.id] < order[b.id])

        self._queue: JavaPriorityQueue[ClientState] = JavaPriorityQueue(less)
        self._order = order

    def offer(self, client: ClientState) -> None:
        if client.id in self._members:
            self._queue.remove(client)
        else:
            self._members.add(client.id)
        self._queue.offer(client)

    def offer_all(self, clients: Iterable[ClientState]) -> None:
        for client in clients:
            self.offer(client)

    def poll(
        self, task: TaskKey, extra: Callable[[ClientState], bool] = lambda client: True
    ) -> ClientState | None:
        rejected: list[ClientState] = []
        while True:
            client = self._queue.poll()
            if client is None:
                break
            self._members.discard(client.id)
            if self._constraint(client, task) and extra(client):
                self.offer_all(rejected)
                return client
            rejected.append(client)
        # Kafka re-offers the rejected clients from a HashSet; with a valid heap the order of
        # re-offering does not change which client is polled next, so client order is used.
        self.offer_all(sorted(rejected, key=lambda c: self._order[c.id]))
        return None
