"""Kafka's two graph constructors for KIP-925's min-cost flow (RackAwareGraphConstructor's
MinTrafficGraphConstructor and BalanceSubtopologyGraphConstructor), solved as Kafka's Graph
solves them: the internal RackAwareTaskAssignor (`optimizer.assignors.streams.rack_aware`) and
KIP-924's TaskAssignmentUtils (`optimizer.assignors.streams.kip924_utils`) both build them, over
their own costs and clients."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from optimizer.assignors.streams.kip925.balance_graph import BalanceGraph, max_flow_as_kafka
from optimizer.assignors.streams.kip925.balance_graph import cancel_cycles_as_kafka as cancel_balance_cycles_as_kafka
from optimizer.assignors.streams.kip925.cycle_canceling import cancel_negative_cycles
from optimizer.assignors.streams.kip925.graph import Graph
from optimizer.assignors.streams.kip925.kafka_graph import cancel_cycles_as_kafka
from optimizer.assignors.streams.kip925.optimize import within_caps
from optimizer.model.ids import TaskKey

# Kafka's search costs about tasks^2 x clients element steps (a few passes per cancelled cycle,
# each over every task-client edge): on the min_traffic graph 0.3 s at 1,000 x 50 and 12 s at
# 3,000 x 100 on the reference machine, on the balance_subtopology graph 1.3 s and 11 s. Beyond
# this the contracted cycle canceling is used.
KAFKA_TIE_BREAK_WORK = 300_000_000


def min_traffic(cost: np.ndarray, start: np.ndarray, notes: list[str], what: str = "") -> list[int]:
    """MinTrafficGraphConstructor's graph (`cost`: tasks x clients, the tasks now on clients
    `start`) solved as Kafka's Graph does (contracted cycle canceling beyond KAFKA_TIE_BREAK_WORK:
    Kafka's cost, perhaps another of the tied optima, which a note in `notes` says; `what` names
    the tasks there)."""
    n_tasks, n_clients = cost.shape
    if n_tasks * n_tasks * n_clients > KAFKA_TIE_BREAK_WORK:
        notes.append(
            f"min_traffic {what + ' ' if what else ''}{n_tasks}x{n_clients}: contracted cycle canceling, Kafka's cost; among "
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
    what: str = "",
) -> list[int]:
    """BalanceSubtopologyGraphConstructor's graph over `tasks` (sorted; rows of `cost`, now on
    clients `start`), with Kafka's node ids: the tasks, then a (group, client) node for every group
    of `groups` (those without a task of `tasks` keep their ids, without edges), then the clients,
    then the sink. Kafka starts from a max flow, then cancels negative cycles: reproduced over
    arrays (`balance_graph.py`), or, beyond KAFKA_TIE_BREAK_WORK, by contracted cycle canceling
    (Kafka's cost, perhaps another of the tied optima, which a note in `notes` says)."""
    n_tasks = len(tasks)
    position = {t: i for i, t in enumerate(tasks)}
    valid = [[t for t in group if t in position] for group in groups]
    counts = np.bincount(start, minlength=n_clients)
    # Kafka computes the cap in doubles: ceil(count / tasks * tasks of the group).
    caps = [[math.ceil(int(counts[j]) / n_tasks * len(group)) for j in range(n_clients)] for group in valid]
    if n_tasks * n_tasks * n_clients > KAFKA_TIE_BREAK_WORK:
        notes.append(
            f"balance_subtopology {what + ' ' if what else ''}{n_tasks}x{n_clients}: contracted cycle canceling, Kafka's cost; "
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
    order = [position[t] for group in valid for t in group]  # Kafka's task nodes, group by group
    graph = BalanceGraph(
        cost=np.asarray(cost, dtype=np.int64)[order].reshape(n_tasks, n_clients),
        group=np.array([g for g, group in enumerate(valid) for _ in group], dtype=np.int64),
        caps=np.array(caps, dtype=np.int64).reshape(len(valid), n_clients),
        counts=counts.astype(np.int64),
    )
    flow = max_flow_as_kafka(graph)
    if (flow < 0).any():
        raise AssertionError(f"max flow calculated: {int((flow >= 0).sum())} doesn't match taskSize: {n_tasks}")
    assigned = cancel_balance_cycles_as_kafka(graph, flow)
    target = [0] * n_tasks
    for node, row in enumerate(order):
        target[row] = int(assigned[node])
    return target


def balance_subtopology_graph(
    tasks: Sequence[TaskKey], groups: Sequence[Sequence[TaskKey]], cost: np.ndarray, start: np.ndarray, n_clients: int
) -> list[int]:
    """The same graph solved edge by edge by the port of Kafka's `Graph` (`graph.py`): the
    reference the array version is checked against in the tests (O(nodes x edges) per search)."""
    n_tasks = len(tasks)
    position = {t: i for i, t in enumerate(tasks)}
    valid = [[t for t in group if t in position] for group in groups]
    counts = np.bincount(start, minlength=n_clients)
    caps = [[math.ceil(int(counts[j]) / n_tasks * len(group)) for j in range(n_clients)] for group in valid]
    n_groups = len(valid)
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
