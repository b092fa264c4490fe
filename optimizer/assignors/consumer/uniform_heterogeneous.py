"""KIP-848 `uniform` for groups whose members subscribe to different topics: Kafka 1eb7644's
UniformHeterogeneousAssignmentBuilder.

Members are numbered in `memberIds()` order. Each keeps its previous partitions of the topics it
still subscribes to. Topics are visited by partitions per subscriber (descending), then subscriber
count (ascending), then topic id (`Uuid.compareTo`); a topic's unassigned partitions are dealt to
its least loaded subscribers (ties: lower member number). Then, up to 16 rounds over the topics
with two or more subscribers, a topic's most loaded subscribers hand their highest-numbered
partitions to its least loaded ones until the two differ by at most one; the rounds stop after a
full pass over the topics moves nothing. Not rack-aware.
"""

from __future__ import annotations

from optimizer.assignors.consumer.group import TP
from optimizer.assignors.consumer.kip848 import ServerGroup

MAX_ITERATION_COUNT = 16


def heterogeneous_assign(group: ServerGroup) -> tuple[dict[str, list[TP]], list[str], list[tuple[str, str]]]:
    builder = _Heterogeneous(group)
    return builder.build(), ["heterogeneous (subscriptions differ)"], []


class _Balancer:
    """MemberAssignmentBalancer: a least loaded range growing right and a most loaded range growing
    left over the subscribers sorted by load, read against the live loads."""

    def __init__(self, sizes: list[int]):
        self.sizes = sizes
        self.sorted: list[int] = []
        self.least_end = 0
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0
        self.most_end = 0
        self.most_count = 1
        self.next_most = -1

    def initialize(self, members: list[int]) -> int:
        self.sorted = sorted(members, key=lambda m: (self.sizes[m], m))
        self.least_end = 0
        self.least_count = self.sizes[self.sorted[0]] - 1
        self.next_least = 0
        self.most_start = len(self.sorted)
        self.most_end = len(self.sorted)
        self.most_count = self.sizes[self.sorted[-1]] + 1
        self.next_most = len(self.sorted) - 1
        return self.sizes[self.sorted[-1]] - self.sizes[self.sorted[0]]

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_count += 1
            while self.least_end < len(self.sorted) and self.sizes[self.sorted[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = self.sorted[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                # The range was emptied by exclusions: restart it from the next member down, so
                # that it always expands.
                self.most_count = self.sizes[self.sorted[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and self.sizes[self.sorted[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = self.sorted[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        position = self.next_most + 1
        member = self.sorted[position]
        self.sorted[position] = self.sorted[self.most_end - 1]
        self.sorted[self.most_end - 1] = member
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


class _Heterogeneous:
    def __init__(self, group: ServerGroup):
        self.group = group
        self.member_ids = list(group.member_ids)
        self.subscribers: dict[str, list[int]] = {}
        for index, member in enumerate(self.member_ids):
            for topic in group.subscribed_topic_ids(member):
                self.subscribers.setdefault(topic, []).append(index)
        self.sizes = [0] * len(self.member_ids)
        self.owners = {topic: [-1] * group.partition_count[topic] for topic in self.subscribers}
        self.target: dict[int, set[TP]] = {i: set() for i in range(len(self.member_ids))}

    def _topic_order(self, topics: list[str]) -> list[str]:
        def key(topic: str) -> tuple[float, int, tuple[int, int]]:
            count = self.group.partition_count[topic]
            subscribers = len(self.subscribers[topic])
            return -(count / subscribers), subscribers, self.group.uuid_key(topic)

        return sorted(topics, key=key)

    def build(self) -> dict[str, list[TP]]:
        if self.subscribers:
            self._revoke()
            self._assign_remaining()
            self._balance()
        return {self.member_ids[i]: sorted(parts) for i, parts in self.target.items()}

    def _revoke(self) -> None:
        for index, member in enumerate(self.member_ids):
            subscribed = self.group.subscriptions[member]
            for topic, partitions in self.group.previous_assignment(member):
                if topic not in subscribed:
                    continue
                self.sizes[index] += len(partitions)
                for p in partitions:
                    self.owners[topic][p] = index
                    self.target[index].add((topic, p))

    def _assign_remaining(self) -> None:
        unassigned = {
            topic: [p for p, owner in enumerate(owners) if owner == -1] for topic, owners in self.owners.items()
        }
        balancer = _Balancer(self.sizes)
        for topic in self._topic_order([t for t, parts in unassigned.items() if parts]):
            balancer.initialize(self.subscribers[topic])
            for p in unassigned[topic]:
                self._assign(topic, p, balancer.next_least_loaded())

    def _assign(self, topic: str, partition: int, member: int) -> None:
        old = self.owners[topic][partition]
        if old != -1:
            self.target[old].discard((topic, partition))
            self.sizes[old] -= 1
        self.target[member].add((topic, partition))
        self.owners[topic][partition] = member
        self.sizes[member] += 1

    def _balance(self) -> None:
        topics = self._topic_order([t for t, subs in self.subscribers.items() if len(subs) >= 2])
        if not topics:
            return
        balancer = _Balancer(self.sizes)
        last_rebalanced = -1
        for _ in range(MAX_ITERATION_COUNT):
            for index, topic in enumerate(topics):
                if index == last_rebalanced:
                    # A whole pass since the last move: nothing more to gain.
                    return
                moved = self._balance_topic(topic, balancer)
                if moved > 0 or last_rebalanced == -1:
                    last_rebalanced = index

    def _balance_topic(self, topic: str, balancer: _Balancer) -> int:
        owners = self.owners[topic]
        if balancer.initialize(self.subscribers[topic]) <= 1:
            return 0
        # Partitions grouped by owner; each owner gives away the end of its run.
        partitions = sorted(range(len(owners)), key=lambda p: (owners[p], p))
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for i, p in enumerate(partitions):
            start.setdefault(owners[p], i)
            end[owners[p]] = i + 1
        moved = 0
        while not balancer.is_balanced():
            giver = balancer.next_most_loaded()
            while giver != -1 and (giver not in end or end[giver] - start[giver] <= 0):
                balancer.exclude_most_loaded()
                giver = balancer.next_most_loaded()
            if giver == -1:
                break
            partition = partitions[end[giver] - 1]
            end[giver] -= 1
            taker = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            self._assign(topic, partition, taker)
            moved += 1
        return moved
