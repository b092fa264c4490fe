"""KIP-441's level arithmetic behind the `balance` goal and the flow back-end's balance boxes
(optimizer/levels.py), against the definitions computed by brute force with exact fractions."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.levels import balance_slack, count_hull, level_boxes, saturated_clients

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


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.integers(0, 12), st.integers(0, 3))
def test_count_hull_is_each_clients_range_over_the_counts_within_the_slack(threads, total, slack):
    """Exactly the lowest and highest count each client has over the count vectors that add up to
    the total and are within `slack` of balance (enumerated), so the rows built on it (balance's
    `_box_rows`) cut off no assignment and leave no count out."""
    lows, highs = count_hull(np.array(threads), total, 3)
    low, high = lows[slack], highs[slack]
    feasible = [
        counts
        for counts in itertools.product(range(total + 1), repeat=len(threads))
        if sum(counts) == total and slack_by_definition(list(counts), threads) <= slack
    ]
    assert low.tolist() == [min(c[k] for c in feasible) for k in range(len(threads))]
    assert high.tolist() == [max(c[k] for c in feasible) for k in range(len(threads))]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(0, 10))
def test_balances_box_rows_hold_for_every_assignment_at_any_slack(threads, total):
    """The rows `low - M*e <= n <= high + M'*e` are valid at every slack e, beyond the slacks
    whose hulls they were fitted to too (e up to 12 here, fitted to 8)."""
    from goals.balance import _box_rows

    rows = []
    n = len(threads)
    _box_rows(lambda members, cols, coefs, member_coef, lo, hi: rows.append((int(members[0]), coefs[0], lo, hi)),
              [np.array([k]) for k in range(n)], n, np.array(threads), total)  # fmt: skip
    assert rows
    for counts in itertools.product(range(total + 1), repeat=n):
        if sum(counts) != total:
            continue
        e = slack_by_definition(list(counts), threads)
        for slack in range(e, 13):
            for k, coef, lo, hi in rows:
                assert lo <= counts[k] + coef * slack <= hi, (threads, total, counts, slack)
