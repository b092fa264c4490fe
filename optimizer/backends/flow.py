"""Min-cost flow (OR-Tools) for goal sequences that are all flow-representable.

Streams (active tasks only, i.e. no standbys). Clients of one rack are interchangeable for
traffic, so the network is compressed: task -> (group, rack) -> (group, client) -> client -> sink,
with a direct arc task -> (group, client) wherever a goal prices that client differently from its
rack (the previous client, caught-up clients). Such a difference must be a discount, so a task
routed through its rack is never placed more cheaply than the flow priced it: the optimum is the
same as on the full tasks x clients graph, on a network orders of magnitude smaller. (Merging a
rack's clients into one node without per-client capacities and direct arcs would not be exact.)
Groups are subtopologies when `subtopology_spread` caps them (a (group, client) node passes its
cap for free and more at the goal's price), and stateful or stateless otherwise. Balance is
per-client lower and upper bounds: the boxes KIP-441's level condition allows (one flow per box,
the best kept).

Streams: a sequence of goals becomes one flow with lexicographic weights: each goal's costs are
multiplied by (maximum value of every later goal + 1) so that no saving on a later goal outweighs
a unit of an earlier one. The goals' values are then evaluated on the decoded assignment. The
network is built in one go (`_streams_network`: the weighted costs in, the arcs out as numpy
arrays handed to OR-Tools in one call) into a frozen dataclass that solves itself with OR-Tools'
status checked and decodes a flow into an assignment.

Consumers (`_ConsumerFlow`): class -> (subscription class, kind, rack) -> member -> sink, with an
arc from a class to each owner of its partitions. A class is the partitions no goal tells apart,
one node. The goals are minimised one by one on this network, not weighted (whose weights pass
2^60 for large groups with rates): each stage's optimal flow is proven by shortest-path
potentials on its residual network, and its optimal face (complementary slackness: arcs of
nonzero reduced cost fixed at a bound) is all the next stage may use. Balance (sum of squared
sizes) is a convex cost on member -> sink, as unit arcs costing 2j - 1, inside a window around the
sizes a flow on the subscription classes finds; a window that binds is widened and the flow
solved again. When no member ends on an artificial window edge the solution and its face are
those of the unwindowed problem: the units outside the window have reduced costs of the sign
that fixes them. docs/engine.md, "The compressed flow network".
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

import numpy as np
from ortools.graph.python import min_cost_flow

from optimizer.costs import StreamsIndex
from optimizer.deadline import in_child
from optimizer.goal import stage_order
from optimizer.levels import level_boxes, narrowest_width
from optimizer.model.base import derived
from optimizer.model.ids import partition_id, partition_key
from optimizer.model.solution import ClientAssignment, GoalStatus
from optimizer.results import SequenceResult, Stage, Unsupported

if TYPE_CHECKING:  # mypy checks that the flow terms handed to goals are what goals are promised
    from optimizer.protocols import ConsumerFlowTermsAPI, StreamsFlowTermsAPI

MAX_WEIGHT = 2**60
"""Largest weighted cost one Streams goal sequence may reach (the first goal's weight times its largest
value + 1): a cap on the lexicographic weights, not a bound of the model, below 2**63 so that the
flow solver's sums of 64-bit costs cannot overflow."""


# --------------------------------------------------------------------------- terms from goals


class StreamsFlowTerms:
    """What one goal contributes to the Streams network."""

    kind: Literal["streams"] = "streams"

    def __init__(self, problem):
        self.problem = problem
        self.index = StreamsIndex.of(problem)
        self.rack_columns = len(self.index.racks) + 1  # the last column: clients without rack
        self.racks = np.zeros((len(self.index.tasks), self.rack_columns), dtype=np.int64)
        self.pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.caps: tuple[np.ndarray, np.ndarray] | None = None
        self.balance = False
        self.narrowest = True

    def with_rackless(self, by_rack: np.ndarray) -> np.ndarray:
        """A tasks x racks array with the clients-without-rack column (never cross-rack) added."""
        return np.concatenate([by_rack, np.zeros((by_rack.shape[0], 1), dtype=by_rack.dtype)], axis=1)

    def rack_cost(self, matrix: np.ndarray) -> None:
        self.racks = self.racks + np.asarray(matrix, dtype=np.int64)

    def pair_cost(self, rows, clients, values) -> None:
        values = np.broadcast_to(np.asarray(values, dtype=np.int64), np.shape(rows))
        if (values > 0).any():
            raise Unsupported("a goal prices a particular client above its rack")
        self.pairs.append((np.asarray(rows, dtype=np.int64), np.asarray(clients, dtype=np.int64), values))

    def soft_caps(self, groups: np.ndarray, caps: np.ndarray) -> None:
        self.caps = (groups, caps)

    def require_balance(self, narrowest: bool = True) -> None:
        self.balance = True
        self.narrowest = narrowest

    def upper_bound(self) -> int:
        bound = int(self.racks.max(axis=1, initial=0).sum())
        return bound + (len(self.index.tasks) if self.caps is not None else 0)


class ConsumerFlowTerms:
    """What one goal contributes to the consumer network: a cost per partition and rack column
    (`rack_cost`), a cost per owned partition given away (`owner_discount`), and the convex cost
    of the members' sizes (`require_balance`) or of their sizes now (`require_balance_now`)."""

    kind: Literal["consumer"] = "consumer"

    def __init__(self, problem, group):
        self.problem = problem
        self.group = group
        self.racks = np.zeros((group.n_partitions, group.rack_columns), dtype=np.int64)
        self.owner_weight = 0
        self.balance = False
        self.balance_now = False

    def partition_cross_by_rack(self) -> np.ndarray:
        return self.group.cross

    def partition_bytes_by_rack(self) -> np.ndarray:
        return self.group.cross * self.group.rates[:, None]

    def rack_cost(self, matrix: np.ndarray) -> None:
        self.racks = self.racks + np.asarray(matrix, dtype=np.int64)

    def owner_discount(self, value: int) -> None:
        """Cost `value` for every owned partition not given back to its owner."""
        self.owner_weight += value

    def require_balance(self, narrowest: bool = True) -> None:
        self.balance = True

    def require_balance_now(self) -> None:
        self.balance_now = True


class _ConsumerGroup:
    """Assignable partitions, members, racks and owners of a consumer problem, as arrays in
    canonical order (topics by name, their partitions by number, members by id): the same
    whatever the order of the problem's lists."""

    def __init__(self, problem):
        topics = problem.topic_by_name
        self.members = sorted(m.id for m in problem.members)
        position = {m: i for i, m in enumerate(self.members)}
        member = problem.member_by_id
        subscribers: dict[str, list[int]] = {}
        for m in problem.members:
            for topic in m.subscriptions:
                if topic in topics:
                    subscribers.setdefault(topic, []).append(position[m.id])
        self.subscribers = {t: sorted(v) for t, v in subscribers.items()}
        self.topics = sorted(subscribers)
        racks = sorted({m.rack for m in problem.members if m.rack})
        rack_position = {r: i for i, r in enumerate(racks)}
        self.rack_columns = len(racks) + 1
        """Rack columns: the members' racks, then members without a rack (never cross-rack)."""
        self.member_rack = np.array([rack_position.get(member[m].rack or "", len(racks)) for m in self.members], dtype=np.int64)
        counts = np.array([topics[t].partitions for t in self.topics], dtype=np.int64)
        self.n_partitions = int(counts.sum())
        self.partition_topic = np.repeat(np.arange(len(self.topics), dtype=np.int64), counts)
        self.ids = [partition_id(t, p) for t in self.topics for p in range(topics[t].partitions)]
        """Partition ids, in canonical order."""
        self.cross = problem.cross_by_rack(self.ids, (*racks, None))
        rates = []
        for t, count in zip(self.topics, counts.tolist(), strict=True):
            if topics[t].partition_bytes_per_second is None:  # one rate for the whole topic
                rates.append(np.full(count, problem.rate_of(partition_id(t, 0)), dtype=np.int64))
            else:
                rates.append(np.array([problem.rate_of(partition_id(t, p)) for p in range(count)], dtype=np.int64))
        self.rates = np.concatenate(rates) if rates else np.zeros(0, dtype=np.int64)
        self.partition_position = {ident: i for i, ident in enumerate(self.ids)}
        self.owner = np.full(self.n_partitions, -1, dtype=np.int64)
        """The member that holds each partition and may keep it (subscribes to its topic), else -1."""
        self.held = np.zeros(self.n_partitions, dtype=bool)
        """Partitions some member holds now (whether or not it may keep them)."""
        for m in problem.members:
            for owned in m.owned_partitions:
                row = self.partition_position.get(owned)
                topic, _ = partition_key(owned)
                if row is not None:
                    self.held[row] = True
                if row is not None and position[m.id] in self.subscribers.get(topic, ()):
                    self.owner[row] = position[m.id]
        self.cooperative = problem.config.cooperative
        # Topics with the same subscribers are one subscription class: the network tells them apart
        # only through their partitions' costs.
        classes: dict[tuple[int, ...], int] = {}
        self.topic_class = np.array([classes.setdefault(tuple(self.subscribers[t]), len(classes)) for t in self.topics], dtype=np.int64)
        self.class_members = [np.array(members, dtype=np.int64) for members in classes]
        """The members of each subscription class, in order."""
        self.capacity = np.zeros(len(self.members), dtype=np.int64)
        """How many partitions each member subscribes to: the most it can hold."""
        for c, members in enumerate(self.class_members):
            self.capacity[members] += int(counts[self.topic_class == c].sum())


@derived
def _consumer_group(problem) -> _ConsumerGroup:
    """The problem's `_ConsumerGroup`, built once (`unsupported` and `solve_sequence` both read it)."""
    return _ConsumerGroup(problem)


# --------------------------------------------------------------------------- entry points


def unsupported(problem, goals, tolerances) -> str | None:
    """Why this sequence cannot be one flow, or None when it can."""
    if tolerances:
        return "goals have tolerances"
    if problem.kind == "streams":
        if problem.effective_standby_replicas and any(t.stateful for t in problem.tasks):
            return "standbys are decided together with actives (CP-SAT or MILP)"
        terms = []
        for goal in goals:
            t = StreamsFlowTerms(problem)
            try:
                if not goal.flow(t):
                    return f"goal {goal.name!r} has no flow encoding"
            except Unsupported as error:
                return f"goal {goal.name!r}: {error}"
            terms.append(t)
        if sum(t.caps is not None for t in terms) > 1:
            return "more than one goal caps subtopologies"
        balanced = [t for t in terms if t.balance]
        if balanced:
            index = StreamsIndex.of(problem)
            n_stateful = int(index.stateful.sum())
            narrowest = balanced[0].narrowest
            if not _balance_boxes(index.threads, len(index.tasks), narrowest):
                return "too many balance boxes (thread counts too varied)"
            if 0 < n_stateful < len(index.tasks):  # no standbys here: the stateful copies keep KIP-441's width (`Balance.stateful_width`)
                if not _balance_boxes(index.threads, n_stateful, False):
                    return "too many balance boxes (thread counts too varied)"
                caps = next((t.caps for t in terms if t.caps is not None), None)
                if caps is not None and not _homogeneous(caps[0], index.stateful):
                    return "a subtopology mixes stateful and stateless tasks"
        return None
    constrained, ordered = stage_order(problem, goals)
    if constrained:  # a consumer network holds no bound on a goal's value, only optima one after another
        return f"goal {constrained[0].name!r} is a hard bound, which the consumer flow cannot hold"
    group = _consumer_group(problem)
    kept = False  # a goal before it prices owned partitions given away (stickiness)
    for goal in ordered:
        consumer_terms = ConsumerFlowTerms(problem, group)
        try:
            if not goal.flow(consumer_terms):
                return f"goal {goal.name!r} has no flow encoding"
        except Unsupported as error:
            return f"goal {goal.name!r}: {error}"
        if consumer_terms.balance_now and not kept:
            # the network prices a partition its holder takes back through a rack node as given
            # away; only a cost on giving owned partitions away, ranked first, rules that path out
            return f"goal {goal.name!r} needs stickiness ranked before it on the flow back-end"
        kept = kept or consumer_terms.owner_weight > 0
    return None


def _balance_boxes(threads: np.ndarray, total: int, narrowest: bool) -> list[tuple[np.ndarray, np.ndarray]]:
    """The count boxes of `balance` for `total` tasks: at the narrowest width the counts allow,
    else at KIP-441's one task per thread (`level_boxes`)."""
    return level_boxes(threads, total, width=narrowest_width(threads, total) if narrowest else Fraction(1))


def _homogeneous(groups: np.ndarray, stateful: np.ndarray) -> bool:
    for g in np.unique(groups):
        values = stateful[groups == g]
        if values.any() and not values.all():
            return False
    return True


def _weights(bounds: list[int]) -> list[int]:
    weights = [1] * len(bounds)
    for i in range(len(bounds) - 2, -1, -1):
        weights[i] = weights[i + 1] * (bounds[i + 1] + 1)
    if bounds and weights[0] * (bounds[0] + 1) > MAX_WEIGHT:
        raise Unsupported("the goals' lexicographic weights would overflow 64-bit costs")
    return weights


def solve_sequence(problem, goals, time_limit):
    """Streams: every goal's stage at once, the assignment of one min-cost flow (the cheapest over
    the balance boxes), each goal evaluated on it. Consumers: the goals stage by stage on one
    network, each proven optimal, within `time_limit` (`_solve_consumer_sequence`). Raises
    Unsupported for what only building or solving finds."""
    if problem.kind != "streams":
        return _solve_consumer_sequence(problem, goals, time_limit)
    started = time.perf_counter()
    assignment, notes = _solve_streams(problem, goals)
    seconds = time.perf_counter() - started
    stages = []
    constrained, ordered = stage_order(problem, goals)
    for i, goal in enumerate([*constrained, *ordered]):  # in the order they are weighted, as every engine lists them
        value = goal.evaluate(problem, assignment)
        stages.append(Stage(goal, GoalStatus.OPTIMAL, value, float(value), seconds if i == 0 else 0.0, "flow"))
    return SequenceResult(assignment, stages, ["back-end: flow (all goals in one min-cost flow)", *notes])


# --------------------------------------------------------------------------- Streams


def _solve_streams(problem, goals):
    index = StreamsIndex.of(problem)
    n_tasks, n_clients = len(index.tasks), len(index.clients)
    _, ordered = stage_order(problem, goals)
    terms_of = {}
    for goal in goals:
        t = StreamsFlowTerms(problem)
        goal.flow(t)
        terms_of[id(goal)] = t
    weights = _weights([terms_of[id(g)].upper_bound() for g in ordered])
    racks = np.zeros((n_tasks, len(index.racks) + 1), dtype=np.int64)
    pair_keys, pair_values = [], []
    caps = cap_weight = None
    balance = any(terms_of[id(g)].balance for g in goals)
    narrowest = all(terms_of[id(g)].narrowest for g in goals if terms_of[id(g)].balance)
    for goal, weight in zip(ordered, weights, strict=True):
        t = terms_of[id(goal)]
        racks += weight * t.racks
        for rows, clients, values in t.pairs:
            pair_keys.append(rows * n_clients + clients)
            pair_values.append(weight * values)
        if t.caps is not None:
            caps, cap_weight = t.caps, weight

    stateful = index.stateful
    n_stateful = int(stateful.sum())
    split = balance and 0 < n_stateful < n_tasks
    if caps is not None:
        groups, cap_matrix = caps
    else:
        groups = stateful.astype(np.int64) if split else np.zeros(n_tasks, dtype=np.int64)
        cap_matrix = None
    if cap_matrix is not None:
        n_groups = len(cap_matrix)  # one per subtopology: none without tasks
    else:
        n_groups = int(groups.max()) + 1 if n_tasks else 1
    group_stateful = np.zeros(n_groups, dtype=bool)
    group_stateful[groups[stateful]] = True

    client_column = np.where(index.client_rack >= 0, index.client_rack, len(index.racks))
    # one direct arc per (task, client), with every goal's discount on it summed
    keys, where = np.unique(np.concatenate(pair_keys or [np.empty(0, dtype=np.int64)]), return_inverse=True)
    deltas = np.zeros(len(keys), dtype=np.int64)
    np.add.at(deltas, where, np.concatenate(pair_values or [np.empty(0, dtype=np.int64)]))
    rows, clients = keys // n_clients, keys % n_clients
    pairs = (rows, clients, racks[rows, client_column[clients]] + deltas)
    network = _streams_network(groups, n_groups, group_stateful, split, racks, client_column, pairs, cap_matrix, cap_weight)

    active_boxes = _balance_boxes(index.threads, n_tasks, narrowest) if balance else [(np.zeros(n_clients, dtype=np.int64), np.full(n_clients, n_tasks))]
    stateful_boxes = _balance_boxes(index.threads, n_stateful, False) if split else [None]  # no standbys: KIP-441's width
    best = None
    tried = 0
    for active_box in active_boxes:
        for stateful_box in stateful_boxes:
            tried += 1
            result = network.solve(active_box, stateful_box)
            if result is not None and (best is None or result[0] < best[0]):
                best = result
    if best is None:
        raise Unsupported("no flow satisfies the balance boxes")
    targets = network.decode(best[1])
    notes = [f"{network.n_nodes} nodes, {network.n_arcs} arcs; {tried} balance box(es) tried"]
    return index.assignment(targets.tolist()), notes


@dataclass(frozen=True)
class _StreamsNetwork:
    """The Streams network (`_streams_network` builds it): its arcs as arrays, in the order OR-Tools
    numbers them, and where each block of arcs lies, for the balance boxes and for decoding.

    Nodes: tasks; (group, rack column) at `group_rack`; (group, client) at `group_client`; per
    client K_S (stateful copies, only when stateful and stateless tasks are balanced apart) at
    `client_stateful` and K at `client`; the sink."""

    n_tasks: int
    n_clients: int
    n_columns: int
    n_nodes: int
    group_rack: int
    group_client: int
    client_stateful: int
    client: int
    sink: int
    split: bool
    """Stateful and stateless tasks are balanced apart (K_S nodes)."""
    tails: np.ndarray
    heads: np.ndarray
    capacities: np.ndarray
    costs: np.ndarray
    groups: np.ndarray
    """The group of each task."""
    column_index: np.ndarray
    """The position of each client's rack column among the network's columns."""
    rack_arcs: slice
    """task -> (group, rack column), tasks x columns, task-major."""
    pair_arcs: slice
    """task -> (group, client) where a goal prices the client apart from its rack."""
    pair_rows: np.ndarray
    pair_clients: np.ndarray
    spread_arcs: slice
    """(group, rack column) -> (group, client), groups x clients."""
    spread_groups: np.ndarray
    spread_clients: np.ndarray
    stateful_arcs: slice
    """K_S(k) -> K(k) (none unless `split`)."""
    sink_arcs: slice
    """K(k) -> sink."""

    @property
    def n_arcs(self) -> int:
        return len(self.tails)

    def solve(self, active_box, stateful_box) -> tuple[int, np.ndarray] | None:
        """(cost, flow per arc) of the cheapest flow whose clients' task counts lie in
        `active_box` (lower, upper) and stateful task counts in `stateful_box`, or None when
        there is none (OR-Tools says infeasible); any other status than optimal is Unsupported."""
        capacities = self.capacities.copy()
        supplies = np.zeros(self.n_nodes, dtype=np.int64)
        supplies[: self.n_tasks] = 1
        clients = np.arange(self.n_clients)
        lower, upper = active_box
        capacities[self.sink_arcs] = upper - lower
        supplies[self.client + clients] -= lower
        supplies[self.sink] = -(self.n_tasks - int(lower.sum()))
        if self.split and stateful_box is not None:
            s_lower, s_upper = stateful_box
            capacities[self.stateful_arcs] = s_upper - s_lower
            supplies[self.client_stateful + clients] -= s_lower
            supplies[self.client + clients] += s_lower
        status, cost, flows = _min_cost_flow(self.tails, self.heads, capacities, self.costs, supplies)
        if flows is None:
            if status == min_cost_flow.SimpleMinCostFlow.INFEASIBLE:
                return None
            raise Unsupported(f"the Streams flow did not solve (status {status.name})")
        return cost, flows

    def decode(self, flows: np.ndarray) -> np.ndarray:
        """The client of each task: its direct arc's, or one of its (group, rack column)'s
        clients, in task order."""
        target = np.full(self.n_tasks, -1, dtype=np.int64)
        used = flows[self.pair_arcs] > 0
        target[self.pair_rows[used]] = self.pair_clients[used]
        rack_flow = flows[self.rack_arcs].reshape(self.n_tasks, self.n_columns)
        pending: dict[tuple[int, int], list[int]] = {}
        for row, column in zip(*np.nonzero(rack_flow > 0), strict=True):
            pending.setdefault((int(self.groups[row]), int(column)), []).append(int(row))
        spread = flows[self.spread_arcs]
        for arc in np.flatnonzero(spread > 0).tolist():
            group, client = int(self.spread_groups[arc]), int(self.spread_clients[arc])
            queue = pending[group, int(self.column_index[client])]
            for _ in range(int(spread[arc])):
                target[queue.pop(0)] = client
        return target


def _streams_network(groups, n_groups, group_stateful, split, racks, client_column, pairs, caps, cap_weight) -> _StreamsNetwork:
    """The Streams network: tasks in `groups` (`group_stateful` per group; `split`: K_S nodes),
    `racks` the weighted cost of each task in each rack column (`client_column`: each client's),
    `pairs` the (tasks, clients, costs) of the direct arcs, `caps` the free capacity of each
    (group, client) when a goal caps them (more costs `cap_weight` a task), else None."""
    n_tasks, n_clients = len(groups), len(client_column)
    columns = np.array(sorted(set(client_column.tolist())), dtype=np.int64)
    n_columns = len(columns)
    column_index = np.searchsorted(columns, client_column)
    group_rack = n_tasks  # (g, column i): group_rack + g * n_columns + i
    group_client = group_rack + n_groups * n_columns  # (g, k): group_client + g * n_clients + k
    client_stateful = group_client + n_groups * n_clients
    client = client_stateful + (n_clients if split else 0)
    sink = client + n_clients
    arcs = _Arcs()

    tasks = np.repeat(np.arange(n_tasks), n_columns)
    column = np.tile(np.arange(n_columns), n_tasks)
    rack_arcs = arcs.add(tasks, group_rack + groups[tasks] * n_columns + column, 1, racks[:, columns].ravel())
    pair_rows, pair_clients, pair_costs = pairs
    pair_arcs = arcs.add(pair_rows, group_client + groups[pair_rows] * n_clients + pair_clients, 1, pair_costs)
    g = np.repeat(np.arange(n_groups), n_clients)
    k = np.tile(np.arange(n_clients), n_groups)
    spread_arcs = arcs.add(group_rack + g * n_columns + column_index[k], group_client + g * n_clients + k, n_tasks, 0)
    into = np.where(split & group_stateful[g], client_stateful + k, client + k)
    if caps is None:
        arcs.add(group_client + g * n_clients + k, into, n_tasks, 0)
    else:  # a (group, client) passes its cap for free, and more at the goal's price
        arcs.add(group_client + g * n_clients + k, into, caps[g, k], 0)
        arcs.add(group_client + g * n_clients + k, into, n_tasks, cap_weight)
    clients = np.arange(n_clients)
    stateful_arcs = arcs.add(client_stateful + clients, client + clients, n_tasks, 0) if split else slice(0, 0)
    sink_arcs = arcs.add(client + clients, np.full(n_clients, sink), n_tasks, 0)
    tails, heads, capacities, costs = arcs.arrays()
    return _StreamsNetwork(
        n_tasks=n_tasks, n_clients=n_clients, n_columns=n_columns, n_nodes=sink + 1, group_rack=group_rack,
        group_client=group_client, client_stateful=client_stateful, client=client, sink=sink, split=split,
        tails=tails, heads=heads, capacities=capacities, costs=costs, groups=groups, column_index=column_index,
        rack_arcs=rack_arcs, pair_arcs=pair_arcs, pair_rows=pair_rows, pair_clients=pair_clients,
        spread_arcs=spread_arcs, spread_groups=g, spread_clients=k, stateful_arcs=stateful_arcs, sink_arcs=sink_arcs,
    )  # fmt: skip


# --------------------------------------------------------------------------- consumers


CHILD_ARCS = 100_000
"""Under a time limit, a flow of at least this many arcs (about 0.3 s of OR-Tools on this
machine) runs in a forked child process killed at the limit (`optimizer.deadline.in_child`):
OR-Tools' solver cannot be stopped once started. Smaller flows run in the process, and start
only while the time left exceeds the longest flow of the sequence so far."""


class _OutOfTime(Exception):
    """The time limit leaves no room for another flow: the stages solved so far stand."""


class _Clock:
    """One sequence's time limit, and the flows run under it (`flow`)."""

    def __init__(self, time_limit: float | None):
        self.deadline = None if time_limit is None else time.perf_counter() + time_limit
        self.longest = 0.0
        """The longest flow so far, in seconds."""
        self.solves = 0

    def left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.perf_counter()

    def check(self) -> None:
        """_OutOfTime when the time limit has passed."""
        left = self.left()
        if left is not None and left <= 0:
            raise _OutOfTime

    def flow(self, tails, heads, capacities, costs, supplies):
        """OR-Tools' status and flow per arc (None unless optimal), within the time limit:
        _OutOfTime when it does not fit."""
        left = self.left()
        started = time.perf_counter()
        if left is not None and len(tails) >= CHILD_ARCS:
            done, answer = in_child(lambda: _status_and_flows(tails, heads, capacities, costs, supplies), left)
            if not done or answer is None:
                raise _OutOfTime
            status, flows = min_cost_flow.SimpleMinCostFlow.Status(answer[0]), answer[1]
        elif left is not None and left <= self.longest:
            raise _OutOfTime
        else:
            status, _, flows = _min_cost_flow(tails, heads, capacities, costs, supplies)
        self.solves += 1
        self.longest = max(self.longest, time.perf_counter() - started)
        return status, flows


def _status_and_flows(tails, heads, capacities, costs, supplies) -> tuple[int, np.ndarray | None]:
    """`_min_cost_flow` as a child process hands it back: the status as a number."""
    status, _, flows = _min_cost_flow(tails, heads, capacities, costs, supplies)
    return int(status), flows


def _solve_consumer_sequence(problem, goals, time_limit) -> SequenceResult:
    """The goals one by one on one network (`_ConsumerFlow`), each proven optimal and its optimal
    face kept for the next; when the time limit leaves no room for a stage, the stages solved so
    far stand and the others say `time_limit`. A stage's value is its proven optimum on the
    network, which is the goal's value on the decoded assignment (the goals' `evaluate`, which
    the conformance suite checks it against; the engine evaluates the assignment again)."""
    started = time.perf_counter()
    clock = _Clock(time_limit)
    group = _consumer_group(problem)
    _, ordered = stage_order(problem, goals)
    terms = []
    for goal in ordered:
        t = ConsumerFlowTerms(problem, group)
        goal.flow(t)
        terms.append(t)
    optima: list[int] = []
    seconds: list[float] = []
    notes: list[str] = []
    network = None
    try:
        clock.check()
        network = _ConsumerFlow(group, terms)
        for t in terms:
            optima.append(network.minimise(t, clock))
            seconds.append(time.perf_counter() - started - sum(seconds))
        if not terms:  # no goal: any assignment, from a flow that prices nothing
            network.minimise(ConsumerFlowTerms(problem, group), clock)
    except _OutOfTime:
        notes.append(f"stage {ordered[len(optima)].name!r} stopped: the time limit leaves no room for its flow")
    notes.insert(0, "back-end: flow (goals stage by stage on one min-cost-flow network, each stage's optimal face kept for the next)")
    if network is not None:
        size = f"{network.n_classes:,} classes of interchangeable partitions; {network.n_nodes:,} nodes, {network.n_arcs:,} arcs"
        notes.insert(1, f"{size}; {clock.solves} flow(s) solved")
    if network is None or network.flow is None:
        stages = [Stage(goal, GoalStatus.TIME_LIMIT, backend="flow") for goal in ordered]
        return SequenceResult(None, stages, [*notes, "no assignment found within the time limit"], True)
    targets = network.decode()
    held: list[list[str]] = [[] for _ in group.members]
    for row, m in enumerate(targets.tolist()):
        held[m].append(group.ids[row])
    assignment = {member: ClientAssignment(active=tuple(held[i])) for i, member in enumerate(group.members)}
    stages = [Stage(goal, GoalStatus.OPTIMAL, value, float(value), took, "flow") for goal, value, took in zip(ordered, optima, seconds, strict=False)]
    stages += [Stage(goal, GoalStatus.TIME_LIMIT, backend="flow") for goal in ordered[len(optima) :]]
    return SequenceResult(assignment, stages, notes)


class _ConsumerFlow:
    """A consumer group's network for a goal sequence, minimised goal by goal.

    Partitions that no goal tells apart are one class (the same subscription class, the same cost
    in every rack column for every goal, owned or not, and, for `balance_now`, held or not): one
    node with the class's count as its supply. Nodes: classes; (subscription class, kind, rack
    column) for the rack columns that class's members have (kind 1: partitions nobody holds, which
    a cooperative group assigns now); members; with `balance_now`, each member's node for what it
    takes now; the sink. Arcs, each with bounds [lo, hi] that the stages tighten: class -> (its
    subscription class, kind, column) for every column, at the class's rack cost (plus the owner
    weight for owned classes); class -> owner, at most the partitions of the class that owner
    holds; (subscription class, kind, column) -> each of its members in that column; with
    `balance_now`, member's node now -> member; member -> sink, at most the partitions it
    subscribes to.

    A stage minimises one goal's costs (`minimise`): linear on the rack and owner arcs, convex
    (the sum of squares) on the member -> sink arcs for `balance` and on the now arcs for
    `balance_now`, as unit arcs costing 2j - 1 inside a window around the current flow (widened
    while it binds). From the optimal flow's residual network, shortest-path potentials d prove
    it optimal (no arc of the residual network has a negative reduced cost) and give its optimal
    face by complementary slackness: an arc whose reduced cost c + d(tail) - d(head) is positive
    carries its lower bound in every optimal flow, one whose reduced cost is negative its upper
    bound; a convex arc's flow stays within the sizes whose unit arcs cost nothing reduced. The
    next stage minimises over that face: every flow left is optimal for every stage before."""

    def __init__(self, group: _ConsumerGroup, terms: list[ConsumerFlowTerms]):
        self.group = group
        n_partitions, n_members, columns = group.n_partitions, len(group.members), group.rack_columns
        self.now = group.cooperative and any(t.balance_now for t in terms)
        kinds = 2 if self.now else 1
        kind = (~group.held).astype(np.int64) if self.now else np.zeros(n_partitions, dtype=np.int64)
        owned = group.owner >= 0
        subscription = group.topic_class[group.partition_topic]
        key = np.column_stack([subscription, kind, owned.astype(np.int64), *[t.racks for t in terms]]).reshape(n_partitions, 3 + columns * len(terms))
        self.partition_class, self.first = _row_classes(key)
        """Each partition's class, and the first partition of each class (its costs are the class's)."""
        self.n_classes = n_classes = len(self.first)
        counts = np.bincount(self.partition_class, minlength=n_classes).astype(np.int64)
        class_subscription, class_kind = subscription[self.first], kind[self.first]
        self.class_owned = owned[self.first]

        n_subscriptions = len(group.class_members)
        used = np.zeros((n_subscriptions, columns), dtype=bool)
        for s, members in enumerate(group.class_members):
            used[s, group.member_rack[members]] = True
        layout = np.broadcast_to(used[:, None, :], (n_subscriptions, kinds, columns))
        rack_node = np.full(layout.shape, -1, dtype=np.int64)
        rack_node[layout] = n_classes + np.arange(int(layout.sum()))
        member = n_classes + int(layout.sum())
        member_now = member + n_members
        self.sink = sink = member_now + (n_members if self.now else 0)
        self.n_nodes = sink + 1
        everyone = np.arange(n_members)
        arcs = _Arcs()

        self.rack_class, self.rack_column = np.nonzero(used[class_subscription])
        heads = rack_node[class_subscription[self.rack_class], class_kind[self.rack_class], self.rack_column]
        self.rack_arcs = arcs.add(self.rack_class, heads, counts[self.rack_class], 0)
        held_by = np.flatnonzero(owned)
        self.owner_pairs, owner_counts = np.unique(self.partition_class[held_by] * n_members + group.owner[held_by], return_counts=True)
        self.owner_class, self.owner_member = self.owner_pairs // n_members, self.owner_pairs % n_members
        self.owner_arcs = arcs.add(self.owner_class, (member_now if self.now else member) + self.owner_member, owner_counts, 0)
        sizes = [len(members) for members in group.class_members]
        spread_s = np.repeat(np.arange(n_subscriptions), sizes)
        spread_m = np.concatenate([*group.class_members, np.zeros(0, dtype=np.int64)])
        spread_s, spread_m = np.tile(spread_s, kinds), np.tile(spread_m, kinds)
        spread_k = np.repeat(np.arange(kinds), len(spread_m) // kinds)
        self.spread_tails = rack_node[spread_s, spread_k, group.member_rack[spread_m]]
        self.spread_members = spread_m
        self.spread_arcs = arcs.add(self.spread_tails, np.where(spread_k == 1, member_now, member) + spread_m, n_partitions, 0)
        self.now_arcs = arcs.add(member_now + everyone, member + everyone, group.capacity, 0) if self.now else slice(0, 0)
        self.sink_arcs = arcs.add(member + everyone, np.full(n_members, sink), group.capacity, 0)
        self.tails, self.heads, self.hi, _ = arcs.arrays()
        self.hi = self.hi.copy()
        self.lo = np.zeros(len(self.tails), dtype=np.int64)
        self.supplies = np.zeros(self.n_nodes, dtype=np.int64)
        self.supplies[:n_classes] = counts
        self.supplies[sink] = -n_partitions
        self.flow: np.ndarray | None = None
        """The current flow per arc: optimal for every stage so far."""

    @property
    def n_arcs(self) -> int:
        return len(self.tails)

    def costs(self, terms: ConsumerFlowTerms) -> tuple[np.ndarray, np.ndarray]:
        """One goal's linear cost per arc, and which arcs carry its convex cost."""
        racks = terms.racks[self.first]
        cost = np.zeros(self.n_arcs, dtype=np.int64)
        cost[self.rack_arcs] = racks[self.rack_class, self.rack_column] + terms.owner_weight * self.class_owned[self.rack_class]
        cost[self.owner_arcs] = racks[self.owner_class, self.group.member_rack[self.owner_member]]
        convex = np.zeros(self.n_arcs, dtype=bool)
        if terms.balance:
            convex[self.sink_arcs] = True
        if terms.balance_now:
            assert self.now  # `balance_now` has a flow encoding only for cooperative groups
            convex[self.now_arcs] = True
        return cost, convex

    def minimise(self, terms: ConsumerFlowTerms, clock: _Clock) -> int:
        """Minimise one goal over the current face and keep its optimal face; its optimum."""
        cost, convex = self.costs(terms)
        if self.now:  # what a member takes now is part of its size: a bound the face implies
            self.hi[self.now_arcs] = np.minimum(self.hi[self.now_arcs], self.hi[self.sink_arcs])
        center = self.flow if self.flow is not None else self._start()
        free = self.lo < self.hi
        # every size within the face as unit arcs where that keeps the network its size (the now
        # arcs once balance has fixed the sizes): no window to widen; else a window around `center`
        whole = int((self.hi - self.lo)[free & convex].sum()) <= self.n_arcs
        width = int(self.hi.max(initial=0)) if whole else 2
        while True:
            flow, window_lo, window_hi, network = self._solve(cost, convex, center, width, clock)
            if network is not None:
                break
            center, width = flow, width * 2  # an edge of the window binds: wider, around this flow
        self._face(cost, convex, flow, window_lo, window_hi, network, clock)
        self.flow = flow
        linear = np.flatnonzero((cost != 0) & (flow != 0))
        value = sum(int(c) * int(f) for c, f in zip(cost[linear].tolist(), flow[linear].tolist(), strict=True))
        return value + sum(int(f) ** 2 for f in flow[convex].tolist())

    def _start(self) -> np.ndarray:
        """Member sizes to centre the first balance window on (no other arc is read): balance's
        optimum on the subscription classes alone (`_balanced_sizes`), a few milliseconds."""
        center = np.zeros(self.n_arcs, dtype=np.int64)
        center[self.sink_arcs] = _balanced_sizes(self.group)
        return center

    def _solve(self, cost, convex, center, width, clock: _Clock):
        """The cheapest flow over the face with every convex arc's flow within `width` of
        `center`: (flow per arc, the window's lower and upper bounds per arc, the OR-Tools
        network as (tails, heads, capacities, costs, flows)); the network is None when an edge of
        the window binds (or no flow fits in it), and the flow then centres the next window."""
        free = self.lo < self.hi
        linear = np.flatnonzero(free & ~convex)
        squared = np.flatnonzero(free & convex)
        lower, upper = self.lo.copy(), self.hi.copy()
        lower[squared] = np.maximum(self.lo[squared], center[squared] - width)
        upper[squared] = np.minimum(self.hi[squared], center[squared] + width)
        lengths = upper[squared] - lower[squared]
        unit = np.repeat(squared, lengths)  # the unit arcs of the convex arcs: the j-th costs 2j - 1 more
        j = lower[unit] + 1 + np.arange(len(unit)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        tails = np.concatenate([self.tails[linear], self.tails[unit]])
        heads = np.concatenate([self.heads[linear], self.heads[unit]])
        capacities = np.concatenate([self.hi[linear] - self.lo[linear], np.ones(len(unit), dtype=np.int64)])
        costs = np.concatenate([cost[linear], cost[unit] + 2 * j - 1])
        # lower bounds are supplied: the tail sends them, the head receives them
        shift = np.bincount(self.heads, lower, self.n_nodes) - np.bincount(self.tails, lower, self.n_nodes)
        supplies = self.supplies + shift.astype(np.int64)
        status, flows = clock.flow(tails, heads, capacities, costs, supplies)
        artificial = (lower[squared] > self.lo[squared]) | (upper[squared] < self.hi[squared])
        if flows is None and status == min_cost_flow.SimpleMinCostFlow.INFEASIBLE and artificial.any():
            return center, lower, upper, None
        if flows is None:
            raise Unsupported(f"the consumer flow did not solve (status {status.name})")
        flow = lower.copy()
        flow[linear] += flows[: len(linear)]
        flow += np.bincount(unit, flows[len(linear) :], self.n_arcs).astype(np.int64)
        binding = (flow[squared] == lower[squared]) & (lower[squared] > self.lo[squared])
        binding |= (flow[squared] == upper[squared]) & (upper[squared] < self.hi[squared])
        return flow, lower, upper, None if binding.any() else (tails, heads, capacities, costs, flows)

    def _face(self, cost, convex, flow, window_lo, window_hi, network, clock: _Clock) -> None:
        """Prove `flow` optimal and keep only the optimal face: potentials from the residual
        network's shortest paths, then complementary slackness on every free arc."""
        tails, heads, capacities, costs, flows = network
        forward, backward = flows < capacities, flows > 0
        d = _potentials(
            clock,
            self.n_nodes,
            np.concatenate([tails[forward], heads[backward]]),
            np.concatenate([heads[forward], tails[backward]]),
            np.concatenate([costs[forward], -costs[backward]]),
        )
        reduced = cost + d[self.tails] - d[self.heads]
        free = self.lo < self.hi
        linear = free & ~convex
        lo, hi = self.lo, self.hi
        hi[linear & (reduced > 0)] = lo[linear & (reduced > 0)]
        lo[linear & (reduced < 0)] = hi[linear & (reduced < 0)]
        # a convex arc's j-th unit costs 2j - 1 + reduced: negative below the face, zero on it
        squared = np.flatnonzero(free & convex)
        x = 1 - reduced[squared]
        below, within = np.maximum(0, (x + 1) // 2 - 1), np.maximum(0, x // 2)
        # the window's edges did not bind, so the units outside it are priced as the face says
        outside = ((window_lo[squared] > lo[squared]) & (window_lo[squared] > within)) | ((window_hi[squared] < hi[squared]) & (window_hi[squared] < below))
        new_lo = np.clip(below, lo[squared], hi[squared])
        new_hi = np.clip(within, lo[squared], hi[squared])
        lo[squared], hi[squared] = new_lo, new_hi
        if outside.any() or (flow < lo).any() or (flow > hi).any():
            raise Unsupported("the consumer flow's optimality certificate does not hold (a bug)")

    def decode(self) -> np.ndarray:
        """The member of each partition (in the group's order) in the current flow: kept by its
        owner along an owner arc, else one of its class's rack columns' members."""
        assert self.flow is not None
        flow, group = self.flow, self.group
        n_members = len(group.members)
        target = np.full(group.n_partitions, -1, dtype=np.int64)
        held_by = np.flatnonzero(group.owner >= 0)
        pair = self.partition_class[held_by] * n_members + group.owner[held_by]
        order = np.argsort(pair, kind="stable")
        held_by, pair = held_by[order], pair[order]
        rank = np.arange(len(pair)) - np.searchsorted(pair, pair)
        kept = rank < flow[self.owner_arcs][np.searchsorted(self.owner_pairs, pair)]
        target[held_by[kept]] = group.owner[held_by[kept]]
        rest = np.flatnonzero(target < 0)
        rest = rest[np.argsort(self.partition_class[rest], kind="stable")]
        rack_flow = flow[self.rack_arcs]  # by class, then column
        node = np.repeat(self.heads[self.rack_arcs], rack_flow)
        spread_flow = flow[self.spread_arcs]
        by_node = np.lexsort((self.spread_members, self.spread_tails))
        members = np.repeat(self.spread_members[by_node], spread_flow[by_node])
        if len(node) != len(rest) or len(members) != len(rest):
            raise Unsupported("the consumer flow does not decode (a bug)")
        at_node = np.lexsort((rest, node))
        target[rest[at_node]] = members
        return target


def _row_classes(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The class of each row of `key` (equal rows, one class; classes in the order of their keys),
    and the first row of each class: `np.unique(key, axis=0)` without its comparisons of rows as
    bytes (a tenth of the time at 100,000 rows)."""
    if not len(key):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.lexsort(key.T[::-1])  # stable: equal rows stay in row order
    ordered = key[order]
    starts = np.concatenate([[True], (ordered[1:] != ordered[:-1]).any(axis=1)])
    classes = np.empty(len(key), dtype=np.int64)
    classes[order] = np.cumsum(starts) - 1
    return classes, order[starts]


def _potentials(clock: _Clock, n_nodes: int, tails: np.ndarray, heads: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """Shortest-path distances from a source joined to every node at cost 0 (Bellman-Ford, one
    vectorised round per arc of the longest shortest path: at most 9 rounds on the groups of
    bench/consumer_flow.py): potentials d with d(head) <= d(tail) + cost on every arc.
    Unsupported if a negative cycle shows the flow was not optimal; _OutOfTime past the limit."""
    d = np.zeros(n_nodes, dtype=np.int64)
    changed = np.ones(n_nodes, dtype=bool)
    for _ in range(n_nodes + 1):
        clock.check()
        arcs = np.flatnonzero(changed[tails])
        candidate = d[tails[arcs]] + costs[arcs]
        better = candidate < d[heads[arcs]]
        if not better.any():
            return d
        updated = d.copy()
        np.minimum.at(updated, heads[arcs[better]], candidate[better])
        changed = updated < d
        d = updated
    raise Unsupported("the consumer flow's residual network has a negative cycle (a bug)")


def _balanced_sizes(group: _ConsumerGroup) -> np.ndarray:
    """Member sizes with the least sum of squares, from a flow on the subscription classes alone
    (class -> its members -> sink, the convex cost inside a window widened while it binds): the
    sizes the balance stage reaches on the whole network, whose first window they centre, so that
    the large network is solved once instead of once per widening (seven times at 100,000
    partitions with unequal subscriptions)."""
    n_members, n_subscriptions = len(group.members), len(group.class_members)
    counts = np.bincount(group.topic_class[group.partition_topic], minlength=n_subscriptions).astype(np.int64)
    sizes = _greedy_sizes(group, counts)
    if not n_members or not n_subscriptions:
        return sizes
    spread_s = np.repeat(np.arange(n_subscriptions), [len(members) for members in group.class_members])
    spread_m = np.concatenate(group.class_members)
    member, sink = n_subscriptions, n_subscriptions + n_members
    width = 2
    while True:
        lower = np.maximum(sizes - width, 0)
        upper = np.minimum(sizes + width, group.capacity)
        lengths = upper - lower
        unit = np.repeat(np.arange(n_members), lengths)
        j = lower[unit] + 1 + np.arange(len(unit)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        supplies = np.concatenate([counts, -lower, [-(group.n_partitions - int(lower.sum()))]])
        status, _, flows = _min_cost_flow(
            np.concatenate([spread_s, member + unit]),
            np.concatenate([member + spread_m, np.full(len(unit), sink)]),
            np.concatenate([counts[spread_s], np.ones(len(unit), dtype=np.int64)]),
            np.concatenate([np.zeros(len(spread_s), dtype=np.int64), 2 * j - 1]),
            supplies,
        )
        if flows is None:
            raise Unsupported(f"the consumer flow did not solve (status {status.name})")
        result = lower + np.bincount(unit, flows[len(spread_s) :], n_members).astype(np.int64)
        if not (((result == lower) & (lower > 0)) | ((result == upper) & (upper < group.capacity))).any():
            return result
        sizes, width = result, width * 2


def _greedy_sizes(group: _ConsumerGroup, counts: np.ndarray) -> np.ndarray:
    """Member sizes of a quick balanced assignment: each subscription class's `counts` partitions
    poured onto its least loaded members, the smallest classes first."""
    sizes = np.zeros(len(group.members), dtype=np.int64)
    for s in sorted(range(len(group.class_members)), key=lambda s: (len(group.class_members[s]), s)):
        members = group.class_members[s]
        sizes[members] = _pour(sizes[members], int(counts[s]))
    return sizes


def _pour(sizes: np.ndarray, units: int) -> np.ndarray:
    """`sizes` after `units` more, each to the smallest (the first of equals): the level L that
    the smallest are raised to, and one more for the first of those left at L."""
    low, high = int(sizes.min(initial=0)), int(sizes.min(initial=0)) + units
    while low < high:  # the highest level whose filling takes at most `units`
        level = (low + high + 1) // 2
        if int(np.maximum(0, level - sizes).sum()) <= units:
            low = level
        else:
            high = level - 1
    poured = np.maximum(sizes, low)
    left = units - int((poured - sizes).sum())
    poured[np.flatnonzero(poured == low)[:left]] += 1
    return poured


# --------------------------------------------------------------------------- both


class _Arcs:
    """A network's arcs block by block, while a builder adds them."""

    def __init__(self):
        self.blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.count = 0

    def add(self, tails, heads, capacities, costs) -> slice:
        """Arcs tails[i] -> heads[i] (capacities and costs broadcast to them); where they lie."""
        tails = np.asarray(tails, dtype=np.int64)
        self.blocks.append((
            tails,
            np.asarray(heads, dtype=np.int64),
            np.broadcast_to(np.asarray(capacities, dtype=np.int64), tails.shape),
            np.broadcast_to(np.asarray(costs, dtype=np.int64), tails.shape),
        ))  # fmt: skip
        start, self.count = self.count, self.count + len(tails)
        return slice(start, self.count)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(tails, heads, capacities, costs), read-only."""
        tails, heads, capacities, costs = (np.concatenate([block[i] for block in self.blocks]) for i in range(4))
        for array in (tails, heads, capacities, costs):
            array.flags.writeable = False
        return tails, heads, capacities, costs


def _min_cost_flow(tails, heads, capacities, costs, supplies):
    """OR-Tools' status and, when it is optimal, the cost and the flow per arc (else None, None).
    The arcs and supplies go in with one vectorised call each."""
    solver = min_cost_flow.SimpleMinCostFlow()
    solver.add_arcs_with_capacity_and_unit_cost(tails, heads, capacities, costs)
    solver.set_nodes_supplies(np.arange(len(supplies)), supplies)
    status = solver.solve()
    if status != solver.OPTIMAL:
        return status, None, None
    return status, solver.optimal_cost(), solver.flows(np.arange(len(tails)))


if TYPE_CHECKING:

    def _streams_terms(terms: StreamsFlowTerms) -> StreamsFlowTermsAPI:
        return terms

    def _consumer_terms(terms: ConsumerFlowTerms) -> ConsumerFlowTermsAPI:
        return terms
