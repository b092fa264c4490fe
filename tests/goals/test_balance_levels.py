"""KIP-441's level arithmetic behind the `balance` goal and the flow back-end's balance boxes
(optimizer/levels.py), against the definitions computed by brute force with exact fractions: at
KIP-441's width (one task per thread) and at the narrowest width the counts allow."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.levels import balance_slack, count_hull, level_boxes, narrowest_stateful_width, narrowest_width, saturated_clients

threads_lists = st.lists(st.integers(1, 6), min_size=1, max_size=5)


def slack_by_definition(counts: list[int], threads: list[int], width: Fraction = Fraction(1)) -> int:
    """The smallest whole e for which some level L has c*L - e <= n <= c*(L+W) + e everywhere."""
    for e in itertools.count():
        highest_floor = max(Fraction(n - e, c) - width for n, c in zip(counts, threads, strict=True))
        lowest_ceiling = min(Fraction(n + e, c) for n, c in zip(counts, threads, strict=True))
        if highest_floor <= lowest_ceiling:
            return e
    raise AssertionError("unreachable")


def spreads(threads: list[int], total: int, cap: int | None = None) -> dict[tuple[int, ...], Fraction]:
    """Every count vector adding up to `total` (each at most `cap`), with its spread of tasks per
    thread, max - min."""
    top = total if cap is None else min(cap, total)
    return {
        counts: max(Fraction(n, c) for n, c in zip(counts, threads, strict=True)) - min(Fraction(n, c) for n, c in zip(counts, threads, strict=True))
        for counts in itertools.product(range(top + 1), repeat=len(threads))
        if sum(counts) == total
    }


widths = st.sampled_from([Fraction(1), Fraction(0), Fraction(1, 2), Fraction(1, 3), Fraction(2, 3), Fraction(3, 4), Fraction(1, 6)])


@settings(max_examples=300, deadline=None)
@given(threads_lists, st.data(), widths)
def test_balance_slack_is_the_definition(threads, data, width):
    counts = data.draw(st.lists(st.integers(0, 30), min_size=len(threads), max_size=len(threads)))
    assert balance_slack(np.array(counts), np.array(threads), width) == slack_by_definition(counts, threads, width)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.integers(0, 14), st.one_of(st.none(), st.integers(1, 8)))
def test_narrowest_width_is_the_smallest_spread_of_any_counts(threads, total, cap):
    found = spreads(threads, total, cap)
    if cap is not None and saturated_clients(np.array(threads), total, cap).any():
        return  # the balance goal passes only the clients water filling leaves below the cap

    width = narrowest_width(np.array(threads), total, cap)
    assert width == min(found.values()), (threads, total, cap)
    assert width <= 1  # never wider than KIP-441's balance
    # and counts within that width of a level are exactly the narrowest ones
    for counts, spread in found.items():
        assert (slack_by_definition(list(counts), threads, width) == 0) == (spread <= width)


def joint_width_by_definition(threads: list[int], tasks: int, stateful: int, standbys: int) -> Fraction | None:
    """The smallest spread of stateful copies per thread over the unsaturated clients among the
    count vectors an assignment can have, actives n at their own narrowest balance and copies m
    (each at most `stateful`, saturated clients at `stateful`), when some client-by-client
    stateful actives s <= n, s <= m add up to the stateful tasks; None when the actives' narrowest
    counts leave no such copies."""
    copies = stateful * (1 + standbys)
    active_width = narrowest_width(np.array(threads), tasks)
    actives = [n for n, _ in spreads(threads, tasks).items() if slack_by_definition(list(n), threads, active_width) == 0]
    saturated = saturated_clients(np.array(threads), copies, stateful).tolist()
    free = [k for k, full in enumerate(saturated) if not full]
    widths = [
        max(Fraction(m[k], threads[k]) for k in free) - min(Fraction(m[k], threads[k]) for k in free) if len(free) > 1 else Fraction(0)
        for m in spreads(threads, copies, stateful)
        if all(m[k] == stateful for k, full in enumerate(saturated) if full)
        and any(sum(min(a, b) for a, b in zip(n, m, strict=True)) >= stateful for n in actives)
    ]
    return min(widths, default=None)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=2, max_size=5), st.data())
def test_the_copies_width_is_the_narrowest_the_actives_narrowest_counts_allow(threads, data):
    """Both narrowest apart can leave no assignment (threads 3, 1, 1, 1 with two stateful tasks and
    a standby: actives 2, 0, 0, 0 and copies 1, 1, 1, 1); the copies' width is the narrowest that
    goes with the actives' (issue 49), and never above KIP-441's 1."""
    tasks = data.draw(st.integers(1, 5 if len(threads) < 5 else 3))
    stateful = data.draw(st.integers(1, tasks))
    standbys = data.draw(st.integers(1, min(2, len(threads) - 1)))
    expected = joint_width_by_definition(threads, tasks, stateful, standbys)
    assert expected is not None and expected <= 1, (threads, tasks, stateful, standbys)
    width = narrowest_stateful_width(np.array(threads), tasks, narrowest_width(np.array(threads), tasks), stateful, stateful * (1 + standbys))
    assert width == expected, (threads, tasks, stateful, standbys)


def test_the_copies_width_of_the_issue_49_application():
    # the actives' narrowest counts are 2, 0, 0, 0 (2/3 per thread); the copies' own narrowest,
    # 1, 1, 1, 1, would leave the client of 3 threads one copy for its 2 stateful actives
    threads = np.array([3, 1, 1, 1])
    assert narrowest_width(threads, 2) == Fraction(2, 3)
    assert narrowest_width(threads, 4, 2) == Fraction(2, 3)
    assert narrowest_stateful_width(threads, 2, Fraction(2, 3), 2, 4) == 1
    assert joint_width_by_definition([3, 1, 1, 1], 2, 2, 1) == 1


def test_narrowest_width_examples():
    # 10 tasks on 4 one-thread clients: 2 or 3 each, a spread of one task per thread
    assert narrowest_width(np.array([1, 1, 1, 1]), 10) == 1
    # 12 on 4: 3 each
    assert narrowest_width(np.array([1, 1, 1, 1]), 12) == 0
    # 54 tasks on 6 clients of 4 threads: 9 each, 2.25 per thread everywhere
    assert narrowest_width(np.array([4] * 6), 54) == 0
    # 7 tasks on 2 and 3 threads: 3 and 4 (1.5 and 1.33 per thread)
    assert narrowest_width(np.array([2, 3]), 7) == Fraction(1, 6)


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
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.integers(0, 12), st.booleans())
def test_level_boxes_hold_exactly_the_balanced_counts(threads, total, narrowest):
    width = narrowest_width(np.array(threads), total) if narrowest else Fraction(1)
    boxes = level_boxes(np.array(threads), total, width=width)
    assert boxes, "small problems always get their boxes"
    for counts in itertools.product(range(total + 1), repeat=len(threads)):
        if sum(counts) != total:
            continue
        inside = any((lower <= counts).all() and (np.array(counts) <= upper).all() for lower, upper in boxes)
        assert inside == (slack_by_definition(list(counts), threads, width) == 0), (threads, total, counts, width)
    # no box lies inside another
    for (lower, upper), (other_lower, other_upper) in itertools.permutations(boxes, 2):
        assert not ((other_lower <= lower).all() and (upper <= other_upper).all())


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.integers(0, 12), st.integers(0, 3), widths)
def test_count_hull_is_each_clients_range_over_the_counts_within_the_slack(threads, total, slack, width):
    """Exactly the lowest and highest count each client has over the count vectors that add up to
    the total and are within `slack` of balance (enumerated), so the rows built on it (balance's
    `_box_rows`) cut off no assignment and leave no count out."""
    hull = count_hull(np.array(threads), total, 3, width)
    feasible = [
        counts
        for counts in itertools.product(range(total + 1), repeat=len(threads))
        if sum(counts) == total and slack_by_definition(list(counts), threads, width) <= slack
    ]
    if hull is None:  # no counts at all within slack 0 of a level of that width
        assert not any(sum(c) == total and slack_by_definition(list(c), threads, width) == 0 for c in itertools.product(range(total + 1), repeat=len(threads)))
        return
    lows, highs = hull
    low, high = lows[slack], highs[slack]
    assert low.tolist() == [min(c[k] for c in feasible) for k in range(len(threads))]
    assert high.tolist() == [max(c[k] for c in feasible) for k in range(len(threads))]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(0, 10), st.booleans())
def test_balances_box_rows_hold_for_every_assignment_at_any_slack(threads, total, narrowest):
    """The rows `low - M*e <= n <= high + M'*e` are valid at every slack e, beyond the slacks
    whose hulls they were fitted to too (e up to 12 here, fitted to 8)."""
    from goals.balance import _box_rows

    rows = []
    n = len(threads)
    width = narrowest_width(np.array(threads), total) if narrowest else Fraction(1)
    _box_rows(lambda members, cols, coefs, member_coef, lo, hi: rows.append((int(members[0]), coefs[0], lo, hi)),
              [np.array([k]) for k in range(n)], n, np.array(threads), total, width)  # fmt: skip
    assert rows
    for counts in itertools.product(range(total + 1), repeat=n):
        if sum(counts) != total:
            continue
        e = slack_by_definition(list(counts), threads, width)
        for slack in range(e, 13):
            for k, coef, lo, hi in rows:
                assert lo <= counts[k] + coef * slack <= hi, (threads, total, counts, slack)
