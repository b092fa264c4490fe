"""The cross-rack rule, and everything that counts cross-rack reads counting through it."""

from __future__ import annotations

import numpy as np
import pytest

from goals.cross_rack_traffic import CrossRackTraffic, consumer_cross
from optimizer.evaluate import evaluate
from optimizer.formulation import formulate
from optimizer.generate import random_consumer_problem
from optimizer.model import problem_from_data, problem_to_data
from optimizer.model.racks import cross_by_rack, reads_across_racks
from optimizer.pipeline.worker import rack_traffic
from optimizer.solve import solve


@pytest.mark.parametrize(
    ("rack", "replica_racks", "across"),
    [
        ("r1", ("r2",), True),
        ("r1", ("r1", "r2"), False),
        ("r1", (), False),  # replica racks unknown
        ("r1", None, False),  # replica racks unknown
        (None, ("r2",), False),  # the reader's rack unknown
        (None, (), False),
    ],
)
def test_reads_across_racks(rack, replica_racks, across):
    assert reads_across_racks(rack, replica_racks) is across


def test_cross_by_rack_applies_the_rule_per_cell():
    replica_racks = [("r1",), None, ("r1", "r2"), (), ("r3",), ("r1",)]
    racks = ["r1", None, "r2", "r4"]
    expected = [[reads_across_racks(rack, replicas) for rack in racks] for replicas in replica_racks]
    assert cross_by_rack(replica_racks, racks).tolist() == np.array(expected, dtype=np.int64).tolist()
    assert cross_by_rack([], racks).shape == (0, 4)
    assert cross_by_rack(replica_racks, []).shape == (6, 0)


def _group():
    return problem_from_data(
        {
            "kind": "consumer",
            "config": {"partition.assignment.strategy": "range"},
            "topics": [
                {"name": "orders-eu", "partitions": 3, "replica_racks": [["r1"], ["r2"], []]},
                {"name": "clicks", "partitions": 2},
            ],
            "members": [
                {"id": "a", "rack": "r1", "subscriptions": ["orders-eu", "clicks"]},
                {"id": "b", "rack": "r2", "subscriptions": ["orders-eu"]},
                {"id": "c", "subscriptions": ["orders-eu", "clicks"]},
            ],
        }
    )


def test_replica_racks_of_a_consumer_partition():
    group = _group()
    assert group.replica_racks_of("orders-eu-1") == ("r2",)
    assert group.replica_racks_of("orders-eu-2") == ()
    assert group.replica_racks_of("clicks-0") is None  # the topic's racks are not known
    assert group.replica_racks_of("orders-eu-3") is None  # beyond the partition count
    assert group.replica_racks_of("gone-0") is None  # no such topic
    partitions = ["orders-eu-0", "orders-eu-1", "orders-eu-2", "clicks-1"]
    assert group.cross_by_rack(partitions, ["r1", "r2", None]).tolist() == [[0, 1, 0], [1, 0, 0], [0, 0, 0], [0, 0, 0]]


@pytest.mark.parametrize("seed", range(4))
def test_the_goal_the_evaluator_and_the_pipeline_count_alike(seed):
    # Kafka's round robin is not rack-aware: some reads cross racks.
    data = problem_to_data(random_consumer_problem(seed, members=6, topics=3, racks=3, strategy="roundrobin"))
    del data["members"][-1]["rack"]  # a member without a rack never reads across racks
    data["topics"][0].pop("replica_racks")  # nor does anyone reading a topic whose replica racks are unknown
    problem = problem_from_data(data)
    solution = solve(problem, solver="kafka")
    metric = evaluate(problem, solution).metrics.cross_rack_partitions
    assert CrossRackTraffic().evaluate(problem, solution.assignment) == metric
    assert sum(rack_traffic(problem, solution).values()) == metric
    formulation = formulate(problem)
    cross = consumer_cross(formulation)
    member = problem.member_by_id
    for pair, (p, m) in enumerate(zip(formulation.pair_partition.tolist(), formulation.pair_member.tolist(), strict=True)):
        partition = formulation.partitions[p]
        assert cross[pair] == reads_across_racks(member[formulation.members[m]].rack, problem.replica_racks_of(partition))
    chosen = formulation.encode(solution.assignment)
    assert int(cross @ chosen[formulation.x]) == metric
