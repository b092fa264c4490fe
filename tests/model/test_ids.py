"""Task and partition ids: the builders, the checking parsers and the fast splits agree."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from optimizer.model.ids import (
    INT32_MAX,
    PartitionKey,
    TaskKey,
    parse_partition_id,
    parse_task_id,
    partition_id,
    partition_key,
    task_id,
    task_key,
)

numbers = st.integers(min_value=0, max_value=INT32_MAX)
topics = st.text(alphabet="abcxyz019._-", min_size=1, max_size=30).filter(lambda t: t not in (".", ".."))


@given(numbers, numbers)
def test_task_ids_round_trip(subtopology, partition):
    ident = task_id(subtopology, partition)
    assert parse_task_id(ident) == task_key(ident) == TaskKey(subtopology, partition)
    assert task_id(*task_key(ident)) == ident


@given(topics, numbers)
def test_partition_ids_round_trip(topic, partition):
    # Topic names may contain '-' and end in digits: the number is what follows the last '-'.
    ident = partition_id(topic, partition)
    assert parse_partition_id(ident) == partition_key(ident) == PartitionKey(topic, partition)
    assert partition_id(*partition_key(ident)) == ident


def test_sort_keys_are_kafka_orders():
    assert sorted(["1_0", "0_10", "0_2"], key=task_key) == ["0_2", "0_10", "1_0"]
    assert sorted(["b-1", "a-b-10", "a-b-2", "a-1"], key=partition_key) == ["a-1", "a-b-2", "a-b-10", "b-1"]


@pytest.mark.parametrize("ident", ["0-1", "1_", "_1", "1_2_3", " 1_2", "1_2\n", f"{INT32_MAX + 1}_0"])
def test_parse_task_id_rejects(ident):
    with pytest.raises(ValueError):
        parse_task_id(ident)


@pytest.mark.parametrize("ident", ["orders", "orders-", "-3", "orders-03", "or ders-3", f"orders-{INT32_MAX + 1}"])
def test_parse_partition_id_rejects(ident):
    with pytest.raises(ValueError):
        parse_partition_id(ident)
