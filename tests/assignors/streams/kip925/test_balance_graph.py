"""`balance_graph` against the edge-by-edge port of Kafka's Graph on BalanceSubtopologyGraphConstructor's
graph: the same max flow and the same assignment after cycle canceling, ties included."""

import math
import random

import numpy as np
import pytest

from optimizer.assignors.streams.kip925.constructors import balance_subtopology, balance_subtopology_graph
from optimizer.assignors.streams.kip925.cycle_canceling import cancel_negative_cycles
from optimizer.assignors.streams.kip925.optimize import within_caps


def _instance(seed: int, tasks: tuple[int, int], clients: tuple[int, int], groups: tuple[int, ...]):
    """Tasks of several subtopologies (some groups without a task of the set), costs with many ties,
    starts that leave some clients empty and crowd others."""
    rng = random.Random(f"balance-{seed}")
    n_clients = rng.randint(*clients)
    n_groups = rng.choice(groups)
    keys = sorted({(rng.randrange(n_groups), p) for p in range(rng.randint(*tasks))})
    task_groups = [[t for t in keys if t[0] == g] for g in range(n_groups + rng.randint(0, 1))]
    if rng.random() < 0.3:
        task_groups.reverse()  # Kafka's node order follows the groups' order, not the task ids'
    values = rng.choice([[0, 1], [0, 5, 10], [0, 2, 3, 7, 12], [0]])
    cost = np.array([[rng.choice(values) for _ in range(n_clients)] for _ in keys], dtype=np.int64).reshape(len(keys), n_clients)
    used = rng.sample(range(n_clients), rng.randint(1, n_clients))
    start = np.array([rng.choice(used) for _ in keys], dtype=np.int64)
    return keys, task_groups, cost, start, n_clients


@pytest.mark.parametrize("seed", range(8))
def test_same_assignment_as_kafkas_graph(seed):
    for case in range(40):
        keys, groups, cost, start, n_clients = _instance(seed * 1000 + case, (1, 40), (2, 8), (1, 1, 2, 3, 5))
        expected = balance_subtopology_graph(keys, groups, cost, start, n_clients)
        assert balance_subtopology(keys, groups, cost, start, n_clients, []) == expected, (seed, case)


def test_larger_graphs_give_kafkas_assignment_too():
    """Up to 120 tasks over 12 clients (the port takes seconds per graph there)."""
    for seed in range(4):
        keys, groups, cost, start, n_clients = _instance(10_000 + seed, (80, 120), (8, 12), (1, 3, 6))
        expected = balance_subtopology_graph(keys, groups, cost, start, n_clients)
        assert balance_subtopology(keys, groups, cost, start, n_clients, []) == expected


def test_large_graph_reaches_the_contracted_optimum_within_the_caps():
    keys, groups, cost, start, n_clients = _instance(7, (600, 600), (30, 30), (4,))
    notes: list[str] = []
    result = np.array(balance_subtopology(keys, groups, cost, start, n_clients, notes))
    assert not notes  # Kafka's own search, not the contracted canceling
    group_of = np.array([next(g for g, group in enumerate(groups) if key in group) for key in keys])
    counts = np.bincount(start, minlength=n_clients)
    caps = np.array([[math.ceil(int(counts[j]) / len(keys) * len(group)) for j in range(n_clients)] for group in groups])  # Kafka's doubles
    per_group = np.zeros_like(caps)
    np.add.at(per_group, (group_of, result), 1)
    assert (per_group <= caps).all() and np.bincount(result, minlength=n_clients).tolist() == counts.tolist()
    rows = np.arange(len(keys))
    optimum = cancel_negative_cycles(cost, within_caps(start, group_of, caps), group_of, caps).assignment
    assert cost[rows, result].sum() == cost[rows, optimum].sum()
