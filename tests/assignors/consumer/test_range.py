"""Kafka's RangeAssignor: the scenarios of RangeAssignorTest (with and without racks, and
co-partitioning), with Kafka's expected results."""

from __future__ import annotations

import pytest

from tests.assignors.consumer.consumer_fixtures import BOTH, RACK_TOPICS, as_sets, assign, broker_racks, rack_members


def test_range_two_consumers_two_topics():
    result, _ = assign({"t1": 3, "t2": 3}, {"consumer1": {"subscriptions": ["t1", "t2"]}, "consumer2": {"subscriptions": ["t1", "t2"]}}, "range")
    assert as_sets(result) == {"consumer1": {"t1-0", "t1-1", "t2-0", "t2-1"}, "consumer2": {"t1-2", "t2-2"}}


def test_range_mixed_subscriptions():
    members = {"consumer1": {"subscriptions": ["topic1"]}, "consumer2": {"subscriptions": BOTH}, "consumer3": {"subscriptions": ["topic1"]}}
    result, _ = assign({"topic1": 3, "topic2": 2}, members, "range")
    assert as_sets(result) == {"consumer1": {"topic1-0"}, "consumer2": {"topic1-1", "topic2-0", "topic2-1"}, "consumer3": {"topic1-2"}}


@pytest.mark.parametrize(
    ("replication", "broker_rack_names", "expected"),
    [
        (1, ["a", "b", "c"], [["t1-0", "t1-3", "t2-0", "t2-3", "t2-6"], ["t1-1", "t1-4", "t2-1", "t2-4", "t3-0"], ["t1-2", "t1-5", "t2-2", "t2-5", "t3-1"]]),
        (2, ["a", "b", "c"], [["t1-0", "t1-2", "t2-0", "t2-2", "t2-3", "t3-1"], ["t1-1", "t1-3", "t2-1", "t2-4", "t3-0"], ["t1-4", "t1-5", "t2-5", "t2-6"]]),
        (3, ["a", "b"], [["t1-0", "t1-1", "t2-0", "t2-1", "t2-2", "t3-0"], ["t1-2", "t1-3", "t2-3", "t2-4", "t3-1"], ["t1-4", "t1-5", "t2-5", "t2-6"]]),
    ],
)
def test_range_rack_aware_uniform_subscription(replication, broker_rack_names, expected):
    racks = broker_racks(RACK_TOPICS, replication, broker_rack_names)
    result, _ = assign(RACK_TOPICS, rack_members([["t1", "t2", "t3"]] * 3), "range", racks)
    assert [sorted(result[f"consumer{i}"]) for i in range(3)] == [sorted(e) for e in expected]


def test_range_keeps_co_partitioned_topics_together_on_racks():
    topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
    members = {
        "consumer0": {"subscriptions": ["t1", "t2"], "rack": "a"},
        "consumer1": {"subscriptions": ["t1", "t2"], "rack": "b"},
        "consumer2": {"subscriptions": ["t3", "t4"], "rack": "b"},
        "consumer3": {"subscriptions": ["t3", "t4"], "rack": "a"},
    }
    result, _ = assign(topics, members, "range", broker_racks(topics, 1, ["a", "b"]))
    assert as_sets(result) == {
        "consumer0": {"t1-0", "t1-2", "t1-4", "t2-0", "t2-2", "t2-4"},
        "consumer1": {"t1-1", "t1-3", "t1-5", "t2-1", "t2-3", "t2-5"},
        "consumer2": {"t3-1", "t4-1"},
        "consumer3": {"t3-0", "t4-0"},
    }
