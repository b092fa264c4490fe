"""Kafka's RoundRobinAssignor: the examples of its Javadoc, with Kafka's expected results."""

from __future__ import annotations

from tests.assignors.consumer.consumer_fixtures import assign


def test_round_robin_javadoc_examples():
    result, _ = assign({"t0": 3, "t1": 3}, {"C0": {"subscriptions": ["t0", "t1"]}, "C1": {"subscriptions": ["t0", "t1"]}}, "roundrobin")
    assert result == {"C0": ["t0-0", "t0-2", "t1-1"], "C1": ["t0-1", "t1-0", "t1-2"]}
    members = {"C0": {"subscriptions": ["t0"]}, "C1": {"subscriptions": ["t0", "t1"]}, "C2": {"subscriptions": ["t0", "t1", "t2"]}}
    result, _ = assign({"t0": 1, "t1": 2, "t2": 3}, members, "roundrobin")
    assert result == {"C0": ["t0-0"], "C1": ["t1-0"], "C2": ["t1-1", "t2-0", "t2-1", "t2-2"]}
