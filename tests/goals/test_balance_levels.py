"""KIP-441's level arithmetic behind the `balance` goal and the flow back-end's balance boxes
(optimizer/levels.py), against the definitions computed by brute force with exact fractions."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.levels import balance_slack, level_boxes, saturated_clients

threads_lists = st.lists(st.integers(1, 6), min_size=1, max_size=5)


def slack_by_definition(counts: list[int], threads: list[int]) -> int:
    """The smallest whole e for which some level L has c*L - e <= n <= c*(L+1) + e everywhere."""
    for e in itertools.count():
        highest_floor = max(Fraction(n - e, c) - 1 for n, c in zip(counts, threads, strict=True))
        lowest_ceiling = min(Fraction(n + e, c) for n, c in zip(counts, threads, strict=True))
        if highest_floor <= lowest_ceiling:
            return e
    raise AssertionError("unreachable")


@settings(max_examples=300, deadline=None)
@given(threads_lists, st.data())
def test_balance_slack_is_the_definition(threads, data):
    counts = data.draw(st.lists(st.integers(0, 30), min_size=len(threads), max_size=len(threads)))
    assert balance_slack(np.array(counts), np.array(threads)) == slack_by_definition(counts, threads)


def test_kip441_examples_of_balance():
    # one thread each: balanced when counts differ by at most one
    assert balance_slack(np.array([3, 4, 4]), np.array([1, 1, 1])) == 0
    assert balance_slack(np.array([2, 4, 4]), np.array([1, 1, 1])) == 1
    # 1, 2 and 3 threads holding 2, 4 and 6 tasks: 2 per thread everywhere
    assert balance_slack(np.array([2, 4, 6]), np.array([1, 2, 3])) == 0
    # the same 12 tasks as 4, 4, 4: the 1-thread client needs a level of at least 3 - e, the
    # 3-thread one at most (4 + e) / 3: e = 2 is the first whole number that meets both
    assert balance_slack(np.array([4, 4, 4]), np.array([1, 2, 3])) == 2


@settings(max_examples=300, deadline=None)
@given(threads_lists, st.integers(0, 40), st.integers(1, 12))
def test_saturated_clients_are_those_water_filling_fills(threads, copies, cap):
    copies = min(copies, cap * len(threads))  # a client holds one copy of each task at most
    saturated = saturated_clients(np.array(threads), copies, cap)
    free = [c for c, full in zip(threads, saturated.tolist(), strict=True) if not full]
    if not free:  # every client full: only when there are exactly enough copies for that
        assert copies == cap * len(threads)
        return
    level = Fraction(copies - cap * int(saturated.sum()), sum(free))
    for c, full in zip(threads, saturated.tolist(), strict=True):
        # the even level of the others would put more than the cap on a saturated client, and no
        # more than the cap on any other one
        assert (c * level > cap) if full else (c * level <= cap), (threads, copies, cap)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.integers(0, 12))
def test_level_boxes_hold_exactly_the_balanced_counts(threads, total):
    boxes = level_boxes(np.array(threads), total)
    assert boxes, "small problems always get their boxes"
    for counts in itertools.product(range(total + 1), repeat=len(threads)):
        if sum(counts) != total:
            continue
        inside = any((lower <= counts).all() and (np.array(counts) <= upper).all() for lower, upper in boxes)
        assert inside == (slack_by_definition(list(counts), threads) == 0), (threads, total, counts)
    # no box lies inside another
    for (lower, upper), (other_lower, other_upper) in itertools.permutations(boxes, 2):
        assert not ((other_lower <= lower).all() and (upper <= other_upper).all())
