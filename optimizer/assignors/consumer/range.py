"""Kafka's RangeAssignor (classic protocol), as Kafka 3.8+ runs it.

Per topic, consecutive ranges to the subscribers in `MemberInfo` order (static members first, by
`group.instance.id`, then member id); with KIP-881 rack information,
first partitions whose replicas share the member's rack (co-partitioned topics keep partition p of
every topic on one member), then the rest.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from optimizer.assignors.consumer.group import (
    TP,
    ConsumerAssignorResult,
    ConsumerGroup,
    assignor_result,
    use_rack_aware_assignment,
)
from optimizer.model.consumer import ConsumerProblem


@dataclass
class _TopicRanges:
    topic: str
    consumers: list[tuple[str, str | None]]
    unassigned: list[int]
    per_consumer: int
    remaining_extra: int
    partition_racks: dict[int, frozenset[str]]
    needs_rack_aware: bool
    assigned: dict[str, int] = field(default_factory=dict)

    def max_assignable(self, member: str) -> int:
        extra = 1 if self.remaining_extra > 0 else 0
        return max(0, self.per_consumer + extra - self.assigned.get(member, 0))

    def on_assigned(self, member: str, parts: list[int]) -> None:
        self.assigned[member] = self.assigned.get(member, 0) + len(parts)
        if self.assigned[member] > self.per_consumer:
            self.remaining_extra -= 1
        taken = set(parts)
        self.unassigned = [p for p in self.unassigned if p not in taken]

    def racks_match(self, member: str, rack: str | None, partition: int) -> bool:
        return rack is None or (partition in self.partition_racks and rack in self.partition_racks[partition])


def range_assign(problem: ConsumerProblem) -> ConsumerAssignorResult:
    group = ConsumerGroup(problem)
    result: dict[str, list[TP]] = {m: [] for m in group.sorted_members}
    states = []
    for topic in sorted(group.partitions):
        subscribers = [m for m in group.member_info_order if topic in group.subscriptions[m]]  # static members first
        count = group.partitions[topic]
        consumers = [(m, group.member_rack.get(m)) for m in subscribers]
        racks = {p: group.replica_racks[topic, p] for p in range(count)} if any(r for _, r in consumers) else {}
        all_racks = set().union(*racks.values()) if racks else set()
        member_racks = {r for _, r in consumers if r}
        n = len(subscribers)
        states.append(
            _TopicRanges(
                topic,
                consumers,
                list(range(count)),
                count // n if n else 0,
                count % n if n else 0,
                racks,
                use_rack_aware_assignment(member_racks, all_racks, {(topic, p): r for p, r in racks.items()}),
            )
        )

    def assign_ranges(state: _TopicRanges, may_assign: Callable[[str, str | None, int], bool]) -> None:
        for member, rack in state.consumers:
            if not state.unassigned:
                return
            parts = [p for p in state.unassigned if may_assign(member, rack, p)][: state.max_assignable(member)]
            if parts:
                result[member] += [(state.topic, p) for p in parts]
                state.on_assigned(member, parts)

    use_rack = any(s.needs_rack_aware for s in states)
    if use_rack:
        groups: dict[tuple, list[_TopicRanges]] = defaultdict(list)
        for state in states:
            groups[tuple(state.consumers), len(state.partition_racks)].append(state)
        for co_partitioned in groups.values():
            if len(co_partitioned) > 1:
                _assign_co_partitioned(co_partitioned, result)
            elif co_partitioned[0].needs_rack_aware:
                state = co_partitioned[0]
                assign_ranges(state, state.racks_match)
    for state in states:
        assign_ranges(state, lambda member, rack, p: True)
    for member in result:
        result[member].sort()
    return assignor_result(group.sorted_members, result)


def _assign_co_partitioned(states: list[_TopicRanges], result: dict[str, list[TP]]) -> None:
    remaining = list(states[0].consumers)
    for p in range(len(states[0].partition_racks)):
        chosen = next(
            (
                (member, rack)
                for member, rack in remaining
                if all(s.racks_match(member, rack, p) and s.max_assignable(member) > 0 for s in states)
            ),
            None,
        )
        if chosen is None:
            continue
        member = chosen[0]
        for state in states:
            result[member].append((state.topic, p))
            state.on_assigned(member, [p])
        if all(s.max_assignable(member) == 0 for s in states):
            remaining.remove(chosen)
            if not remaining:
                return
