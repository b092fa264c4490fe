"""KIP-848's broker-side `range` assignor: the scenarios of Kafka's group-coordinator
RangeAssignorTest with Kafka's expected results, and what it ignores (history, racks)."""

from __future__ import annotations

from optimizer.assignors.consumer.server_range import server_range_assign
from optimizer.model import problem_from_data


def _assign(topics: dict[str, int], members: dict[str, dict]) -> dict[str, set[str]]:
    problem = problem_from_data(
        {
            "kind": "consumer",
            "topics": [{"name": t, "partitions": n} for t, n in topics.items()],
            "members": [{"id": m, **spec} for m, spec in members.items()],
        }
    )
    result = server_range_assign(problem)
    assert not result.warnings and not result.followup_rebalance
    return {m: {f"{t}-{p}" for t, p in parts} for m, parts in result.assignment.items()}


def test_two_members_two_topics_same_subscriptions():
    members = {"A": {"subscriptions": ["topic1", "topic3"]}, "B": {"subscriptions": ["topic1", "topic3"]}}
    assert _assign({"topic1": 3, "topic3": 2}, members) == {
        "A": {"topic1-0", "topic1-1", "topic3-0"},
        "B": {"topic1-2", "topic3-1"},
    }


def test_three_members_different_subscriptions():
    members = {
        "A": {"subscriptions": ["topic1", "topic2"]},
        "B": {"subscriptions": ["topic3"]},
        "C": {"subscriptions": ["topic2", "topic3"]},
    }
    assert _assign({"topic1": 3, "topic2": 3, "topic3": 2}, members) == {
        "A": {"topic1-0", "topic1-1", "topic1-2", "topic2-0", "topic2-1"},
        "B": {"topic3-0"},
        "C": {"topic2-2", "topic3-1"},
    }


def test_more_members_than_partitions():
    members = {m: {"subscriptions": ["topic1", "topic3"]} for m in "ABC"}
    assert _assign({"topic1": 3, "topic3": 2}, members) == {
        "A": {"topic1-0", "topic3-0"},
        "B": {"topic1-1", "topic3-1"},
        "C": {"topic1-2"},
    }


def test_members_sorted_by_id_not_by_hash():
    # String.compareTo: upper case before lower case.
    members = {m: {"subscriptions": ["t"]} for m in ("b", "a", "B")}
    assert _assign({"t": 3}, members) == {"B": {"t-0"}, "a": {"t-1"}, "b": {"t-2"}}


def test_previous_assignment_is_ignored():
    members = {
        "A": {"subscriptions": ["t"], "owned_partitions": ["t-2", "t-3"], "generation": 5},
        "B": {"subscriptions": ["t"], "owned_partitions": ["t-0", "t-1"], "generation": 5},
    }
    assert _assign({"t": 4}, members) == {"A": {"t-0", "t-1"}, "B": {"t-2", "t-3"}}


def test_unknown_topics_are_left_out():
    members = {"A": {"subscriptions": ["t", "gone"]}, "B": {"subscriptions": ["t"]}}
    assert _assign({"t": 3}, members) == {"A": {"t-0", "t-1"}, "B": {"t-2"}}
