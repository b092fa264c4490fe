"""KIP-848's broker-side `range` assignor (group.remote.assignor=range): Kafka 1eb7644's
group-coordinator `assignor/RangeAssignor`.

Not sticky and not rack-aware: the previous assignment and racks are ignored. Members are sorted
as `sortMemberIds` sorts them: static members first, by `group.instance.id`, then the others by
member id (`String.compareTo` both). For each topic with
metadata, its subscribers in that order take consecutive ranges of floor(P/S) partitions, the
first P mod S of them one more. A HOMOGENEOUS group counts every member as a subscriber of the
first member's topics; otherwise each topic counts its own subscribers. Topics are independent,
so the order they are visited in does not matter.
"""

from __future__ import annotations

from optimizer.assignors.consumer.group import TP, ConsumerAssignorResult, assignor_result, static_first
from optimizer.assignors.consumer.kip848 import ServerGroup
from optimizer.model.consumer import ConsumerProblem


def server_range_assign(problem: ConsumerProblem) -> ConsumerAssignorResult:
    group = ServerGroup(problem)
    members = static_first(problem)
    if group.homogeneous:
        subscribers = {topic: members for topic in group.subscriptions[members[0]]}
        note = "homogeneous (equal subscriptions)"
    else:
        subscribers = {}
        for member in members:
            for topic in group.subscriptions[member]:
                subscribers.setdefault(topic, []).append(member)
        note = "heterogeneous (subscriptions differ)"
    assignment: dict[str, list[TP]] = {member: [] for member in members}
    for topic in sorted(subscribers):
        count = group.partition_count[topic]
        quota, extra = divmod(count, len(subscribers[topic]))
        start = 0
        for rank, member in enumerate(subscribers[topic]):
            end = min(start + quota + (1 if rank < extra else 0), count)
            assignment[member] += [(topic, p) for p in range(start, end)]
            start = end
    return assignor_result(members, {m: sorted(parts) for m, parts in assignment.items()}, notes=[note])
