"""The Java collection behaviour Kafka's results depend on."""

from __future__ import annotations

import heapq
import random

from optimizer.assignors.java import (
    JavaPriorityQueue,
    java_hash_map_order,
    java_string_hash,
    java_task_id_hash,
    kafka_client_hash,
    kafka_client_order,
)


def test_priority_queue_polls_in_order_and_keeps_a_valid_heap():
    rng = random.Random(5)
    queue = JavaPriorityQueue(lambda a, b: a < b)
    reference: list[int] = []
    for _ in range(500):
        if reference and rng.random() < 0.3:
            value = rng.choice(reference)
            assert queue.remove(value)
            reference.remove(value)
            heapq.heapify(reference)
        elif reference and rng.random() < 0.5:
            assert queue.poll() == heapq.heappop(reference)
        else:
            value = rng.randint(0, 50)
            queue.offer(value)
            heapq.heappush(reference, value)
        heap = list(queue)
        assert all(heap[(i - 1) // 2] <= heap[i] for i in range(1, len(heap)))


def test_priority_queue_iterates_its_heap_array_like_java():
    # java.util.PriorityQueue: offer 5, 1, 4, 2, 3 -> array [1, 2, 4, 5, 3]; poll -> [2, 3, 4, 5]
    queue = JavaPriorityQueue(lambda a, b: a < b)
    for value in (5, 1, 4, 2, 3):
        queue.offer(value)
    assert list(queue) == [1, 2, 4, 5, 3]
    assert queue.poll() == 1
    assert list(queue) == [2, 3, 4, 5]
    queue.remove(2)
    assert list(queue) == [3, 5, 4]


def test_java_hashes():
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    assert java_string_hash("polygenelubricants") == -(2**31)  # the classic Integer.MIN_VALUE hash
    assert java_task_id_hash(0, 0) == 29791
    assert kafka_client_hash("00000000-0000-0000-0000-000000000005") == 5


def test_hash_map_orders_match_kafka_tests():
    # AbstractStickyAssignorTest relies on {consumer1, consumer2, consumer3} iterating 3, 2, 1.
    assert java_hash_map_order(["consumer1", "consumer2", "consumer3"], java_string_hash) == [
        "consumer3",
        "consumer2",
        "consumer1",
    ]
    # LegacyStickyTaskAssignorTest's previous actives, inserted client by client.
    keys = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (0, 3), (1, 3), (1, 2)]
    assert java_hash_map_order(keys, lambda t: java_task_id_hash(*t)) == [
        (1, 0), (0, 3), (0, 2), (1, 3), (0, 1), (1, 2), (0, 0), (1, 1),
    ]  # fmt: skip


def test_client_order_follows_java_uuid_comparison():
    # Java compares UUIDs as signed halves: a most-significant half with its top bit set sorts first.
    high = "80000000-0000-0000-0000-000000000000"
    low = "00000000-0000-0000-0000-000000000001"
    assert kafka_client_order([low, high]) == [high, low]
    assert kafka_client_order(["b", "a", "c"]) == ["a", "b", "c"]
