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

from collections.abc import Sequence

import numpy as np

from optimizer.assignors.java import kafka_client_order
from optimizer.assignors.streams.client_state import ClientState
from optimizer.assignors.streams.kip925.constructors import balance_subtopology, min_traffic
from optimizer.assignors.streams.kip925.kafka_graph import cancel_cycles_as_kafka
from optimizer.assignors.streams.rack_aware import STANDBY_OPTIMIZER_MAX_ITERATION
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
