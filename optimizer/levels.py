"""KIP-441's balance arithmetic on per-client counts, shared by the `balance` goal and the flow
back-end.

A client with c threads holding n tasks has n / c tasks per thread; KIP-441 calls an assignment
balanced when some level L has c*L <= n <= c*(L+1) for every client. `balance_slack` measures how
far counts are from that, `saturated_clients` finds the clients that must hold every stateful task,
and `level_boxes` lists the per-client count boxes the levels allow (the flow's capacities).
"""

from __future__ import annotations

import math
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


def balance_slack(counts: np.ndarray, threads: np.ndarray) -> int:
    """Smallest whole e such that some level L has L*c - e <= n <= (L+1)*c + e for every client.

    Per pair (i, j) that needs e*(c_i + c_j) >= n_i*c_j - n_j*c_i - c_i*c_j; exact integers. The
    pair's need grows with n_i and falls with n_j, so only the largest and the smallest count of
    each thread count matter: the work is (distinct thread counts)^2, not clients^2.
    """
    if len(counts) < 2:
        return 0
    classes, of = np.unique(np.asarray(threads, dtype=np.int64), return_inverse=True)
    n = np.asarray(counts, dtype=np.int64)
    most = np.full(len(classes), np.iinfo(np.int64).min, dtype=np.int64)
    least = np.full(len(classes), np.iinfo(np.int64).max, dtype=np.int64)
    np.maximum.at(most, of, n)
    np.minimum.at(least, of, n)
    c = classes
    numerator = most[:, None] * c[None, :] - least[None, :] * c[:, None] - c[:, None] * c[None, :]
    denominator = c[:, None] + c[None, :]
    needed = -((-numerator) // denominator)  # ceil
    return int(max(0, needed.max()))


def level_boxes(threads: np.ndarray, total: int, limit: int = 16) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every (lower, upper) per-client count box [ceil(c*L), floor(c*(L+1))] that some level L
    gives and whose sums admit `total`, without boxes contained in another. Empty when more than
    `limit` remain, or when the thread counts are too varied to list the levels cheaply (the
    caller then uses another back-end).

    A box admits the total only for L in [share - 1, share] (share = total / all threads), and
    levels below 0 give boxes inside the box of level 0. The box changes only where c*L crosses
    an integer, so the levels tried are those breakpoints inside the window (and one beyond each
    end), each with the open interval after it. For a client of c threads that is at most
    min(c, total) + 3 breakpoints: the work is bounded by the tasks, not by the thread counts.
    """
    threads = np.asarray(threads, dtype=np.int64)
    if not len(threads):
        return []
    share = Fraction(total, int(threads.sum()))
    low, high = max(share - 1, Fraction(0)), share
    distinct = np.unique(threads).tolist()
    if sum(min(c, total) + 3 for c in distinct) > _MAX_BREAKPOINTS:
        return []
    # The boxes in level order: lower and upper bounds both grow with the level.
    chain: list[tuple[np.ndarray, np.ndarray]] = []
    for a, b in zip(*(column.tolist() for column in _breakpoints(distinct, low, high)), strict=True):
        if a < 0:
            continue
        # At the breakpoint itself, and on the open interval just after it (no other breakpoint
        # inside): there ceil(c*L) = floor(c*a/b) + 1 and floor(c*(L+1)) = floor(c*(a+b)/b).
        upper = (threads * (a + b)) // b
        for lower in (-((-threads * a) // b), (threads * a) // b + 1):
            if (lower <= upper).all() and lower.sum() <= total <= upper.sum():
                chain.append((lower, upper))
    # In a chain whose bounds only grow, a box lies inside another exactly when a later one has
    # the same lower bounds or an earlier one the same upper bounds: keep the last of each run
    # of equal lower bounds that is also the first of its run of equal upper bounds.
    maximal = [
        (lower, upper)
        for i, (lower, upper) in enumerate(chain)
        if (i + 1 == len(chain) or not np.array_equal(chain[i + 1][0], lower))
        and (i == 0 or not np.array_equal(chain[i - 1][1], upper))
    ]
    if len(maximal) > 4 * limit:
        return []
    # Each box tightened to the counts it admits with the total (the bounding box of those):
    # a client can hold no fewer than what the others' upper bounds leave, and no more than
    # what their lower bounds leave. Tightened, a box may lie inside another.
    boxes: dict[tuple[bytes, bytes], tuple[np.ndarray, np.ndarray]] = {}
    for lower, upper in maximal:
        lower, upper = np.maximum(lower, total - (upper.sum() - upper)), np.minimum(upper, total - (lower.sum() - lower))
        boxes.setdefault((lower.tobytes(), upper.tobytes()), (lower, upper))
    found = list(boxes.values())
    kept = [
        (lower, upper)
        for i, (lower, upper) in enumerate(found)
        if not any(
            j != i and (other_lower <= lower).all() and (upper <= other_upper).all()
            for j, (other_lower, other_upper) in enumerate(found)
        )
    ]
    if len(kept) > limit:
        return []
    return sorted(kept, key=lambda box: (box[0].tolist(), box[1].tolist()))


_MAX_BREAKPOINTS = 4096
"""Levels `level_boxes` lists at most before leaving balance to another back-end."""


def _breakpoints(distinct: list[int], low: Fraction, high: Fraction) -> tuple[np.ndarray, np.ndarray]:
    """The levels j/c where c*L crosses a whole number, for each thread count c of `distinct`, from
    one below `low` to one above `high`: (numerators, denominators), reduced, in increasing order."""
    numerators = np.concatenate([np.arange(math.floor(c * low) - 1, math.ceil(c * high) + 2) for c in distinct])
    denominators = np.concatenate([np.full(math.ceil(c * high) - math.floor(c * low) + 3, c) for c in distinct])
    common = np.gcd(numerators, denominators)
    pairs = np.unique(np.stack([numerators // common, denominators // common], axis=1), axis=0)
    pairs = pairs[np.argsort(pairs[:, 0] / pairs[:, 1], kind="stable")]
    return pairs[:, 0], pairs[:, 1]


def count_hull(threads: np.ndarray, total: int, slacks: int = 0) -> tuple[np.ndarray, np.ndarray] | None:
    """(lowest, highest) count each client can have when the counts add up to `total` and lie
    within e of some level (c*L - e <= n <= c*(L+1) + e, n >= 0), for each slack e = 0 ..
    `slacks` (rows of the two arrays): the hull over every level of the per-client intervals,
    each tightened by what the other clients' intervals leave of the total. None when the thread
    counts are too varied to list the levels cheaply.

    The intervals change only where c*L crosses a whole number, so it is enough to look at those
    breakpoints and one level strictly between each two; levels that cannot reach the total (or
    exceed it) are skipped. With slack 0 this is the hull of `level_boxes`."""
    threads = np.asarray(threads, dtype=np.int64)
    n, all_threads = len(threads), int(threads.sum())
    if not n:
        return np.zeros((slacks + 1, 0), dtype=np.int64), np.zeros((slacks + 1, 0), dtype=np.int64)
    first = Fraction(total - n * slacks, all_threads) - 2
    last = Fraction(total + n * slacks, all_threads) + 1
    distinct = np.unique(threads).tolist()
    if sum(math.ceil(c * last) - math.floor(c * first) + 3 for c in distinct) > _MAX_BREAKPOINTS:
        return None
    # every breakpoint, and the midpoint of each two: levels a/b
    a, b = _breakpoints(distinct, first, last)
    a = np.concatenate([a, a[:-1] * b[1:] + a[1:] * b[:-1]])
    b = np.concatenate([b, 2 * b[:-1] * b[1:]])
    floors = -((-threads[None, :] * a[:, None]) // b[:, None])  # level x client: ceil(c*L)
    ceilings = (threads[None, :] * (a + b)[:, None]) // b[:, None]  # floor(c*(L+1))
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
