"""What Kafka's consumer assignors share (AbstractPartitionAssignor and the group they read).

`ConsumerGroup` is what every assignor reads from the group's subscriptions and the topic
metadata: partitions per subscribed topic, member racks, replica racks, and the member orders
Kafka's assignors visit (member id order, and the sticky assignors' HashMap order).
`use_rack_aware_assignment` is AbstractPartitionAssignor's KIP-881 test; `member_info_order` its
`MemberInfo` order, where static members (`group.instance.id`) come first. What each member gets is
Kafka's; the order of the partitions within a member's list is not (a consumer does not depend on
it): solutions list them sorted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from optimizer.assignors.java import java_hash_map_order, java_string_hash
from optimizer.model.consumer import ConsumerProblem, Member

TP = tuple[str, int]


@dataclass
class ConsumerAssignorResult:
    assignment: dict[str, list[TP]]
    """Member id -> partitions (their order within a member is not Kafka's)."""
    followup_rebalance: bool = False
    notes: list[str] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    """(location, message): where Kafka's own answer is not reproduced, and why."""


def member_id_key(member_id: str) -> bytes:
    """Sort key of member ids in Java's `String.compareTo` order (UTF-16 code units)."""
    return member_id.encode("utf-16-be")


def static_first(problem: ConsumerProblem) -> list[str]:
    """Member ids with static members first, by `group.instance.id`, then the others by member id,
    each in `String.compareTo` order: the classic `AbstractPartitionAssignor.MemberInfo` order,
    and the broker-side `RangeAssignor.sortMemberIds`'."""

    def key(member: Member) -> tuple[int, bytes]:
        static = member.group_instance_id
        return (0, member_id_key(static)) if static is not None else (1, member_id_key(member.id))

    return [member.id for member in sorted(problem.members, key=key)]


def joined(problem: ConsumerProblem) -> list[str]:
    """Member ids in the order the coordinator lists them to the classic leader, which fills its
    HashMap of subscriptions so: the problem's `join_order`, else by member id."""
    if problem.join_order is not None:
        return list(problem.join_order)
    return sorted((m.id for m in problem.members), key=member_id_key)


class ConsumerGroup:
    """What every assignor reads: partitions per subscribed topic, racks, member order."""

    def __init__(self, problem: ConsumerProblem):
        self.problem = problem
        topics = problem.topic_by_name
        subscribed = {t for m in problem.members for t in m.subscriptions}
        self.partitions: dict[str, int] = {t: topics[t].partitions for t in subscribed if t in topics}
        self.sorted_members = sorted((m.id for m in problem.members), key=member_id_key)
        self.member_info_order = static_first(problem)
        """Members in `AbstractPartitionAssignor.MemberInfo` order, the classic range and round-robin
        assignors' (static members first, by `group.instance.id`; then the others by member id)."""
        self.subscriptions = {m.id: list(m.subscriptions) for m in problem.members}
        self.member_rack = {m.id: m.rack for m in problem.members if m.rack}
        self.replica_racks: dict[TP, frozenset[str]] = {}
        for topic, count in self.partitions.items():
            racks = topics[topic].replica_racks
            for p in range(count):
                self.replica_racks[topic, p] = frozenset(racks[p]) if racks is not None else frozenset()

    def hash_order(self) -> list[str]:
        """Members as Kafka's group leader iterates them: a HashMap keyed by member id, filled in
        the order the coordinator listed them (`join_order`; by member id when not given)."""
        return java_hash_map_order(joined(self.problem), java_string_hash)


def use_rack_aware_assignment(
    consumer_racks: set[str], partition_racks: set[str], racks_per_partition: dict[TP, frozenset[str]]
) -> bool:
    """KIP-881: some member rack is known and shared by replicas, and racks differ by partition."""
    if not consumer_racks or not consumer_racks & partition_racks:
        return False
    return any(racks != partition_racks for racks in racks_per_partition.values())


def assignor_result(members: Iterable[str], lists: dict[str, list[TP]], **kwargs) -> ConsumerAssignorResult:
    return ConsumerAssignorResult({m: lists.get(m, []) for m in members}, **kwargs)
