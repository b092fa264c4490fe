"""Kafka's Graph, step for step: GraphTest's scenarios."""

from __future__ import annotations

import random

import pytest

from optimizer.assignors.streams.kip925.graph import Graph


def build(edges, source, sink) -> Graph:
    graph = Graph()
    for u, v, capacity, cost, flow in edges:
        graph.add_edge(u, v, capacity, cost, flow)
    graph.source, graph.sink = source, sink
    return graph


def test_min_cost_flow():
    graph = build(
        [(0, 1, 1, 3, 1), (0, 3, 1, 1, 0), (2, 1, 1, 1, 0), (2, 3, 1, 2, 1),
         (-1, 0, 1, 0, 1), (-1, 2, 1, 0, 1), (1, 99, 1, 0, 1), (3, 99, 1, 0, 1)],
        -1, 99,
    )  # fmt: skip
    assert graph.total_cost() == 5
    graph.solve_min_cost_flow()
    assert graph.total_cost() == 2
    assert [graph.edges_from(0)[3].flow, graph.edges_from(2)[1].flow] == [1, 1]
    assert [graph.edges_from(0)[1].flow, graph.edges_from(2)[3].flow] == [0, 0]


def test_min_cost_detects_node_not_in_negative_cycle():
    graph = build(
        [(-1, 0, 1, 0, 1), (-1, 1, 1, 0, 1), (0, 2, 1, 1, 0), (0, 3, 1, 1, 0), (0, 4, 1, 10, 1),
         (1, 2, 1, 1, 0), (1, 3, 1, 10, 1), (1, 4, 1, 1, 0), (2, 99, 0, 0, 0), (3, 99, 1, 0, 1), (4, 99, 1, 0, 1)],
        -1, 99,
    )  # fmt: skip
    assert graph.total_cost() == 20
    graph.solve_min_cost_flow()
    assert graph.total_cost() == 2
    flows = {(u, v): e.flow for u in (0, 1) for v, e in graph.edges_from(u).items()}
    assert flows == {(0, 2): 0, (0, 3): 1, (0, 4): 0, (1, 2): 0, (1, 3): 0, (1, 4): 1}


@pytest.mark.parametrize("seed", range(10))
def test_deterministic_whatever_the_edge_order(seed):
    edges = [(0, 1, 1, 2, 1), (0, 2, 1, 1, 0), (0, 3, 1, 1, 0), (0, 4, 1, 1, 0),
             (1, 5, 1, 1, 1), (2, 5, 1, 1, 0), (3, 5, 1, 1, 0), (4, 5, 1, 1, 0)]  # fmt: skip
    random.Random(seed).shuffle(edges)
    graph = build(edges, 0, 5)
    assert graph.total_cost() == 3
    graph.solve_min_cost_flow()
    assert graph.total_cost() == 2
    assert graph.edges_from(0)[2].flow == 1 and graph.edges_from(2)[5].flow == 1


def test_max_flow():
    graph = build(
        [(0, 1, 10, 0, 0), (0, 2, 10, 0, 0), (0, 3, 10, 0, 0), (1, 4, 5, 0, 0), (2, 5, 5, 0, 0),
         (3, 6, 5, 0, 0), (4, 7, 2, 0, 0), (5, 7, 2, 0, 0), (6, 7, 2, 0, 0)],
        0, 7,
    )  # fmt: skip
    assert graph.calculate_max_flow() == 6
    assert [graph.edges_from(u)[7].flow for u in (4, 5, 6)] == [2, 2, 2]
    assert build([(0, 1, 100, 0, 0)], 0, 1).calculate_max_flow() == 100


def test_flow_imbalance_is_rejected():
    graph = build([(0, 1, 1, 1, 1), (0, 2, 2, 1, 2), (1, 3, 1, 1, 1), (2, 3, 2, 1, 0)], 0, 3)
    with pytest.raises(ValueError, match="Input flow for node 2 is 2 which doesn't match output flow 0"):
        graph.solve_min_cost_flow()
