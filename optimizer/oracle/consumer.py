"""The consumer groups' oracle: Kafka's classic client assignors and the group coordinator's KIP-848
assignors on the project's consumer problems.

`classic_consumer_answers(problems)` runs each group's `partition.assignment.strategy` (the
client's RangeAssignor, RoundRobinAssignor, StickyAssignor or CooperativeStickyAssignor) through
the adapter `kao.jvm.ConsumerAssignors`, all groups in one JVM. Kafka's inputs are built from the
problem's fields as the group leader has them: the members' subscriptions, `client.rack`, owned
partitions and generation (the eager sticky assignor's as its user data, as its consumers send
them), the partitions' replicas in their racks; members enter the leader's HashMap in the
problem's order.

`kip848_answers(problems)` runs each group's `group.remote.assignor` (the group coordinator's
`uniform` or `range`) through `kao.jvm.GroupAssignors`, on Kafka's own `GroupSpecImpl` filled as
the parity cases were made (`../shared/kafka-parity/streams-group/README.md`): members in problem
order; each member's subscribed topics that exist; its previous target assignment, the owned
partitions de-conflicted as the coordinator's state has them (highest generation wins, a tie drops
the partition), topics in the reverse of their first claim; HOMOGENEOUS exactly when every member
subscribes to the same topic names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from optimizer.assignors.consumer.group import joined
from optimizer.model.consumer import ConsumerProblem, GroupProtocol, deconflicted_owned
from optimizer.model.ids import partition_id, partition_key
from optimizer.oracle.batch import Answer, batch


def classic_case(problem: ConsumerProblem) -> dict[str, Any]:
    """Kafka's classic assignor's inputs for `problem`, as `kao.jvm.ConsumerAssignors` reads them."""
    if problem.config.group_protocol != GroupProtocol.CLASSIC:
        raise ValueError(f"{problem.name}: the classic consumer assignors run under group.protocol=classic only")
    return {
        "assignor": str(problem.config.partition_assignment_strategy),
        "topics": [
            {"name": t.name, "partitions": t.partitions, "replica_racks": None if t.replica_racks is None else [list(r) for r in t.replica_racks]}
            for t in problem.topics
        ],
        "members": [
            {
                "id": m.id,
                "rack": m.rack,
                "subscriptions": list(m.subscriptions),
                "owned": [list(partition_key(p)) for p in m.owned_partitions],
                "generation": m.generation,
                **({"instance_id": m.group_instance_id} if m.group_instance_id is not None else {}),
            }
            for m in (problem.member_by_id[member] for member in joined(problem))  # the leader's HashMap is filled in this order
        ],
    }


def classic_consumer_answers(problems: Sequence[ConsumerProblem], timeout: float = 300.0, release: str | None = None) -> list[Answer]:
    """Kafka's classic assignor's answer for each problem (as given, not normalised), in order;
    `release`: from that Kafka release's jars (e.g. "4.0.0") instead of the pinned ones."""
    cases = [classic_case(p) for p in problems]
    return [_partitions(answer) for answer, _ in batch("kao.jvm.ConsumerAssignors", cases, 1, timeout, release=release)]


def kip848_case(problem: ConsumerProblem) -> dict[str, Any]:
    """A KIP-848 assignor's inputs for `problem`, as `kao.jvm.GroupAssignors` reads them."""
    if problem.config.group_protocol != GroupProtocol.CONSUMER:
        raise ValueError(f"{problem.name}: the KIP-848 assignors run under group.protocol=consumer only")
    known = {t.name for t in problem.topics}
    previous = deconflicted_owned(problem)
    members = []
    by_id = {m.id: m for m in problem.members}
    for member in (by_id[m] for m in joined(problem)):  # into Kafka's HashMap in the coordinator's order
        by_topic: dict[str, list[int]] = {}
        for topic, partition in previous[member.id]:
            by_topic.setdefault(topic, []).append(partition)
        members.append(
            {
                "id": member.id,
                "rack": member.rack,
                **({"instance_id": member.group_instance_id} if member.group_instance_id is not None else {}),
                "subscribed": [t for t in member.subscriptions if t in known],
                "assigned": [[topic, by_topic[topic]] for topic in reversed(by_topic)],
            }
        )
    return {
        "assignor": str(problem.config.remote_assignor),
        "homogeneous": len({frozenset(m.subscriptions) for m in problem.members}) == 1,
        "topics": [
            {
                "name": t.name,
                **({"id": t.topic_id} if t.topic_id is not None else {}),
                "partitions": t.partitions,
                "racks": [list(t.replica_racks[p]) if t.replica_racks else [] for p in range(t.partitions)],
            }
            for t in problem.topics
        ],
        "members": members,
    }


def kip848_answers(problems: Sequence[ConsumerProblem], timeout: float = 300.0, release: str | None = None) -> list[Answer]:
    """Kafka's KIP-848 assignor's answer for each problem (as given), in order; `release` as for
    `classic_consumer_answers`."""
    cases = [kip848_case(p) for p in problems]
    return [_partitions(answer) for answer, _ in batch("kao.jvm.GroupAssignors", cases, 1, timeout, release=release)]


def timed_partitions(main: str, cases: list[dict[str, Any]], repeat: int = 1, timeout: float = 300.0) -> list[tuple[Answer, int | None]]:
    """Each case's answer from `kao.jvm.ConsumerAssignors` (`classic_case`s) or
    `kao.jvm.GroupAssignors` (`kip848_case`s), with the microseconds of its fastest of `repeat`
    runs in one JVM (`batch`)."""
    return [(_partitions(answer), micros) for answer, micros in batch(main, cases, repeat, timeout)]


def _partitions(answer: Any) -> Answer:
    """A consumer adapter's answer as each member's partition ids, or Kafka's error unchanged."""
    if isinstance(answer, str):
        return answer
    return {member: tuple(partition_id(t, p) for t, p in parts) for member, parts in answer.items()}
