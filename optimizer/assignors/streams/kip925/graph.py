"""Kafka Streams' min-cost-flow graph (Kafka's `Graph`), step for step, for Kafka-faithful results.

Among equally cheap assignments Kafka returns the one its search order reaches, so the `kafka`
solver follows that order exactly:
* edges are kept per start node and destination in ascending node order (one edge per pair);
* `solve_min_cost_flow` cancels negative cycles of the residual graph one at a time. Each search
  is a Bellman-Ford run from a dummy node joined to every node, relaxing edges in that sorted
  order with distances updated in place; a relaxation in the last pass returns its node, the walk
  back along parents finds a node on the cycle, and the cycle is cancelled by its bottleneck;
* `calculate_max_flow` is Edmonds-Karp with breadth-first search in ascending node order.

Pure Python: every search is O(nodes x edges). The assignors run the same searches over arrays
(`kafka_graph`, `balance_graph`); this port is their reference in the tests and solves the other
graph shapes (Kafka's GraphTest).

Nodes are integers; Kafka's source is -1 and its dummy sorts before every node.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def kafka_assignment(cost, holder) -> list[int]:
    """Kafka's min-cost flow on an assignment graph, step for step: tasks (cost[i, j] on client
    j, currently on client holder[i]) re-placed with every client keeping its count. The
    reference for `optimizer.assignors.streams.kip925.kafka_graph` and the benchmarks."""
    n_tasks, n_clients = len(cost), len(cost[0]) if len(cost) else 0
    graph = Graph()
    for i in range(n_tasks):
        for j in range(n_clients):
            graph.add_edge(i, n_tasks + j, 1, int(cost[i][j]), int(holder[i] == j))
        graph.add_edge(-1, i, 1, 0, 1)
    for j in range(n_clients):
        count = sum(1 for h in holder if h == j)
        graph.add_edge(n_tasks + j, n_tasks + n_clients, count, 0, count)
    graph.source, graph.sink = -1, n_tasks + n_clients
    graph.solve_min_cost_flow()
    return [next(v - n_tasks for v, e in sorted(graph.edges_from(i).items()) if e.flow > 0) for i in range(n_tasks)]


@dataclass
class Edge:
    destination: int
    capacity: int
    cost: int
    residual: int
    flow: int
    forward: bool = True
    counter: Edge | None = field(default=None, repr=False)


class Graph:
    def __init__(self) -> None:
        self.adjacency: dict[int, dict[int, Edge]] = {}
        self.nodes: set[int] = set()
        self.source: int | None = None
        self.sink: int | None = None

    def add_edge(self, u: int, v: int, capacity: int, cost: int, flow: int) -> None:
        if capacity < 0:
            raise ValueError("Edge capacity cannot be negative")
        if flow > capacity:
            raise ValueError(f"Edge flow {flow} cannot exceed capacity {capacity}")
        if u in self.adjacency.get(v, {}):
            raise ValueError(f"There is already an edge from {v} to {u}")
        self.adjacency.setdefault(u, {})[v] = Edge(v, capacity, cost, capacity - flow, flow)
        self.nodes.update((u, v))

    def _terminals(self) -> tuple[int, int]:
        """The source and sink: every caller sets them, as Kafka's setSourceNode/setSinkNode, before solving."""
        assert self.source is not None and self.sink is not None, "set the graph's source and sink before solving"
        return self.source, self.sink

    def edges_from(self, u: int) -> dict[int, Edge]:
        return self.adjacency.get(u, {})

    def total_cost(self) -> int:
        return sum(e.cost * e.flow for edges in self.adjacency.values() for e in edges.values())

    # ------------------------------------------------------------------ residual graph

    def _residual(self) -> _Residual:
        residual = _Residual(sorted(self.nodes))
        for u in sorted(self.adjacency):
            for v in sorted(self.adjacency[u]):
                edge = self.adjacency[u][v]
                forward = residual.add(u, v, edge.capacity, edge.cost, edge.capacity - edge.flow, edge.flow, True)
                backward = residual.add(v, u, edge.capacity, -edge.cost, edge.flow, 0, False)
                forward.counter, backward.counter = backward, forward
        for edges in residual.out.values():
            edges.sort(key=lambda e: e.destination)
        return residual

    def _copy_back(self, residual: _Residual) -> None:
        for u, edges in self.adjacency.items():
            for v, edge in edges.items():
                twin = residual.edge(u, v, forward=True)
                edge.flow, edge.residual = twin.flow, twin.residual

    # ------------------------------------------------------------------ min cost flow

    def solve_min_cost_flow(self) -> None:
        """Cancel negative cycles of the current (feasible) flow until none is left."""
        self._validate()
        residual = self._residual()
        residual.add_dummy()
        while True:
            node = residual.detect_negative_cycle()
            if node is None:
                break
            seen = set()
            while node not in seen:  # walk back onto the cycle
                seen.add(node)
                node = residual.parent[node]
            residual.cancel_cycle(node)
        self._copy_back(residual)

    def _validate(self) -> None:
        source, sink = self._terminals()
        inflow: dict[int, int] = {}
        outflow: dict[int, int] = {}
        for u in sorted(self.adjacency):
            for v, edge in sorted(self.adjacency[u].items()):
                if u == sink:
                    raise ValueError(f"Sink node {sink} shouldn't have output")
                if v == source:
                    raise ValueError(f"Source node {source} shouldn't have input {u}")
                outflow[u] = outflow.get(u, 0) + edge.flow
                inflow[v] = inflow.get(v, 0) + edge.flow
        for node, value in inflow.items():
            if node in (source, sink):
                continue
            if outflow.get(node) != value:
                raise ValueError(
                    f"Input flow for node {node} is {value} which doesn't match output flow {outflow.get(node)}"
                )
        if outflow.get(source) != inflow.get(sink):
            raise ValueError(
                f"Output flow for source {source} is {outflow.get(source)} which doesn't "
                f"match input flow {inflow.get(sink)} for sink {sink}"
            )

    # ------------------------------------------------------------------ max flow

    def calculate_max_flow(self) -> int:
        """Edmonds-Karp from the current flow; breadth-first search in ascending node order."""
        source, sink = self._terminals()
        residual = self._residual()
        while True:
            parent_edge: dict[int, Edge] = {}
            parent: dict[int, int] = {}
            visited = {source}
            queue = [source]
            reached = False
            head = 0
            while head < len(queue) and not reached:
                u = queue[head]
                head += 1
                for edge in residual.out[u]:
                    v = edge.destination
                    if v in visited or edge.residual <= 0:
                        continue
                    parent[v], parent_edge[v] = u, edge
                    if v == sink:
                        reached = True
                        break
                    queue.append(v)
                    visited.add(v)
            if not reached:
                break
            path: list[Edge] = []  # sink back to source
            node = sink
            while node != source:
                path.append(parent_edge[node])
                node = parent[node]
            bottleneck = min(edge.residual for edge in path)
            for edge in path:
                _push(edge, bottleneck)
        self._copy_back(residual)
        return sum(edge.flow for edge in self.edges_from(source).values())


_DUMMY = None  # sorts before every node, as Kafka's null node


def _push(edge: Edge, amount: int) -> None:
    edge.residual -= amount
    if edge.forward:
        edge.flow += amount
    counter = edge.counter
    if counter is not None:
        counter.residual += amount
        if counter.forward and counter.flow >= amount:
            counter.flow -= amount


class _Residual:
    """The residual graph with each node's out-edges in ascending destination order."""

    def __init__(self, nodes: list[int]):
        self.order: list = list(nodes)
        self.out: dict = {node: [] for node in nodes}
        self._index: dict[tuple, Edge] = {}
        self.parent: dict = {}
        self.parent_edge: dict = {}

    def add(self, u, v, capacity, cost, residual, flow, forward) -> Edge:
        edge = Edge(v, capacity, cost, residual, flow, forward)
        self._index[u, v, forward] = edge
        # Kafka keeps one map entry per (u, v): a backward edge and a forward edge between the
        # same nodes cannot both exist, because add_edge refuses opposite edges.
        self.out[u].append(edge)
        return edge

    def edge(self, u, v, forward: bool) -> Edge:
        return self._index[u, v, forward]

    def add_dummy(self) -> None:
        self.out[_DUMMY] = [Edge(node, 1, 0, 1, 0, True) for node in self.order]
        self.order = [_DUMMY, *self.order]
        # Flat arrays for the search: it runs (nodes x edges) steps.
        self._tails: list = []
        self._edges: list[Edge] = []
        for u in self.order:
            for edge in self.out[u]:
                self._tails.append(u)
                self._edges.append(edge)

    def detect_negative_cycle(self):
        dist: dict = {_DUMMY: 0}
        parent = self.parent
        parent_edge = self.parent_edge
        parent.clear()
        parent_edge.clear()
        n = len(self.order)
        pairs = list(zip(self._tails, self._edges, strict=True))
        for step in range(n):
            last = step == n - 1
            changed = False
            for u, edge in pairs:
                if edge.residual == 0:
                    continue
                du = dist.get(u, _UNREACHED) if u is not _DUMMY else 0
                if du is _UNREACHED:
                    continue
                v = edge.destination
                candidate = du + edge.cost
                dv = dist.get(v, _UNREACHED)
                if dv is _UNREACHED or dv > candidate:
                    dist[v] = candidate
                    parent[v] = u
                    parent_edge[v] = edge
                    changed = True
                    if last:
                        return v
            if not changed:
                return None  # settled early: no negative cycle (later passes would change nothing)
        return None

    def cancel_cycle(self, start) -> None:
        edges = []
        node = start
        while True:
            edges.append(self.parent_edge[node])
            node = self.parent[node]
            if node == start:
                break
        bottleneck = min(edge.residual for edge in edges)
        for edge in edges:
            _push(edge, bottleneck)


_UNREACHED = object()
