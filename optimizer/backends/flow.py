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
"""

from __future__ import annotations

import heapq
import time

import numpy as np
from ortools.graph.python import min_cost_flow

from goals.balance import level_boxes
from goals.common import index_of
from optimizer.model.solution import ClientAssignment, GoalStatus
from optimizer.results import SequenceResult, Stage, Unsupported

MAX_WEIGHT = 2**60
"""Largest weighted cost one goal sequence may reach (the first goal's weight times its largest
value + 1): a cap on the lexicographic weights, not a bound of the model, below 2**63 so that the
flow solver's sums of 64-bit costs cannot overflow."""


# --------------------------------------------------------------------------- terms from goals


class StreamsFlowTerms:
    """What one goal contributes to the Streams network."""

    kind = "streams"

    def __init__(self, problem):
        self.problem = problem
        self.index = index_of(problem)
        self.rack_columns = len(self.index.racks) + 1  # the last column: clients without rack
        self.racks = np.zeros((len(self.index.tasks), self.rack_columns), dtype=np.int64)
        self.pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.caps: tuple[np.ndarray, np.ndarray] | None = None
        self.balance = False

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

    def require_balance(self) -> None:
        self.balance = True

    def upper_bound(self) -> int:
        bound = int(self.racks.max(axis=1, initial=0).sum())
        return bound + (len(self.index.tasks) if self.caps is not None else 0)


class ConsumerFlowTerms:
    kind = "consumer"

    def __init__(self, problem, group):
        self.problem = problem
        self.group = group
        self.racks = np.zeros((len(group.partitions), group.rack_columns), dtype=np.int64)
        self.owner_weight = 0
        self.balance = False

    def partition_cross_by_rack(self) -> np.ndarray:
        return self.group.cross

    def rack_cost(self, matrix: np.ndarray) -> None:
        self.racks = self.racks + np.asarray(matrix, dtype=np.int64)

    def owner_discount(self, value: int) -> None:
        """Cost `value` for every owned partition not given back to its owner."""
        self.owner_weight += value

    def require_balance(self) -> None:
        self.balance = True

    def upper_bound(self) -> int:
        """The most this goal's flow costs can add up to (balance: see the caller's window)."""
        if self.balance:
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
        self.member_rack = np.array(
            [rack_position.get(member[m].rack, len(racks)) if member[m].rack else len(racks) for m in self.members]
        )
        self.partitions: list[tuple[str, int]] = []
        self.partition_topic: list[int] = []
        cross = []
        for t, topic in enumerate(self.topics):
            replicas = topics[topic].replica_racks
            for p in range(topics[topic].partitions):
                self.partitions.append((topic, p))
                self.partition_topic.append(t)
                row = np.zeros(self.rack_columns, dtype=np.int64)
                if replicas is not None and replicas[p]:
                    for rack, column in rack_position.items():
                        row[column] = rack not in replicas[p]
                cross.append(row)
        self.cross = np.array(cross, dtype=np.int64).reshape(len(self.partitions), self.rack_columns)
        self.partition_position = {f"{t}-{p}": i for i, (t, p) in enumerate(self.partitions)}
        self.owner = np.full(len(self.partitions), -1, dtype=np.int64)
        for m in problem.members:
            for owned in m.owned_partitions:
                row = self.partition_position.get(owned)
                topic = owned.rsplit("-", 1)[0]
                if row is not None and position[m.id] in self.subscribers.get(topic, ()):
                    self.owner[row] = position[m.id]


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
        if any(t.balance for t in terms):
            index = index_of(problem)
            n_stateful = int(index.stateful.sum())
            if not level_boxes(index.threads, len(index.tasks)):
                return "too many balance boxes (thread counts too varied)"
            if 0 < n_stateful < len(index.tasks):
                if not level_boxes(index.threads, n_stateful):
                    return "too many balance boxes (thread counts too varied)"
                caps = next((t.caps for t in terms if t.caps is not None), None)
                if caps is not None and not _homogeneous(caps[0], index.stateful):
                    return "a subtopology mixes stateful and stateless tasks"
        return None
    group = _ConsumerGroup(problem)
    for goal in goals:
        try:
            if not goal.flow(ConsumerFlowTerms(problem, group)):
                return f"goal {goal.name!r} has no flow encoding"
        except Unsupported as error:
            return f"goal {goal.name!r}: {error}"
    return None


def _homogeneous(groups: np.ndarray, stateful: np.ndarray) -> bool:
    for g in np.unique(groups):
        values = stateful[groups == g]
        if values.any() and not values.all():
            return False
    return True


def _order(problem, goals):
    """Hard goals with a bound are constraints (balance boxes), then goals in priority order."""
    first = [g for g in goals if g.hard and g.hard_bound(problem) is None]
    soft = [g for g in goals if not g.hard]
    constrained = [g for g in goals if g.hard and g.hard_bound(problem) is not None]
    return constrained, first + soft


def _weights(bounds: list[int]) -> list[int]:
    weights = [1] * len(bounds)
    for i in range(len(bounds) - 2, -1, -1):
        weights[i] = weights[i + 1] * (bounds[i + 1] + 1)
    if bounds and weights[0] * (bounds[0] + 1) > MAX_WEIGHT:
        raise Unsupported("the goals' lexicographic weights would overflow 64-bit costs")
    return weights


def solve_sequence(problem, goals, time_limit):
    started = time.perf_counter()
    if problem.kind == "streams":
        assignment, notes = _solve_streams(problem, goals)
    else:
        assignment, notes = _solve_consumers(problem, goals)
    seconds = time.perf_counter() - started
    stages = []
    for i, goal in enumerate(goals):
        value = goal.evaluate(problem, assignment)
        stages.append(Stage(goal, GoalStatus.OPTIMAL, value, float(value), seconds if i == 0 else 0.0, "flow"))
    return SequenceResult(assignment, stages, ["back-end: flow (all goals in one min-cost flow)", *notes])


# --------------------------------------------------------------------------- Streams


def _solve_streams(problem, goals):
    index = index_of(problem)
    n_tasks, n_clients = len(index.tasks), len(index.clients)
    constrained, ordered = _order(problem, goals)
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
    columns = sorted(set(client_column.tolist()))
    network = _StreamsNetwork(n_tasks, n_clients, n_groups, columns, split)
    network.add_rack_arcs(groups, racks, columns)
    if pair_keys:
        # one direct arc per (task, client), with every goal's discount on it summed
        keys, where = np.unique(np.concatenate(pair_keys), return_inverse=True)
        deltas = np.zeros(len(keys), dtype=np.int64)
        np.add.at(deltas, where, np.concatenate(pair_values))
        rows, clients = keys // n_clients, keys % n_clients
        network.add_pair_arcs(groups, rows, clients, racks[rows, client_column[clients]] + deltas)
    network.add_spread_arcs(client_column, columns)
    network.add_client_arcs(group_stateful, cap_matrix, cap_weight)

    active_boxes = level_boxes(index.threads, n_tasks) if balance else [(np.zeros(n_clients, dtype=np.int64), np.full(n_clients, n_tasks))]
    stateful_boxes = level_boxes(index.threads, n_stateful) if split else [None]
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
    targets = network.decode(best[1], groups, client_column)
    notes = [f"{network.n_nodes} nodes, {network.n_arcs} arcs; {tried} balance box(es) tried"]
    return index.assignment(targets.tolist()), notes


class _StreamsNetwork:
    def __init__(self, n_tasks, n_clients, n_groups, columns, split):
        self.n_tasks, self.n_clients, self.n_groups = n_tasks, n_clients, n_groups
        self.column_position = {c: i for i, c in enumerate(columns)}
        n_columns = len(columns)
        self.group_rack = n_tasks  # node (g, column i): group_rack + g * n_columns + i
        self.group_client = self.group_rack + n_groups * n_columns  # (g, k): + g * C + k
        self.client_stateful = self.group_client + n_groups * n_clients  # K_S(k)
        self.client = self.client_stateful + (n_clients if split else 0)  # K(k)
        self.sink = self.client + n_clients
        self.n_nodes = self.sink + 1
        self.n_columns = n_columns
        self.split = split
        self.tails, self.heads, self.capacities, self.costs = [], [], [], []
        self.rack_arc_start = None

    def _add(self, tails, heads, capacities, costs):
        self.tails.append(np.asarray(tails, dtype=np.int64))
        self.heads.append(np.asarray(heads, dtype=np.int64))
        self.capacities.append(np.broadcast_to(np.asarray(capacities, dtype=np.int64), np.shape(tails)).copy())
        self.costs.append(np.broadcast_to(np.asarray(costs, dtype=np.int64), np.shape(tails)).copy())
        return sum(len(t) for t in self.tails[:-1])

    @property
    def n_arcs(self) -> int:
        return sum(len(t) for t in self.tails)

    def add_rack_arcs(self, groups, racks, columns):
        tasks = np.repeat(np.arange(self.n_tasks), self.n_columns)
        column_index = np.tile(np.arange(self.n_columns), self.n_tasks)
        heads = self.group_rack + groups[tasks] * self.n_columns + column_index
        costs = racks[:, columns].ravel()
        self.rack_arcs = (self._add(tasks, heads, 1, costs), len(tasks))

    def add_pair_arcs(self, groups, rows, clients, costs):
        self.pair_arcs = (self._add(rows, self.group_client + groups[rows] * self.n_clients + clients, 1, costs), rows, clients)

    def add_spread_arcs(self, client_column, columns):
        g = np.repeat(np.arange(self.n_groups), self.n_clients)
        k = np.tile(np.arange(self.n_clients), self.n_groups)
        column_index = np.array([self.column_position[c] for c in client_column.tolist()], dtype=np.int64)
        tails = self.group_rack + g * self.n_columns + column_index[k]
        self.spread_arcs = (self._add(tails, self.group_client + g * self.n_clients + k, self.n_tasks, 0), g, k)

    def add_client_arcs(self, group_stateful, caps, cap_weight):
        g = np.repeat(np.arange(self.n_groups), self.n_clients)
        k = np.tile(np.arange(self.n_clients), self.n_groups)
        into = np.where(self.split & group_stateful[g], self.client_stateful + k, self.client + k)
        tails = self.group_client + g * self.n_clients + k
        if caps is None:
            self._add(tails, into, self.n_tasks, 0)
        else:
            self._add(tails, into, caps[g, k], 0)
            self._add(tails, into, self.n_tasks, cap_weight)
        clients = np.arange(self.n_clients)
        if self.split:
            self.stateful_arcs = self._add(self.client_stateful + clients, self.client + clients, self.n_tasks, 0)
        self.sink_arcs = self._add(self.client + clients, np.full(self.n_clients, self.sink), self.n_tasks, 0)

    def solve(self, active_box, stateful_box):
        tails = np.concatenate(self.tails)
        heads = np.concatenate(self.heads)
        capacities = np.concatenate(self.capacities).copy()
        costs = np.concatenate(self.costs)
        supplies = np.zeros(self.n_nodes, dtype=np.int64)
        supplies[: self.n_tasks] = 1
        clients = np.arange(self.n_clients)
        lower, upper = active_box
        capacities[self.sink_arcs + clients] = upper - lower
        supplies[self.client + clients] -= lower
        supplies[self.sink] = -(self.n_tasks - int(lower.sum()))
        if self.split and stateful_box is not None:
            s_lower, s_upper = stateful_box
            capacities[self.stateful_arcs + clients] = s_upper - s_lower
            supplies[self.client_stateful + clients] -= s_lower
            supplies[self.client + clients] += s_lower
        solver = min_cost_flow.SimpleMinCostFlow()
        solver.add_arcs_with_capacity_and_unit_cost(tails, heads, capacities, costs)
        solver.set_nodes_supplies(np.arange(self.n_nodes), supplies)
        if solver.solve() != solver.OPTIMAL:
            return None
        return solver.optimal_cost(), solver.flows(np.arange(len(tails)))

    def decode(self, flows, groups, client_column):
        target = np.full(self.n_tasks, -1, dtype=np.int64)
        if hasattr(self, "pair_arcs"):
            start, rows, clients = self.pair_arcs
            used = flows[start : start + len(rows)] > 0
            target[rows[used]] = clients[used]
        start, count = self.rack_arcs
        rack_flow = flows[start : start + count].reshape(self.n_tasks, self.n_columns)
        pending: dict[tuple[int, int], list[int]] = {}
        for row, column in zip(*np.nonzero(rack_flow > 0), strict=True):
            pending.setdefault((int(groups[row]), int(column)), []).append(int(row))
        start, g, k = self.spread_arcs
        spread = flows[start : start + len(g)]
        column_index = np.array([self.column_position[c] for c in client_column.tolist()], dtype=np.int64)
        for arc in np.flatnonzero(spread > 0).tolist():
            group, client = int(g[arc]), int(k[arc])
            queue = pending[group, int(column_index[client])]
            for _ in range(int(spread[arc])):
                target[queue.pop(0)] = client
        return target


# --------------------------------------------------------------------------- consumers


def _solve_consumers(problem, goals):
    group = _ConsumerGroup(problem)
    _, ordered = _order(problem, goals)
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
        weights = _weights([window if t.balance else t.upper_bound() for t in terms])
        racks = np.zeros_like(group.cross)
        owner_weight = balance_weight = 0
        for t, weight in zip(terms, weights, strict=True):
            racks += weight * t.racks
            owner_weight += weight * t.owner_weight
            if t.balance:
                balance_weight = weight
        flows, network = _consumer_flow(group, racks, owner_weight, balance_weight, lower, upper)
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
        held[m].append(f"{topic}-{p}")
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


class _ConsumerNetwork:
    def __init__(self, group):
        self.group = group
        n_partitions, n_members = len(group.partitions), len(group.members)
        self.n_columns = group.rack_columns
        self.topic_rack = n_partitions  # (topic t, column r): + t * columns + r
        self.member = self.topic_rack + len(group.topics) * self.n_columns
        self.sink = self.member + n_members
        self.n_nodes = self.sink + 1
        self.n_arcs = 0

    def sizes(self, flows) -> np.ndarray:
        start, unit_member = self.sink_arcs
        used = flows[start : start + len(unit_member)]
        sizes = self.lower.copy()
        np.add.at(sizes, unit_member, used)
        return sizes


    def decode(self, flows) -> np.ndarray:
        group = self.group
        target = np.full(len(group.partitions), -1, dtype=np.int64)
        start, owned, owners = self.owner_arcs
        used = flows[start : start + len(owned)] > 0
        target[owned[used]] = owners[used]
        start, rows, cols = self.rack_arcs
        pending: dict[tuple[int, int], list[int]] = {}
        topic_of = group.partition_topic
        for arc in np.flatnonzero(flows[start : start + len(rows)] > 0).tolist():
            pending.setdefault((topic_of[int(rows[arc])], int(cols[arc])), []).append(int(rows[arc]))
        start, spread_t, spread_m = self.spread_arcs
        for arc in np.flatnonzero(flows[start : start + len(spread_t)] > 0).tolist():
            t, m = int(spread_t[arc]), int(spread_m[arc])
            queue = pending[t, int(group.member_rack[m])]
            for _ in range(int(flows[start + arc])):
                target[queue.pop(0)] = m
        return target


def _consumer_flow(group, racks, owner_weight, balance_weight, lower, upper):
    network = _ConsumerNetwork(group)
    n_partitions, n_members = len(group.partitions), len(group.members)
    columns = network.n_columns
    tails, heads, caps, costs = [], [], [], []

    def add(t, h, c, w):
        tails.append(np.asarray(t, dtype=np.int64))
        heads.append(np.asarray(h, dtype=np.int64))
        caps.append(np.broadcast_to(np.asarray(c, dtype=np.int64), np.shape(t)).copy())
        costs.append(np.broadcast_to(np.asarray(w, dtype=np.int64), np.shape(t)).copy())
        return sum(len(x) for x in tails[:-1])

    topic_of = np.array(group.partition_topic, dtype=np.int64)
    # partition -> (topic, rack column), only for columns where the topic has subscribers
    used_columns = np.zeros((len(group.topics), columns), dtype=bool)
    for t, topic in enumerate(group.topics):
        for m in group.subscribers[topic]:
            used_columns[t, group.member_rack[m]] = True
    rows, cols = np.nonzero(used_columns[topic_of])
    network.rack_arcs = (add(rows, network.topic_rack + topic_of[rows] * columns + cols, 1, racks[rows, cols] + owner_weight * (group.owner[rows] >= 0)), rows, cols)
    owned = np.flatnonzero(group.owner >= 0)
    owners = group.owner[owned]
    network.owner_arcs = (add(owned, network.member + owners, 1, racks[owned, group.member_rack[owners]]), owned, owners)
    spread_t, spread_m = [], []
    for t, topic in enumerate(group.topics):
        for m in group.subscribers[topic]:
            spread_t.append(t)
            spread_m.append(m)
    spread_t = np.array(spread_t, dtype=np.int64)
    spread_m = np.array(spread_m, dtype=np.int64)
    network.spread_arcs = (
        add(network.topic_rack + spread_t * columns + group.member_rack[spread_m], network.member + spread_m, n_partitions, 0),
        spread_t,
        spread_m,
    )
    supplies = np.zeros(network.n_nodes, dtype=np.int64)
    supplies[:n_partitions] = 1
    members = np.arange(n_members)
    supplies[network.member + members] -= lower
    supplies[network.sink] = -(n_partitions - int(lower.sum()))
    if balance_weight:
        unit_member, unit_cost = [], []
        for m in range(n_members):
            j = np.arange(lower[m] + 1, upper[m] + 1)
            unit_member.append(np.full(len(j), m))
            unit_cost.append(balance_weight * (2 * j - 1))
        unit_member = np.concatenate(unit_member) if unit_member else np.empty(0, dtype=np.int64)
        unit_cost = np.concatenate(unit_cost) if unit_cost else np.empty(0, dtype=np.int64)
        network.sink_arcs = (add(network.member + unit_member, np.full(len(unit_member), network.sink), 1, unit_cost), unit_member)
    else:
        network.sink_arcs = (add(network.member + members, np.full(n_members, network.sink), upper - lower, 0), members)
    tails = np.concatenate(tails)
    heads = np.concatenate(heads)
    solver = min_cost_flow.SimpleMinCostFlow()
    solver.add_arcs_with_capacity_and_unit_cost(tails, heads, np.concatenate(caps), np.concatenate(costs))
    solver.set_nodes_supplies(np.arange(network.n_nodes), supplies)
    status = solver.solve()
    if status != solver.OPTIMAL:
        raise Unsupported(f"the consumer flow did not solve (status {status})")
    network.n_arcs = len(tails)
    network.lower = lower
    flows = solver.flows(np.arange(len(tails)))
    return flows, network


