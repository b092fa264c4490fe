"""The exact engine's own first point: an assignment that meets the hard goals, placed rack-aware
by small min-cost flows, in milliseconds at any size (issue 49, decision 105).

The engine starts from it (its first stage has a point from the first moment) and, when its time
runs out before a stage found a better one, returns it: a large problem never ends empty because
a linear relaxation or Kafka's assignor did not finish. It is a start, not an optimum: the stages
improve it while time is left.

Streams, two transportation flows on OR-Tools' min-cost flow:

1. **Copies.** Each stateful task has 1 + r copies (its active and r standbys) on distinct
   clients. Tasks priced alike are one class (a copy costs r times its changelogs' and once its
   sources' cross-rack reads from the client's rack; where standby rack diversity comes before
   the traffic, with two tag dimensions or more, the changelogs' alone, for larger classes); a
   flow sends a class of n tasks (1 + r)·n copies, at most n to one client and, while balance
   leaves a way, at most n to one value of the first diversity dimension, each client's count
   within the box the `balance` goal allows stateful copies. A class's copies are then dealt
   round: its clients, listed by that value and the others' in a Latin-square order, are dealt
   to its tasks so that task i takes positions i, i + n, ...: as no client has more than n
   positions, no task gets a client twice, and a task's copies lie on racks (tags) as far apart
   as the counts allow; a transportation flow between the tasks' other copies' values and each
   column's clients' values then deals every column anew with fewer shared values
   (`_diversify`).
2. **Actives.** Each stateful task's active is one of its copies, each stateless task's any
   client (classes of equal source costs, with a direct arc to its previous client): a flow picks
   them, each client's active count within the active box of `balance`, priced at the sources'
   cross-rack reads (instead of the changelog's) and, after them in the goals' order or before,
   at leaving the previous client.

3. **Weights.** Where `weighted_balance` comes first among the soft goals after `balance`, the
   client with the highest load per capacity trades actives with other clients while a trade
   lowers it (`_weighed`, `_Trades`), within a bound in work (`SWAP_PAIRS`).

Costs are in bytes per second where the problem gives rates, else in partitions, coarsened to at
most 2^31 in all (the start is not proven, so the rounding costs nothing but a little quality).
The boxes are those of `levels.level_boxes` at the widths the `balance` goal asks for; the start
is kept only when every hard goal with a bound holds on it (`Goal.evaluate`), else the next box is
tried, at most `BOX_TRIES` flows in all.

Consumers: the min-cost-flow back-end on `balance`, partitions read across racks and
stickiness, goal by goal, within the time left; where it is cut, a greedy in one pass
(`_consumer_greedy`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Protocol, runtime_checkable

import numpy as np
from ortools.graph.python import min_cost_flow

from optimizer.costs import StreamsIndex
from optimizer.deadline import now
from optimizer.goal import Assignment, Goal
from optimizer.levels import level_boxes, saturated_clients
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.problem import Problem
from optimizer.model.solution import ClientAssignment, GoalStatus
from optimizer.model.streams import StreamsProblem
from optimizer.placement import StreamsPlacement, streams_placement
from optimizer.results import SequenceResult, Unsupported

BOX_TRIES = 6
"""Pairs of balance boxes (stateful copies, actives) tried at most before giving up."""

COST_RANGE = 2**31
"""The traffic costs of one flow add up to at most this (coarser units beyond)."""

Box = tuple[np.ndarray, np.ndarray]
"""Per-client (lower, upper) counts."""


@runtime_checkable
class _Widths(Protocol):
    """What the start reads of the `balance` goal: the widths it asks of actives and of stateful
    copies (`goals.balance.Balance`; the engine does not import goals)."""

    def width(self, threads: np.ndarray, total: int, cap: int | None = None) -> Fraction: ...

    def copies_width(self, threads: np.ndarray, tasks: int, stateful: int, copies: int, standbys: int) -> Fraction: ...


def fast_start(problem: Problem, goals: Sequence[Goal], time_limit: float | None = None, improve_until: float | None = None) -> Assignment | None:
    """An assignment of the normalised `problem` meeting every hard goal of `goals` that has a
    bound, or None when none was found this way (the engine then starts from Kafka's).
    `time_limit`: what a consumer group's flow may take (else its greedy start);
    `improve_until`: when a Streams application's trades (`_weighed`) stop, on `now()`'s clock
    (None: at `SWAP_PAIRS`)."""
    if isinstance(problem, StreamsProblem):
        return _streams_start(problem, goals, improve_until)
    assert isinstance(problem, ConsumerProblem)
    return _consumer_start(problem, time_limit)


def meets_hard_goals(problem: Problem, goals: Sequence[Goal], assignment: Assignment) -> bool:
    """Whether every hard goal of `goals` with a bound holds on `assignment`."""
    return all(goal.evaluate(problem, assignment) <= bound for goal in goals if goal.hard and (bound := goal.hard_bound(problem)) is not None)


# --------------------------------------------------------------------------- consumers


def _consumer_start(problem: ConsumerProblem, time_limit: float | None) -> Assignment | None:
    """The min-cost flow on balance, partitions read across racks and stickiness, each proven in
    its stage (the flow back-end, goal by goal), within `time_limit`; where it is cut, the greedy
    start (`_consumer_greedy`)."""
    from optimizer.backends import flow  # OR-Tools' flow, loaded with the engine's solvers
    from optimizer.catalogue import goal_class

    try:
        found: SequenceResult = flow.solve_sequence(problem, [goal_class(name)() for name in ("balance", "cross_rack_traffic", "stickiness")], time_limit)  # type: ignore[no-untyped-call]
    except Unsupported:
        found = SequenceResult(None, [])
    if found.assignment is not None and all(stage.status == GoalStatus.OPTIMAL for stage in found.stages[:1]):
        return found.assignment
    return _consumer_greedy(problem)


def _consumer_greedy(problem: ConsumerProblem) -> Assignment:
    """Balanced and sticky by a greedy in one pass: the topics with the same subscribers taken
    together, the fewest subscribers first, their partitions spread over the subscribers so as to
    level their counts (`_water_fill`), a member's share taken first by partitions it owns, then by
    others it reads in its own rack (`_rack_aware`)."""
    members = sorted(member.id for member in problem.members)
    position = {member: i for i, member in enumerate(members)}
    subscribers: dict[str, list[int]] = {}
    for member in problem.members:
        for topic in member.subscriptions:
            subscribers.setdefault(topic, []).append(position[member.id])
    owner: dict[str, int] = {}
    for member in sorted(problem.members, key=lambda m: m.id):
        for partition in member.owned_partitions:
            owner.setdefault(partition, position[member.id])
    counts = np.zeros(len(members), dtype=np.int64)
    held: list[list[str]] = [[] for _ in members]
    racks = [problem.member_by_id[member].rack for member in members]
    topics = problem.topic_by_name
    classes: dict[tuple[int, ...], list[str]] = {}
    for name in sorted(t for t in subscribers if t in topics):
        classes.setdefault(tuple(sorted(subscribers[name])), []).extend(topics[name].partition_ids())
    for members_of, ids in sorted(classes.items(), key=lambda item: (len(item[0]), item[0])):
        who = np.array(members_of, dtype=np.int64)
        share = _water_fill(counts[who], len(ids))
        counts[who] += share
        rest: list[str] = []
        for partition in ids:  # an owner keeps what it reads in its own rack
            k = owner.get(partition, -1)
            slot = int(np.searchsorted(who, k))
            serving = problem.serving_racks_of(partition)
            if slot < len(who) and who[slot] == k and share[slot] > 0 and (not serving or racks[k] is None or racks[k] in serving):
                share[slot] -= 1
                held[k].append(partition)
            else:
                rest.append(partition)
        _rack_aware(problem, rest, who, share, racks, held, owner)
    return {member: ClientAssignment(active=tuple(held[i])) for i, member in enumerate(members)}


def _rack_aware(
    problem: ConsumerProblem, partitions: list[str], who: np.ndarray, share: np.ndarray, racks: list[str | None], held: list[list[str]], owner: dict[str, int]
) -> None:
    """`partitions` to the members `who` (positions), `share[i]` each: how many of each set of
    serving racks go to each rack by a small transportation flow (a rack that serves them costs
    nothing, another one read across racks), then within a rack to the partition's owner while
    it has room, else to the rack's members in order of room left."""
    rack_names = sorted({racks[int(k)] for k in who}, key=lambda r: (r is None, r or ""))
    rack_of = np.array([rack_names.index(racks[int(k)]) for k in who], dtype=np.int64)
    room_in = np.bincount(rack_of, weights=share, minlength=len(rack_names)).astype(np.int64)
    groups: dict[tuple[str, ...], list[str]] = {}
    for partition in partitions:
        groups.setdefault(tuple(problem.serving_racks_of(partition) or ()), []).append(partition)
    keys = sorted(groups)
    arcs = _Arcs()
    tails, heads = np.repeat(np.arange(len(keys)), len(rack_names)), np.tile(np.arange(len(rack_names)), len(keys))
    pairs = zip(tails.tolist(), heads.tolist(), strict=True)
    crossing = np.array([bool(keys[g]) and rack_names[r] is not None and rack_names[r] not in keys[g] for g, r in pairs], dtype=np.int64)
    arcs.add(tails, len(keys) + heads, len(partitions), crossing)
    flows = _network(np.array([len(groups[key]) for key in keys], dtype=np.int64), len(rack_names), arcs, (room_in, room_in))
    assert flows is not None, "the shares hold every partition"
    left = share.copy()
    position = {int(k): i for i, k in enumerate(who)}
    for g, key in enumerate(keys):
        waiting = list(groups[key])
        for r in range(len(rack_names)):
            count = int(flows[g * len(rack_names) + r])
            members = np.flatnonzero(rack_of == r)
            taken, late = waiting[:count], []
            waiting = waiting[count:]
            for partition in taken:  # its owner in this rack first, while it has room
                i = position.get(owner.get(partition, -1), -1)
                if i >= 0 and rack_of[i] == r and left[i] > 0:
                    left[i] -= 1
                    held[int(who[i])].append(partition)
                else:
                    late.append(partition)
            for partition in late:
                i = int(members[np.argmax(left[members])])
                left[i] -= 1
                held[int(who[i])].append(partition)


def _water_fill(levels: np.ndarray, units: int) -> np.ndarray:
    """How many of `units` each of the members at `levels` takes so that the levels end as even as
    can be: the lowest raised first, ties to the first."""
    order = np.argsort(levels, kind="stable")
    ordered = levels[order]
    share = np.zeros(len(levels), dtype=np.int64)
    if not units or not len(levels):
        return share
    # the highest level L with sum(max(0, L - level)) <= units, over the sorted levels
    prefix = np.cumsum(ordered)
    counts = np.arange(1, len(ordered) + 1)
    need = ordered * counts - prefix  # units to raise the first i+1 to ordered[i]
    reach = int(np.searchsorted(need, units, side="right"))  # the first `reach` can all be raised to ordered[reach-1]
    level = (units + int(prefix[reach - 1])) // reach
    raised = np.maximum(0, level - ordered[:reach])
    share[order[:reach]] = raised
    left = units - int(raised.sum())
    share[order[:left]] += 1  # the remainder, one each, to the lowest first
    return share


# --------------------------------------------------------------------------- Streams


def _streams_start(problem: StreamsProblem, goals: Sequence[Goal], improve_until: float | None) -> Assignment | None:
    index = StreamsIndex.of(problem)
    if not index.clients:
        return None
    named = next((goal for goal in goals if goal.name == "balance"), None)
    balance = named if isinstance(named, _Widths) else None
    costs = _Costs(problem, index, goals)
    stateful = np.flatnonzero(index.stateful)
    standbys = problem.effective_standby_replicas if len(stateful) else 0
    copy_boxes = _copy_boxes(balance, index.threads, len(index.tasks), len(stateful), standbys)
    active_boxes = _active_boxes(balance, index.threads, len(index.tasks))
    stateless = len(index.tasks) - len(stateful)
    dealt: dict[bytes, np.ndarray | None] = {}
    for tries, (copy_box, active_box) in enumerate(itertools.product(copy_boxes, active_boxes)):
        if tries >= BOX_TRIES:
            break
        if not standbys:  # the copies are the stateful actives: within the active box too
            copy_box = (np.maximum(copy_box[0], active_box[0] - stateless), np.minimum(copy_box[1], active_box[1]))
        for dealing in DEALINGS:
            key = np.concatenate(copy_box).tobytes() + repr(dealing).encode()
            if key not in dealt:
                dealt[key] = _deal_copies(costs, stateful, standbys, copy_box, *dealing) if len(stateful) else np.zeros((0, 1), dtype=np.int64)
            copies = dealt[key]
            if copies is None:
                break  # the copies' flow has no point in this box, whatever the dealing
            assignment = _choose_actives(costs, stateful, copies, active_box)
            if assignment is not None and meets_hard_goals(problem, goals, assignment):
                return _weighed(problem, goals, costs, assignment, improve_until)
    return None


DEALINGS = (
    ("diverse", "by costs"),
    ("by client", "by costs"),
    ("diverse", "one"),
    ("by client", "one"),
    ("reversed", "one"),
    ("shuffled 1", "one"),
    ("shuffled 2", "one"),
)
"""How the copies are dealt, tried in this order while the actives find no flow: (the order of
the clients, the classes). The copies pair clients rigidly (two one-thread clients that only
share tasks cannot each take exactly half of an odd number of actives), and a class of tasks
with the same changelog costs may hold no copy on a client its actives must fill, so the
classes are then merged into one (priced at the mean costs) and the clients dealt: spread over
the diversity dimensions (`_Costs.dealing_key`, then `_diversify`), by client, by client
backwards, then by client with each column but the first in a fixed pseudo-random order of the
tasks (a task given a client twice keeps the column by client)."""


class _Costs:
    """What the flows price: per task and rack column (the last: clients without a rack), the
    cross-rack reads of its sources (as the active) and of its changelogs (as a standby), in a
    common unit; the weights of traffic and of leaving the previous client, in the goals' order."""

    def __init__(self, problem: StreamsProblem, index: StreamsIndex, goals: Sequence[Goal]):
        self.index = index
        in_bytes = problem.has_rates
        source = index.source_bytes_by_rack if in_bytes else index.source_cross_by_rack
        changelog = index.changelog_bytes_by_rack if in_bytes else index.changelog_cross_by_rack
        rackless = np.zeros((len(index.tasks), 1), dtype=np.int64)
        source, changelog = np.hstack([source, rackless]), np.hstack([changelog, rackless])
        most = int(source.max(axis=1, initial=0).sum()) + max(1, problem.effective_standby_replicas) * int(changelog.max(axis=1, initial=0).sum())
        unit = max(1, -(-most // COST_RANGE))
        self.source, self.changelog = -(-source // unit), -(-changelog // unit)
        self.column = np.where(index.client_rack >= 0, index.client_rack, len(index.racks))
        names = [goal.name for goal in goals]
        traffic = next((i for i, name in enumerate(names) if name.startswith("cross_rack")), len(names))
        sticky = names.index("stickiness") if "stickiness" in names else len(names)
        tasks = len(index.tasks)
        self.traffic_weight = tasks + 1 if traffic < sticky else 1
        self.sticky_weight = 0 if sticky == len(names) else (COST_RANGE + 1 if sticky < traffic else 1)
        self.previous = index.previous_active()
        keys = problem.config.rack_aware_assignment_tags
        named = [[client.tags.get(key) for client in index.clients] for key in keys] if keys else [[client.rack for client in index.clients]]
        diverse = "standby_rack_diversity" in names and names.index("standby_rack_diversity") < traffic
        self.values = [_numbered(values) for values in named] if diverse else []
        """Per diversity dimension (each tag key, else the rack), each client's value numbered
        (-1: none), as `standby_rack_diversity` counts them; none unless that goal comes before
        the traffic."""

    def dealing_key(self, client: int) -> tuple[int, ...]:
        """Where a client comes in a class's dealing: by its first dimension's value, then by
        the others', each rotated by the value before it (a Latin square: copies a block apart
        differ in every dimension when the counts are even), then its position."""
        key, shift = [], 0
        for values in self.values:
            value = int(values[client])
            count = int(values.max(initial=-1)) + 1
            key.append(count if value < 0 else (value + shift) % max(count, 1))
            shift = max(value, 0)
        return (*key, client)


def _numbered(values: list[str | None]) -> np.ndarray:
    known = sorted({v for v in values if v is not None})
    position = {v: i for i, v in enumerate(known)}
    return np.array([-1 if v is None else position[v] for v in values], dtype=np.int64)


def _active_boxes(balance: _Widths | None, threads: np.ndarray, tasks: int) -> list[Box]:
    if balance is None:
        return [(np.zeros(len(threads), dtype=np.int64), np.full(len(threads), tasks, dtype=np.int64))]
    return level_boxes(threads, tasks, limit=BOX_TRIES, width=balance.width(threads, tasks))


def _copy_boxes(balance: _Widths | None, threads: np.ndarray, tasks: int, stateful: int, standbys: int) -> list[Box]:
    """The boxes of stateful copies (actives and standbys) per client: clients an even spread would
    fill hold every stateful task, the others a box at the width `balance` asks for, none more
    than one copy of each task."""
    clients = len(threads)
    if not stateful:
        return [(np.zeros(clients, dtype=np.int64), np.zeros(clients, dtype=np.int64))]
    copies = stateful * (1 + standbys)
    if balance is None:
        return [(np.zeros(clients, dtype=np.int64), np.full(clients, stateful, dtype=np.int64))]
    saturated = saturated_clients(threads, copies, stateful)
    rest = copies - stateful * int(saturated.sum())
    free = ~saturated
    width = balance.copies_width(threads, tasks, stateful, copies, standbys)
    boxes = level_boxes(threads[free], rest, limit=BOX_TRIES, width=width) if free.any() else [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))]
    found = []
    for lower, upper in boxes:
        low, high = np.full(clients, stateful, dtype=np.int64), np.full(clients, stateful, dtype=np.int64)
        low[free], high[free] = lower, np.minimum(upper, stateful)
        if (low <= high).all() and low.sum() <= copies <= high.sum():
            found.append((low, high))
    return found


def _deal_copies(costs: _Costs, stateful: np.ndarray, standbys: int, box: Box, dealing: str, grouped: str) -> np.ndarray | None:
    """Each stateful task's 1 + r clients (rows in `stateful`'s order), or None when no flow
    meets `box`, dealt as `DEALINGS` says. A class's copies go through one node per value of the
    first diversity dimension (`_Costs.values`) that passes at most the class's size: dealt in
    that value's order, no task has two copies there."""
    index = costs.index
    clients = len(index.clients)
    # A copy is priced as a standby's reads r times in 1 + r and an active's once, r x changelog +
    # source, and tasks priced alike are a class; where the copies must be spread over two
    # diversity dimensions or more, by their changelogs only: larger classes, more to deal apart
    # (the first dimension is kept apart by the flow itself)
    priced = costs.changelog[stateful] if len(costs.values) > 1 else standbys * costs.changelog[stateful] + costs.source[stateful]
    if grouped == "one":
        classes, inverse = -(-priced.sum(axis=0, keepdims=True) // len(stateful)), np.zeros(len(stateful), dtype=np.int64)
    else:
        classes, inverse = np.unique(priced, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    sizes = np.bincount(inverse, minlength=len(classes))
    n_classes = len(classes)
    first = costs.values[0] if costs.values else np.full(clients, -1, dtype=np.int64)
    n_values = int(first.max(initial=-1)) + 1
    # nodes: classes, (class, value), then the clients
    arcs = _Arcs()
    class_of, value_of = np.repeat(np.arange(n_classes), n_values), np.tile(np.arange(n_values), n_classes)
    arcs.add(class_of, n_classes + class_of * n_values + value_of, sizes[class_of], 0)
    # beyond that, where balance leaves no other way, at the price of a conflict (before traffic)
    arcs.add(class_of, n_classes + class_of * n_values + value_of, sizes[class_of] * standbys, COST_RANGE)
    tails, heads = np.repeat(np.arange(n_classes), clients), np.tile(np.arange(clients), n_classes)
    through = np.where(first[heads] >= 0, n_classes + tails * n_values + first[heads], tails)
    at_clients = arcs.add(through, n_classes * (1 + n_values) + heads, sizes[tails], classes[tails, costs.column[heads]])
    supplies = np.zeros(n_classes * (1 + n_values), dtype=np.int64)
    supplies[:n_classes] = sizes * (1 + standbys)
    flows = _network(supplies, clients, arcs, box)
    if flows is None:
        return None
    counts = flows[at_clients].reshape(n_classes, clients)
    order = np.array(sorted(range(clients), key=costs.dealing_key) if dealing == "diverse" else range(clients), dtype=np.int64)
    if dealing == "reversed":
        order = order[::-1]
    copies = np.empty((len(stateful), 1 + standbys), dtype=np.int64)
    kinds = np.stack(costs.values, axis=1) if costs.values else np.zeros((clients, 0), dtype=np.int64)
    for c in range(n_classes):
        members = np.flatnonzero(inverse == c)
        dealt = np.repeat(order, counts[c, order]).reshape(1 + standbys, len(members)).T
        if dealing == "diverse":
            dealt = _diversify(dealt, kinds)
        elif dealing.startswith("shuffled"):
            dealt = _shuffled(dealt, int(dealing.split()[1]) * 7919 + c)
        copies[members] = dealt
    return copies


def _shuffled(copies: np.ndarray, seed: int) -> np.ndarray:
    """`copies` with each column after the first dealt in a pseudo-random order of the tasks
    (`seed`), where that gives no task a client twice."""
    copies = copies.copy()
    generator = np.random.default_rng(seed)
    for j in range(1, copies.shape[1]):
        column = copies[generator.permutation(len(copies)), j]
        if not (np.delete(copies, j, axis=1) == column[:, None]).any():
            copies[:, j] = column
    return copies


DIVERSIFY_PASSES = 2
"""Rounds of `_diversify` over a class's copies (each column once per round)."""


def _diversify(copies: np.ndarray, kinds: np.ndarray) -> np.ndarray:
    """A class's dealt `copies` (tasks x copies) with fewer copies of a task sharing a value of a
    diversity dimension (`kinds`: clients x dimensions, -1 for none), the clients' counts and
    the costs unchanged: each column in turn is dealt anew among the tasks by a transportation
    flow between the tasks' other copies' values and the column's clients' values, priced at the
    values shared; kept when it has fewer and no task twice on a client."""
    n, width = copies.shape
    if width < 2 or not kinds.shape[1] or n < 2:
        return copies
    for _ in range(DIVERSIFY_PASSES):
        for j in range(width):
            others = np.delete(copies, j, axis=1)
            profiles, of_task = np.unique(kinds[others].reshape(n, -1), axis=0, return_inverse=True)
            types, of_entry = np.unique(kinds[copies[:, j]], axis=0, return_inverse=True)
            of_task, of_entry = of_task.ravel(), of_entry.ravel()
            shaped = profiles.reshape(len(profiles), width - 1, -1)
            shared = ((shaped[:, None, :, :] == types[None, :, None, :]) & (types[None, :, None, :] >= 0)).sum(axis=(2, 3))
            if not shared[of_task, of_entry].any():
                break
            arcs = _Arcs()
            tails, heads = np.repeat(np.arange(len(profiles)), len(types)), np.tile(np.arange(len(types)), len(profiles))
            arcs.add(tails, len(profiles) + heads, n, shared.ravel())
            demand = np.bincount(of_entry, minlength=len(types))
            flows = _network(np.bincount(of_task, minlength=len(profiles)), len(types), arcs, (demand, demand))
            if flows is None or int(flows @ shared.ravel()) >= int(shared[of_task, of_entry].sum()):
                continue
            # the k-th task of a (profile, type) arc takes the k-th entry of it: tasks by profile and
            # entries by type take the arcs' units in (profile, type) and (type, profile) order
            units = np.repeat(np.arange(len(flows)), flows)  # arcs are in (profile, type) order
            by_type = np.repeat(np.arange(len(flows)).reshape(len(profiles), len(types)).T.ravel(), flows.reshape(len(profiles), len(types)).T.ravel())
            takers = np.argsort(of_task, kind="stable")[np.argsort(units, kind="stable")]
            given = np.argsort(of_entry, kind="stable")[np.argsort(by_type, kind="stable")]
            column = np.empty(n, dtype=np.int64)
            column[takers] = copies[given, j]
            if not (others == column[:, None]).any():
                copies = copies.copy()
                copies[:, j] = column
    return copies


def _choose_actives(costs: _Costs, stateful: np.ndarray, copies: np.ndarray, box: Box) -> Assignment | None:
    """The assignment whose stateful actives are one of their `copies` each (the others standbys)
    and stateless tasks anywhere, each client's active count in `box`; None when no flow meets it."""
    index = costs.index
    n_tasks, clients = len(index.tasks), len(index.clients)
    stateless = np.setdiff1d(np.arange(n_tasks), stateful)
    column, previous = costs.column, costs.previous
    classes, inverse = np.unique(costs.source[stateless], axis=0, return_inverse=True)
    inverse = inverse.ravel()
    s, n_classes, width = len(stateful), len(classes), copies.shape[1]
    # nodes: stateful tasks, stateless tasks, stateless classes, clients (then the sink)
    first_class = s + len(stateless)
    first_client = first_class + n_classes
    arcs = _Arcs()
    # a stateful task's active on one of its copies: its sources read instead of its changelogs
    rows, held = np.repeat(stateful, width), copies.ravel()
    swapped = costs.traffic_weight * (costs.source[rows, column[held]] - costs.changelog[rows, column[held]])
    arcs.add(np.repeat(np.arange(s), width), first_client + held, 1, swapped - costs.sticky_weight * (previous[rows] == held))
    # a stateless task through its class to any client, or straight to its previous client
    routed = arcs.add(s + np.arange(len(stateless)), first_class + inverse, 1, 0)
    class_tails, class_clients = np.repeat(np.arange(n_classes), clients), np.tile(np.arange(clients), n_classes)
    sizes = np.bincount(inverse, minlength=n_classes)
    prices = costs.traffic_weight * classes[class_tails, column[class_clients]]
    spread = arcs.add(first_class + class_tails, first_client + class_clients, sizes[class_tails], prices)
    had = np.flatnonzero(previous[stateless] >= 0)
    owners = previous[stateless[had]]
    direct = arcs.add(s + had, first_client + owners, 1, costs.traffic_weight * costs.source[stateless[had], column[owners]] - costs.sticky_weight)
    supplies = np.zeros(first_client, dtype=np.int64)
    supplies[: s + len(stateless)] = 1
    flows = _network(supplies, clients, arcs, box)
    if flows is None:
        return None
    active = np.full(n_tasks, -1, dtype=np.int64)
    chosen = flows[: s * width].reshape(s, width) > 0
    active[stateful] = copies[chosen]
    standby_rows, standby_clients = np.repeat(stateful, width - 1), copies[~chosen]
    active[stateless[had[flows[direct] > 0]]] = owners[flows[direct] > 0]
    through = flows[routed] > 0
    per_client = flows[spread].reshape(n_classes, clients)
    for c in range(n_classes):  # each class's routed tasks, in index order, over its clients
        active[stateless[(inverse == c) & through]] = np.repeat(np.arange(clients), per_client[c])
    return index.assignment(active.tolist(), standby_rows.tolist(), standby_clients.tolist())


SWAP_PAIRS = 1_000_000
"""(task, task) pairs `_weighed` may price in all, so that its time is bounded at any size and its
answer does not depend on the clock: on this project's 2-core machine, 0.02 s at 1,000 tasks x 50
clients (two standbys, two tag dimensions, weights 2 and 5, capacities 0.5 to 2: the highest load
per capacity from 33,000 to 16,500, the MILP's optimum 16,000), 0.16 s at 10,000 x 200 (200,000 to
164,500; four times as many pairs: 136,000 in 0.75 s, more than a one-second limit leaves)."""

SWAP_CHUNK = 1_000_000
"""Pairs priced at once (the arrays' memory: some tens of MB)."""


def _weighed(problem: StreamsProblem, goals: Sequence[Goal], costs: _Costs, assignment: Assignment, until: float | None = None) -> Assignment:
    """`assignment` with a lower `weighted_balance` where trading actives finds one, when that goal
    comes first among the soft ones after `balance` (`_Trades`), trading until `SWAP_PAIRS` or,
    first, `until` (on `now()`'s clock: what the rest of the solve needs is kept). Kept only if
    the goal's own value falls and the hard goals hold."""
    names = [goal.name for goal in goals]
    if "weighted_balance" not in names:
        return assignment
    at = names.index("weighted_balance")
    if any(not goal.hard and goal.name != "balance" for goal in goals[:at]):
        return assignment
    placement = streams_placement(costs.index, assignment)
    if len(costs.index.clients) < 2 or (placement.active < 0).any():
        return assignment
    trades = _Trades(problem, costs, placement, "standby_rack_diversity" in names)
    while trades.priced < SWAP_PAIRS and (until is None or now() < until) and trades.trade():
        pass
    weighed = trades.assignment()
    goal = goals[at]
    if goal.evaluate(problem, weighed) < goal.evaluate(problem, assignment) and meets_hard_goals(problem, goals, weighed):
        return weighed
    return assignment


class _Trades:
    """The trades of `_weighed`, one at a time: the client a with the highest load per capacity
    gives an active t1 to a client b for one of b's, t2, lighter; of all such trades, the one that
    leaves the higher of the two clients' loads per capacity lowest, as long as it is below a's,
    then the one that puts fewer copies of t1 and t2 on values of the diversity dimensions their
    other copies have (when `diverse`), then the one whose actives read less across racks, then
    the first. No task goes to a client holding a copy of it; the actives per client keep their
    counts, the stateful copies stay within the range per thread they had (`_copy_range`), else a
    standby moves the other way to keep them: the balance holds. `priced` counts the pairs looked
    at (tasks alike for a trade, on one client with one weight and both stateful or not, priced
    once)."""

    def __init__(self, problem: StreamsProblem, costs: _Costs, placement: StreamsPlacement, diverse: bool):
        self.index = index = costs.index
        self.source, self.column = costs.source, costs.column
        n_tasks, n_clients = len(index.tasks), len(index.clients)
        self.active = placement.active.copy()
        self.weight, self.capacity = index.task_weight.astype(float), index.client_capacity.astype(float)
        self.standing = np.zeros((n_tasks, n_clients), dtype=bool)
        self.standing[placement.standby_rows, placement.standby_clients] = True
        self.holds = self.standing.copy()
        self.standing_count = self.standing.sum(axis=0)
        self.holds[np.arange(n_tasks), self.active] = True
        self.stateful = index.stateful.astype(np.int64)
        self.low, self.high, self.copies = _copy_range(index, placement.standby_clients, self.active)
        self.load = np.bincount(self.active, weights=self.weight, minlength=n_clients)
        self.weight_class = np.unique(self.weight, return_inverse=True)[1].ravel()
        self.n_weights = int(self.weight_class.max(initial=0)) + 1
        keys = problem.config.rack_aware_assignment_tags
        named = [[c.tags.get(key) for c in index.clients] for key in keys] if keys else [[c.rack for c in index.clients]]
        self.values = [np.eye(int(v.max(initial=-1)) + 2)[v][:, :-1] for v in map(_numbered, named)] if diverse else []
        """Per diversity dimension, clients x values: 1 where the client has that value."""
        self.priced = 0

    def shared(self, tasks: np.ndarray, without: np.ndarray) -> np.ndarray:
        """tasks x clients: how many of the task's copies, but the one on client `without[i]`,
        share a value with each client, summed over the dimensions."""
        holders = self.holds[tasks].astype(float)
        holders[np.arange(len(tasks)), without] = 0
        total = np.zeros((len(tasks), len(self.index.clients)))
        for onehot in self.values:  # small whole numbers: exact in floats (BLAS's products)
            total += (holders @ onehot) @ onehot.T
        return np.rint(total).astype(np.int64)

    def trade(self) -> bool:
        """One trade made; False when none lowers the highest load per capacity."""
        active, weight, holds, ratio = self.active, self.weight, self.holds, self.load / self.capacity
        a = int(np.argmax(ratio))
        heaviest = ratio[a] * (1 - 1e-12)
        mine = np.flatnonzero(active == a)
        others = np.flatnonzero((ratio[active] < heaviest) & (weight < weight[mine].max(initial=0.0)) & ~holds[:, a])
        if not len(mine) or not len(others):
            return False
        alike = (active[others] * self.n_weights + self.weight_class[others]) * 2 + self.stateful[others]
        others = others[np.sort(np.unique(alike, return_index=True)[1])]
        self.priced += len(mine) * len(others)
        b = active[others]
        # the standbys' way back: a can hand one to b, b one to a
        gives = np.asarray((~holds[self.standing[:, a]]).any(axis=0))[b]
        takes = (self.standing_count > self.standing[holds[:, a]].sum(axis=0))[b]
        if self.values:
            there = self.shared(others, b)
            arriving = there[:, a] - there[np.arange(len(others)), b]
        best: tuple[float, int, int, int, int] | None = None
        reads = self.source[others, self.column[a]] - self.source[others, self.column[b]]
        rows = max(1, SWAP_CHUNK // len(others))
        for start in range(0, len(mine), rows):
            part = mine[start : start + rows]
            w1, w2 = weight[part][:, None], weight[others]
            worst = np.maximum((self.load[a] - w1 + w2) / self.capacity[a], (self.load[b] - w2 + w1) / self.capacity[b])
            gained = self.stateful[others] - self.stateful[part][:, None]  # stateful copies a gains, b loses
            kept = self._within(a, b, gained) | ((gained == 1) & gives) | ((gained == -1) & takes)
            worst[~kept | holds[part][:, b] | (worst >= heaviest)] = np.inf
            lowest = float(worst.min())
            if lowest == np.inf:
                continue
            spread = np.zeros(worst.shape, dtype=np.int64)
            if self.values:
                here = self.shared(part, np.full(len(part), a))
                spread = here[:, b] - here[:, [a]] + arriving
            ties = np.flatnonzero(worst.ravel() == lowest)
            read = (self.source[part[:, None], self.column[b]] - self.source[part, self.column[a]][:, None] + reads).ravel()[ties]
            flat = int(ties[np.lexsort((ties, read, spread.ravel()[ties]))[0]])
            found = (lowest, int(spread.flat[flat]), int(read[np.searchsorted(ties, flat)]), int(part[flat // len(others)]), int(others[flat % len(others)]))
            best = found if best is None or found[:3] < best[:3] else best
        if best is None:
            return False
        self._make(a, best[3], best[4])
        return True

    def _within(self, a: int, b: np.ndarray | int, gained: np.ndarray | int) -> np.ndarray:
        low, high, copies = self.low, self.high, self.copies
        return np.asarray((low[a] <= copies[a] + gained) & (copies[a] + gained <= high[a]) & (low[b] <= copies[b] - gained) & (copies[b] - gained <= high[b]))

    def _make(self, a: int, t1: int, t2: int) -> None:
        """t1 (active on a) and t2 (active on k) trade places; a standby moves the other way where
        the stateful copies would leave their range (the one that shares fewest values, the first)."""
        k, gained = int(self.active[t2]), int(self.stateful[t2] - self.stateful[t1])
        if gained and not bool(self._within(a, k, gained)):
            giver, taker = (a, k) if gained == 1 else (k, a)
            handed = np.flatnonzero(self.standing[:, giver] & ~self.holds[:, taker])
            if self.values:
                there = self.shared(handed, np.full(len(handed), giver))
                handed = handed[np.argsort(there[:, taker] - there[:, giver], kind="stable")]
            moved = int(handed[0])
            self.standing[moved, giver] = self.holds[moved, giver] = False
            self.standing[moved, taker] = self.holds[moved, taker] = True
            self.standing_count[giver] -= 1
            self.standing_count[taker] += 1
            gained = 0
        self.active[t1], self.active[t2] = k, a
        self.holds[t1, a], self.holds[t1, k], self.holds[t2, k], self.holds[t2, a] = False, True, False, True
        self.load[a] += self.weight[t2] - self.weight[t1]
        self.load[k] += self.weight[t1] - self.weight[t2]
        self.copies[a] += gained
        self.copies[k] -= gained

    def assignment(self) -> Assignment:
        rows, clients = np.nonzero(self.standing)
        return self.index.assignment(self.active.tolist(), rows.tolist(), clients.tolist())


def _copy_range(index: StreamsIndex, standby_clients: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lowest, highest, now) stateful copies per client within which `_weighed` keeps them: the
    range of copies per thread the clients have now, each client's share of it in whole copies;
    a client holding every stateful task (saturated) keeps its count."""
    threads, stateful = index.threads, index.stateful
    copies = np.bincount(active[stateful], minlength=len(threads)) + np.bincount(standby_clients, minlength=len(threads))
    per_thread = [Fraction(int(c), int(t)) for c, t in zip(copies, threads, strict=True)]
    least, most = min(per_thread), max(per_thread)
    low = np.array([math.ceil(least * int(t)) for t in threads], dtype=np.int64)
    high = np.array([math.floor(most * int(t)) for t in threads], dtype=np.int64)
    full = copies >= int(stateful.sum())
    low[full] = high[full] = copies[full]
    return low, high, copies.astype(np.int64)


class _Arcs:
    """A network's arcs, block by block (each `add` says where its block lies)."""

    def __init__(self) -> None:
        self.blocks: list[tuple[np.ndarray, ...]] = []
        self.count = 0

    def add(self, tails: np.ndarray, heads: np.ndarray, capacities: np.ndarray | int, costs: np.ndarray | int) -> slice:
        shape = np.shape(tails)
        self.blocks.append(tuple(np.broadcast_to(np.asarray(a, dtype=np.int64), shape) for a in (tails, heads, capacities, costs)))
        start, self.count = self.count, self.count + int(np.prod(shape))
        return slice(start, self.count)

    def arrays(self) -> tuple[np.ndarray, ...]:
        """(tails, heads, capacities, costs)."""
        if not self.blocks:
            return tuple(np.zeros(0, dtype=np.int64) for _ in range(4))
        return tuple(np.concatenate([block[i] for block in self.blocks]) for i in range(4))


def _network(supplies: np.ndarray, clients: int, arcs: _Arcs, box: Box) -> np.ndarray | None:
    """Min-cost flow: nodes 0..m-1 with `supplies`, then the clients, then a sink; each client
    passes between box[0] and box[1] units to the sink. The flow on `arcs`, or None."""
    lower, upper = box
    first = len(supplies)
    sink = first + clients
    total = int(supplies.sum())
    if not lower.sum() <= total <= upper.sum():
        return None
    tails, heads, capacities, prices = arcs.arrays()
    solver = min_cost_flow.SimpleMinCostFlow()
    solver.add_arcs_with_capacity_and_unit_cost(
        np.concatenate([tails, first + np.arange(clients)]),
        np.concatenate([heads, np.full(clients, sink)]),
        np.concatenate([capacities, upper - lower]),
        np.concatenate([prices, np.zeros(clients, dtype=np.int64)]),
    )
    solver.set_nodes_supplies(np.arange(sink + 1), np.concatenate([supplies, -lower, [-(total - int(lower.sum()))]]).astype(np.int64))
    if solver.solve() != solver.OPTIMAL:
        return None
    return np.asarray(solver.flows(np.arange(len(tails))))
