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

from optimizer.errors import SolverUnavailableError
from optimizer.model.releases import EARLIEST, KafkaRelease, release_text

Selector = TypeVar("Selector")
Assignor = TypeVar("Assignor")



@dataclass(frozen=True)
class NotReproduced:
    """A row for releases whose variant cannot be reproduced, and why: `select` refuses them saying
    so, rather than answering with a neighbouring release's code."""

    why: str


@dataclass(frozen=True)
class AssignorTable(Generic[Selector, Assignor]):
    """The assignors of one family: (the selecting value, the first Kafka release of a variant) to
    the function that reproduces it."""

    key: str
    """Kafka's config key that selects the assignor, e.g. `partition.assignment.strategy`."""
    rows: Mapping[tuple[Selector, KafkaRelease], Assignor | NotReproduced]
    """(value, the first release of the variant) → its reproduction. `EARLIEST` keys a variant
    every covered release runs unless a later row says otherwise; `TRUNK` one no release ships yet
    (optimizer.model.releases)."""

    def select(self, value: Selector, release: KafkaRelease) -> Assignor:
        """The assignor `key=value` runs in Kafka `release`: the latest variant first shipped in
        it or before. SolverUnavailableError naming the key, value and release when the table has
        none (a release before the assignor shipped, or one whose variant is not reproduced)."""
        since = [first for (selector, first) in self.rows if selector == value and first <= release]
        found = self.rows[(value, max(since))] if since else None
        if found is None or isinstance(found, NotReproduced):
            why = f"{found.why}; " if isinstance(found, NotReproduced) else ""
            raise SolverUnavailableError(f"{self.key}={value} is not reproduced for Kafka {release_text(release)}: {why}{self.releases(value)}")
        return found

    def releases(self, value: Selector) -> str:
        """The releases whose `key=value` the table reproduces, in words."""
        firsts = sorted(first for (selector, first), row in self.rows.items() if selector == value and not isinstance(row, NotReproduced))
        if not firsts:
            return f"no such assignor here ({', '.join(map(str, self.values()))})"
        return f"reproduced from Kafka {release_text(firsts[0])} on" if firsts[0] != EARLIEST else "reproduced for every release covered"

    def values(self) -> list[Selector]:
        """The selecting values the table has rows for, in row order, once each."""
        return list(dict.fromkeys(selector for selector, _ in self.rows))
