"""KIP-925's optimisation of an assignment of active tasks: `optimizeActiveTasks`.

Given a complete assignment of some tasks, it returns the assignment of least KIP-925 cost with
every client keeping its number of those tasks; the non-overlap cost is counted against the given
assignment. With `balance_subtopology`, client k holds at most ceil(S_s * C_k / n) tasks of
subtopology s (S_s tasks in s, C_k tasks on k, n tasks in all), KIP-925 section 4.B.II.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ortools.graph.python import max_flow

from optimizer.assignors.streams.kip925.cycle_canceling import CycleCancelingResult, cancel_negative_cycles_full
from optimizer.costs import StreamsIndex, active_cost_matrix
from optimizer.model.streams import RackAwareStrategy


@dataclass(frozen=True)
class ActiveOptimization:
    assignment: np.ndarray
    """Client index per optimised task."""
    canceling: CycleCancelingResult


def subtopology_caps(groups: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """ceil(S_s * C_k / n) for every subtopology group s and client k (KIP-925 4.B.II).

    Computed as Kafka does, in doubles: ceil(C_k / n * S_s), so the caps are Kafka's even where
    rounding makes them one larger than the exact fraction.
    """
    n = int(counts.sum())
    sizes = np.bincount(groups)
    return np.ceil(np.outer(sizes, counts / max(n, 1))).astype(np.int64)


def optimize_active_tasks(
    index: StreamsIndex,
    rows: np.ndarray,
    current: np.ndarray,
    traffic_cost: int,
    non_overlap_cost: int,
    strategy: RackAwareStrategy,
) -> ActiveOptimization:
    """Re-place the tasks `rows` (positions in `index.tasks`), now on clients `current`."""
    cost = active_cost_matrix(index, rows, traffic_cost, non_overlap_cost, current)
    if strategy != RackAwareStrategy.BALANCE_SUBTOPOLOGY:
        result = cancel_negative_cycles_full(cost, current)
        return ActiveOptimization(result.assignment, result)
    _, groups = np.unique(index.subtopology[rows], return_inverse=True)
    counts = np.bincount(current, minlength=len(index.clients))
    caps = subtopology_caps(groups, counts)
    start = within_caps(current, groups, caps)
    result = cancel_negative_cycles_full(cost, start, groups, caps)
    return ActiveOptimization(result.assignment, result)


def within_caps(current: np.ndarray, groups: np.ndarray, caps: np.ndarray) -> np.ndarray:
    """A feasible flow for the capped graph: the clients' counts kept, the caps respected.

    KIP-925 leaves open how to find one; a max flow from subtopologies (supply: their sizes) to
    clients (demand: their counts) through edges of capacity caps[s, k] gives how many tasks of s
    each client takes. Such a flow exists because S_s * C_k / n is a fractional one within the
    caps. Tasks then stay on their current client while its share of their subtopology lasts.
    """
    n_groups, n_clients = caps.shape
    flow_now = np.zeros_like(caps)
    np.add.at(flow_now, (groups, current), 1)
    if (flow_now <= caps).all():
        return current.copy()
    counts = np.bincount(current, minlength=n_clients)
    sizes = np.bincount(groups, minlength=n_groups)
    solver = max_flow.SimpleMaxFlow()
    source, sink = n_groups + n_clients, n_groups + n_clients + 1
    for g in range(n_groups):
        solver.add_arc_with_capacity(source, g, int(sizes[g]))
    arcs = {}
    for g in range(n_groups):
        for k in range(n_clients):
            arcs[g, k] = solver.add_arc_with_capacity(g, n_groups + k, int(caps[g, k]))
    for k in range(n_clients):
        solver.add_arc_with_capacity(n_groups + k, sink, int(counts[k]))
    status = solver.solve(source, sink)
    if status != solver.OPTIMAL or solver.optimal_flow() != len(current):
        raise RuntimeError("no assignment within the subtopology caps; KIP-925's caps guarantee one")
    quota = np.array([[solver.flow(arcs[g, k]) for k in range(n_clients)] for g in range(n_groups)])
    result = np.full_like(current, -1)
    for t in range(len(current)):  # keep a task where its subtopology still has room
        g, k = groups[t], current[t]
        if quota[g, k] > 0:
            quota[g, k] -= 1
            result[t] = k
    for task in np.flatnonzero(result < 0):  # the rest fill the remaining room, lowest client first
        k = int(np.flatnonzero(quota[groups[task]] > 0)[0])
        quota[groups[task], k] -= 1
        result[task] = k
    return result
