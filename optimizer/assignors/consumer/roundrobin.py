"""Kafka's RoundRobinAssignor (classic protocol), as Kafka 3.8+ runs it.

All partitions (topics by name, partitions ascending) dealt to the subscribers in `MemberInfo`
order (static members first, by `group.instance.id`, then member id).
No rack awareness.
"""

from __future__ import annotations

from optimizer.assignors.consumer.group import TP, ConsumerAssignorResult, ConsumerGroup, assignor_result
from optimizer.model.consumer import ConsumerProblem


def roundrobin_assign(problem: ConsumerProblem) -> ConsumerAssignorResult:
    group = ConsumerGroup(problem)
    members = group.member_info_order  # static members first, by group.instance.id
    result: dict[str, list[TP]] = {m: [] for m in members}
    cursor = 0
    for topic in sorted(group.partitions):
        for p in range(group.partitions[topic]):
            while topic not in group.subscriptions[members[cursor % len(members)]]:
                cursor += 1
            result[members[cursor % len(members)]].append((topic, p))
            cursor += 1
    return assignor_result(members, result)
