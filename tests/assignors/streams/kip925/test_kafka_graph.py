"""`kafka_graph` against the edge-by-edge port of Kafka's Graph: the same assignment, ties included."""

import numpy as np
import pytest

from optimizer.assignors.streams.kip925.cycle_canceling import cancel_negative_cycles
from optimizer.assignors.streams.kip925.graph import kafka_assignment
from optimizer.assignors.streams.kip925.kafka_graph import cancel_cycles_as_kafka


def _instance(rng, n, m, spread):
    holder = rng.integers(0, m, size=n)
    cost = rng.integers(0, spread, size=(n, m))
    if rng.random() < 0.5:  # KIP-925's shape: traffic x 10, plus 1 off the current client
        cost = cost * 10 + (np.arange(m)[None, :] != holder[:, None])
    return cost, holder


@pytest.mark.parametrize("seed", range(6))
def test_same_assignment_as_kafkas_graph(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n, m = int(rng.integers(1, 28)), int(rng.integers(2, 6))
        cost, holder = _instance(rng, n, m, int(rng.choice([2, 3, 20])))  # few values: many ties
        expected = kafka_assignment(cost, holder)
        assert cancel_cycles_as_kafka(cost, holder).tolist() == expected, (cost.tolist(), holder.tolist())


def test_large_graph_reaches_the_minimum_cost_and_keeps_counts():
    rng = np.random.default_rng(7)
    cost, holder = _instance(rng, 600, 30, 3)
    result = cancel_cycles_as_kafka(cost, holder)
    optimum = cancel_negative_cycles(cost, holder).assignment
    rows = np.arange(len(holder))
    assert cost[rows, result].sum() == cost[rows, optimum].sum() < cost[rows, holder].sum()
    assert np.bincount(result, minlength=30).tolist() == np.bincount(holder, minlength=30).tolist()


def test_two_clients_swap_the_pair_that_saves_most():
    # Task 0 (on client 0) costs 5 there and 0 on client 1; task 1 (on client 1) the reverse.
    cost = np.array([[5, 0], [0, 5], [1, 1]])
    assert cancel_cycles_as_kafka(cost, np.array([0, 1, 0])).tolist() == [1, 0, 0]
