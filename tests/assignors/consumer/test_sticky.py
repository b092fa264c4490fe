"""Kafka's sticky assignors (StickyAssignor, CooperativeStickyAssignor): the scenarios of
AbstractStickyAssignorTest and CooperativeStickyAssignorTest, with Kafka's expected results, and
Kafka's answers where its own code does something unusual."""

from __future__ import annotations

import pytest

from optimizer import evaluate, solve
from optimizer.assignors.consumer.strategy import kafka_consumer_assign
from optimizer.errors import SolverUnavailableError
from optimizer.model import ClientAssignment, problem_from_data
from tests.assignors.consumer.consumer_fixtures import BOTH, RACK_TOPICS, as_sets, assign, broker_racks, owning, rack_members


def test_sticky_fresh_assignment():
    result, _ = assign({"topic1": 3, "topic2": 3}, {"consumer1": {"subscriptions": BOTH}, "consumer2": {"subscriptions": BOTH}}, "sticky")
    assert result == {"consumer1": ["topic1-0", "topic1-2", "topic2-1"], "consumer2": ["topic1-1", "topic2-0", "topic2-2"]}


def test_sticky_member_owning_min_quota_gets_max_quota():
    members = {"consumer1": owning(BOTH, ["topic1-0", "topic2-1"]), "consumer2": owning(BOTH, ["topic1-1", "topic2-2"])}
    result, _ = assign({"topic1": 2, "topic2": 3}, members, "sticky")
    assert result == {"consumer1": ["topic1-0", "topic2-1", "topic2-0"], "consumer2": ["topic1-1", "topic2-2"]}


def test_which_member_keeps_the_extra_partition_follows_kafkas_member_order():
    members = {
        "consumer1": owning(BOTH, ["topic1-0", "topic2-0"]),
        "consumer2": owning(BOTH, ["topic1-1", "topic2-1"]),
        "consumer3": owning(BOTH),
    }
    expected = {"consumer1": ["topic1-0"], "consumer2": ["topic1-1", "topic2-1"], "consumer3": ["topic2-0"]}
    assert assign({"topic1": 2, "topic2": 2}, members, "sticky") == (expected, False)
    # Cooperative: topic2-0 changes owner, so consumer3 waits for it until the next round.
    first, followup = assign({"topic1": 2, "topic2": 2}, members, "cooperative-sticky")
    assert first == {**expected, "consumer3": []} and followup


def test_sticky_add_and_remove_two_consumers():
    topics = {"topic1": 3, "topic2": 4}
    step1, _ = assign(topics, {"consumer1": {"subscriptions": BOTH}, "consumer2": {"subscriptions": BOTH}}, "sticky")
    assert step1 == {"consumer1": ["topic1-0", "topic1-2", "topic2-1", "topic2-3"], "consumer2": ["topic1-1", "topic2-0", "topic2-2"]}
    members = {
        "consumer1": owning(BOTH, step1["consumer1"]),
        "consumer2": owning(BOTH, step1["consumer2"]),
        "consumer3": owning(BOTH),
        "consumer4": owning(BOTH),
    }
    step2, _ = assign(topics, members, "sticky")
    assert step2 == {
        "consumer1": ["topic1-0", "topic2-1"],
        "consumer2": ["topic2-0", "topic1-1"],
        "consumer3": ["topic1-2", "topic2-3"],
        "consumer4": ["topic2-2"],
    }
    step3, _ = assign(topics, {"consumer3": owning(BOTH, step2["consumer3"], 2), "consumer4": owning(BOTH, step2["consumer4"], 2)}, "sticky")
    assert step3 == {"consumer3": ["topic1-2", "topic2-3", "topic1-0", "topic2-1"], "consumer4": ["topic2-2", "topic1-1", "topic2-0"]}


def test_sticky_general_algorithm_for_different_subscriptions():
    members = {"consumer1": {"subscriptions": ["topic1"]}, "consumer2": {"subscriptions": BOTH}, "consumer3": {"subscriptions": ["topic1"]}}
    result, _ = assign({"topic1": 3, "topic2": 2}, members, "sticky")
    assert result == {"consumer1": ["topic1-0", "topic1-2"], "consumer2": ["topic2-0", "topic2-1"], "consumer3": ["topic1-1"]}


def test_partition_claimed_twice_in_one_generation():
    members = {
        "consumer1": owning(["topic"], ["topic-0", "topic-1"]),
        "consumer2": owning(["topic"], ["topic-0", "topic-2"]),
        "consumer3": owning(["topic"]),
    }
    assert assign({"topic": 3}, members, "sticky")[0] == {"consumer1": ["topic-1"], "consumer2": ["topic-2"], "consumer3": ["topic-0"]}
    assert assign({"topic": 3}, members, "cooperative-sticky") == ({"consumer1": ["topic-1"], "consumer2": ["topic-2"], "consumer3": []}, True)
    assert assign({"topic": 4}, members, "cooperative-sticky")[0] == {"consumer1": ["topic-1", "topic-3"], "consumer2": ["topic-2"], "consumer3": []}


def test_highest_generation_keeps_contested_partitions():
    both = ["topic", "topic2"]
    stale = {"c1": owning(both, ["topic-0", "topic-2", "topic2-1"], 10), "c2": owning(both, ["topic-0", "topic-2", "topic2-1"], 9)}
    assert as_sets(assign({"topic": 3, "topic2": 3}, stale, "sticky")[0]) == {
        "c1": {"topic-0", "topic-2", "topic2-1"},
        "c2": {"topic-1", "topic2-0", "topic2-2"},
    }
    three = ["topic", "topic2", "topic3"]
    members = {
        "c1": owning(three, ["topic-0", "topic2-0", "topic3-0"], 10),
        "c2": owning(three, ["topic-1", "topic2-1", "topic3-1"], 9),
        "c3": owning(three, ["topic2-1", "topic3-0", "topic3-2"], 8),
    }
    result = as_sets(assign({"topic": 3, "topic2": 3, "topic3": 3}, members, "sticky")[0])
    assert result == {f"c{i + 1}": {f"{t}-{i}" for t in three} for i in range(3)}


def test_new_member_takes_only_free_partitions():
    four = ["topic", "topic1", "topic2", "topic3"]
    members = {
        "c1": owning(four, generation=-1),
        "c2": owning(four, ["topic-0", "topic2-0", "topic1-0"], 9),
        "c3": owning(four, ["topic3-2", "topic2-2", "topic1-1"], 8),
        "c4": owning(four, ["topic3-1", "topic-1", "topic-2"], 7),
    }
    result, _ = assign(dict.fromkeys(four, 3), members, "sticky")
    assert set(result["c1"]) == {"topic1-2", "topic2-1", "topic3-0"}
    assert max(map(len, result.values())) - min(map(len, result.values())) <= 1


@pytest.mark.parametrize(
    ("replication", "expected"),
    [
        (1, [{"t1-3", "t2-0", "t2-2", "t2-3", "t2-6"}, {"t1-4", "t2-1", "t2-4", "t2-5", "t3-0"}, {"t1-0", "t1-1", "t1-2", "t1-5", "t3-1"}]),
        (2, [{"t1-3", "t2-0", "t2-2", "t2-5", "t2-6"}, {"t1-0", "t2-1", "t2-3", "t2-4", "t3-0"}, {"t1-1", "t1-2", "t1-4", "t1-5", "t3-1"}]),
    ],
)
def test_sticky_rack_aware_with_different_subscriptions(replication, expected):
    racks = broker_racks(RACK_TOPICS, replication, ["a", "b", "c"])
    members = rack_members([["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]])
    result, _ = assign(RACK_TOPICS, members, "sticky", racks)
    assert [set(result[f"consumer{i}"]) for i in range(3)] == expected


def test_sticky_rack_aware_uniform_subscription():
    racks = broker_racks(RACK_TOPICS, 1, ["a", "b", "c"])
    result, _ = assign(RACK_TOPICS, rack_members([["t1", "t2", "t3"]] * 3), "sticky", racks)
    assert [set(result[f"consumer{i}"]) for i in range(3)] == [
        {"t1-0", "t1-3", "t2-0", "t2-3", "t2-6"},
        {"t1-1", "t1-4", "t2-1", "t2-4", "t3-0"},
        {"t1-2", "t1-5", "t2-2", "t2-5", "t3-1"},
    ]


# Through solve(), as users run them: the assignor sees the members' claims as reported --------


def test_contested_claims_through_solve():
    data = {
        "kind": "consumer",
        "config": {"partition.assignment.strategy": "cooperative-sticky"},
        "topics": [{"name": "topic", "partitions": 3}],
        "members": [
            {"id": "consumer1", "subscriptions": ["topic"], "owned_partitions": ["topic-0", "topic-1"], "generation": 1},
            {"id": "consumer2", "subscriptions": ["topic"], "owned_partitions": ["topic-0", "topic-2"], "generation": 1},
            {"id": "consumer3", "subscriptions": ["topic"], "generation": 1},
        ],
    }
    solution = solve(problem_from_data(data), solver="kafka")
    assert {m: list(h.active) for m, h in solution.assignment.items()} == {
        "consumer1": ["topic-1"], "consumer2": ["topic-2"], "consumer3": [],
    }  # fmt: skip
    assert solution.followup_rebalance
    data["config"]["partition.assignment.strategy"] = "sticky"
    eager = solve(problem_from_data(data), solver="kafka")
    assert list(eager.assignment["consumer3"].active) == ["topic-0"]
    # The exact solver withholds what changes hands under cooperative rebalancing too.
    data["config"]["partition.assignment.strategy"] = "cooperative-sticky"
    exact = solve(problem_from_data(data))
    assert exact.followup_rebalance and exact.metrics.withheld_partitions >= 1


# Where Kafka's own code (1eb7644) does something unusual: Kafka's answers from its Java classes --


def test_reassigning_moves_the_partition_kafka_picks_from_its_own_owner():
    # PartitionMovements may move another partition of the topic than the one looked at (undoing
    # an earlier opposite move); the move is from that partition's owner (Kafka's
    # processPartitionMovement). Taking the looked-at partition's owner crashed.
    all_three = ["clicks_v2", "audit.log", "orders-eu"]
    racks = {"clicks_v2": [["r1"]] + [["r1", "r2", "r3"]] * 15 + [["r2"]], "audit.log": None, "orders-eu": None}
    data = {
        "kind": "consumer",
        "config": {"partition.assignment.strategy": "sticky"},
        "topics": [{"name": "clicks_v2", "partitions": 17, "replica_racks": racks["clicks_v2"]},
                   {"name": "audit.log", "partitions": 8}, {"name": "orders-eu", "partitions": 25}],
        "members": [
            {"id": "A4", "rack": "r3", "subscriptions": all_three, "generation": 36, "owned_partitions":
             [f"clicks_v2-{p}" for p in (8, 10, 14, 15, 9, 5, 13, 1)] + ["orders-eu-15"]},
            {"id": "C9", "subscriptions": all_three, "generation": 38},
            {"id": "c13", "subscriptions": ["orders-eu", "audit.log", "clicks_v2"], "generation": 35,
             "owned_partitions": ["clicks_v2-12", "clicks_v2-16", "audit.log-4", "audit.log-7"]},
            {"id": "m23", "subscriptions": ["audit.log"], "generation": 37},
        ],
    }  # fmt: skip
    result = kafka_consumer_assign(problem_from_data(data)).assignment
    got = {m: {f"{t}-{p}" for t, p in parts} for m, parts in result.items()}
    assert got == {
        "A4": {f"clicks_v2-{p}" for p in (0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 13, 14, 15, 16)},
        "C9": {"clicks_v2-4", "clicks_v2-11"} | {f"orders-eu-{p}" for p in range(1, 25, 2)},
        "c13": {"clicks_v2-12"} | {f"orders-eu-{p}" for p in range(0, 25, 2)},
        "m23": {f"audit.log-{p}" for p in range(8)},
    }


def test_stale_previous_owner_gets_back_a_partition_it_no_longer_subscribes_to():
    data = {
        "kind": "consumer",
        "config": {"partition.assignment.strategy": "sticky"},
        "topics": [{"name": "B", "partitions": 8}, {"name": "orders", "partitions": 17}],
        "members": [
            {"id": "consumer2", "subscriptions": ["B"], "owned_partitions": ["orders-13"], "generation": -1},
            {"id": "consumer7", "subscriptions": ["orders", "B"], "generation": 35},
            {"id": "consumer14", "subscriptions": ["orders"], "generation": 35},
        ],
    }
    solution = solve(problem_from_data(data), "kafka")  # Kafka's answer, not a SolverError
    assert set(solution.assignment["consumer2"].active) == {f"B-{p}" for p in range(7)} | {"orders-13"}
    assert [w.message for w in solution.warnings if "Kafka anomaly" in w.message] == [
        (
            "Kafka anomaly: member 'consumer2' gets orders-13, which it owned, but no longer subscribes to "
            "orders; its consumer will not fetch it and will rejoin the group (a further rebalance)"
        )
    ]
    # Any other member than a previous owner getting it is still a violation.
    moved = solution.assignment | {
        "consumer2": ClientAssignment(active=tuple(p for p in solution.assignment["consumer2"].active if p != "orders-13")),
        "consumer7": ClientAssignment(active=(*solution.assignment["consumer7"].active, "orders-13")),
    }
    assert evaluate(problem_from_data(data), moved).valid
    taken = moved | {"consumer14": ClientAssignment(active=(*moved["consumer14"].active, "B-7"))}
    taken["consumer7"] = ClientAssignment(active=tuple(p for p in moved["consumer7"].active if p != "B-7"))
    assert [v.code.value for v in evaluate(problem_from_data(data), taken).violations] == ["NOT_SUBSCRIBED"]


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_claims_beyond_the_partition_count_kafka_hands_back_are_refused(strategy):
    # Subscriptions differ: Kafka keeps A's claim on t0-5 (t0 has 2 partitions) and hands it back
    # to A: no valid assignment, so --solver kafka says what Kafka does instead of answering.
    problem = problem_from_data({
        "kind": "consumer",
        "config": {"partition.assignment.strategy": strategy},
        "topics": [{"name": "t0", "partitions": 2}, {"name": "t1", "partitions": 2}],
        "members": [{"id": "A", "subscriptions": ["t0", "t1"], "owned_partitions": ["t0-5"], "generation": 1},
                    {"id": "B", "subscriptions": ["t0"], "generation": 1}],
    })  # fmt: skip
    with pytest.raises(SolverUnavailableError) as raised:
        solve(problem, "kafka")
    name = "CooperativeStickyAssignor" if strategy == "cooperative-sticky" else "StickyAssignor"
    assert str(raised.value).startswith(f"Kafka 4.4.0's {name} returns an invalid assignment for this group: it hands back t0-5, which does not exist.")
    assert "Member 'A' claims t0-5, beyond the 2 partitions of t0" in str(raised.value)


def test_claims_beyond_the_partition_count_kafka_fails_on_are_refused():
    # Equal subscriptions, one partition: B keeps t0-1 (its quota, one partition, is the one extra),
    # so A is not unfilled, and t0-0 finds no member: Kafka raises (Kafka 4.0.0 and 4.4.0 alike).
    problem = problem_from_data({
        "kind": "consumer",
        "config": {"partition.assignment.strategy": "sticky", "kafka.version": "4.0.0"},
        "topics": [{"name": "t0", "partitions": 1}],
        "members": [{"id": "A", "subscriptions": ["t0"], "generation": 1},
                    {"id": "B", "subscriptions": ["t0"], "owned_partitions": ["t0-1", "t0-2"], "generation": 1}],
    })  # fmt: skip
    with pytest.raises(SolverUnavailableError) as raised:
        solve(problem, "kafka")
    assert str(raised.value).startswith(
        "Kafka 4.0.0's StickyAssignor raises IllegalStateException ('No more unfilled consumers to be assigned.') "
        "on this group, so the group does not rebalance. Member 'B' claims t0-1, t0-2, beyond the 1 partition of t0;"
    )


def test_claims_beyond_the_partition_count_beyond_the_quota_are_dropped_as_kafka_does():
    # A's quota is 1: Kafka keeps t0-0 (sorted first) and revokes t0-7, so its answer is valid.
    problem = problem_from_data({
        "kind": "consumer",
        "config": {"partition.assignment.strategy": "sticky"},
        "topics": [{"name": "t0", "partitions": 2}],
        "members": [{"id": "A", "subscriptions": ["t0"], "owned_partitions": ["t0-0", "t0-7"], "generation": 1},
                    {"id": "B", "subscriptions": ["t0"], "owned_partitions": ["t0-1"], "generation": 1}],
    })  # fmt: skip
    solution = solve(problem, "kafka")
    assert {m: set(a.active) for m, a in solution.assignment.items()} == {"A": {"t0-0"}, "B": {"t0-1"}}
