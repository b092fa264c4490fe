"""Kafka's `RackAwareStandbyPicker` (group coordinator, streams assignor, commit 3392e36f3c82):
where the broker-side `StickyTaskAssignor` puts the standbys of one task under
`rack.aware.assignment.tags`.

The tag keys are in priority order. For each task the caller calls `start_task()`, `mark_used`
for the active owner, then per standby `pick_next(eligible, tie_break)` and `mark_used(winner)`:

* a survivor is an eligible process whose value for the current priority key is set and not yet
  carried by a holder of the task; with no survivor the key is given up (the next key becomes
  the priority, the pool is every process again), and once every key is given up `pick_next`
  returns None so the assignor's tag-blind pass places the rest;
* among survivors the one whose values are new on the most lower-priority keys (compared key by
  key, a bit vector in priority order) wins, then the caller's `tie_break`; the first best in
  pool order is kept;
* the other survivors are the pool for the next pick while the key stays the priority.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Generic, TypeVar

P = TypeVar("P")


class _TaggedProcess(Generic[P]):
    __slots__ = ("process", "tags")

    def __init__(self, process: P, tags: Mapping[str, str]):
        self.process = process
        self.tags = tags


class RackAwareStandbyPicker(Generic[P]):
    """Picks the processes for the standbys of one task over the keys of
    `rack.aware.assignment.tags` (highest priority first)."""

    def __init__(self, tag_keys: Sequence[str], processes: Iterable[P], client_tags: Callable[[P], Mapping[str, str]]):
        self._keys = list(tag_keys)
        self._client_tags = client_tags
        # Pool order is the order of `processes`: the first of equally good survivors wins.
        self._all = [_TaggedProcess(process, client_tags(process)) for process in processes]
        self._used: list[set[str]] = [set() for _ in self._keys]
        self._priority = 0
        self._candidates: list[_TaggedProcess[P]] = self._all

    def start_task(self) -> None:
        for values in self._used:
            values.clear()
        self._priority = 0
        self._candidates = self._all

    def mark_used(self, holder: P) -> None:
        """Record the tag values of a holder of the task."""
        tags = self._client_tags(holder)
        for index, key in enumerate(self._keys):
            value = tags.get(key)
            if value is not None:
                self._used[index].add(value)

    def pick_next(self, eligible: Callable[[P], bool], tie_break: Callable[[P, P], int]) -> P | None:
        """The process for the next standby, or None once no process makes the task more diverse.
        `tie_break(a, b)` is a Java comparator: negative when `a` is preferred."""
        while self._priority < len(self._keys):
            key = self._keys[self._priority]
            used = self._used[self._priority]
            survivors = []
            for candidate in self._candidates:
                value = candidate.tags.get(key)
                if value is not None and value not in used and eligible(candidate.process):
                    survivors.append(candidate)
            if not survivors:
                self._priority += 1
                self._candidates = self._all
                continue
            winner = self._choose(survivors, tie_break)
            # A process the filter dropped stays out while this key is the priority: used values
            # only grow and a holder stays a holder.
            survivors.remove(winner)
            self._candidates = survivors
            return winner.process
        return None

    def _choose(self, survivors: list[_TaggedProcess[P]], tie_break: Callable[[P, P], int]) -> _TaggedProcess[P]:
        best = survivors[0]
        for candidate in survivors[1:]:
            comparison = self._compare_diversity(best, candidate)
            if comparison == 0:
                comparison = tie_break(best.process, candidate.process)
            if comparison > 0:
                best = candidate
        return best

    def _compare_diversity(self, first: _TaggedProcess[P], second: _TaggedProcess[P]) -> int:
        """Negative when `first` has a new value on an earlier lower-priority key than `second`."""
        for index in range(self._priority + 1, len(self._keys)):
            new_first = self._has_unused_value(first, index)
            new_second = self._has_unused_value(second, index)
            if new_first != new_second:
                return -1 if new_first else 1
        return 0

    def _has_unused_value(self, candidate: _TaggedProcess[P], index: int) -> bool:
        value = candidate.tags.get(self._keys[index])
        return value is not None and value not in self._used[index]
