"""Java collection behaviour that Kafka's assignors' results depend on.

Kafka iterates a `java.util.PriorityQueue` in its heap-array order, compares weights live while
they change, sorts process ids as Java UUIDs (signed 64-bit halves) and in one place walks a
`java.util.HashMap` of TaskIds in bucket order. Reproducing Kafka's output means reproducing these.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")


class JavaPriorityQueue(Generic[T]):
    """`java.util.PriorityQueue` with a comparator: the same heap array after the same calls.

    `less(a, b)` is the comparator's "a < b", evaluated whenever two elements are compared, so a
    weight that changed since insertion is seen, as in Java. Iteration walks the heap array.
    """

    def __init__(self, less: Callable[[T, T], bool]):
        self._less = less
        self._heap: list[T] = []

    def __len__(self) -> int:
        return len(self._heap)

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._heap))

    def offer(self, item: T) -> None:
        self._heap.append(item)
        self._sift_up(len(self._heap) - 1, item)

    def poll(self) -> T | None:
        if not self._heap:
            return None
        first = self._heap[0]
        last = self._heap.pop()
        if self._heap:
            self._sift_down(0, last)
        return first

    def remove(self, item: T) -> bool:
        for index, candidate in enumerate(self._heap):
            if candidate == item:
                self._remove_at(index)
                return True
        return False

    def _remove_at(self, index: int) -> None:
        last = self._heap.pop()
        if index == len(self._heap):
            return
        self._sift_down(index, last)
        if self._heap[index] is last:
            self._sift_up(index, last)

    def _sift_up(self, index: int, item: T) -> None:
        heap = self._heap
        while index > 0:
            parent = (index - 1) >> 1
            if not self._less(item, heap[parent]):
                break
            heap[index] = heap[parent]
            index = parent
        heap[index] = item

    def _sift_down(self, index: int, item: T) -> None:
        heap = self._heap
        size = len(heap)
        half = size >> 1
        while index < half:
            child = 2 * index + 1
            right = child + 1
            if right < size and self._less(heap[right], heap[child]):
                child = right
            if not self._less(heap[child], item):
                break
            heap[index] = heap[child]
            index = child
        heap[index] = item


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def java_task_id_hash(subtopology: int, partition: int) -> int:
    """`TaskId.hashCode()` for a task without topology name: Objects.hash(subtopology, partition, null)."""
    return _int32(31 * (31 * (31 + subtopology) + partition))


def java_hash_map_order(
    keys: Sequence[T], hash_of: Callable[[T], int], presized: bool = False
) -> list[T]:
    """The iteration order of a `java.util.HashMap` (or HashSet) into which `keys` were put in
    this order.

    A default map starts at capacity 16 and doubles when the size exceeds 0.75 of it; a map copied
    from a collection (`presized`) starts at the power of two above size / 0.75 + 1. A key's bucket
    is `(h ^ (h >>> 16)) & (capacity - 1)`; buckets are walked in order, each in insertion order (a
    resize keeps the relative order within a bucket). Bins that Java would turn into trees (8 or
    more keys in one bucket at capacity 64 or more) are not modelled.
    """
    capacity = 16
    if presized:
        wanted = int(len(keys) / 0.75) + 1
        while capacity < wanted:
            capacity *= 2
    while len(keys) > 0.75 * capacity:
        capacity *= 2
    buckets: dict[int, list[T]] = {}
    for key in keys:
        h = hash_of(key) & 0xFFFFFFFF
        bucket = (h ^ (h >> 16)) & (capacity - 1)
        buckets.setdefault(bucket, []).append(key)
    return [key for bucket in sorted(buckets) for key in buckets[bucket]]


def _signed64(value: int) -> int:
    return value - (1 << 64) if value & (1 << 63) else value


def kafka_client_order(client_ids: Iterable[str]) -> list[str]:
    """Clients in the order Kafka's assignors visit them.

    Kafka keys clients by process id, a UUID compared as two signed 64-bit halves. When every id
    is a UUID that order is used; otherwise ids are process names, compared as text.
    """
    ids = list(client_ids)
    try:
        parsed = {client: uuid.UUID(client) for client in ids}
    except ValueError:
        return sorted(ids)

    def java_uuid_key(client: str) -> tuple[int, int, str]:
        value = parsed[client].int
        return _signed64(value >> 64), _signed64(value & ((1 << 64) - 1)), client

    return sorted(ids, key=java_uuid_key)



def java_string_hash(text: str) -> int:
    """`String.hashCode()`: the 31-polynomial over UTF-16 code units, in 32-bit arithmetic."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return _int32(h)


def kafka_client_hash(client_id: str) -> int:
    """The hash of a client's key in Kafka's maps: `UUID.hashCode()` for a process id, else the
    id's `String.hashCode()` (as if processes were keyed by name)."""
    try:
        value = uuid.UUID(client_id).int
    except ValueError:
        return java_string_hash(client_id)
    hilo = (value >> 64) ^ (value & ((1 << 64) - 1))
    return _int32((hilo >> 32) ^ hilo)
