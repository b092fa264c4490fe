"""Kafka's `Graph` on KIP-925's balance_subtopology graph, step for step, over arrays.

BalanceSubtopologyGraphConstructor builds: the source; the tasks, group by group (a group is a
subtopology's tasks), each with an edge to every (group, client) node of its group (capacity 1,
cost c[t, j]); each (group, client) node with an edge to its client capped at the group's share
of the client's tasks; each client with an edge to the sink holding its current number of tasks.
Kafka computes a max flow from zero (Edmonds-Karp, breadth-first search in ascending node order)
and then cancels negative cycles one at a time (Bellman-Ford from a dummy node, passes in
ascending node order, distances updated in place; `graph.py`). Among equally cheap assignments
the one it returns depends on those orders, so both are reproduced exactly:

* **Max flow.** Every augmenting path starts with the first task not yet assigned of some group:
  the search reaches the tasks not yet assigned first, in order, and the first of each group
  reaches all of its group's (group, client) nodes before any other task does. When a (group,
  client) node among those, in the search's order (groups ascending, clients ascending), has room
  towards its client and the client has room towards the sink, that is the path the search
  returns (its clients are the first nodes it meets with an edge to the sink); otherwise the
  breadth-first search runs node by node (`_search`), as Kafka's does.
* **Cycle canceling.** The nodes come in layers with no edge inside a layer (tasks; (group,
  client) nodes; clients; the source and the sink take no part once the flow is maximal: the
  source has no residual edge out, the sink never relaxes anything). A pass in Kafka's node order
  is therefore three vectorised phases, each reading the distances the earlier ones left: the
  tasks relax the source and their (group, client) nodes; the (group, client) nodes relax the
  tasks they hold and their client; the clients relax the (group, client) nodes they hold. A
  node's new parent is the first tail reaching its new minimum (Kafka relaxes on strictly shorter
  distances only); the node Kafka returns in its last pass is the pass's first relaxation in
  (tail, edge) order. Once a pass repeats the state of one a few passes earlier (the same
  parents, the distances shifted by one constant), the last pass is read off the history, as in
  `kafka_graph.py`.

Each cancelled cycle alternates tasks and (group, client) nodes, with clients between (group,
client) nodes of one client; every task on it moves to the client of the node after it.
`constructors.balance_subtopology` checks the result against the edge-by-edge port in the tests.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from optimizer.assignors.streams.kip925.kafka_graph import DUMMY, cycle_edges, returned

_MAX_PERIOD = 32
_BIG = np.iinfo(np.int64).max


@dataclass(frozen=True)
class BalanceGraph:
    """The graph's fixed parts, tasks in Kafka's node order (group by group)."""

    cost: np.ndarray  # tasks x clients
    group: np.ndarray  # each task's group
    caps: np.ndarray  # groups x clients: the (group, client) -> client capacities
    counts: np.ndarray  # clients: the client -> sink capacities

    @property
    def shape(self) -> tuple[int, int, int]:
        return len(self.group), len(self.counts), len(self.caps)


def max_flow_as_kafka(graph: BalanceGraph) -> np.ndarray:
    """Each task's client after Kafka's `calculateMaxFlow` from zero flow (-1: left unassigned,
    when the flow cannot carry every task)."""
    n_tasks, n_clients, n_groups = graph.shape
    assigned = np.full(n_tasks, -1, dtype=np.int64)
    flow = np.zeros((n_groups, n_clients), dtype=np.int64)  # (group, client) -> client flows
    room = graph.counts.astype(np.int64).copy()  # client -> sink residuals
    starts = np.searchsorted(graph.group, np.arange(n_groups + 1))
    following = starts[:-1].copy()  # each group's first task not yet assigned
    while True:
        open_groups = [g for g in range(n_groups) if following[g] < starts[g + 1]]
        if not open_groups:
            return assigned
        path = None
        for g in open_groups:
            fits = np.flatnonzero((graph.caps[g] > flow[g]) & (room > 0))
            if fits.size:
                path = [(int(following[g]), int(fits[0]))]
                break
        if path is None:
            path = _search(graph, assigned, flow, room, starts, following, open_groups)
            if path is None:
                return assigned
        for task, client in path:
            previous = assigned[task]
            if previous >= 0:
                flow[graph.group[task], previous] -= 1
            flow[graph.group[task], client] += 1
            assigned[task] = client
        room[path[-1][1]] -= 1
        g = graph.group[path[0][0]]
        following[g] += 1


def _search(graph, assigned, flow, room, starts, following, open_groups):
    """Kafka's breadth-first search for an augmenting path, node by node, in its order; the path
    as (task, client it moves to) pairs from the new task on, or None."""
    n_tasks, n_clients, n_groups = graph.shape
    # Node kinds: ("t", task), ("n", group, client), ("c", client); the source is visited.
    seen_task = np.zeros(n_tasks, dtype=bool)
    seen_node = np.zeros((n_groups, n_clients), dtype=bool)
    seen_client = np.zeros(n_clients, dtype=bool)
    parent: dict[tuple, tuple | None] = {}
    queue: deque[tuple] = deque()
    # The source: every task not yet assigned, in order.
    for g in open_groups:
        for task in range(int(following[g]), int(starts[g + 1])):
            seen_task[task] = True
            parent[("t", task)] = None
            queue.append(("t", task))
    holders: dict[tuple[int, int], list[int]] = {}
    while queue:
        node = queue.popleft()
        if node[0] == "t":
            task = node[1]
            g = int(graph.group[task])
            if seen_node[g].all():
                continue
            for client in range(n_clients):  # the edge to the source first: the source is visited
                if client != assigned[task] and not seen_node[g, client]:
                    seen_node[g, client] = True
                    parent[("n", g, client)] = node
                    queue.append(("n", g, client))
        elif node[0] == "n":
            _, g, client = node
            held = holders.get((g, client))
            if held is None:
                block = assigned[starts[g] : starts[g + 1]]
                held = holders[(g, client)] = (np.flatnonzero(block == client) + starts[g]).tolist()
            for task in held:
                if not seen_task[task]:
                    seen_task[task] = True
                    parent[("t", task)] = node
                    queue.append(("t", task))
            if graph.caps[g, client] > flow[g, client] and not seen_client[client]:
                seen_client[client] = True
                parent[("c", client)] = node
                queue.append(("c", client))
        else:
            client = node[1]
            for g in range(n_groups):
                if flow[g, client] > 0 and not seen_node[g, client]:
                    seen_node[g, client] = True
                    parent[("n", g, client)] = node
                    queue.append(("n", g, client))
            if room[client] > 0:
                return _path(parent, node)
    return None


def _path(parent, end) -> list[tuple[int, int]]:
    """The moves along the path ending at client node `end`: each task edge into a (group,
    client) node moves the task there (a backward edge out of the node moves a task away, which
    the next forward edge on the path sets)."""
    chain = []
    node = end
    while node is not None:
        chain.append(node)
        node = parent[node]
    chain.reverse()  # a new task first, then alternating nodes
    moves = []
    for here, there in itertools.pairwise(chain):
        if here[0] == "t" and there[0] == "n":
            moves.append((here[1], there[2]))
    return moves


@dataclass(frozen=True)
class _Pass:
    distances: np.ndarray
    parents: np.ndarray
    first: tuple[int, int] | None

    @cached_property
    def key(self) -> int:
        """The parents' fingerprint: passes with other parents are told apart without comparing them."""
        return hash(self.parents.tobytes())


def cancel_cycles_as_kafka(graph: BalanceGraph, assigned: np.ndarray) -> np.ndarray:
    """Each task's client after Kafka's `solveMinCostFlow` from the maximal flow `assigned`."""
    assigned = np.array(assigned, dtype=np.int64)
    n_tasks, n_clients, n_groups = graph.shape
    if n_tasks == 0 or n_clients < 2:
        return assigned
    present = np.zeros(n_groups, dtype=bool)
    present[np.unique(graph.group)] = True
    # Kafka's node count: the source, the tasks, the (group, client) nodes of groups with tasks,
    # the clients, the sink, and the dummy.
    passes = n_tasks + n_clients * int(present.sum()) + n_clients + 3
    live = np.concatenate([np.ones(n_tasks, dtype=bool), np.repeat(present, n_clients), np.ones(n_clients + 1, dtype=bool)])
    while True:
        found = _negative_cycle(graph, assigned, passes, live)
        if found is None:
            return assigned
        start, parents = found
        for task, client in _cycle_moves(start, parents, n_tasks, n_clients, n_groups):
            assigned[task] = client


def _negative_cycle(graph, assigned, passes, live):
    n_tasks, n_clients, n_groups = graph.shape
    size = n_tasks + n_groups * n_clients + n_clients + 1  # the source last
    state = _State.of(graph, assigned)
    distances = np.zeros(size, dtype=np.int64)
    parents = np.full(size, DUMMY, dtype=np.int64)
    history: deque[_Pass] = deque(maxlen=_MAX_PERIOD + 1)
    history.append(_Pass(distances, parents, None))
    for number in range(passes):
        before = history[-1]
        distances, parents = before.distances.copy(), before.parents.copy()
        first = state.run_pass(distances, parents)
        if first is None:
            return None
        if number == passes - 1:
            return returned(before.parents, first)
        history.append(_Pass(distances, parents, first))
        period = _period(history, live, state)
        if period:
            last = passes - 1
            equivalent = last - period * -(-(last - number) // period)
            back = number - equivalent
            return returned(history[-2 - back].parents, history[-1 - back].first)
    return None


@dataclass
class _State:
    """The residual graph of one flow, as the arrays a pass reads."""

    n_tasks: int
    n_clients: int
    n_groups: int
    cost: np.ndarray
    own_cost: np.ndarray  # each task's cost on its client
    block: np.ndarray  # each task's group
    starts: np.ndarray  # the groups' first tasks (and the end)
    assigned: np.ndarray
    held: np.ndarray  # tasks x clients: the task's client
    holder_node: np.ndarray  # each task's (group, client) node
    room: np.ndarray  # groups x clients: (group, client) -> client has residual
    carrying: np.ndarray  # groups x clients: client -> (group, client) has residual

    @classmethod
    def of(cls, graph: BalanceGraph, assigned: np.ndarray) -> _State:
        n_tasks, n_clients, n_groups = graph.shape
        tasks = np.arange(n_tasks)
        held = np.zeros((n_tasks, n_clients), dtype=bool)
        held[tasks, assigned] = True
        flow = np.zeros((n_groups, n_clients), dtype=np.int64)
        np.add.at(flow, (graph.group, assigned), 1)
        present = np.zeros(n_groups, dtype=bool)
        present[np.unique(graph.group)] = True
        return cls(
            n_tasks, n_clients, n_groups, graph.cost, graph.cost[tasks, assigned], graph.group,
            np.searchsorted(graph.group, np.arange(n_groups + 1)), assigned, held,
            n_tasks + graph.group * n_clients + assigned, (graph.caps > flow) & present[:, None], flow > 0,
        )  # fmt: skip

    @cached_property
    def open_cost_by_client(self) -> np.ndarray:
        """clients x tasks: the edge costs, a large cost where the task is (no residual edge); by
        client, so that a client's row is contiguous for the passes' minima."""
        return np.ascontiguousarray(np.where(self.held, _BIG // 4, self.cost).T)

    @cached_property
    def buffer(self) -> np.ndarray:
        """clients x tasks: where each pass writes its candidate distances."""
        return np.empty((self.n_clients, self.n_tasks), dtype=np.int64)

    @cached_property
    def groups(self) -> list[int]:
        """The groups with tasks, in order."""
        return np.flatnonzero(self.starts[1:] > self.starts[:-1]).tolist()

    @cached_property
    def client_range(self) -> np.ndarray:
        return np.arange(self.n_clients)

    def settled(self, distances: np.ndarray, moved: np.ndarray) -> bool:
        """Whether, from `distances` on, the nodes that did not move never will, and never relax a
        node that moved: no residual edge from a moving node to a still one (its distances fall
        without bound), and no edge from a still node offers a moving one less than it has now
        (distances only fall). The passes of the moving nodes then repeat, shifted."""
        t, c, g = self.n_tasks, self.n_clients, self.n_groups
        task_moved, source_moved = moved[:t], bool(moved[t + g * c + c])
        node_moved = moved[t : t + g * c].reshape(g, c)
        client_moved = moved[t + g * c : t + g * c + c]
        task_distance = distances[:t]
        node_distance = distances[t : t + g * c].reshape(g, c)
        client_distance = distances[t + g * c : t + g * c + c]
        source_distance = distances[t + g * c + c]
        # tasks -> the source
        if not source_moved and task_moved.any():
            return False
        if source_moved and (task_distance[~task_moved] < source_distance).any():
            return False
        # tasks -> their group's nodes but their own
        forward = ~self.held
        target_moved = node_moved[self.block]
        if (forward & task_moved[:, None] & ~target_moved).any():
            return False
        still = forward & ~task_moved[:, None] & target_moved
        if (task_distance[:, None] + self.cost < node_distance[self.block])[still].any():
            return False
        # nodes -> the tasks they hold
        holder_moved = node_moved.reshape(-1)[self.holder_node - t]
        if (holder_moved & ~task_moved).any():
            return False
        offered = distances[self.holder_node] - self.own_cost
        if ((offered < task_distance) & ~holder_moved & task_moved).any():
            return False
        # nodes -> their clients; clients -> the nodes they carry
        if (self.room & node_moved & ~client_moved[None, :]).any() or (self.carrying & client_moved[None, :] & ~node_moved).any():
            return False
        if (self.room & ~node_moved & client_moved[None, :] & (node_distance < client_distance[None, :])).any():
            return False
        return not (self.carrying & ~client_moved[None, :] & node_moved & (client_distance[None, :] < node_distance)).any()

    def run_pass(self, distances: np.ndarray, parents: np.ndarray) -> tuple[int, int] | None:
        """One pass in Kafka's node order, in place; its first relaxation (node, parent)."""
        t, c, g = self.n_tasks, self.n_clients, self.n_groups
        nodes = slice(t, t + g * c)
        clients = slice(t + g * c, t + g * c + c)
        source = t + g * c + c
        task_distance = distances[:t]
        # The tasks, each: the edge to the source, then to its (group, client) nodes but its own.
        events: list[tuple[int, int, int, int]] = []  # (tail, rank, node, parent)
        below = np.flatnonzero(task_distance < distances[source])
        if below.size:
            events.append((int(below[0]), 0, source, int(below[0])))
            best = int(np.argmin(task_distance))
            distances[source] = task_distance[best]
            parents[source] = best
        candidates = np.add(self.open_cost_by_client, task_distance[None, :], out=self.buffer)  # clients x tasks
        node_distance = distances[nodes].reshape(g, c)
        node_parents = parents[nodes].reshape(g, c)
        earliest_group = True
        for group in self.groups:
            begin, end = int(self.starts[group]), int(self.starts[group + 1])
            block = candidates[:, begin:end]
            best = block.argmin(axis=1)  # the first task at the minimum, per client
            value = block[self.client_range, best]
            hit = value < node_distance[group]
            if not hit.any():
                continue
            if earliest_group:  # the pass's first relaxation among the nodes is in the first group with one
                earliest_group = False
                improving = block < node_distance[group][:, None]
                row = int(np.argmax(improving.any(axis=0)))
                client = int(np.argmax(improving[:, row]))
                events.append((begin + row, 1 + client, t + group * c + client, begin + row))
            node_distance[group, hit] = value[hit]
            node_parents[group, hit] = begin + best[hit]
        first = min(events)[2:] if events else None
        # The (group, client) nodes: the tasks they hold (backward edges), then their client.
        events = []
        offered = distances[self.holder_node] - self.own_cost
        lowered = offered < task_distance
        if lowered.any():
            ranked = np.flatnonzero(lowered)
            order = np.lexsort((ranked, self.holder_node[ranked]))
            task = int(ranked[order[0]])
            events.append((int(self.holder_node[task]), task, task, int(self.holder_node[task])))
            task_distance[lowered] = offered[lowered]
            parents[:t][lowered] = self.holder_node[lowered]
        client_distance = distances[clients]
        reach = np.where(self.room, node_distance, _BIG)
        improving_clients = reach < client_distance[None, :]
        if improving_clients.any():
            first_group = np.argmax(improving_clients, axis=0)
            best_group = np.argmin(reach, axis=0)
            for client in np.flatnonzero(improving_clients.any(axis=0)).tolist():
                tail = t + int(first_group[client]) * c + client
                events.append((tail, t + g * c + client, t + g * c + client, tail))
                client_distance[client] = reach[best_group[client], client]
                parents[t + g * c + client] = t + int(best_group[client]) * c + client
        if first is None and events:
            first = min(events)[2:]
        # The clients: the (group, client) nodes they carry (backward edges).
        offered_nodes = np.where(self.carrying, client_distance[None, :], _BIG)
        lowered_nodes = offered_nodes < node_distance
        if lowered_nodes.any():
            if first is None:
                by_client, by_group = np.nonzero(lowered_nodes.T)  # clients in order, each its groups in order
                first = (t + int(by_group[0]) * c + int(by_client[0]), t + g * c + int(by_client[0]))
            node_distance[lowered_nodes] = offered_nodes[lowered_nodes]
            node_parents = parents[nodes].reshape(g, c)
            node_parents[lowered_nodes] = (t + g * c + np.nonzero(lowered_nodes)[1]).astype(np.int64)
        return first


def _period(history, live, state) -> int:
    """The smallest p such that the last state repeats the state p passes earlier: the same
    parents, the distances of the nodes that moved all shifted by one constant, the others equal,
    and nothing that can ever change that (`_State.settled`)."""
    last = history[-1]
    for period in range(1, len(history) - 1):
        earlier = history[-1 - period]
        if earlier.first is None or earlier.key != last.key or not np.array_equal(last.parents, earlier.parents):
            continue
        shift = last.distances - earlier.distances
        moved = (shift != 0) & live
        if not moved.any():
            continue
        if (shift[moved] == shift[moved][0]).all() and state.settled(earlier.distances, moved):
            return period
    return 0


def _cycle_moves(start, parents, n_tasks, n_clients, n_groups):
    """Each task on the cycle moves to the (group, client) node after it."""
    nodes_end = n_tasks + n_groups * n_clients
    return [(tail, (head - n_tasks) % n_clients) for tail, head in cycle_edges(start, parents) if tail < n_tasks <= head < nodes_end]
