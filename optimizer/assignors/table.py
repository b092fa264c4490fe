"""`AssignorTable`: one family of Kafka's assignors, keyed by what selects one in Kafka.

Kafka chooses an assignor by one config key per family: `partition.assignment.strategy` for a
classic consumer group, `group.remote.assignor` under KIP-848's consumer protocol,
`task.assignor.class` for a classic Kafka Streams application and `streams.assignor.name` under
KIP-1071's streams protocol (`optimizer.assignors.answers` picks the family from the problem's kind
and `group.protocol`). A table maps that key's value to its reproduction here, with a variant per
Kafka release where Kafka's code of that assignor changed: adding an assignor, or a release's
variant of one, is a row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

Selector = TypeVar("Selector")
Assignor = TypeVar("Assignor")

KafkaRelease = tuple[int, ...]
"""A Kafka release as numbers, `(4, 4, 0)` for 4.4.0. `()` is the code this project reproduces
first for an assignor (Kafka's trunk at 1eb7644, October 2024, and the 2025 broker-side code;
docs/assignors.md): the variant every release gets unless a later row says otherwise."""

REPRODUCED: KafkaRelease = ()


@dataclass(frozen=True)
class AssignorTable(Generic[Selector, Assignor]):
    """The assignors of one family: (the selecting value, the first Kafka release of a variant) to
    the function that reproduces it."""

    key: str
    """Kafka's config key that selects the assignor, e.g. `partition.assignment.strategy`."""
    rows: Mapping[tuple[Selector, KafkaRelease], Assignor]

    def select(self, value: Selector, release: KafkaRelease = REPRODUCED) -> Assignor:
        """The assignor `key=value` runs in Kafka `release`: the latest variant first shipped in
        it or before. KeyError names the key and value when the table has none (the model's
        validation only lets through values that have rows)."""
        since = [first for (selector, first) in self.rows if selector == value and first <= release]
        if not since:
            raise KeyError(f"no assignor {self.key}={value} in Kafka {'.'.join(map(str, release)) or 'as reproduced'}")
        return self.rows[(value, max(since))]

    def values(self) -> list[Selector]:
        """The selecting values the table has rows for, in row order, once each."""
        return list(dict.fromkeys(selector for selector, _ in self.rows))
