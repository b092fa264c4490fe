"""KIP-925 cycle canceling reaches the exact optimum, checked by independent methods."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment, linprog

from optimizer.assignors.streams.kip925.cycle_canceling import cancel_negative_cycles, cancel_negative_cycles_full
from optimizer.assignors.streams.kip925.graph import kafka_assignment
from optimizer.assignors.streams.kip925.optimize import subtopology_caps


def slots_optimum(cost: np.ndarray, assignment: np.ndarray) -> int:
    """The assignment problem on client slots (each client repeated by its task count)."""
    counts = np.bincount(assignment, minlength=cost.shape[1])
    slots = np.repeat(np.arange(cost.shape[1]), counts)
    rows, cols = linear_sum_assignment(cost[:, slots])
    return int(cost[rows, slots[cols]].sum())


def capped_optimum(cost, assignment, groups, caps) -> int:
    """The flow problem as a linear programme (totally unimodular: its optimum is integral)."""
    n_tasks, n_clients = cost.shape
    counts = np.bincount(assignment, minlength=n_clients)
    a_eq, b_eq = [], []
    for t in range(n_tasks):
        row = np.zeros(n_tasks * n_clients)
        row[t * n_clients : (t + 1) * n_clients] = 1
        a_eq.append(row)
        b_eq.append(1)
    for k in range(n_clients):
        row = np.zeros(n_tasks * n_clients)
        row[k::n_clients] = 1
        a_eq.append(row)
        b_eq.append(counts[k])
    a_ub, b_ub = [], []
    for g in range(caps.shape[0]):
        for k in range(n_clients):
            row = np.zeros(n_tasks * n_clients)
            row[np.flatnonzero(groups == g) * n_clients + k] = 1
            a_ub.append(row)
            b_ub.append(caps[g, k])
    result = linprog(cost.ravel(), A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=(0, 1), method="highs")
    return round(result.fun)


@pytest.mark.parametrize("seed", range(60))
def test_min_traffic_reaches_the_assignment_optimum(seed):
    rng = np.random.default_rng(seed)
    n_tasks, n_clients = int(rng.integers(1, 300)), int(rng.integers(1, 12))
    cost = rng.integers(0, 4, size=(n_tasks, n_clients)) * 10 + rng.integers(0, 2, size=(n_tasks, n_clients))
    start = rng.integers(0, n_clients, size=n_tasks)
    result = cancel_negative_cycles(cost, start)
    assert np.array_equal(np.bincount(result.assignment, minlength=n_clients), np.bincount(start, minlength=n_clients))
    assert result.cost == cost[np.arange(n_tasks), result.assignment].sum()
    assert result.cost == slots_optimum(cost, start)


@pytest.mark.parametrize("seed", range(40))
def test_capped_graph_reaches_the_linear_programme_optimum(seed):
    rng = np.random.default_rng(1000 + seed)
    n_tasks, n_clients = int(rng.integers(2, 30)), int(rng.integers(2, 6))
    groups = rng.integers(0, int(rng.integers(1, 4)), size=n_tasks)
    groups = np.unique(groups, return_inverse=True)[1]
    cost = rng.integers(0, 4, size=(n_tasks, n_clients)) * 10 + rng.integers(0, 2, size=(n_tasks, n_clients))
    start = rng.integers(0, n_clients, size=n_tasks)
    flow = np.zeros((groups.max() + 1, n_clients), dtype=int)
    np.add.at(flow, (groups, start), 1)
    caps = flow + rng.integers(0, 2, size=flow.shape)
    result = cancel_negative_cycles(cost, start, groups, caps)
    after = np.zeros_like(flow)
    np.add.at(after, (groups, result.assignment), 1)
    assert (after <= caps).all()
    assert result.cost == capped_optimum(cost, start, groups, caps)


@pytest.mark.parametrize("seed", range(20))
def test_contracted_canceling_and_kafkas_graph_agree_on_the_optimum(seed):
    rng = np.random.default_rng(2000 + seed)
    n_tasks, n_clients = int(rng.integers(2, 25)), int(rng.integers(2, 6))
    cost = rng.integers(0, 3, size=(n_tasks, n_clients)) * 10 + rng.integers(0, 2, size=(n_tasks, n_clients))
    start = rng.integers(0, n_clients, size=n_tasks)
    kafka = kafka_assignment(cost, start)
    assert int(cost[np.arange(n_tasks), kafka].sum()) == cancel_negative_cycles(cost, start).cost


def test_kip925_caps_of_the_worked_example():
    # Three clients with 1, 2, 3 tasks; two subtopologies of three tasks: caps 1, 1 and 2.
    assert subtopology_caps(np.array([0, 0, 0, 1, 1, 1]), np.array([1, 2, 3])).tolist() == [[1, 1, 2], [1, 1, 2]]


@pytest.mark.parametrize("seed", range(40))
def test_full_residual_graph_and_contracted_graph_agree(seed):
    """The reference goal cancels cycles on KIP-925's own graph; the contracted graph (used by
    the kafka solver on large graphs) must reach the same optimum."""
    rng = np.random.default_rng(3000 + seed)
    n_tasks, n_clients = int(rng.integers(1, 60)), int(rng.integers(1, 8))
    cost = rng.integers(0, 4, size=(n_tasks, n_clients)) * 10 + rng.integers(0, 2, size=(n_tasks, n_clients))
    start = rng.integers(0, n_clients, size=n_tasks)
    full = cancel_negative_cycles_full(cost, start)
    assert full.cost == cancel_negative_cycles(cost, start).cost == slots_optimum(cost, start)
    assert np.array_equal(np.bincount(full.assignment, minlength=n_clients), np.bincount(start, minlength=n_clients))
    groups = np.unique(rng.integers(0, 3, size=n_tasks), return_inverse=True)[1]
    flow = np.zeros((groups.max() + 1, n_clients), dtype=int)
    np.add.at(flow, (groups, start), 1)
    caps = flow + rng.integers(0, 2, size=flow.shape)
    assert cancel_negative_cycles_full(cost, start, groups, caps).cost == cancel_negative_cycles(cost, start, groups, caps).cost
