"""`balance`: the narrowest balance of tasks per thread for Streams (KIP-441's with `balance=kip441`);
sizes as equal as subscriptions allow for consumers.

Streams. A client with c threads holding n tasks has n / c tasks per thread; KIP-441 calls an
assignment balanced when max - min of that is at most 1. Equivalently, some level L has
c*L <= n <= c*(L+W) for every client, with the width W = 1. Among such assignments this goal
asks for the smallest spread the counts allow: W is the narrowest width any whole counts adding
up to the tasks can have (`narrowest_width`; 0 when the tasks divide evenly per thread), so
an exact answer is never less balanced than Kafka's on the spread `compare` prints. `balance=kip441`
keeps KIP-441's W = 1 (more room for the later goals). This must hold for active tasks and for
stateful copies (stateful actives + standbys), each with its own narrowest width, where a client
can hold at most one copy of each of the T_s stateful tasks: clients that an even spread would
fill beyond T_s ("saturated", found by water filling) must hold every stateful task instead. The
value is the smallest whole number of tasks e by which the bounds must be widened
(c*L - e <= n <= c*(L+W) + e) for actives plus for stateful copies: 0 when balanced. Hard by
default: it must be 0.

As a soft goal (the engine's assignment applied now, decision 97) the rows compare the largest
and smallest count of each thread count pairwise instead of through a level variable.

Consumers. The value is the sum over members of the squared number of partitions. Its minimum is
reached exactly by the size vectors that are as equal as the subscriptions allow (decreasingly
minimal): those also minimise KIP-54's balance score and max - min. Hard by default: optimised
first and kept at its optimum.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from goals.common import streams_placement
from optimizer.costs import StreamsIndex
from optimizer.errors import GoalError
from optimizer.formulation import UNBOUNDED, LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.levels import balance_slack, count_hull, narrowest_stateful_width, narrowest_width, saturated_clients
from optimizer.model.problem import Problem
from optimizer.protocols import ConsumerFormulationAPI, FlowTermsAPI, FormulationAPI, Repair, StreamsFormulationAPI


class Balance(Goal):
    name = "balance"
    summary = "tasks per thread as even as the counts allow, within KIP-441's 1 (Streams); sizes as equal as subscriptions allow (consumers)"
    compressible = True
    hard = True

    def __init__(self, argument: str | None = None) -> None:
        if argument not in (None, "kip441"):
            raise GoalError(f"goal 'balance' takes no argument or 'kip441' (KIP-441's one task per thread), not {argument!r}")
        self.argument = argument

    def width(self, threads: np.ndarray, total: int, cap: int | None = None) -> Fraction:
        """The width W of the balance these clients must have for `total` tasks (each client at
        most `cap`): the narrowest the counts allow, or KIP-441's 1 with `balance=kip441`."""
        return Fraction(1) if self.argument == "kip441" else narrowest_width(threads, total, cap)

    def copies_width(self, threads: np.ndarray, tasks: int, stateful: int, copies: int, standbys: int) -> Fraction:
        """The width W of the balance of stateful copies (`copies` of `stateful` tasks, among
        `tasks` actives): the narrowest that some assignment reaches together with the actives'
        own (`narrowest_stateful_width`: both narrowest apart can leave none), or KIP-441's 1
        with `balance=kip441`, and without standbys, where the copies are the stateful actives,
        which the actives' narrowest counts leave little to choose from."""
        if self.argument == "kip441" or not standbys:
            return Fraction(1)
        return narrowest_stateful_width(threads, tasks, self.width(threads, tasks), stateful, copies)

    def stateful_width(self, threads: np.ndarray, total: int, cap: int, standbys: int) -> Fraction:
        """The copies' own narrowest width over `threads` (the unsaturated clients) alone, not
        tied to the actives' as `copies_width` is, which is what this goal holds: kept for the
        engine's fast start (optimizer/engine/start.py) until it asks `copies_width`."""
        return self.width(threads, total, cap) if standbys and self.argument != "kip441" else Fraction(1)

    def apart(self, problem: Problem) -> frozenset[str]:
        return frozenset()  # per-client (and per-group) counts only

    def hard_bound(self, problem: Problem) -> int | None:
        return 0 if problem.kind == "streams" else None

    # ------------------------------------------------------------------ evaluate

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        if problem.kind == "consumer":
            sizes = [len(held.active) for held in assignment.values()]
            return int(sum(s * s for s in sizes))
        index = StreamsIndex.of(problem)
        placement = streams_placement(index, assignment)
        threads = index.threads
        actives = np.bincount(placement.active[placement.active >= 0], minlength=len(index.clients))
        slack = balance_slack(actives, threads, self.width(threads, len(index.tasks)))
        stateful = index.stateful
        n_stateful = int(stateful.sum())
        if n_stateful:
            owners = placement.active[stateful]
            copies = np.bincount(owners[owners >= 0], minlength=len(index.clients))
            copies = copies + placement.standby_counts(len(index.clients), np.flatnonzero(stateful))
            total = int(copies.sum())
            saturated = saturated_clients(threads, total, n_stateful)
            width = self.copies_width(threads, len(index.tasks), n_stateful, total, problem.effective_standby_replicas)
            stateful_slack = balance_slack(copies[~saturated], threads[~saturated], width)
            if saturated.any():
                stateful_slack = max(stateful_slack, int((n_stateful - copies[saturated]).max()))
            slack += max(0, stateful_slack)
        return slack

    # ------------------------------------------------------------------ encode

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        if formulation.kind == "consumer":
            return square_sizes(formulation)
        threads = formulation.index.threads
        n_tasks = formulation.n_tasks
        free = np.zeros(len(threads), dtype=bool)
        actives = formulation.client_members("active")
        total = _level_rows(formulation, actives, threads, free, n_tasks, n_tasks, self.width(threads, n_tasks), not self.hard)
        n_stateful = len(formulation.stateful_rows)
        if n_stateful:
            copies = n_stateful * (1 + formulation.standbys)
            saturated = saturated_clients(threads, copies, n_stateful)
            width = self.copies_width(threads, n_tasks, n_stateful, copies, formulation.standbys)
            members = formulation.client_members("stateful")
            total += _level_rows(formulation, members, threads, saturated, n_stateful, copies, width, not self.hard)
        return total

    def flow(self, terms: FlowTermsAPI) -> bool:
        terms.require_balance(self.argument != "kip441")
        return True


_MAX_LEVEL_SCALE = 2**20
"""Largest common denominator of the thread counts for which balance uses one level variable;
beyond it (thread counts too varied) the rows compare thread-count classes pairwise."""


def _level_rows(
    formulation: StreamsFormulationAPI,
    members_of: list[np.ndarray],
    threads: np.ndarray,
    saturated: np.ndarray,
    cap: int,
    copies: int,
    width: Fraction,
    pairwise: bool = False,
) -> LinExpr:
    """Rows that hold the counts n (the sums of each client's `members_of` variables) within
    e of a balanced level of width W = `width`, and n + e >= cap for saturated clients. Returns e.

    With D = lcm of the free clients' threads at most `_MAX_LEVEL_SCALE`, and not `pairwise`: one
    level variable l = D*L and rows c*l - D*e <= D*n <= c*l + c*D*W + D*e (the extreme levels are
    multiples of 1/c, and W is a difference of two such, so this grid loses nothing and D*W is
    whole); with no client saturated, also each count's box over the levels (`_box_rows`), which
    keeps the relaxation from mixing levels. Otherwise, per thread count g, variables hi_g >= n
    and lo_g <= n over its clients, and per pair of thread counts (g, h) the row
    q*c_h*hi_g - q*c_g*lo_h - q*(c_g + c_h)*e <= p*c_g*c_h (W = p/q): the pairwise form of the
    same condition (`balance_slack`), with coefficients no larger than the thread counts times q.
    `pairwise` (the soft balance of the assignment applied now, whose excess is above 0): there
    HiGHS's root took 1.0 s with the level variable and 0.33 s with these rows, to the same proven
    optimum, though their relaxation is no tighter (decision 97); with no client saturated, also
    the count boxes through the hull at excess 1 (`_SOFT_BOX_SLACKS`)."""
    model = formulation.model
    free = np.flatnonzero(~saturated)
    bound = copies + cap
    scale = math.lcm(*threads[free].tolist()) if len(free) else 1
    p, q = width.as_integer_ratio()
    span = scale * p // q  # D*W, whole on the grid
    classes, class_of = np.unique(threads[free], return_inverse=True)
    levelled = scale <= _MAX_LEVEL_SCALE and not pairwise
    if levelled:
        level = model.add_vars(1, -scale * (bound + 1), scale * (bound + 1))[0]
    slack = model.add_vars(1, 0, bound)[0]
    rows: list[int] = []
    cols: list[int] = []
    coefs: list[int] = []
    lows: list[int] = []
    highs: list[int] = []

    def add(members: np.ndarray, extra_cols: list[int], extra_coefs: list[int], member_coef: int, low: int, high: int) -> None:
        row = len(lows)
        rows.extend([row] * (len(members) + len(extra_cols)))
        cols.extend([*members.tolist(), *extra_cols])
        coefs.extend([member_coef] * len(members) + list(extra_coefs))
        lows.append(low)
        highs.append(high)

    if levelled:
        if not saturated.any():
            _box_rows(add, members_of, slack, threads, copies, width)
        for k in range(len(threads)):
            if saturated[k]:
                add(members_of[k], [slack], [1], 1, cap, UNBOUNDED)
                continue
            c = int(threads[k])
            add(members_of[k], [level, slack], [-c, scale], scale, 0, UNBOUNDED)  # D*n - c*l + D*e >= 0
            add(members_of[k], [level, slack], [-c, -scale], scale, -UNBOUNDED, c * span)  # D*n - c*l - D*e <= c*D*W
    else:
        if pairwise and not saturated.any():
            _box_rows(add, members_of, slack, threads, copies, width, _SOFT_BOX_SLACKS)
        for k in np.flatnonzero(saturated).tolist():
            add(members_of[k], [slack], [1], 1, cap, UNBOUNDED)
        most = model.add_vars(len(classes), 0, bound)
        least = model.add_vars(len(classes), 0, bound)
        for k, g in zip(free.tolist(), class_of.tolist(), strict=True):
            add(members_of[k], [most[g]], [-1], 1, -UNBOUNDED, 0)
            add(members_of[k], [least[g]], [-1], 1, 0, UNBOUNDED)
        for g, c_g in enumerate(classes.tolist()):
            for h, c_h in enumerate(classes.tolist()):
                add(np.empty(0, dtype=np.int64), [most[g], least[h], slack], [q * c_h, -q * c_g, -q * (c_g + c_h)], 1, -UNBOUNDED, p * c_g * c_h)
    model.add_rows(rows, cols, coefs, lows, highs)

    def fix(solution: np.ndarray) -> None:
        counts = np.array([solution[m].sum() for m in members_of], dtype=np.int64)
        free_counts, free_threads = counts[free], threads[free]
        needed = balance_slack(free_counts, free_threads, width) if len(free_counts) else 0
        if saturated.any():
            needed = max(needed, int((cap - counts[saturated]).max()))
        needed = min(max(needed, 0), bound)
        solution[slack] = needed
        if not len(free_counts):
            return
        if levelled:
            # the lowest level on the grid: c*l >= D*(n - e) - c*D*W for every free client
            low = -((-(scale * (free_counts - needed) - free_threads * span)) // free_threads)
            solution[level] = int(np.clip(low.max(), -scale * (bound + 1), scale * (bound + 1)))
        else:
            high, low = np.zeros(len(classes), dtype=np.int64), np.full(len(classes), bound, dtype=np.int64)
            np.maximum.at(high, class_of, free_counts)
            np.minimum.at(low, class_of, free_counts)
            solution[most], solution[least] = high, low

    formulation.repairs.append(fix)
    return LinExpr.of([slack], [1])


_BOX_SLACKS = 8
"""Slack values `_box_rows` computes the count hulls for (beyond them, the rows use a bound that
holds for any slack)."""

_SOFT_BOX_SLACKS = 1
"""The same for the soft balance's pairwise rows (decision 97): tight where the excess is 0 or 1
(without them an application whose assignment applied now is balanced took 1.9 s instead of
0.7 s), light beyond (through 8 slacks, 1,000 x 50 applications with an excess of 2 to 11 took
0.1 to 0.2 s more)."""


def _box_rows(
    add: Callable[..., None], members_of: list[np.ndarray], slack: int, threads: np.ndarray, copies: int, width: Fraction, slacks: int = -1
) -> None:
    """Rows that hold each client's count within what the levels allow it, given that the counts
    add up to `copies` (no client saturated): low_k - M_k*e <= n_k <= high_k + M'_k*e, with
    [low, high] the hull of the counts at slack 0 (`count_hull`, the boxes of `level_boxes`) and
    M, M' the least slopes that keep the row valid at every slack e: through the hulls at e = 1 ..
    _BOX_SLACKS, and steep enough beyond them to reach 0 and `copies`. They follow from the level
    rows for integer counts, not for fractional ones: without them the relaxation mixes two levels
    (19 and 20 tasks per client on 10 clients with 200 tasks, where every integer point has
    exactly 20) and prices stickiness below any assignment (22 against 25 on 200 x 10); with slack
    1 allowed (the assignment applied now), 18 to 22 where the level rows alone allow a fraction
    of a task more on each side of two levels. `slacks`: through that many instead of _BOX_SLACKS."""
    slacks = _BOX_SLACKS if slacks < 0 else slacks
    hull = count_hull(threads, copies, slacks, width)
    if hull is None:
        return
    lows, highs = hull
    low, high = lows[0], highs[0]
    beyond = slacks + 1
    down = -((-low) // beyond)  # at e > slacks: low - down*e <= 0
    up = -((-(copies - high)) // beyond)  # and high + up*e >= copies
    for e in range(1, beyond):
        down = np.maximum(down, -((-(low - lows[e])) // e))
        up = np.maximum(up, -((-(highs[e] - high)) // e))
    for k in range(len(threads)):
        add(members_of[k], [slack], [int(down[k])], 1, int(low[k]), UNBOUNDED)
        add(members_of[k], [slack], [-int(up[k])], 1, -UNBOUNDED, int(high[k]))


def square_sizes(formulation: ConsumerFormulationAPI, counted: np.ndarray | None = None) -> LinExpr:
    """sum_m s_m^2 as unit segments: s_m = sum_j z_mj with z_mj in [0, 1] costing 2j - 1; the
    cheapest fill is the first s_m segments, whose cost is s_m^2 (exact for minimising, and as a
    frozen bound). `counted`: per pair, whether it counts towards s_m (all by default)."""
    model = formulation.model
    objective = LinExpr.zero()
    for m in range(len(formulation.members)):
        mine = formulation.pair_member == m
        pairs = formulation.x[mine if counted is None else mine & counted]
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


def _fill_segments(pairs: np.ndarray, segments: np.ndarray) -> Repair:
    def fix(solution: np.ndarray) -> None:
        size = int(solution[pairs].sum())
        solution[segments] = np.arange(len(segments)) < size

    return fix
