"""KIP-925 inside Kafka's assignors (Kafka's RackAwareTaskAssignor).

`optimize_active_tasks` re-places a set of actives at least cost with every client keeping its
number of them: KIP-925's min-cost flow, on the `min_traffic` graph or on the
`balance_subtopology` graph whose (subtopology, client) capacities are
ceil(count / tasks x subtopology tasks), computed in doubles as Kafka does; that graph starts from
a breadth-first max flow rather than from the current assignment. `optimize_standby_tasks` is
KIP-925's greedy standby optimiser: up to four rounds over pairs of clients on different racks,
each pair's movable standbys re-placed by a two-client min-cost flow.

Graphs small enough are solved by the faithful port of Kafka's Graph, so that among equally cheap
assignments the one Kafka picks is returned; larger ones by the contracted cycle canceling, which
reaches the same minimum cost but may pick another of the tied optima.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from goals.kip925.cycle_canceling import cancel_negative_cycles
from goals.kip925.graph import Graph, fast_enough
from goals.kip925.optimize import within_caps
from optimizer.assignors.client_state import ClientState
from optimizer.model.ids import TaskKey, parse_task_id
from optimizer.model.streams import RackAwareStrategy, StreamsProblem

STANDBY_OPTIMIZER_MAX_ITERATION = 4
# Two-client standby swaps with more movable tasks than this are solved in closed form (the
# same minimum cost; ties kept where they are) instead of by the faithful graph.
FAITHFUL_PAIR_TASKS = 24
STATELESS_TRAFFIC_COST = 1
STATELESS_NON_OVERLAP_COST = 0

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
        if not fast_enough(n_tasks + n_clients + 2, n_tasks * n_clients + n_tasks + n_clients):
            self.notes.append(f"min_traffic {n_tasks}x{n_clients}: contracted cycle canceling")
            start = np.array([owner[t] for t in tasks])
            return cancel_negative_cycles(cost, start).assignment.tolist()
        graph = Graph()
        sink = n_tasks + n_clients
        for i, task in enumerate(tasks):
            for j in range(n_clients):
                graph.add_edge(i, n_tasks + j, 1, int(cost[i, j]), 1 if owner[task] == j else 0)
            graph.add_edge(-1, i, 1, 0, 1)
        for j in range(n_clients):
            graph.add_edge(n_tasks + j, sink, int(counts[j]), 0, int(counts[j]))
        graph.source, graph.sink = -1, sink
        graph.solve_min_cost_flow()
        return [
            next(v - n_tasks for v, e in sorted(graph.edges_from(i).items()) if e.flow > 0)
            for i in range(n_tasks)
        ]

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
            self.notes.append(f"balance_subtopology {n_tasks}x{n_clients}: contracted cycle canceling")
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
        if len(tasks) > FAITHFUL_PAIR_TASKS:
            return self._swap_standbys_sorted(tasks, pair, traffic, non_overlap)
        graph = Graph()
        n_tasks = len(tasks)
        sink = n_tasks + 2
        owner = {}
        for i, task in enumerate(tasks):
            for j, client in enumerate(pair):
                holds = task in client.standby
                if holds:
                    owner[task] = j
                graph.add_edge(i, n_tasks + j, 1, self.cost(task, client, holds, traffic, non_overlap, True), int(holds))
            graph.add_edge(-1, i, 1, 0, 1)
        for j, client in enumerate(pair):
            count = sum(1 for t in tasks if t in client.standby)
            graph.add_edge(n_tasks + j, sink, count, 0, count)
        graph.source, graph.sink = -1, sink
        graph.solve_min_cost_flow()
        moved = False
        for i, task in enumerate(tasks):
            j = next(v - n_tasks for v, e in sorted(graph.edges_from(i).items()) if e.flow > 0)
            if j != owner[task]:
                pair[owner[task]].unassign_standby(task)
                pair[j].assign_standby(task)
                moved = True
        return moved

    def _swap_standbys_sorted(self, tasks, pair, traffic, non_overlap) -> bool:
        """The two-client flow in closed form: the first client keeps its number of these
        standbys, and takes those with the smallest cost difference (ties stay where they are)."""
        first, second = pair
        count = sum(1 for t in tasks if t in first.standby)

        def difference(task: TaskKey) -> tuple:
            on_first = self.cost(task, first, task in first.standby, traffic, non_overlap, True)
            on_second = self.cost(task, second, task in second.standby, traffic, non_overlap, True)
            return (on_first - on_second, task not in first.standby, task)

        chosen = set(sorted(tasks, key=difference)[:count])
        moved = False
        for task in tasks:
            if task in chosen and task in second.standby:
                second.unassign_standby(task)
                first.assign_standby(task)
                moved = True
            elif task not in chosen and task in first.standby:
                first.unassign_standby(task)
                second.assign_standby(task)
                moved = True
        return moved
