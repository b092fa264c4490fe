"""KIP-924's TaskAssignmentUtils (`org.apache.kafka.streams.processor.assignment`, Kafka 1eb7644): the
rack-aware optimisation of actives and standbys that public task assignors call.

The min-cost flow is KIP-925's (the graphs of `rack_aware`), but TaskAssignmentUtils differs from
the internal RackAwareTaskAssignor in ways that change results:
* it runs only when both `rack.aware.assignment.traffic_cost` and `.non_overlap_cost` are set:
  canPerformRackAwareOptimization reads the config, not the caller's cost overrides; besides, a
  strategy other than `none` and complete rack information are needed;
* an active's cross-rack traffic counts every partition of the task, source and changelog alike
  (TaskInfo.topicPartitions), and every one of them must have replica racks;
* clients are visited in the order of the HashMap of process ids (ApplicationState's
  kafkaStreamsStates), not sorted;
* balance_subtopology groups only the subtopologies of the tasks being optimised, and the standby
  swaps use the configured strategy's graph (the internal assignor always uses min_traffic);
* the standby move predicate is given the source client twice (as source and as destination), so
  client tags never block a swap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from optimizer.assignors.java import kafka_client_order
from optimizer.assignors.streams.client_state import ClientState
from optimizer.assignors.streams.kip925.cycle_canceling import cancel_negative_cycles
from optimizer.assignors.streams.kip925.graph import Graph, fast_enough
from optimizer.assignors.streams.kip925.kafka_graph import cancel_cycles_as_kafka
from optimizer.assignors.streams.kip925.optimize import within_caps
from optimizer.assignors.streams.rack_aware import KAFKA_TIE_BREAK_WORK, STANDBY_OPTIMIZER_MAX_ITERATION
from optimizer.model.ids import TaskKey, parse_task_id
from optimizer.model.streams import RackAwareStrategy, StreamsProblem


class TaskRacks:
    """Replica racks of each task's partitions, as TaskInfo.topicPartitions gives them."""

    def __init__(self, problem: StreamsProblem):
        self.problem = problem
        self.all: dict[TaskKey, list[frozenset[str]]] = {}
        self.changelog: dict[TaskKey, list[frozenset[str]]] = {}
        for task in problem.tasks:
            key = parse_task_id(task.id)
            # One TaskTopicPartition per partition: a source topic that is also the changelog is one entry.
            partitions = {p.id: frozenset(p.replica_racks) for p in task.source_partitions}
            partitions.update({p.id: frozenset(p.replica_racks) for p in task.changelog_partitions})
            self.all[key] = list(partitions.values())
            self.changelog[key] = [frozenset(p.replica_racks) for p in task.changelog_partitions]

    def can_optimize(self, standby: bool) -> bool:
        """canPerformRackAwareOptimization for actives (every partition) or standbys (changelogs)."""
        config = self.problem.config
        if config.rack_aware_assignment_strategy == RackAwareStrategy.NONE:
            return False
        if config.rack_aware_assignment_traffic_cost is None or config.rack_aware_assignment_non_overlap_cost is None:
            return False
        if any(client.rack is None for client in self.problem.clients):
            return False
        partitions = self.changelog if standby else self.all
        return all(racks for task in partitions.values() for racks in task)

    def cost(self, task: TaskKey, client: ClientState, in_current: bool, traffic: int, non_overlap: int, standby: bool) -> int:
        racks = (self.changelog if standby else self.all)[task]
        crossing = sum(1 for replicas in racks if client.rack not in replicas)
        return traffic * crossing + (0 if in_current else non_overlap)


def _subtopology_groups(tasks: Sequence[TaskKey]) -> list[list[TaskKey]]:
    """RackAwareGraphConstructorFactory.create(strategy, tasks): the tasks by subtopology, in order."""
    groups: dict[int, list[TaskKey]] = {}
    for task in sorted(tasks):
        groups.setdefault(task.subtopology, []).append(task)
    return [groups[s] for s in sorted(groups)]


def optimize_active_tasks(
    racks: TaskRacks,
    clients: Sequence[ClientState],
    tasks: Sequence[TaskKey],
    traffic: int,
    non_overlap: int,
    notes: list[str],
) -> None:
    """optimizeRackAwareActiveTasks over `tasks` with `clients` in Kafka's HashMap order."""
    tasks = sorted(tasks)
    if not tasks or not racks.can_optimize(standby=False):
        return
    holder = []
    for task in tasks:
        holder.append(next(j for j, client in enumerate(clients) if task in client.active))
    cost = np.array(
        [[racks.cost(t, c, holder[i] == j, traffic, non_overlap, False) for j, c in enumerate(clients)] for i, t in enumerate(tasks)],
        dtype=np.int64,
    )
    start = np.array(holder, dtype=np.int64)
    if racks.problem.config.rack_aware_assignment_strategy == RackAwareStrategy.BALANCE_SUBTOPOLOGY:
        target = balance_subtopology(tasks, _subtopology_groups(tasks), cost, start, len(clients), notes, "active")
    else:
        target = min_traffic(cost, start, notes, "active")
    for task, before, after in zip(tasks, holder, target, strict=True):
        if before != after:
            clients[before].unassign_active(task)
            clients[after].assign_active(task)


def optimize_standby_tasks(
    racks: TaskRacks,
    clients: Sequence[ClientState],
    traffic: int,
    non_overlap: int,
    notes: list[str],
) -> None:
    """optimizeRackAwareStandbyTasks: up to four rounds over pairs of clients (Kafka's HashMap
    order) on different racks, each pair's movable standbys re-placed by a two-client min-cost flow."""
    standby_tasks = sorted({task for client in clients for task in client.standby})
    if not standby_tasks or not racks.can_optimize(standby=True):
        return
    strategy = racks.problem.config.rack_aware_assignment_strategy
    groups = _subtopology_groups(standby_tasks)  # fixed once, from the standbys at the start
    order = {client_id: i for i, client_id in enumerate(kafka_client_order(c.id for c in clients))}
    moved, rounds = True, 0
    while moved and rounds < STANDBY_OPTIMIZER_MAX_ITERATION:
        moved, rounds = False, rounds + 1
        for i, first in enumerate(clients):
            for second in clients[i + 1 :]:
                if first.rack == second.rack:
                    continue  # swapping between clients of one rack changes no traffic
                movable_first = [t for t in first.standby if not second.holds(t)]
                movable_second = [t for t in second.standby if not first.holds(t)]
                if not movable_first or not movable_second:
                    continue
                tasks = sorted(movable_first + movable_second)
                pair = sorted((first, second), key=lambda c: order[c.id])  # ProcessId order
                holder = np.array([0 if t in pair[0].standby else 1 for t in tasks], dtype=np.int64)
                cost = np.array(
                    [[racks.cost(t, c, t in c.standby, traffic, non_overlap, True) for c in pair] for t in tasks],
                    dtype=np.int64,
                )
                if strategy == RackAwareStrategy.BALANCE_SUBTOPOLOGY:
                    target = balance_subtopology(tasks, groups, cost, holder, 2, notes, "standby")
                else:
                    target = cancel_cycles_as_kafka(cost, holder).tolist()
                for task, before, after in zip(tasks, holder.tolist(), target, strict=True):
                    if before != after:
                        pair[before].unassign_standby(task)
                        pair[after].assign_standby(task)
                        moved = True


def min_traffic(cost: np.ndarray, start: np.ndarray, notes: list[str], what: str) -> list[int]:
    """MinTrafficGraphConstructor's graph solved as Kafka's Graph does (contracted cycle canceling
    beyond KAFKA_TIE_BREAK_WORK: Kafka's cost, perhaps another of the tied optima)."""
    n_tasks, n_clients = cost.shape
    if n_tasks * n_tasks * n_clients > KAFKA_TIE_BREAK_WORK:
        notes.append(
            f"min_traffic {what} {n_tasks}x{n_clients}: contracted cycle canceling, Kafka's cost; among "
            "equally cheap placements Kafka may pick another"
        )
        return cancel_negative_cycles(cost, start).assignment.tolist()
    return cancel_cycles_as_kafka(cost, start).tolist()


def balance_subtopology(
    tasks: Sequence[TaskKey],
    groups: Sequence[Sequence[TaskKey]],
    cost: np.ndarray,
    start: np.ndarray,
    n_clients: int,
    notes: list[str],
    what: str,
) -> list[int]:
    """BalanceSubtopologyGraphConstructor's graph over `tasks` (sorted; rows of `cost`, now on
    clients `start`), with Kafka's node ids: the tasks, then a (group, client) node for every group
    of `groups` (those without a task of `tasks` keep their ids, without edges), then the clients,
    then the sink. Kafka starts from a max flow, then cancels negative cycles."""
    n_tasks = len(tasks)
    position = {t: i for i, t in enumerate(tasks)}
    valid = [[t for t in group if t in position] for group in groups]
    counts = np.bincount(start, minlength=n_clients)
    # Kafka computes the cap in doubles: ceil(count / tasks * tasks of the group).
    caps = [[math.ceil(int(counts[j]) / n_tasks * len(group)) for j in range(n_clients)] for group in valid]
    n_groups = len(valid)
    nodes = n_tasks + n_clients * n_groups + n_clients + 2
    edges = n_tasks * n_clients + n_groups * n_clients + n_tasks + n_clients
    if not fast_enough(nodes, edges):
        notes.append(
            f"balance_subtopology {what} {n_tasks}x{n_clients}: contracted cycle canceling, Kafka's cost; "
            "among equally cheap placements Kafka may pick another"
        )
        present = [g for g, group in enumerate(valid) if group]
        group_of = np.empty(n_tasks, dtype=np.int64)
        for new, g in enumerate(present):
            for t in valid[g]:
                group_of[position[t]] = new
        cap_array = np.array([caps[g] for g in present], dtype=np.int64).reshape(len(present), n_clients)
        feasible = within_caps(start, group_of, cap_array)
        return cancel_negative_cycles(cost, feasible, group_of, cap_array).assignment.tolist()
    graph = Graph()
    second = n_tasks + n_clients * n_groups
    sink = second + n_clients
    node_of: dict[TaskKey, int] = {}
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
