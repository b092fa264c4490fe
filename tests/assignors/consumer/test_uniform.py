"""KIP-848's broker-side `uniform` assignor and the group spec it reads: scenarios of Kafka's
UniformHomogeneousAssignmentBuilderTest and UniformHeterogeneousAssignmentBuilderTest with
Kafka's expected results, KAFKA-18688's stability, the rack-aware homogeneous assignment, and
the translation of a problem into Kafka's input (topic ids, map orders, de-conflicted owners)."""

from __future__ import annotations

import pytest

from optimizer.assignors.consumer.kip848 import ServerGroup, TopicId
from optimizer.assignors.consumer.uniform import uniform_assign
from optimizer.errors import SolverUnavailableError
from optimizer.model import problem_from_data


def _problem(topics: dict[str, int], members: dict[str, dict], racks: dict[str, list[list[str]]] | None = None):
    return problem_from_data(
        {
            "kind": "consumer",
            "topics": [{"name": t, "partitions": n} | ({"replica_racks": racks[t]} if racks and t in racks else {}) for t, n in topics.items()],
            "members": [{"id": m, **spec} for m, spec in members.items()],
        }
    )


def _assign(topics, members, racks=None) -> dict[str, set[str]]:
    result = uniform_assign(_problem(topics, members, racks))
    assert not result.warnings
    return {m: {f"{t}-{p}" for t, p in parts} for m, parts in result.assignment.items()}


def _owning(subscriptions, owned=(), generation=1, rack=None):
    return {"subscriptions": subscriptions, "owned_partitions": list(owned), "generation": generation} | (
        {"rack": rack} if rack else {}
    )


# Homogeneous. With these names' topic ids, topic1 iterates before topic2 and topic3 before topic1,
# as Kafka's test ids do where its expected results depend on it.


def test_first_assignment_two_members_two_topics():
    members = {"A": _owning(["topic1", "topic3"]), "B": _owning(["topic1", "topic3"])}
    assert _assign({"topic1": 3, "topic3": 2}, members) == {"A": {"topic3-0", "topic3-1"}, "B": {"topic1-0", "topic1-1", "topic1-2"}}


def test_more_members_than_partitions():
    members = {m: _owning(["topic3"]) for m in "ABC"}
    assert _assign({"topic3": 2}, members) == {"A": set(), "B": {"topic3-0"}, "C": {"topic3-1"}}


def test_unbalanced_previous_assignment():
    members = {
        "A": _owning(["topic1", "topic2"], ["topic1-0", "topic1-1", "topic2-0", "topic2-1"]),
        "B": _owning(["topic1", "topic2"], ["topic1-2", "topic2-2"]),
    }
    assert _assign({"topic1": 3, "topic2": 3}, members) == {
        "A": {"topic1-0", "topic1-1", "topic2-0"},
        "B": {"topic1-2", "topic2-1", "topic2-2"},
    }


def test_member_added():
    members = {
        "A": _owning(["topic1", "topic2"], ["topic1-0", "topic1-2", "topic2-0"]),
        "B": _owning(["topic1", "topic2"], ["topic1-1", "topic2-1", "topic2-2"]),
        "C": _owning(["topic1", "topic2"]),
    }
    assert _assign({"topic1": 3, "topic2": 3}, members) == {
        "A": {"topic1-0", "topic1-2"},
        "B": {"topic1-1", "topic2-1"},
        "C": {"topic2-0", "topic2-2"},
    }


def test_member_removed():
    # Kafka's test with its topic2 played by topic3, which iterates first as Kafka's topic2 does.
    members = {
        "A": _owning(["topic1", "topic3"], ["topic1-0", "topic3-0"]),
        "B": _owning(["topic1", "topic3"], ["topic1-1", "topic3-1"]),
    }
    assert _assign({"topic1": 3, "topic3": 3}, members) == {
        "A": {"topic1-0", "topic3-0", "topic3-2"},
        "B": {"topic1-1", "topic1-2", "topic3-1"},
    }


def test_subscription_removed():
    members = {
        "A": _owning(["topic2"], ["topic1-0", "topic2-0"]),
        "B": _owning(["topic2"], ["topic1-1", "topic2-1"]),
    }
    assert _assign({"topic1": 2, "topic2": 2}, members) == {"A": {"topic2-0"}, "B": {"topic2-1"}}


def test_any_member_keeps_the_extra_partition():
    # KAFKA-18688: B, not the first member, holds the one extra partition and keeps it.
    members = {
        "A": _owning(["t"], ["t-0", "t-1"]),
        "B": _owning(["t"], ["t-2", "t-3", "t-4"]),
        "C": _owning(["t"], ["t-5", "t-6"]),
    }
    assert _assign({"t": 7}, members) == {"A": {"t-0", "t-1"}, "B": {"t-2", "t-3", "t-4"}, "C": {"t-5", "t-6"}}


def test_last_unfilled_members_take_the_extra_partitions():
    members = {m: _owning(["t"]) for m in "ABC"}
    assert _assign({"t": 5}, members) == {"A": {"t-0"}, "B": {"t-1", "t-2"}, "C": {"t-3", "t-4"}}


def test_rack_aware_first_assignment():
    racks = {"t": [["r1"], ["r2"], ["r1"], ["r2"]]}
    members = {"A": _owning(["t"], rack="r1"), "B": _owning(["t"], rack="r2")}
    assert _assign({"t": 4}, members, racks) == {"A": {"t-0", "t-2"}, "B": {"t-1", "t-3"}}
    no_racks = {"A": _owning(["t"]), "B": _owning(["t"])}
    assert _assign({"t": 4}, no_racks, racks) == {"A": {"t-0", "t-1"}, "B": {"t-2", "t-3"}}


def test_rack_aware_revokes_partitions_on_other_racks():
    racks = {"t": [["r1"], ["r2"], ["r1"], ["r2"]]}
    members = {"A": _owning(["t"], ["t-0", "t-1"], rack="r1"), "B": _owning(["t"], ["t-2", "t-3"], rack="r2")}
    assert _assign({"t": 4}, members, racks) == {"A": {"t-0", "t-2"}, "B": {"t-1", "t-3"}}


def test_same_racks_everywhere_is_not_rack_aware():
    racks = {"t": [["r1", "r2"]] * 4}
    members = {"A": _owning(["t"], ["t-0", "t-1"], rack="r1"), "B": _owning(["t"], ["t-2", "t-3"], rack="r2")}
    assert _assign({"t": 4}, members, racks) == {"A": {"t-0", "t-1"}, "B": {"t-2", "t-3"}}


# Heterogeneous (UniformHeterogeneousAssignmentBuilderTest, members A, B, C in that order).


def test_heterogeneous_first_assignment():
    members = {"A": _owning(["topic1", "topic3"]), "B": _owning(["topic3"])}
    assert _assign({"topic1": 3, "topic3": 6}, members) == {
        "A": {"topic1-0", "topic1-1", "topic1-2", "topic3-4"},
        "B": {"topic3-0", "topic3-1", "topic3-2", "topic3-3", "topic3-5"},
    }


def test_heterogeneous_unbalanced_previous_assignment():
    members = {
        "A": _owning(["topic1"], ["topic1-0", "topic1-1", "topic1-2"]),
        "B": _owning(["topic1", "topic2"], ["topic1-3", "topic2-0"]),
        "C": _owning(["topic1", "topic2", "topic3"], ["topic1-4", "topic1-5", "topic2-1", "topic2-2", "topic2-3"] + [f"topic3-{p}" for p in range(4)]),
    }
    assert _assign({"topic1": 6, "topic2": 4, "topic3": 4}, members) == {
        "A": {"topic1-0", "topic1-1", "topic1-2", "topic1-5"},
        "B": {"topic1-3", "topic2-0", "topic2-1", "topic2-2", "topic2-3"},
        "C": {"topic1-4", "topic3-0", "topic3-1", "topic3-2", "topic3-3"},
    }


def test_heterogeneous_member_and_partitions_added():
    members = {
        "A": _owning(["topic1"], ["topic1-0", "topic1-2", "topic2-0"]),
        "B": _owning(["topic1", "topic2"], ["topic1-1", "topic2-1", "topic2-2"]),
        "C": _owning(["topic1", "topic2"]),
    }
    assert _assign({"topic1": 6, "topic2": 7}, members) == {
        "A": {"topic1-0", "topic1-2", "topic1-3", "topic1-4", "topic1-5"},
        "B": {"topic1-1", "topic2-1", "topic2-2", "topic2-6"},
        "C": {"topic2-0", "topic2-3", "topic2-4", "topic2-5"},
    }


def test_unknown_topic_makes_the_group_heterogeneous():
    # Kafka counts subscribed names; the unknown topic is then left out of the subscription.
    members = {"A": _owning(["t", "gone"]), "B": _owning(["t"])}
    group = ServerGroup(_problem({"t": 3}, members))
    assert not group.homogeneous
    assert group.subscriptions == {"A": frozenset({"t"}), "B": frozenset({"t"})}
    # Dealt one by one to the least loaded (heterogeneous); homogeneous would give B two.
    assert _assign({"t": 3}, members) == {"A": {"t-0", "t-2"}, "B": {"t-1"}}
    assert _assign({"t": 3}, {"A": _owning(["t"]), "B": _owning(["t"])}) == {"A": {"t-0"}, "B": {"t-1", "t-2"}}


# The translation.


def test_topic_ids_are_kafka_uuids():
    topic = TopicId.of("t0")
    assert topic.text == "qFZ680nJNnGYp7NPSxBNXQ"
    assert TopicId.of("orders").text == "3ECy6mwXMP6o78O93girDQ"
    msb, lsb = topic.halves
    assert msb < 0  # compared as signed longs
    folded = (msb ^ lsb) & (2**64 - 1)
    assert topic.java_hash & 0xFFFFFFFF == ((folded >> 32) ^ folded) & 0xFFFFFFFF


def test_owned_partitions_are_deconflicted_by_generation():
    members = {
        "A": _owning(["t"], ["t-0", "t-1", "t-2", "t-9"], generation=3),
        "B": _owning(["t"], ["t-1", "t-2"], generation=3),
        "C": _owning(["t"], ["t-2", "t-0"], generation=4),
        "D": _owning(["t"], ["t-1"], generation=2),
    }
    group = ServerGroup(_problem({"t": 4}, members))
    # t-1: A and B tie at the top generation, so nobody; t-9 does not exist.
    assert group.previous == {"A": [], "B": [], "C": [("t", 0), ("t", 2)], "D": []}
    assert group.assigned == {("t", 0), ("t", 2)}


def test_previous_topics_in_one_bucket_go_in_reverse_claim_order():
    # payments and B share a bucket of a 16-slot HashMap; claimed B first, payments iterates first.
    members = {
        "m1": _owning(["payments", "B"], ["B-0", "B-1", "B-2", "B-3", "payments-0", "payments-1", "payments-2", "payments-3"]),
        "m2": _owning(["payments", "B"]),
    }
    group = ServerGroup(_problem({"payments": 6, "B": 6}, members))
    assert [topic for topic, _ in group.previous_assignment("m1")] == ["payments", "B"]
    assignment = _assign({"payments": 6, "B": 6}, members)
    assert assignment["m1"] == {"payments-0", "payments-1", "payments-2", "payments-3", "B-0", "B-1"}


# Kafka 3.9's heterogeneous builder (before KAFKA-17710), under kafka.version 3.9. The expected
# answers are Kafka 3.9.1's own (its jars, through kao.jvm.GroupAssignors).


def _at_3_9(topics: dict[str, int], members: dict[str, dict]):
    from optimizer.assignors.consumer.strategy import kafka_consumer_assign

    problem = problem_from_data({
        "kind": "consumer",
        "config": {"group.protocol": "consumer", "group.remote.assignor": "uniform", "kafka.version": "3.9"},
        "topics": [{"name": t, "partitions": n} for t, n in topics.items()],
        "members": [{"id": m, **spec} for m, spec in members.items()],
    })  # fmt: skip
    return kafka_consumer_assign(problem)


def test_kafka_3_9_heterogeneous_builder_goes_by_partitions_per_subscriber_then_load():
    # topic-0's one partition (two subscribers) goes first, to the least loaded member-0000 (it and
    # member-0001 hold nothing; the smaller id); 4.0's builder gives it to member-0001.
    members = {
        "member-0000": _owning(["topic-0", "topic-1"]),
        "member-0001": _owning(["topic-0"]),
        "member-0002": _owning(["topic-1"]),
        "member-0003": _owning(["topic-1", "topic-2"], ["topic-1-0", "topic-2-0"], generation=7),
    }
    result = _at_3_9({"topic-0": 1, "topic-1": 1, "topic-2": 1}, members)
    assert {m: {f"{t}-{p}" for t, p in parts} for m, parts in result.assignment.items()} == {
        "member-0000": {"topic-0-0"}, "member-0001": set(), "member-0002": {"topic-1-0"}, "member-0003": {"topic-2-0"},
    }  # fmt: skip


def test_kafka_3_9_heterogeneous_builder_throws_where_a_partition_would_move_twice():
    members = {
        "member-0000": _owning(["topic-0", "topic-1", "topic-2"], [
            "topic-0-1", "topic-0-2", "topic-0-3", "topic-0-4", "topic-0-6", "topic-0-7", "topic-0-9",
            "topic-1-2", "topic-1-3", "topic-1-5", "topic-2-1"], generation=7),
        "member-0001": _owning(["topic-1"]),
        "member-0002": _owning(["topic-1", "topic-2"]),
        "member-0003": _owning(["topic-2"]),
        "member-0004": _owning(["topic-0", "topic-1", "topic-2"]),
    }  # fmt: skip
    with pytest.raises(SolverUnavailableError) as raised:
        _at_3_9({"topic-0": 10, "topic-1": 9, "topic-2": 2}, members)
    assert str(raised.value).startswith(
        "Kafka 3.9.2's uniform assignor throws PartitionAssignorException ('Mismatch in partition movement record "
        "with respect to partition ownership during a rebalance') on this group"
    )


def test_the_members_list_order_does_not_change_kafkas_answer_the_join_order_does():
    """"Aa" and "BB" share a Java hash code, so the coordinator's HashMap walks them in the order
    they were put in. Without `join_order` that is taken by member id, whatever the problem's list
    order; with it, the join order decides."""
    from optimizer.model.problem import problem_from_data
    from optimizer.solve import solve

    def answer(members, join_order=None):
        data = {
            "kind": "consumer",
            "config": {"group.protocol": "consumer", "group.remote.assignor": "uniform"},
            "topics": [{"name": "t", "partitions": 3}],
            "members": [{"id": m, "subscriptions": ["t"]} for m in members],
        }
        if join_order:
            data["join_order"] = join_order
        return {m: tuple(held.active) for m, held in solve(problem_from_data(data), solver="kafka").assignment.items()}

    assert answer(["Aa", "BB"]) == answer(["BB", "Aa"]) == answer(["BB", "Aa"], ["Aa", "BB"])
    assert answer(["Aa", "BB"], ["BB", "Aa"]) != answer(["Aa", "BB"])
