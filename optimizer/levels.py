"""KIP-441's balance arithmetic on per-client counts, shared by the `balance` goal and the flow
back-end.

A client with c threads holding n tasks has n / c tasks per thread; KIP-441 calls an assignment
balanced when some level L has c*L <= n <= c*(L+1) for every client. `balance_slack` measures how
far counts are from that, `saturated_clients` finds the clients that must hold every stateful task,
and `level_boxes` lists the per-client count boxes the levels allow (the flow's capacities).
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np


def saturated_clients(threads: np.ndarray, copies: int, per_client_cap: int) -> np.ndarray:
    """Clients that even a perfectly even spread (per thread) would fill to `per_client_cap`.

    Water filling: the level L with sum(min(cap, threads * L)) = copies; a client whose share
    threads * L exceeds the cap holds every task (Streams puts one copy of a task per client).
    """
    saturated = np.zeros(len(threads), dtype=bool)
    if copies == 0:
        return saturated
    while True:
        free = ~saturated
        if not free.any():
            return saturated
        level = Fraction(copies - per_client_cap * int(saturated.sum()), int(threads[free].sum()))
        over = free & np.array([t * level > per_client_cap for t in threads.tolist()])
        if not over.any():
            return saturated
        saturated |= over


def balance_slack(counts: np.ndarray, threads: np.ndarray, width: Fraction = Fraction(1)) -> int:
    """Smallest whole e such that some level L has L*c - e <= n <= (L+W)*c + e for every client
    (W = `width`: 1 is KIP-441's balance, `narrowest_width` the tightest the counts allow).

    Per pair (i, j) that needs e*(c_i + c_j) >= n_i*c_j - n_j*c_i - W*c_i*c_j; exact integers
    (W = p/q). The pair's need grows with n_i and falls with n_j, so only the largest and the
    smallest count of each thread count matter: the work is (distinct thread counts)^2, not
    clients^2.
    """
    if len(counts) < 2:
        return 0
    p, q = Fraction(width).as_integer_ratio()
    classes, of = np.unique(np.asarray(threads, dtype=np.int64), return_inverse=True)
    n = np.asarray(counts, dtype=np.int64)
    most = np.full(len(classes), np.iinfo(np.int64).min, dtype=np.int64)
    least = np.full(len(classes), np.iinfo(np.int64).max, dtype=np.int64)
    np.maximum.at(most, of, n)
    np.minimum.at(least, of, n)
    c = classes
    numerator = q * (most[:, None] * c[None, :] - least[None, :] * c[:, None]) - p * c[:, None] * c[None, :]
    denominator = q * (c[:, None] + c[None, :])
    needed = -((-numerator) // denominator)  # ceil
    return int(max(0, needed.max()))


def narrowest_width(threads: np.ndarray, total: int, cap: int | None = None) -> Fraction:
    """The smallest spread max(n/c) - min(n/c) of tasks per thread over whole counts n >= 0 (at
    most `cap` each) that add up to `total`: the width of the tightest balance these clients can
    have (0 when the tasks divide evenly per thread, never above KIP-441's 1). 1 when the thread
    counts are too varied to list the levels cheaply, and when nothing fits.

    The lowest load is some j/c: for each such level (from one below the even share to the share),
    the highest load needed is the first j'/c' at which every client can hold a whole count
    (ceil(c*lo) <= floor(c*hi)) and the clients' largest counts reach the total."""
    return _narrowest_width(tuple(sorted(np.asarray(threads, dtype=np.int64).tolist())), total, cap)


@functools.lru_cache(maxsize=1024)
def _narrowest_width(sorted_threads: tuple[int, ...], total: int, cap: int | None) -> Fraction:
    """`narrowest_width` on the sorted thread counts, cached: every evaluation of `balance` asks."""
    threads = np.array(sorted_threads, dtype=np.int64)
    if len(threads) < 2 or total == 0:
        return Fraction(0)
    classes, sizes = np.unique(threads, return_counts=True)
    most = total if cap is None else min(cap, total)
    if most * len(threads) < total:
        return Fraction(1)
    weights: list[int] = sizes.tolist()

    def fits(floors: list[int], ceilings: list[int]) -> bool:
        return sum(m * c for m, c in zip(weights, ceilings, strict=True)) >= total

    return _narrowest(classes.tolist(), weights, total, most, fits)


def _narrowest(classes: list[int], sizes: list[int], total: int, most: int, fits: Callable[[list[int], list[int]], bool]) -> Fraction:
    """The smallest hi - lo over levels lo <= hi (multiples of 1/c) for which `fits` holds for
    the per-class count bounds [ceil(c*lo), min(most, floor(c*hi))] (`sizes` clients of `c`
    threads each adding up to `total`); 1 when none is narrower, and when the thread counts are
    too varied to list the levels cheaply. `fits` must grow with the upper bounds.

    The lowest load is some j/c: for each such level (from one below the even share to the share),
    the highest load needed is the first j'/c' at which every client can hold a whole count
    (ceil(c*lo) <= floor(c*hi)) and `fits` holds."""
    share = Fraction(total, sum(c * m for c, m in zip(classes, sizes, strict=True)))
    if sum(min(c, total) + 3 for c in classes) > _MAX_BREAKPOINTS:
        return Fraction(1)
    lows = sorted({Fraction(j, c) for c in classes for j in range(max(0, math.floor(c * (share - 1))), math.floor(c * share) + 1)})
    highs = sorted({Fraction(j, c) for c in classes for j in range(math.floor(c * share), math.ceil(c * (share + 1)) + 1)})
    best = Fraction(1)
    for lo in lows:
        floors = [math.ceil(c * lo) for c in classes]
        if max(floors) > most or sum(m * f for f, m in zip(floors, sizes, strict=True)) > total:
            continue
        least = max(Fraction(f, c) for f, c in zip(floors, classes, strict=True))
        # the candidates are the sorted highs in [max(lo, least), lo + best): a slice, searched for
        # the first at which `fits` holds (it grows with the level)
        i, j = bisect.bisect_left(highs, max(lo, least)), bisect.bisect_left(highs, lo + best)
        end = j
        while i < j:
            middle = (i + j) // 2
            if fits(floors, [min(most, math.floor(c * highs[middle])) for c in classes]):
                j = middle
            else:
                i = middle + 1
        if i < end:
            best = highs[i] - lo
    return best


def narrowest_stateful_width(threads: np.ndarray, tasks: int, active_width: Fraction, stateful: int, copies: int) -> Fraction:
    """The narrowest width of the stateful copies (`copies`: stateful actives plus standbys of
    `stateful` stateful tasks, at most one of each per client) that some assignment reaches
    together with its `tasks` actives within `active_width` of a level: the smallest spread of
    copies per thread over the clients that water filling leaves unsaturated (`saturated_clients`;
    the saturated ones hold every stateful task), given that a client's stateful actives are
    among both its actives and its copies. 1 when the thread counts are too varied to list the
    levels cheaply.

    Narrowing both apart can leave no assignment (threads 3, 1, 1, 1 with two stateful tasks and
    a standby: the actives' narrowest counts are 2, 0, 0, 0, the copies' 1, 1, 1, 1, and the
    client of 3 threads cannot hold 2 actives with 1 copy): the actives come first, as their
    spread is what `compare` ranks, and the copies get the narrowest width that goes with them."""
    classes, sizes = np.unique(np.asarray(threads, dtype=np.int64), return_counts=True)
    return _stateful_width(tuple(classes.tolist()), tuple(sizes.tolist()), tasks, Fraction(active_width), stateful, copies)


@functools.lru_cache(maxsize=1024)
def _stateful_width(classes: tuple[int, ...], sizes: tuple[int, ...], tasks: int, active_width: Fraction, stateful: int, copies: int) -> Fraction:
    """`narrowest_stateful_width` by thread-count class (`sizes` clients of `classes[g]` threads), cached."""
    threads = np.repeat(np.array(classes, dtype=np.int64), sizes)
    full = saturated_clients(threads, copies, stateful)[np.cumsum(sizes) - 1]  # a class is saturated or not as a whole
    free = ~full
    if int(np.array(sizes)[free].sum()) < 2 or copies == 0:
        return Fraction(0)
    boxes = _class_boxes(np.array(classes, dtype=np.int64), np.array(sizes, dtype=np.int64), tasks, active_width)
    if boxes is None:
        return Fraction(1)
    lower, upper = boxes  # the actives' count boxes (rows), per class (columns)
    weights = np.array(sizes, dtype=np.int64)
    free_copies = copies - stateful * int(weights[full].sum())

    def fits(floors: list[int], ceilings: list[int]) -> bool:
        low, high = np.full(len(classes), stateful, dtype=np.int64), np.full(len(classes), stateful, dtype=np.int64)
        low[free], high[free] = floors, ceilings
        if int(weights @ high) < copies:
            return False
        return bool((_coupled(lower, upper, low, high, weights, tasks, copies) >= stateful).any())

    return _narrowest(np.array(classes)[free].tolist(), weights[free].tolist(), free_copies, min(stateful, free_copies), fits)


def _coupled(lower: np.ndarray, upper: np.ndarray, low: np.ndarray, high: np.ndarray, sizes: np.ndarray, tasks: int, copies: int) -> np.ndarray:
    """Per box of actives (rows of `lower`, `upper`: counts n per class adding up to `tasks`), the
    most stateful actives s the clients can run when their copies m lie in [`low`, `high`] and add
    up to `copies`: s <= n and s <= m client by client. n and m rise above their lower bounds only
    as far as their totals leave (a budget each); the units of s a client takes below both lower
    bounds are free, between them they cost one budget (the one whose lower bound is passed),
    above both they cost both, and a unit that costs one budget is never worse than one that
    costs two, so taking them in that order is the optimum."""
    top = np.minimum(upper, high[None, :])
    below, above = np.minimum(lower, low[None, :]), np.maximum(lower, low[None, :])
    free = np.minimum(below, top)
    between = np.clip(np.minimum(above, top) - below, 0, None)
    both = np.clip(top - above, 0, None)
    actives_budget = tasks - lower @ sizes
    copies_budget = copies - int(low @ sizes)
    x = np.minimum((between * (lower < low[None, :])) @ sizes, actives_budget)
    y = np.minimum((between * (lower > low[None, :])) @ sizes, copies_budget)
    z = np.minimum(np.minimum(both @ sizes, actives_budget - x), copies_budget - y)
    most: np.ndarray = free @ sizes + x + y + z
    return most


def _class_boxes(classes: np.ndarray, sizes: np.ndarray, total: int, width: Fraction) -> tuple[np.ndarray, np.ndarray] | None:
    """Every per-class count box [ceil(c*L), floor(c*(L+W))] of some level L whose sums (`sizes`
    clients per class) admit `total`, tightened to the counts that add up to it: (lower, upper),
    a row per box. None when the thread counts are too varied to list the levels cheaply."""
    share = Fraction(total, int(classes @ sizes))
    found = _boxes(classes, total, max(share - width, Fraction(0)), share, width)
    if found is None:
        return None
    lower, upper = found
    admits = (lower <= upper).all(axis=1) & (lower @ sizes <= total) & (total <= upper @ sizes)
    lower, upper = lower[admits], upper[admits]
    low_sum, high_sum = (lower @ sizes)[:, None], (upper @ sizes)[:, None]
    lower, upper = np.maximum(lower, total - (high_sum - upper)), np.minimum(upper, total - (low_sum - lower))
    unique = np.unique(np.concatenate([lower, upper], axis=1), axis=0)
    return unique[:, : len(classes)], unique[:, len(classes) :]


def level_boxes(threads: np.ndarray, total: int, limit: int = 16, width: Fraction = Fraction(1)) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every (lower, upper) per-client count box [ceil(c*L), floor(c*(L+W))] that some level L
    gives (W = `width`) and whose sums admit `total`, tightened to the counts that add up to it,
    without boxes contained in another. Empty when more than `limit` remain, or when the thread
    counts are too varied to list the levels cheaply (the caller then uses another back-end).

    A box admits the total only for L in [share - W, share] (share = total / all threads), and
    levels below 0 give boxes inside the box of level 0. The box changes only where c*L or
    c*(L+W) crosses a whole number, so the levels tried are those breakpoints inside the window
    (and one beyond each end) and one level between each two. For a client of c threads that is
    about 2*(min(c, total) + 3) levels: the work is bounded by the tasks, not the thread counts.
    """
    threads = np.asarray(threads, dtype=np.int64)
    if not len(threads):
        return []
    width = Fraction(width)
    share = Fraction(total, int(threads.sum()))
    found = _boxes(threads, total, max(share - width, Fraction(0)), share, width)
    if found is None:
        return []
    lower, upper = found
    admits = (lower <= upper).all(axis=1) & (lower.sum(axis=1) <= total) & (total <= upper.sum(axis=1))
    lower, upper = lower[admits], upper[admits]
    # Each box tightened to the counts it admits with the total (the bounding box of those):
    # a client can hold no fewer than what the others' upper bounds leave, and no more than
    # what their lower bounds leave.
    low_sum, high_sum = lower.sum(axis=1, keepdims=True), upper.sum(axis=1, keepdims=True)
    lower, upper = np.maximum(lower, total - (high_sum - upper)), np.minimum(upper, total - (low_sum - lower))
    unique = np.unique(np.concatenate([lower, upper], axis=1), axis=0)
    if len(unique) > 4 * limit:
        return []
    n = len(threads)
    boxes = [(row[:n], row[n:]) for row in unique]
    kept = [
        (lower, upper)
        for i, (lower, upper) in enumerate(boxes)
        if not any(j != i and (other_lower <= lower).all() and (upper <= other_upper).all() for j, (other_lower, other_upper) in enumerate(boxes))
    ]
    if len(kept) > limit:
        return []
    return sorted(kept, key=lambda box: (box[0].tolist(), box[1].tolist()))


_MAX_BREAKPOINTS = 4096
"""Levels `level_boxes`, `count_hull` and `narrowest_width` list at most before leaving balance
to another back-end (or to KIP-441's width)."""


def _boxes(threads: np.ndarray, total: int, first: Fraction, last: Fraction, width: Fraction) -> tuple[np.ndarray, np.ndarray] | None:
    """(ceil(c*L), floor(c*(L+W))) per client (columns) for every level L (rows) where c*L or
    c*(L+W) crosses a whole number between `first` and `last` (and one beyond each end), and
    one level strictly between each two: every box the levels give there. None when that is
    more than `_MAX_BREAKPOINTS` levels, or when the arithmetic would pass 64 bits."""
    distinct = np.unique(threads).tolist()
    if 2 * sum(math.ceil(c * last) - math.floor(c * first) + 3 for c in distinct) > _MAX_BREAKPOINTS:
        return None
    p, q = width.as_integer_ratio()
    numerators, denominators = [], []
    for c in distinct:
        j = np.arange(math.floor(c * first) - 1, math.ceil(c * last) + 2, dtype=np.int64)
        numerators += [j * q, j * q - p * c]  # c*L = j, and c*(L+W) = j
        denominators += [np.full(len(j), c * q, dtype=np.int64)] * 2
    a, b = np.concatenate(numerators), np.concatenate(denominators)
    common = np.gcd(a, b)
    pairs = np.unique(np.stack([a // common, b // common], axis=1), axis=0)
    pairs = pairs[np.argsort(pairs[:, 0] / pairs[:, 1], kind="stable")]
    a, b = pairs[:, 0], pairs[:, 1]
    # The midpoints and c*(L+W) below multiply numerators and denominators: past 64 bits (thread
    # counts in the hundreds with a width of a large denominator) the boxes are not listed.
    most_a, most_b = int(np.abs(a).max(initial=0)), int(b.max(initial=1))
    if int(threads.max(initial=1)) * (2 * most_a * most_b * q + p * 2 * most_b * most_b) >= 2**62:
        return None
    a, b = np.concatenate([a, a[:-1] * b[1:] + a[1:] * b[:-1]]), np.concatenate([b, 2 * b[:-1] * b[1:]])
    keep = a >= 0  # levels below 0 give boxes inside level 0's
    if not keep.any():
        a, b = np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64)
    else:
        a, b = np.concatenate([a[keep], [0]]), np.concatenate([b[keep], [1]])
    lower = -((-threads[None, :] * a[:, None]) // b[:, None])  # ceil(c*L)
    upper = (threads[None, :] * (a * q + p * b)[:, None]) // (b * q)[:, None]  # floor(c*(L+W))
    return lower, upper


def count_hull(threads: np.ndarray, total: int, slacks: int = 0, width: Fraction = Fraction(1)) -> tuple[np.ndarray, np.ndarray] | None:
    """(lowest, highest) count each client can have when the counts add up to `total` and lie
    within e of some level (c*L - e <= n <= c*(L+W) + e, n >= 0; W = `width`), for each slack
    e = 0 .. `slacks` (rows of the two arrays): the hull over every level of the per-client
    intervals, each tightened by what the other clients' intervals leave of the total. None when
    the thread counts are too varied to list the levels cheaply.

    The intervals change only where c*L or c*(L+W) crosses a whole number, so it is enough to
    look at those breakpoints and one level strictly between each two (`_boxes`); levels that
    cannot reach the total (or exceed it) are skipped. With slack 0 this is the hull of
    `level_boxes`."""
    threads = np.asarray(threads, dtype=np.int64)
    n, all_threads = len(threads), int(threads.sum())
    if not n:
        return np.zeros((slacks + 1, 0), dtype=np.int64), np.zeros((slacks + 1, 0), dtype=np.int64)
    width = Fraction(width)
    first = Fraction(total - n * slacks, all_threads) - width - 1
    last = Fraction(total + n * slacks, all_threads) + 1
    found = _boxes(threads, total, first, last, width)
    if found is None:
        return None
    floors, ceilings = found
    lows, highs = np.zeros((slacks + 1, n), dtype=np.int64), np.zeros((slacks + 1, n), dtype=np.int64)
    for e in range(slacks + 1):
        lower, upper = np.maximum(floors - e, 0), np.minimum(ceilings + e, total)
        low_sum, high_sum = lower.sum(axis=1, keepdims=True), upper.sum(axis=1, keepdims=True)
        admits = ((lower <= upper).all(axis=1, keepdims=True) & (low_sum <= total) & (total <= high_sum))[:, 0]
        if not admits.any():
            return None
        lower, upper, low_sum, high_sum = lower[admits], upper[admits], low_sum[admits], high_sum[admits]
        lows[e] = np.maximum(lower, total - (high_sum - upper)).min(axis=0)
        highs[e] = np.minimum(upper, total - (low_sum - lower)).max(axis=0)
    return lows, highs
