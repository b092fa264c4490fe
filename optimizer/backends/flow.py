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

Consumers: partition -> (topic, rack) -> member -> sink, with direct arcs for owned partitions.
Balance (sum of squared sizes) is a convex cost on member -> sink, as unit arcs costing 2j - 1,
inside a window around a greedy size; a window that binds is widened and the flow solved again.
When no member ends on an artificial window edge the solution is optimal for the unwindowed
problem: a negative cycle through the sink changes two sizes by one, using arcs that exist.

A sequence of goals becomes one flow with lexicographic weights: each goal's costs are multiplied
by (maximum value of every later goal + 1) so that no saving on a later goal outweighs a unit of
an earlier one. The goals' values are then evaluated on the decoded assignment.

Each network is built in one go (`_streams_network`, `_consumer_network`: the weighted costs in,
the arcs out as numpy arrays handed to OR-Tools in one call) into a frozen dataclass that solves
itself with OR-Tools' status checked and decodes a flow into an assignment.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

import numpy as np
from ortools.graph.python import min_cost_flow

from optimizer.costs import StreamsIndex
from optimizer.goal import stage_order
from optimizer.levels import level_boxes, narrowest_width
from optimizer.model.ids import partition_id, partition_key
from optimizer.model.solution import ClientAssignment, GoalStatus
from optimizer.results import SequenceResult, Stage, Unsupported

if TYPE_CHECKING:  # mypy checks that the flow terms handed to goals are what goals are promised
    from optimizer.protocols import ConsumerFlowTermsAPI, StreamsFlowTermsAPI

MAX_WEIGHT = 2**60
"""Largest weighted cost one goal sequence may reach (the first goal's weight times its largest
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
    kind: Literal["consumer"] = "consumer"

    def __init__(self, problem, group):
        self.problem = problem
        self.group = group
        self.racks = np.zeros((len(group.partitions), group.rack_columns), dtype=np.int64)
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

    def upper_bound(self) -> int:
        """The most this goal's flow costs can add up to (balance, balance now: see the caller's window)."""
        if self.balance or self.balance_now:
            return len(self.group.partitions) ** 2
        owned = int((self.group.owner >= 0).sum())
        return int(self.racks.max(axis=1, initial=0).sum()) + self.owner_weight * owned


class _ConsumerGroup:
    """Assignable partitions, members, racks and owners of a consumer problem."""

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
        self.member_rack = np.array([rack_position.get(member[m].rack, len(racks)) if member[m].rack else len(racks) for m in self.members])
        self.partitions: list[tuple[str, int]] = [(topic, p) for topic in self.topics for p in range(topics[topic].partitions)]
        self.partition_topic: list[int] = [t for t, topic in enumerate(self.topics) for _ in range(topics[topic].partitions)]
        ids = [partition_id(topic, p) for topic, p in self.partitions]
        # The last column: members without a rack, who never read across racks.
        self.cross = problem.cross_by_rack(ids, (*racks, None))
        self.rates = np.array([problem.rate_of(ident) for ident in ids], dtype=np.int64)
        self.partition_position = {ident: i for i, ident in enumerate(ids)}
        self.owner = np.full(len(self.partitions), -1, dtype=np.int64)
        self.held = np.zeros(len(self.partitions), dtype=bool)
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
    group = _ConsumerGroup(problem)
    kept = False  # a goal before it prices owned partitions given away (stickiness)
    for goal in stage_order(problem, goals)[1]:
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
    """Every goal's stage at once: the assignment of one min-cost flow (Streams: the cheapest over
    the balance boxes), each goal evaluated on it. Raises Unsupported for what only building or
    solving finds."""
    started = time.perf_counter()
    if problem.kind == "streams":
        assignment, notes = _solve_streams(problem, goals)
    else:
        assignment, notes = _solve_consumers(problem, goals)
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


def _solve_consumers(problem, goals):
    group = _ConsumerGroup(problem)
    _, ordered = stage_order(problem, goals)
    terms = []
    for goal in ordered:
        t = ConsumerFlowTerms(problem, group)
        goal.flow(t)
        terms.append(t)
    balance = any(t.balance for t in terms)
    n_members = len(group.members)
    capacity = np.zeros(n_members, dtype=np.int64)
    for topic, members in group.subscribers.items():
        for m in members:
            capacity[m] += problem.topic_by_name[topic].partitions
    sizes = _greedy_sizes(group, capacity)
    width = 2
    rounds = 0
    while True:
        rounds += 1
        lower = np.maximum(sizes - width, 0) if balance else np.zeros(n_members, dtype=np.int64)
        upper = np.minimum(sizes + width, capacity) if balance else capacity
        # Within the window, balance costs sum(s^2 - lower^2) (the lower sizes are supplied for
        # free): that range, not the sum of squares itself, is what its weight multiplies.
        window = int((upper**2 - lower**2).sum())
        squares = int((upper**2).sum())  # balance now: sizes now are at most the sizes
        weights = _weights([window if t.balance else squares if t.balance_now else t.upper_bound() for t in terms])
        racks = np.zeros_like(group.cross)
        owner_weight = balance_weight = now_weight = 0
        for t, weight in zip(terms, weights, strict=True):
            racks += weight * t.racks
            owner_weight += weight * t.owner_weight
            if t.balance:
                balance_weight = weight
            if t.balance_now:
                now_weight = weight
        network = _consumer_network(group, racks, owner_weight, balance_weight, lower, upper, now_weight)
        flows = network.solve()
        result = network.sizes(flows)
        binding = (result == lower) & (lower > 0) | (result == upper) & (upper < capacity)
        if not balance_weight or not binding.any():
            break
        sizes = result
        width *= 2
    assignment = network.decode(flows)
    held: dict[int, list[str]] = {m: [] for m in range(n_members)}
    for row, m in enumerate(assignment.tolist()):
        topic, p = group.partitions[row]
        held[m].append(partition_id(topic, p))
    solution = {member: ClientAssignment(active=tuple(held[i])) for i, member in enumerate(group.members)}
    return solution, [f"{network.n_arcs} arcs; balance windows solved {rounds} time(s)"]


def _greedy_sizes(group, capacity) -> np.ndarray:
    """Sizes of a quick balanced assignment: each partition to its least loaded subscriber."""
    sizes = np.zeros(len(group.members), dtype=np.int64)
    counts = np.bincount(np.asarray(group.partition_topic, dtype=np.int64), minlength=len(group.topics))
    order = sorted(range(len(group.topics)), key=lambda t: len(group.subscribers[group.topics[t]]))
    for t in order:
        members = group.subscribers[group.topics[t]]
        heap = [(int(sizes[m]), m) for m in members]
        heapq.heapify(heap)
        for _ in range(int(counts[t])):
            size, m = heapq.heappop(heap)
            sizes[m] = size + 1
            heapq.heappush(heap, (size + 1, m))
    return np.minimum(sizes, capacity)


@dataclass(frozen=True)
class _ConsumerNetwork:
    """The consumer network (`_consumer_network` builds it): its arcs and supplies as arrays, in the
    order OR-Tools numbers them, and where each block of arcs lies, for decoding.

    Nodes: partitions; (kind, topic, rack column) at `topic_rack`; members at `member`; with
    `balance_now`, each member's own node for what it takes now; the sink."""

    group: _ConsumerGroup
    n_nodes: int
    tails: np.ndarray
    heads: np.ndarray
    capacities: np.ndarray
    costs: np.ndarray
    supplies: np.ndarray
    lower: np.ndarray
    """Each member's size at the balance window's lower edge (supplied for free)."""
    rack_arcs: slice
    """partition -> (topic, rack column), for columns where the topic has subscribers."""
    rack_rows: np.ndarray
    rack_columns: np.ndarray
    rack_kinds: np.ndarray
    """0, or 1 for a partition nobody holds routed to members' own nodes (`balance_now`)."""
    owner_arcs: slice
    """owned partition -> its owner."""
    owned: np.ndarray
    owners: np.ndarray
    spread_arcs: slice
    """(topic, rack column) -> subscribed member of that rack."""
    spread_topics: np.ndarray
    spread_members: np.ndarray
    spread_kinds: np.ndarray
    sink_arcs: slice
    """member -> sink: one unit arc per size in the window under balance, else one arc per member."""
    sink_members: np.ndarray

    @property
    def n_arcs(self) -> int:
        return len(self.tails)

    def solve(self) -> np.ndarray:
        """The flow per arc of the cheapest flow (Unsupported when OR-Tools finds none)."""
        status, _, flows = _min_cost_flow(self.tails, self.heads, self.capacities, self.costs, self.supplies)
        if flows is None:
            raise Unsupported(f"the consumer flow did not solve (status {status.name})")
        return flows

    def sizes(self, flows: np.ndarray) -> np.ndarray:
        """Each member's size in `flows`."""
        sizes = self.lower.copy()
        np.add.at(sizes, self.sink_members, flows[self.sink_arcs])
        return sizes

    def decode(self, flows: np.ndarray) -> np.ndarray:
        """The member of each partition: its owner's, or one of its (topic, rack column)'s
        members, in partition order."""
        group = self.group
        target = np.full(len(group.partitions), -1, dtype=np.int64)
        used = flows[self.owner_arcs] > 0
        target[self.owned[used]] = self.owners[used]
        pending: dict[tuple[int, int, int], list[int]] = {}
        topic_of = group.partition_topic
        for arc in np.flatnonzero(flows[self.rack_arcs] > 0).tolist():
            row = int(self.rack_rows[arc])
            pending.setdefault((int(self.rack_kinds[arc]), topic_of[row], int(self.rack_columns[arc])), []).append(row)
        spread = flows[self.spread_arcs]
        for arc in np.flatnonzero(spread > 0).tolist():
            t, m = int(self.spread_topics[arc]), int(self.spread_members[arc])
            queue = pending[int(self.spread_kinds[arc]), t, int(group.member_rack[m])]
            for _ in range(int(spread[arc])):
                target[queue.pop(0)] = m
        return target


def _consumer_network(group, racks, owner_weight, balance_weight, lower, upper, now_weight=0) -> _ConsumerNetwork:
    """The consumer network: `racks` the weighted cost of each partition in each rack column,
    `owner_weight` the cost of an owned partition not given back to its owner, `balance_weight`
    the weight of the convex balance cost (0: none), members' sizes within [lower, upper];
    `now_weight` the weight of the convex cost of each member's size in the round applied now
    (0: none; `balance_now`).

    With `now_weight` (a cooperative group), what a member may take now reaches it through its own
    node: its owned partitions (the owner arcs), and the partitions nobody holds, which have their
    own (topic, rack column) nodes; the j-th unit from that node into the member costs
    now_weight * (2j - 1). Partitions another member holds reach the member directly (withheld
    this round)."""
    n_partitions, n_members = len(group.partitions), len(group.members)
    columns = group.rack_columns
    topic_rack = n_partitions  # (kind k, topic t, column r): topic_rack + (k * topics + t) * columns + r
    now = bool(now_weight) and group.cooperative
    kinds = 2 if now else 1  # kind 1: partitions nobody holds, which go now
    member = topic_rack + kinds * len(group.topics) * columns
    member_now = member + n_members  # only with `now`
    sink = member_now + (n_members if now else 0)
    arcs = _Arcs()

    topic_of = np.array(group.partition_topic, dtype=np.int64)
    kind_of = (~group.held).astype(np.int64) if now else np.zeros(n_partitions, dtype=np.int64)
    used_columns = np.zeros((len(group.topics), columns), dtype=bool)
    for t, topic in enumerate(group.topics):
        for m in group.subscribers[topic]:
            used_columns[t, group.member_rack[m]] = True
    rows, cols = np.nonzero(used_columns[topic_of])
    node = topic_rack + (kind_of[rows] * len(group.topics) + topic_of[rows]) * columns + cols
    rack_arcs = arcs.add(rows, node, 1, racks[rows, cols] + owner_weight * (group.owner[rows] >= 0))
    owned = np.flatnonzero(group.owner >= 0)
    owners = group.owner[owned]
    owner_arcs = arcs.add(owned, (member_now if now else member) + owners, 1, racks[owned, group.member_rack[owners]])
    spread_t = np.array([t for t, topic in enumerate(group.topics) for _ in group.subscribers[topic]], dtype=np.int64)
    spread_m = np.array([m for topic in group.topics for m in group.subscribers[topic]], dtype=np.int64)
    spread_k = np.zeros(len(spread_t), dtype=np.int64)
    if now:
        spread_t, spread_m, spread_k = np.tile(spread_t, 2), np.tile(spread_m, 2), np.repeat([0, 1], len(spread_t))
    heads = np.where(spread_k == 1, member_now, member) + spread_m
    spread_arcs = arcs.add(topic_rack + (spread_k * len(group.topics) + spread_t) * columns + group.member_rack[spread_m], heads, n_partitions, 0)
    if now:  # the convex cost of the size now: the j-th unit into a member's own node costs 2j - 1
        steps = [np.arange(1, upper[m] + 1) for m in range(n_members)]
        now_members = np.concatenate([np.full(len(j), m) for m, j in enumerate(steps)] or [np.empty(0)]).astype(np.int64)
        now_costs = np.concatenate([now_weight * (2 * j - 1) for j in steps] or [np.empty(0)]).astype(np.int64)
        arcs.add(member_now + now_members, member + now_members, 1, now_costs)
    if balance_weight:  # the convex cost: the j-th unit into a member costs 2j - 1
        sizes = [np.arange(lower[m] + 1, upper[m] + 1) for m in range(n_members)]
        sink_members = np.concatenate([np.full(len(j), m) for m, j in enumerate(sizes)] or [np.empty(0)]).astype(np.int64)
        unit_costs = np.concatenate([balance_weight * (2 * j - 1) for j in sizes] or [np.empty(0)]).astype(np.int64)
        sink_arcs = arcs.add(member + sink_members, np.full(len(sink_members), sink), 1, unit_costs)
    else:
        sink_members = np.arange(n_members)
        sink_arcs = arcs.add(member + sink_members, np.full(n_members, sink), upper - lower, 0)
    supplies = np.zeros(sink + 1, dtype=np.int64)
    supplies[:n_partitions] = 1
    supplies[member + np.arange(n_members)] -= lower
    supplies[sink] = -(n_partitions - int(lower.sum()))
    tails, heads, capacities, costs = arcs.arrays()
    return _ConsumerNetwork(
        group=group, n_nodes=sink + 1, tails=tails, heads=heads, capacities=capacities, costs=costs, supplies=supplies,
        lower=lower, rack_arcs=rack_arcs, rack_rows=rows, rack_columns=cols, rack_kinds=kind_of[rows], owner_arcs=owner_arcs, owned=owned,
        owners=owners, spread_arcs=spread_arcs, spread_topics=spread_t, spread_members=spread_m, spread_kinds=spread_k,
        sink_arcs=sink_arcs, sink_members=sink_members,
    )  # fmt: skip


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
