"""Kafka's `RackAwareStandbyPicker`: the examples of its `RackAwareStandbyPickerTest` (processes
in name order, as the test's TreeMap keeps them; ties broken by name)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from optimizer.assignors.streams.group.standby_picker import RackAwareStandbyPicker


def by_name(first: str, second: str) -> int:
    return (first > second) - (first < second)


def reversed_by_name(first: str, second: str) -> int:
    return -by_name(first, second)


class Holders:
    def __init__(self, keys: list[str], tags: Mapping[str, Mapping[str, str]]):
        self.picker = RackAwareStandbyPicker(keys, sorted(tags), lambda process: tags[process])
        self.held: set[str] = set()

    def hold(self, process: str) -> None:
        self.held.add(process)
        self.picker.mark_used(process)

    def not_holder(self, process: str) -> bool:
        return process not in self.held

    def pick(self, eligible: Callable[[str], bool] | None = None, tie_break: Callable[[str, str], int] = by_name) -> str | None:
        return self.picker.pick_next(eligible or self.not_holder, tie_break)

    def pick_and_hold(self) -> str | None:
        winner = self.pick()
        assert winner is not None
        self.hold(winner)
        return winner


def test_highest_priority_key_first():
    h = Holders(["cluster", "zone"], {"A": {"cluster": "c1", "zone": "z1"}, "B": {"cluster": "c2", "zone": "z1"}, "C": {"cluster": "c1", "zone": "z2"}})
    h.hold("A")
    assert h.pick() == "B"


def test_new_values_on_more_lower_priority_keys_win():
    h = Holders(["cluster", "zone"], {
        "A": {"cluster": "c1", "zone": "z1"}, "B": {"cluster": "c2", "zone": "z1"}, "C": {"cluster": "c2", "zone": "z2"},
        "D": {"cluster": "c1", "zone": "z2"}, "E": {"cluster": "c3", "zone": "z1"},
    })
    h.hold("A")
    assert h.pick_and_hold() == "C"
    assert h.pick_and_hold() == "E"
    assert h.pick() is None


def test_gives_up_a_key_nobody_can_diversify():
    h = Holders(["cluster", "zone"], {"A": {"cluster": "c1", "zone": "z1"}, "B": {"cluster": "c1", "zone": "z2"}, "C": {"cluster": "c1", "zone": "z1"}})
    h.hold("A")
    assert h.pick_and_hold() == "B"
    assert h.pick() is None


def test_drops_processes_without_the_key_and_ineligible_ones():
    h = Holders(["zone"], {"A": {"zone": "z1"}, "B": {}, "C": {"zone": "z2"}})
    h.hold("A")
    assert h.pick(lambda p: h.not_holder(p) and p != "C") is None
    h.picker.start_task()
    h.picker.mark_used("A")
    assert h.pick() == "C"


def test_ties_follow_the_given_order():
    h = Holders(["zone"], {"A": {"zone": "z1"}, "B": {"zone": "z2"}, "C": {"zone": "z2"}})
    h.hold("A")
    assert h.pick(tie_break=reversed_by_name) == "C"
    h.picker.start_task()
    h.picker.mark_used("A")
    assert h.pick() == "B"


def test_second_standby_avoids_the_value_of_the_first():
    h = Holders(["zone"], {"A": {"zone": "z1"}, "B": {"zone": "z2"}, "C": {"zone": "z2"}, "D": {"zone": "z3"}})
    h.hold("A")
    assert h.pick_and_hold() == "B"
    assert h.pick_and_hold() == "D"
    assert h.pick() is None


def test_next_task_starts_from_all_processes():
    h = Holders(["zone"], {"A": {"zone": "z1"}, "B": {"zone": "z2"}})
    h.hold("A")
    assert h.pick_and_hold() == "B"
    assert h.pick() is None
    h.held.clear()
    h.picker.start_task()
    h.hold("B")
    assert h.pick() == "A"
