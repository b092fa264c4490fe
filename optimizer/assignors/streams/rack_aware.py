"""KIP-925 inside Kafka's assignors (Kafka's RackAwareTaskAssignor).

`optimize_active_tasks` re-places a set of actives at least cost with every client keeping its
number of them: KIP-925's min-cost flow, on the `min_traffic` graph or on the
`balance_subtopology` graph whose (subtopology, client) capacities are
ceil(count / tasks x subtopology tasks), computed in doubles as Kafka does; that graph starts from
a breadth-first max flow rather than from the current assignment. `optimize_standby_tasks` is
KIP-925's greedy standby optimiser: up to four rounds over pairs of clients on different racks,
each pair's movable standbys re-placed by a two-client min-cost flow.

Among equally cheap assignments Kafka returns the one its search order reaches, and so does this
module: the min_traffic graph and the standby pairs by `kafka_graph` (Kafka's search, vectorised),
the balance_subtopology graph by the faithful port of Kafka's Graph. Beyond `KAFKA_TIE_BREAK_WORK`
(min_traffic) or `fast_enough` (balance_subtopology) the contracted cycle canceling is used: the same
minimum cost, but possibly another of the tied optima; the solution's notes say so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from optimizer.assignors.streams.client_state import ClientState
from optimizer.assignors.streams.kip925.cycle_canceling import cancel_negative_cycles
from optimizer.assignors.streams.kip925.graph import Graph, fast_enough
from optimizer.assignors.streams.kip925.kafka_graph import cancel_cycles_as_kafka
from optimizer.assignors.streams.kip925.optimize import within_caps
from optimizer.model.ids import TaskKey, parse_task_id
from optimizer.model.streams import RackAwareStrategy, StreamsProblem

STANDBY_OPTIMIZER_MAX_ITERATION = 4
# Kafka's search on the min_traffic graph costs about tasks^2 x clients element steps (a pass per
# cancelled cycle or so, each over every task-client edge): 0.3 s at 1,000 x 50, 12 s at
# 3,000 x 100 on the reference machine. Beyond this the contracted cycle canceling is used.
KAFKA_TIE_BREAK_WORK = 300_000_000

CanMove = Callable[[TaskKey, ClientState, ClientState, Sequence[ClientState]], bool]


@dataclass
class RackAwareTaskAssignor:
    """Rack information of one problem, and the optimisations that use it."""

    problem: StreamsProblem
    strategy: RackAwareStrategy | None = None
    """The graph to use; the problem's `rack.aware.assignment.strategy` when not given."""
    notes: list[str] = field(default_factory=list)
    """How each optimisation was solved (faithful graph or contracted cycle canceling)."""

    def __post_init__(self) -> None:
        if self.strategy is None:
            self.strategy = self.problem.config.rack_aware_assignment_strategy
        self.client_rack = {c.id: c.rack for c in self.problem.clients}
        self.source_racks: dict[TaskKey, list[frozenset[str]]] = {}
        self.changelog_racks: dict[TaskKey, list[frozenset[str]]] = {}
        self.subtopology_tasks: dict[int, list[TaskKey]] = {}
        for task in self.problem.tasks:
            key = parse_task_id(task.id)
            self.source_racks[key] = [frozenset(p.replica_racks) for p in task.source_partitions]
            self.changelog_racks[key] = [frozenset(p.replica_racks) for p in task.changelog_partitions]
            self.subtopology_tasks.setdefault(key.subtopology, []).append(key)
        for tasks in self.subtopology_tasks.values():
            tasks.sort()
        self._enabled: bool | None = None

    def can_enable(self) -> bool:
        """Kafka's canEnableRackAwareAssignor: a strategy set, every client with a rack, every
        source partition (and, with standbys, every changelog partition) with replica racks."""
        if self.strategy == RackAwareStrategy.NONE:
            return False
        if self._enabled is None:
            enabled = all(rack is not None for rack in self.client_rack.values()) and all(
                racks for partitions in self.source_racks.values() for racks in partitions
            )
            if enabled and self.problem.config.num_standby_replicas > 0:
                enabled = all(racks for partitions in self.changelog_racks.values() for racks in partitions)
            self._enabled = enabled
        return self._enabled

    def cost(
        self, task: TaskKey, client: ClientState, in_current: bool, traffic: int, non_overlap: int, standby: bool
    ) -> int:
        racks = (self.changelog_racks if standby else self.source_racks)[task]
        crossing = sum(1 for replicas in racks if client.rack not in replicas)
        return traffic * crossing + (0 if in_current else non_overlap)

    # ------------------------------------------------------------------ actives

    def optimize_active_tasks(
        self, tasks: Sequence[TaskKey], clients: Sequence[ClientState], traffic: int, non_overlap: int
    ) -> None:
        """Re-place the actives `tasks` (sorted) over `clients` (Kafka order) at least KIP-925 cost."""
        if not tasks:
            return
        owner = {}
        for j, client in enumerate(clients):
            for task in tasks:
                if task in client.active:
                    owner[task] = j
        counts = np.bincount([owner[t] for t in tasks], minlength=len(clients))
        cost = np.array(
            [
                [self.cost(t, c, owner[t] == j, traffic, non_overlap, False) for j, c in enumerate(clients)]
                for t in tasks
            ],
            dtype=np.int64,
        )
        if self.strategy == RackAwareStrategy.BALANCE_SUBTOPOLOGY:
            target = self._balance_subtopology(tasks, clients, owner, counts, cost)
        else:
            target = self._min_traffic(tasks, clients, owner, counts, cost)
        for task, j in zip(tasks, target, strict=True):
            if j != owner[task]:
                clients[owner[task]].unassign_active(task)
                clients[j].assign_active(task)

    def _min_traffic(self, tasks, clients, owner, counts, cost) -> list[int]:
        n_tasks, n_clients = cost.shape
        start = np.array([owner[t] for t in tasks], dtype=np.int64)
        if n_tasks * n_tasks * n_clients > KAFKA_TIE_BREAK_WORK:
            self.notes.append(
                f"min_traffic {n_tasks}x{n_clients}: contracted cycle canceling, Kafka's cost; among "
                "equally cheap placements Kafka may pick another"
            )
            return cancel_negative_cycles(cost, start).assignment.tolist()
        return cancel_cycles_as_kafka(cost, start).tolist()

    def _balance_subtopology(self, tasks, clients, owner, counts, cost) -> list[int]:
        n_tasks, n_clients = cost.shape
        position = {t: i for i, t in enumerate(tasks)}
        subtopologies = sorted(self.subtopology_tasks)  # every subtopology of the topology
        valid = [[t for t in self.subtopology_tasks[s] if t in position] for s in subtopologies]
        # Kafka computes the cap in doubles: ceil(count / tasks * subtopology tasks).
        caps = [
            [math.ceil(int(counts[j]) / n_tasks * len(group)) for j in range(n_clients)] for group in valid
        ]
        n_subtopologies = len(subtopologies)
        nodes = n_tasks + n_clients * n_subtopologies + n_clients + 2
        edges = n_tasks * n_clients + n_subtopologies * n_clients + n_tasks + n_clients
        if not fast_enough(nodes, edges):
            self.notes.append(
                f"balance_subtopology {n_tasks}x{n_clients}: contracted cycle canceling, Kafka's cost; among "
                "equally cheap placements Kafka may pick another"
            )
            present = [g for g, group in enumerate(valid) if group]
            group_of = np.empty(n_tasks, dtype=np.int64)
            for new, g in enumerate(present):
                for t in valid[g]:
                    group_of[position[t]] = new
            cap_array = np.array([caps[g] for g in present], dtype=np.int64).reshape(len(present), n_clients)
            start = within_caps(np.array([owner[t] for t in tasks]), group_of, cap_array)
            return cancel_negative_cycles(cost, start, group_of, cap_array).assignment.tolist()
        graph = Graph()
        second = n_tasks + n_clients * n_subtopologies
        sink = second + n_clients
        node_of = {}
        base = 0
        for g, group in enumerate(valid):
            for k, task in enumerate(group):
                node_of[task] = base + k
            for j in range(n_clients):
                first = n_tasks + n_clients * g + j
                for task in group:
                    graph.add_edge(node_of[task], first, 1, int(cost[position[task], j]), 0)
                if group:
                    graph.add_edge(first, second + j, caps[g][j], 0, 0)
            base += len(group)
        for group in valid:
            for task in group:
                graph.add_edge(-1, node_of[task], 1, 0, 0)
        for j in range(n_clients):
            graph.add_edge(second + j, sink, int(counts[j]), 0, 0)
        graph.source, graph.sink = -1, sink
        flow = graph.calculate_max_flow()
        if flow != n_tasks:
            raise AssertionError(f"max flow calculated: {flow} doesn't match taskSize: {n_tasks}")
        graph.solve_min_cost_flow()
        target = [0] * n_tasks
        for g, group in enumerate(valid):
            for task in group:
                dest = next(v for v, e in sorted(graph.edges_from(node_of[task]).items()) if e.flow > 0)
                target[position[task]] = dest - n_tasks - n_clients * g
        return target

    # ------------------------------------------------------------------ standbys

    def optimize_standby_tasks(
        self, clients: Sequence[ClientState], traffic: int, non_overlap: int, can_move: CanMove
    ) -> None:
        moved, rounds = True, 0
        while moved and rounds < STANDBY_OPTIMIZER_MAX_ITERATION:
            moved, rounds = False, rounds + 1
            for i, first in enumerate(clients):
                for second in clients[i + 1 :]:
                    if first.rack == second.rack:
                        continue  # swapping between clients of one rack changes no traffic
                    movable_first = [
                        t for t in sorted(first.standby) if not second.holds(t) and can_move(t, first, second, clients)
                    ]
                    movable_second = [
                        t for t in sorted(second.standby) if not first.holds(t) and can_move(t, second, first, clients)
                    ]
                    if movable_first and movable_second:
                        moved |= self._swap_standbys(
                            sorted(movable_first + movable_second), [first, second], traffic, non_overlap
                        )

    def _swap_standbys(self, tasks, pair, traffic, non_overlap) -> bool:
        """Kafka's two-client min-cost flow over the pair's movable standbys."""
        owner = np.array([0 if task in pair[0].standby else 1 for task in tasks], dtype=np.int64)
        cost = np.array(
            [
                [self.cost(task, client, task in client.standby, traffic, non_overlap, True) for client in pair]
                for task in tasks
            ],
            dtype=np.int64,
        )
        target = cancel_cycles_as_kafka(cost, owner)
        moved = False
        for task, before, after in zip(tasks, owner.tolist(), target.tolist(), strict=True):
            if before != after:
                pair[before].unassign_standby(task)
                pair[after].assign_standby(task)
                moved = True
        return moved
