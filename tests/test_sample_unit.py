"""`optimizer.kafka.sample` without a cluster: the arguments it refuses (before any JVM starts) and
how the adapter's answer becomes rates (order, rounding, the cap, partitions that could not be
measured). tests/kafka/test_sample.py measures on the sandbox."""

from __future__ import annotations

from typing import Any

import pytest

from optimizer.errors import KafkaUnavailableError, UsageError
from optimizer.kafka.sample import MAX_SAMPLE_SECONDS, Rate, checked_arguments, rates_from_sample, sample_rates
from optimizer.model.ids import MAX_BYTES_PER_SECOND


def _partition(topic: str, partition: int, rate: float | None, estimated: bool = False, why: str | None = None) -> dict[str, Any]:
    return {"topic": topic, "partition": partition, "bytes_per_second": rate, "estimated": estimated, "why": why}


@pytest.mark.parametrize(
    ("topics", "seconds", "timeout", "message"),
    [
        ([], 5, 30, "no topics to sample"),
        ("orders", 5, 30, "not the string 'orders'"),
        (["orders", "bad name"], 5, 30, "'bad name' is not a topic name"),
        (["orders", "a,b"], 5, 30, "'a,b' is not a topic name"),
        (["x" * 250], 5, 30, "is not a topic name"),
        (["."], 5, 30, "'.' is not a topic name"),
        (["orders"], 0, 30, "more than 0 and at most 3600 seconds, not 0"),
        (["orders"], -1.5, 30, "not -1.5"),
        (["orders"], MAX_SAMPLE_SECONDS + 1, 30, "not 3601"),
        (["orders"], float("nan"), 30, "not nan"),
        (["orders"], True, 30, "not True"),
        (["orders"], "5", 30, "not '5'"),
        (["orders"], 5, 0, "the timeout must be a number of seconds above 0, not 0"),
        (["orders"], 5, float("inf"), "not inf"),
    ],
)
def test_arguments_that_cannot_be_sampled_are_refused_naming_what(topics, seconds, timeout, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        checked_arguments(topics, seconds, timeout)
    with pytest.raises(UsageError):  # before any JVM: nothing listens on port 9
        sample_rates("127.0.0.1:9", topics, seconds, timeout=timeout)


def test_topic_names_are_sorted_without_repeats():
    assert checked_arguments(["b", "a.b_c-1", "b"], 0.5, 1) == ["a.b_c-1", "b"]
    assert checked_arguments(("t",), MAX_SAMPLE_SECONDS, 30) == ["t"]


def test_the_answer_becomes_rates_in_topic_and_partition_order_rounded_to_a_tenth():
    data = {
        "partitions": [
            _partition("b", 1, 12.34),
            _partition("b", 0, 1234.56789, True, "estimated: its log shrank by 5 bytes (retention or compaction); ..."),
            _partition("a", 10, 0.0),
            _partition("a", 2, 3e13),
            _partition("a", 3, -0.0),
        ]
    }
    rates = rates_from_sample(data, "host:9092")
    assert list(rates) == [("a", 2), ("a", 3), ("a", 10), ("b", 0), ("b", 1)]
    assert rates[("b", 0)] == Rate(bytes_per_second=1234.6, estimated=True, why="estimated: its log shrank by 5 bytes (retention or compaction); ...")
    assert rates[("b", 1)] == Rate(bytes_per_second=12.3, estimated=False, why=None)
    assert rates[("a", 10)].bytes_per_second == 0.0
    assert rates[("a", 2)].bytes_per_second == MAX_BYTES_PER_SECOND  # the problem format's bound
    assert rates[("a", 3)].bytes_per_second == 0.0


def test_partitions_that_could_not_be_measured_are_named():
    data = {
        "partitions": [
            _partition("a", 0, 5.0),
            _partition("a", 1, None, True, "the partition had no leader at the end of the window: its offsets could not be read"),
            _partition("b", 0, None, True, "the partition had no leader at the start of the window: its offsets could not be read"),
        ]
    }
    with pytest.raises(
        KafkaUnavailableError, match=r"the rate of partitions a-1 \(the partition had no leader at the end .*\), b-0 .* on host:9092: retry later"
    ):
        rates_from_sample(data, "host:9092")
    unmeasured: list[str] = []  # given a list, they are collected there and the others returned
    assert list(rates_from_sample(data, "host:9092", unmeasured)) == [("a", 0)]
    assert [entry.split(" (")[0] for entry in unmeasured] == ["a-1", "b-0"]


def test_a_rate_is_frozen():
    rate = Rate(bytes_per_second=1.0, estimated=False, why=None)
    with pytest.raises(AttributeError):
        rate.bytes_per_second = 2.0
