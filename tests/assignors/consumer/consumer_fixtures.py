"""Consumer groups built as problems for Kafka's consumer assignor tests, and Kafka's test layouts.

`assign` runs the assignor `partition.assignment.strategy` names (as `kafka_consumer_assign`
dispatches it) and returns member -> partitions ("topic-p") and the follow-up flag;
`broker_racks` is RangeAssignorTest's replica layout.
"""

from __future__ import annotations

from optimizer.assignors.consumer.strategy import kafka_consumer_assign
from optimizer.model import problem_from_data


def assign(topics: dict[str, int], members: dict[str, dict], strategy: str, racks=None):
    data = {
        "kind": "consumer",
        "config": {"partition.assignment.strategy": strategy},
        "topics": [{"name": t, "partitions": n} | ({"replica_racks": racks[t]} if racks else {}) for t, n in topics.items()],
        "members": [{"id": m, **spec} for m, spec in members.items()],
    }
    result = kafka_consumer_assign(problem_from_data(data))
    return {m: [f"{t}-{p}" for t, p in parts] for m, parts in result.assignment.items()}, result.followup_rebalance


def owning(subscriptions, owned=(), generation=1):
    return {"subscriptions": subscriptions, "owned_partitions": list(owned), "generation": generation}


def as_sets(assignment):
    return {m: set(parts) for m, parts in assignment.items()}


BOTH = ["topic1", "topic2"]


def broker_racks(topics: dict[str, int], replication: int, racks: list[str]) -> dict[str, list[list[str]]]:
    """RangeAssignorTest's layout: partition i of a topic has replicas on brokers (i + j + start)."""
    layout, start = {}, 0
    for topic, count in topics.items():
        layout[topic] = [[racks[(i + j + start) % len(racks)] for j in range(replication)] for i in range(count)]
        start += count
    return layout


RACK_TOPICS = {"t1": 6, "t2": 7, "t3": 2}


def rack_members(subscriptions):
    return {f"consumer{i}": {"subscriptions": subscriptions[i], "rack": "abc"[i]} for i in range(3)}
