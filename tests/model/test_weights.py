"""Optional weights in the problem format (issue 15, step 1): throughputs per partition or topic,
task weights, client and member capacities; validated like every other field, backward
compatible (a problem without them is unchanged and not `weighted`)."""

from __future__ import annotations

import pytest

from optimizer import InvalidInputError, problem_from_data
from optimizer.model import problem_to_data

STREAMS = {
    "kind": "streams",
    "clients": [{"id": "a", "rack": "r1", "capacity": 2}, {"id": "b", "rack": "r2"}],
    "tasks": [
        {
            "id": "0_0", "weight": 3.5,
            "source_partitions": [{"topic": "orders", "partition": 0, "bytes_per_second": 200_000_000}],
        },
        {"id": "0_1", "source_partitions": [{"topic": "orders", "partition": 1}]},
        {"id": "1_0", "source_partitions": [{"topic": "clicks", "partition": 0}]},
    ],
    "topic_bytes_per_second": {"orders": 1_000_000},
}  # fmt: skip


def test_streams_weights_are_read_and_a_partition_overrides_its_topic():
    problem = problem_from_data(STREAMS)
    assert problem.weighted
    (first, second, third) = problem.tasks
    assert problem.partition_rate(first.source_partitions[0]) == 200_000_000
    assert problem.partition_rate(second.source_partitions[0]) == 1_000_000  # the topic's figure
    assert problem.partition_rate(third.source_partitions[0]) is None  # none given
    assert first.weight == 3.5 and second.weight == 1.0
    assert problem.clients[0].capacity == 2.0 and problem.clients[1].capacity == 1.0
    assert problem_from_data(problem_to_data(problem)) == problem  # written and read back whole


def test_without_weights_nothing_changes():
    data = {**STREAMS, "tasks": [{"id": "0_0", "source_partitions": [{"topic": "t", "partition": 0}]}]}
    data = {k: v for k, v in data.items() if k != "topic_bytes_per_second"}
    data["clients"] = [{"id": "a"}]
    problem = problem_from_data(data)
    assert not problem.weighted
    assert "weight" not in str(problem_to_data(problem)) and "capacity" not in str(problem_to_data(problem))


def test_consumer_weights_per_topic_and_per_partition():
    problem = problem_from_data(
        {
            "kind": "consumer",
            "topics": [
                {"name": "hot", "partitions": 2, "partition_bytes_per_second": [5e8, 1e6], "bytes_per_second": 7},
                {"name": "cold", "partitions": 3, "bytes_per_second": 1000},
                {"name": "unknown", "partitions": 1},
            ],
            "members": [{"id": "m1", "subscriptions": ["hot", "cold"], "capacity": 0.5}],
        }
    )
    hot, cold, unknown = problem.topics
    assert [hot.partition_rate(p) for p in range(2)] == [5e8, 1e6]  # per partition over the topic's
    assert cold.partition_rate(2) == 1000 and unknown.partition_rate(0) is None
    assert problem.weighted and problem.members[0].capacity == 0.5


def issues_of(data) -> str:
    with pytest.raises(InvalidInputError) as caught:
        problem_from_data(data)
    return str(caught.value)


def test_bad_weights_are_named_where_they_are():
    data = {
        **STREAMS,
        "clients": [{"id": "a", "capacity": 0}, {"id": "b", "capacity": True}],
        "tasks": [
            {"id": "0_0", "weight": -1, "source_partitions": [{"topic": "orders", "partition": 0, "bytes_per_second": "fast"}]},
        ],
        "topic_bytes_per_second": {"orders": float("inf"), "nowhere": 5},
    }
    text = issues_of(data)
    for expected in (
        "clients[0] (id 'a').capacity: Input should be greater than or equal to 0.001",
        "clients[1] (id 'b').capacity: expected a number, got True",
        "tasks[0] (id '0_0').weight: Input should be greater than or equal to 0",
        "source_partitions[0].bytes_per_second: expected a number, got 'fast'",
        "topic_bytes_per_second.orders: expected a finite number, got inf",
    ):
        assert expected in text, (expected, text)
    consumer = issues_of(
        {
            "kind": "consumer",
            "topics": [{"name": "hot", "partitions": 2, "partition_bytes_per_second": [1.0]}],
            "members": [{"id": "m1", "subscriptions": ["hot"]}],
        }
    )
    assert "partition_bytes_per_second: has 1 entries but the topic has 2 partitions; give one rate per partition" in consumer


def test_a_topic_rate_for_a_topic_no_task_reads_is_an_error():
    text = issues_of({**STREAMS, "topic_bytes_per_second": {"orders": 1, "nowhere": 5}})
    assert "topic_bytes_per_second.nowhere: topic 'nowhere' is read by no task" in text
