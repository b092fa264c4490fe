"""`balance`: KIP-441's balance for Streams; sizes as equal as subscriptions allow for consumers.

Streams. A client with c threads holding n tasks has n / c tasks per thread; KIP-441 calls an
assignment balanced when max - min of that is at most 1. Equivalently, some level L has
c*L <= n <= c*(L+1) for every client. This must hold for active tasks and for stateful copies
(stateful actives + standbys), where a client can hold at most one copy of each of the T_s
stateful tasks: clients that an even spread would fill beyond T_s ("saturated", found by water
filling) must hold every stateful task instead. The value is the smallest whole number of tasks e
by which the bounds must be widened (c*L - e <= n <= c*(L+1) + e) for actives plus for stateful
copies: 0 when balanced. Hard by default: it must be 0.

Consumers. The value is the sum over members of the squared number of partitions. Its minimum is
reached exactly by the size vectors that are as equal as the subscriptions allow (decreasingly
minimal): those also minimise KIP-54's balance score and max - min. Hard by default: optimised
first and kept at its optimum.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from goals.base import Goal
from goals.common import balance_slack, index_of, saturated_clients, streams_placement
from optimizer.formulation import LinExpr


class Balance(Goal):
    name = "balance"
    summary = "KIP-441 load per thread within 1 (Streams); sizes as equal as subscriptions allow (consumers)"
    compressible = True
    hard = True

    def hard_bound(self, problem) -> int | None:
        return 0 if problem.kind == "streams" else None

    # ------------------------------------------------------------------ evaluate

    def evaluate(self, problem, assignment) -> int:
        if problem.kind == "consumer":
            sizes = [len(held.active) for held in assignment.values()]
            return int(sum(s * s for s in sizes))
        index = index_of(problem)
        placement = streams_placement(index, assignment)
        threads = index.threads
        actives = np.bincount(placement.active[placement.active >= 0], minlength=len(index.clients))
        slack = balance_slack(actives, threads)
        stateful = index.stateful
        n_stateful = int(stateful.sum())
        if n_stateful:
            owners = placement.active[stateful]
            copies = np.bincount(owners[owners >= 0], minlength=len(index.clients))
            copies = copies + placement.standby_counts(len(index.clients), np.flatnonzero(stateful))
            saturated = saturated_clients(threads, int(copies.sum()), n_stateful)
            stateful_slack = balance_slack(copies[~saturated], threads[~saturated])
            if saturated.any():
                stateful_slack = max(stateful_slack, int((n_stateful - copies[saturated]).max()))
            slack += max(0, stateful_slack)
        return slack

    # ------------------------------------------------------------------ encode

    def encode(self, formulation) -> LinExpr:
        if formulation.kind == "consumer":
            return _encode_square_sizes(formulation)
        threads = formulation.index.threads
        n_tasks = formulation.n_tasks
        free = np.zeros(len(threads), dtype=bool)
        total = _level_rows(formulation, formulation.client_members("active"), threads, free, n_tasks, n_tasks)
        n_stateful = len(formulation.stateful_rows)
        if n_stateful:
            copies = n_stateful * (1 + formulation.standbys)
            saturated = saturated_clients(threads, copies, n_stateful)
            members = formulation.client_members("stateful")
            total += _level_rows(formulation, members, threads, saturated, n_stateful, copies)
        return total

    def flow(self, terms) -> bool:
        terms.require_balance()
        return True


def _level_rows(formulation, members_of, threads, saturated, cap, copies) -> LinExpr:
    """Rows c*l - D*e <= D*n <= c*l + c*D + D*e for unsaturated clients (l = D*L, D = lcm of
    threads: the extreme levels are multiples of 1/c, so this grid loses nothing), and
    n + e >= cap for saturated ones, n being the sum of the client's `members_of` variables.
    Returns e."""
    model = formulation.model
    n_clients = len(threads)
    free = np.flatnonzero(~saturated)
    scale = math.lcm(*threads[free].tolist()) if len(free) else 1
    bound = copies + cap
    level = model.add_vars(1, -scale * (bound + 1), scale * (bound + 1))[0]
    slack = model.add_vars(1, 0, bound)[0]
    rows, cols, coefs = [], [], []
    lows, highs = [], []
    row = 0
    for k in range(n_clients):
        members = members_of[k]
        if saturated[k]:
            rows += [row] * (len(members) + 1)
            cols += [*members.tolist(), slack]
            coefs += [1] * len(members) + [1]
            lows.append(cap)
            highs.append(10**15)
            row += 1
            continue
        c = int(threads[k])
        # D*n - c*l + D*e >= 0
        rows += [row] * (len(members) + 2)
        cols += [*members.tolist(), level, slack]
        coefs += [scale] * len(members) + [-c, scale]
        lows.append(0)
        highs.append(10**15)
        row += 1
        # D*n - c*l - D*e <= c*D
        rows += [row] * (len(members) + 2)
        cols += [*members.tolist(), level, slack]
        coefs += [scale] * len(members) + [-c, -scale]
        lows.append(-(10**15))
        highs.append(c * scale)
        row += 1
    model.add_rows(rows, cols, coefs, lows, highs)

    def fix(solution: np.ndarray) -> None:
        counts = np.array([solution[m].sum() for m in members_of], dtype=np.int64)
        free_counts, free_threads = counts[~saturated], threads[~saturated]
        needed = balance_slack(free_counts, free_threads) if len(free_counts) else 0
        if saturated.any():
            needed = max(needed, int((cap - counts[saturated]).max()))
        needed = min(max(needed, 0), bound)
        solution[slack] = needed
        if len(free_counts):
            # the lowest level on the grid: c*l >= D*(n - e) - c*D for every free client
            low = -((-(scale * (free_counts - needed) - free_threads * scale)) // free_threads)
            solution[level] = int(np.clip(low.max(), -scale * (bound + 1), scale * (bound + 1)))

    formulation.repairs.append(fix)
    return LinExpr.of([slack], [1])


def _encode_square_sizes(formulation) -> LinExpr:
    """sum_m s_m^2 as unit segments: s_m = sum_j z_mj with z_mj in [0, 1] costing 2j - 1; the
    cheapest fill is the first s_m segments, whose cost is s_m^2 (exact for minimising, and as a
    frozen bound)."""
    model = formulation.model
    objective = LinExpr.zero()
    for m in range(len(formulation.members)):
        pairs = formulation.x[formulation.pair_member == m]
        if not len(pairs):
            continue
        segments = model.add_vars(len(pairs), 0, 1)
        model.add_rows(
            np.zeros(2 * len(pairs), dtype=np.int64),
            np.concatenate([pairs, segments]),
            np.concatenate([np.ones(len(pairs)), -np.ones(len(pairs))]).astype(np.int64),
            [0],
            [0],
        )
        objective += LinExpr.of(segments, 2 * np.arange(1, len(pairs) + 1) - 1)
        formulation.repairs.append(_fill_segments(pairs, segments))
    return objective


def _fill_segments(pairs: np.ndarray, segments: np.ndarray):
    def fix(solution: np.ndarray) -> None:
        size = int(solution[pairs].sum())
        solution[segments] = np.arange(len(segments)) < size

    return fix


# --------------------------------------------------------------------------- boxes for the flow


def level_boxes(threads: np.ndarray, total: int, limit: int = 16) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every (lower, upper) per-client count box [ceil(c*L), floor(c*(L+1))] that some level L
    gives and whose sums admit `total`, without boxes contained in another. Empty when more than
    `limit` remain (the caller then uses another back-end).

    The boxes only change where c*L crosses an integer, so the levels tried are those breakpoints
    (for each distinct thread count) near the even share, and the points between them.
    """
    threads = np.asarray(threads, dtype=np.int64)
    if not len(threads):
        return []
    share = Fraction(total, int(threads.sum()))
    breakpoints = set()
    for c in np.unique(threads).tolist():
        for j in range(math.floor((share - 2) * c) - 1, math.ceil((share + 1) * c) + 2):
            breakpoints.add(Fraction(j, c))
    points = sorted(p for p in breakpoints if share - 2 <= p <= share + 1)
    candidates = points + [(a + b) / 2 for a, b in zip(points, points[1:], strict=False)]
    boxes: dict[tuple[bytes, bytes], tuple[np.ndarray, np.ndarray]] = {}
    for level in candidates:
        a, b = level.numerator, level.denominator
        lower = np.maximum(0, -((-threads * a) // b))
        upper = np.maximum(0, (threads * (a + b)) // b)
        if (lower <= upper).all() and lower.sum() <= total <= upper.sum():
            # A box whose lower (upper) bounds already sum to the total admits only them.
            if lower.sum() == total:
                upper = lower
            elif upper.sum() == total:
                lower = upper
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
