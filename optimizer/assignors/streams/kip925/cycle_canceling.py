"""Klein's cycle canceling on KIP-925's assignment graph, with vectorised Bellman-Ford passes.

The graph is KIP-925's: source -> task (capacity 1) -> client (capacity 1, cost c[t, k]) -> sink
(capacity = the client's current task count); for `balance_subtopology` each task reaches its
client through a (subtopology, client) node whose capacity caps that subtopology on that client.
A feasible flow is the current assignment; canceling negative cycles in its residual graph keeps
every client's count and ends at a minimum-cost assignment.

The residual graph is searched in a contracted form that has the same negative cycles. A task node
has exactly one residual edge in: the reverse of its assigned edge, from its current
(subtopology, client) node. Contracting it turns every path "pair (s, j) -> task t -> pair (s, k)"
into one edge meaning "move t from j to k", of weight c[t, k] - c[t, j]; of the parallel edges
between two pair nodes only the cheapest matters for finding a negative cycle. Client nodes stay
(only needed with caps): pair (s, k) -> client k while the cap has room, client k -> pair (s', k)
while (s', k) carries flow. The source and sink cannot lie on a residual cycle because their
edges are saturated. So a negative cycle found here is a negative residual cycle of KIP-925's
graph, and none exists here exactly when none exists there.

Bellman-Ford runs from a virtual source (all distances 0) in synchronous numpy passes over the
dense move-weight array; after each pass the predecessor graph is checked for a cycle (pointer
doubling), so a negative cycle is found as soon as it forms, and a pass without relaxation ends
the search: the assignment is optimal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_INF = np.inf


@dataclass(frozen=True)
class CycleCancelingResult:
    assignment: np.ndarray
    """Client index per task, at minimum cost."""
    cost: int
    """Total cost of `assignment`."""
    initial_cost: int
    """Total cost of the starting assignment."""
    cycles: int
    """Negative cycles canceled."""
    passes: int
    """Bellman-Ford passes run in all."""


def cancel_negative_cycles(
    cost: np.ndarray,
    assignment: np.ndarray,
    groups: np.ndarray | None = None,
    caps: np.ndarray | None = None,
) -> CycleCancelingResult:
    """Minimise `sum(cost[t, assignment[t]])` keeping each client's task count.

    `cost` is tasks x clients (integers). With `groups` (a group index per task, for example its
    subtopology) and `caps` (groups x clients), no client may hold more than `caps[g, k]` tasks of
    group g; the starting `assignment` must respect the caps.
    """
    cost = np.asarray(cost, dtype=np.int64)
    n_tasks, n_clients = cost.shape
    assignment = np.array(assignment, dtype=np.int64, copy=True)
    if groups is None:
        groups = np.zeros(n_tasks, dtype=np.int64)
        n_groups = 1
    else:
        groups = np.asarray(groups, dtype=np.int64)
        n_groups = int(groups.max()) + 1 if n_tasks else 1
    graph = _ContractedResidual(cost, assignment, groups, n_groups, caps)
    initial_cost = graph.total_cost()
    cycles = passes = 0
    if n_tasks and n_clients > 1:
        while True:
            cycle, used = graph.find_negative_cycle()
            passes += used
            if cycle is None:
                break
            graph.cancel(cycle)
            cycles += 1
    return CycleCancelingResult(graph.assignment, graph.total_cost(), initial_cost, cycles, passes)


class _ContractedResidual:
    """Pair nodes (group g, client k) and, with caps, client nodes; node id g*C + k or G*C + k."""

    def __init__(
        self,
        cost: np.ndarray,
        assignment: np.ndarray,
        groups: np.ndarray,
        n_groups: int,
        caps: np.ndarray | None,
    ):
        self.cost = cost
        self.assignment = assignment
        self.groups = groups
        self.n_groups = n_groups
        self.n_clients = cost.shape[1]
        self.capped = caps is not None
        self.flow = np.zeros((n_groups, self.n_clients), dtype=np.int64)
        np.add.at(self.flow, (groups, assignment), 1)
        if self.capped:
            self.caps = np.asarray(caps, dtype=np.int64)
            if (self.flow > self.caps).any():
                raise ValueError("the starting assignment exceeds the subtopology caps")
        # members[g][k]: tasks of group g on client k, in ascending task order.
        order = np.lexsort((np.arange(len(assignment)), assignment, groups))
        self.members: list[list[np.ndarray]] = [
            [np.empty(0, dtype=np.int64)] * self.n_clients for _ in range(n_groups)
        ]
        keys = groups[order] * self.n_clients + assignment[order]
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(order) else np.empty(0, dtype=np.int64)
        for start, end in zip(starts, [*starts[1:], len(order)], strict=True):
            g, k = divmod(int(keys[start]), self.n_clients)
            self.members[g][k] = order[start:end]
        # move[g, j, k]: cheapest change of cost moving one task of group g from client j to k.
        self.move = np.full((n_groups, self.n_clients, self.n_clients), _INF)
        self.mover = np.full((n_groups, self.n_clients, self.n_clients), -1, dtype=np.int64)
        for g in range(n_groups):
            for j in range(self.n_clients):
                self._refresh(g, j)

    def total_cost(self) -> int:
        return int(self.cost[np.arange(len(self.assignment)), self.assignment].sum())

    def _refresh(self, g: int, j: int) -> None:
        tasks = self.members[g][j]
        if not len(tasks):
            self.move[g, j, :] = _INF
            self.mover[g, j, :] = -1
            return
        delta = self.cost[tasks] - self.cost[tasks, j][:, None]
        best = np.argmin(delta, axis=0)  # the lowest task index among equals: deterministic
        self.move[g, j, :] = delta[best, np.arange(self.n_clients)]
        self.mover[g, j, :] = tasks[best]
        self.move[g, j, j] = _INF

    def find_negative_cycle(self) -> tuple[list[int] | None, int]:
        groups, clients = self.n_groups, self.n_clients
        n_pair = groups * clients
        n_nodes = n_pair + (clients if self.capped else 0)
        dist = np.zeros(n_nodes)
        pred = np.full(n_nodes, -1, dtype=np.int64)
        columns = np.arange(clients)
        for passes in range(1, n_nodes + 2):
            pair_dist = dist[:n_pair].reshape(groups, clients)
            via_move = pair_dist[:, :, None] + self.move  # [g, from j, to k]
            best_from = np.argmin(via_move, axis=1)  # [g, k]
            candidate = np.take_along_axis(via_move, best_from[:, None, :], axis=1)[:, 0, :]
            source = (np.arange(groups)[:, None] * clients + best_from).ravel()
            candidate = candidate.ravel()
            if self.capped:
                client_dist = dist[n_pair:]
                from_client = np.where(self.flow > 0, client_dist[None, :], _INF).ravel()
                take_client = from_client < candidate
                candidate = np.where(take_client, from_client, candidate)
                source = np.where(take_client, n_pair + np.tile(columns, groups), source)
                into_client = np.where(self.flow < self.caps, pair_dist, _INF)
                best_group = np.argmin(into_client, axis=0)
                candidate = np.concatenate([candidate, into_client[best_group, columns]])
                source = np.concatenate([source, best_group * clients + columns])
            improved = candidate < dist
            if not improved.any():
                return None, passes
            dist = np.where(improved, candidate, dist)
            pred = np.where(improved, source, pred)
            cycle = self._negative_cycle_in(pred)
            if cycle is not None:
                return cycle, passes
        raise RuntimeError("Bellman-Ford did not settle; the cost matrix must hold integers")

    def _negative_cycle_in(self, pred: np.ndarray) -> list[int] | None:
        """The most negative cycle of the predecessor graph, as nodes in flow order, if any."""
        n = len(pred)
        # Pointer doubling: after enough jumps a node that leads into a cycle sits on it.
        jump = np.where(pred >= 0, pred, n)
        jump = np.append(jump, n)
        steps = 1
        while steps <= n:
            jump = jump[jump]
            steps *= 2
        on_cycle = np.unique(jump[:n][jump[:n] < n])
        best, best_weight, seen = None, 0.0, set()
        for start in on_cycle.tolist():
            if start in seen:
                continue
            cycle = [start]
            node = int(pred[start])
            while node != start:
                cycle.append(node)
                node = int(pred[node])
            seen.update(cycle)
            cycle.reverse()  # pred points backwards; flow goes pred[v] -> v
            weight = sum(self._edge_weight(cycle[i - 1], cycle[i]) for i in range(len(cycle)))
            if weight < best_weight:
                best, best_weight = cycle, weight
        return best

    def _edge_weight(self, tail: int, head: int) -> float:
        n_pair = self.n_groups * self.n_clients
        if tail < n_pair and head < n_pair:
            g, j = divmod(tail, self.n_clients)
            return float(self.move[g, j, head % self.n_clients])
        return 0.0  # pair -> client and client -> pair edges are free

    def cancel(self, cycle: list[int]) -> None:
        n_pair = self.n_groups * self.n_clients
        moves = []
        for i in range(len(cycle)):
            tail, head = cycle[i - 1], cycle[i]
            if tail < n_pair and head < n_pair:
                g, j = divmod(tail, self.n_clients)
                k = head % self.n_clients
                moves.append((int(self.mover[g, j, k]), g, j, k))
        touched: set[tuple[int, int]] = set()
        for task, g, j, k in moves:
            self.assignment[task] = k
            self.flow[g, j] -= 1
            self.flow[g, k] += 1
            self.members[g][j] = self.members[g][j][self.members[g][j] != task]
            self.members[g][k] = np.sort(np.append(self.members[g][k], task))
            touched.update(((g, j), (g, k)))
        for g, j in touched:
            self._refresh(g, j)


def cancel_negative_cycles_full(
    cost: np.ndarray,
    assignment: np.ndarray,
    groups: np.ndarray | None = None,
    caps: np.ndarray | None = None,
) -> CycleCancelingResult:
    """The same minimisation by cycle canceling on KIP-925's own residual graph.

    Nodes: every task, every (group, client) pair (the clients themselves when uncapped) and,
    with caps, every client; arcs: task -> pair where the task is not (cost c[t, k]), pair -> task
    where it is (cost -c[t, k]), pair -> client while the cap has room, client -> pair while the
    pair carries flow. Bellman-Ford passes relax a whole layer of arcs at a time in numpy (the
    task -> pair layer is a tasks x clients minimum), stop as soon as a pass relaxes nothing, and
    look for a cycle in the predecessor graph after every pass. This is the reference goal's
    algorithm; `cancel_negative_cycles` finds the same cycles on a graph without task nodes.
    """
    cost = np.asarray(cost, dtype=np.int64)
    n_tasks, n_clients = cost.shape
    assignment = np.array(assignment, dtype=np.int64, copy=True)
    capped = caps is not None
    if groups is None:
        groups = np.zeros(n_tasks, dtype=np.int64)
    groups = np.asarray(groups, dtype=np.int64)
    n_groups = int(groups.max()) + 1 if n_tasks else 1
    caps = np.asarray(caps, dtype=np.int64) if capped else None
    flow = np.zeros((n_groups, n_clients), dtype=np.int64)
    np.add.at(flow, (groups, assignment), 1)
    if caps is not None and (flow > caps).any():
        raise ValueError("the starting assignment exceeds the subtopology caps")
    rows = np.arange(n_tasks)
    initial_cost = int(cost[rows, assignment].sum())
    n_pair = n_groups * n_clients
    pair_base, client_base = n_tasks, n_tasks + n_pair
    n_nodes = client_base + (n_clients if capped else 0)
    cycles = passes = 0
    if n_tasks and n_clients > 1:
        while True:
            dist = np.zeros(n_nodes)
            pred = np.full(n_nodes, -1, dtype=np.int64)
            found = None
            for _ in range(n_nodes + 1):
                passes += 1
                task_dist = dist[:n_tasks]
                pair_dist = dist[pair_base:client_base].reshape(n_groups, n_clients)
                candidate = np.full(n_nodes, np.inf)
                source = np.full(n_nodes, -1, dtype=np.int64)
                # pair (g, a(t)) -> task t
                own_pair = groups * n_clients + assignment
                candidate[:n_tasks] = pair_dist.ravel()[own_pair] - cost[rows, assignment]
                source[:n_tasks] = pair_base + own_pair
                # task t -> pair (g(t), k) for k != a(t): a tasks x clients minimum per group
                via = task_dist[:, None] + cost
                via[rows, assignment] = np.inf
                best_pair = np.full((n_groups, n_clients), np.inf)
                best_task = np.full((n_groups, n_clients), -1, dtype=np.int64)
                for g in range(n_groups):
                    members = np.flatnonzero(groups == g)
                    if not len(members):
                        continue
                    pick = np.argmin(via[members], axis=0)
                    best_pair[g] = via[members][pick, np.arange(n_clients)]
                    best_task[g] = members[pick]
                candidate[pair_base:client_base] = best_pair.ravel()
                source[pair_base:client_base] = best_task.ravel()
                if caps is not None:
                    client_dist = dist[client_base:]
                    from_client = np.where(flow > 0, client_dist[None, :], np.inf)
                    take = from_client < best_pair
                    candidate[pair_base:client_base] = np.where(take, from_client, best_pair).ravel()
                    source[pair_base:client_base] = np.where(take, client_base + np.arange(n_clients)[None, :], best_task).ravel()
                    into = np.where(flow < caps, pair_dist, np.inf)
                    pick = np.argmin(into, axis=0)
                    candidate[client_base:] = into[pick, np.arange(n_clients)]
                    source[client_base:] = pair_base + pick * n_clients + np.arange(n_clients)
                improved = candidate < dist
                if not improved.any():
                    break
                dist = np.where(improved, candidate, dist)
                pred = np.where(improved, source, pred)
                found = _full_cycle(pred, dist, cost, assignment, groups, n_tasks, pair_base, client_base, n_clients)
                if found is not None:
                    break
            if found is None:
                break
            for task, target in found:
                flow[groups[task], assignment[task]] -= 1
                flow[groups[task], target] += 1
                assignment[task] = target
            cycles += 1
    return CycleCancelingResult(assignment, int(cost[rows, assignment].sum()), initial_cost, cycles, passes)


def _full_cycle(pred, dist, cost, assignment, groups, n_tasks, pair_base, client_base, n_clients):
    """The task moves of a negative cycle in the predecessor graph, if there is one."""
    n = len(pred)
    jump = np.append(np.where(pred >= 0, pred, n), n)
    steps = 1
    while steps <= n:
        jump = jump[jump]
        steps *= 2
    for start in np.unique(jump[:n][jump[:n] < n]).tolist():
        cycle = [start]
        node = int(pred[start])
        while node != start:
            cycle.append(node)
            node = int(pred[node])
        cycle.reverse()  # flow order: pred[v] -> v
        moves, weight = [], 0
        for i, node in enumerate(cycle):
            nxt = cycle[(i + 1) % len(cycle)]
            if node < n_tasks and pair_base <= nxt < client_base:
                target = (nxt - pair_base) % n_clients
                moves.append((node, target))
                weight += cost[node, target] - cost[node, assignment[node]]
        if weight < 0:
            return moves
    return None
