"""Golden: Kafka's assignors (`solve(..., solver="kafka")`) on the seed documents' examples give
the documents' answers (the example files themselves are checked in tests/test_evaluate_examples.py)."""

from __future__ import annotations

import pytest

from optimizer import load_problem, load_solution
from optimizer.solve import solve
from tests.conftest import EXAMPLES


def assignment_of(solution):
    return {c: (list(h.active), list(h.standby), list(h.warmup)) for c, h in solution.assignment.items()}


def kafka(path: str, **config):
    problem = load_problem(EXAMPLES / path)
    if config:
        problem = problem.model_copy(update={"config": problem.config.model_copy(update=config)})
    return solve(problem, solver="kafka")


@pytest.mark.parametrize(
    "name",
    ["scaling-in-standbys-in-sync", "scaling-in-standbys-lagging-1", "scaling-in-standbys-lagging-2"],
)
def test_kip441_scaling_in_comes_out_as_the_kip_shows(name):
    solution = kafka(f"kip441/{name}.problem.yaml")
    expected = load_solution(EXAMPLES / "kip441" / f"{name}.expected.solution.json")
    assert solution.assignment == expected.assignment
    assert solution.followup_rebalance == expected.followup_rebalance  # in sync: no second rebalance


def test_kafka_assigns_kip441_scaling_out_as_the_kip_shows():
    first = kafka("kip441/scaling-out-1.problem.yaml")
    document = load_solution(EXAMPLES / "kip441" / "scaling-out-1.expected.solution.json")
    # The KIP's actives and standbys; I3 warms up T3 (its target) and one more standby.
    for client in ("I1", "I2"):
        assert first.assignment[client] == document.assignment[client]
    assert first.followup_rebalance and "0_3" in first.assignment["I3"].warmup
    assert len(first.assignment["I3"].warmup) == 2 and not first.assignment["I3"].active
    assert first.assignment == load_solution(EXAMPLES / "kip441" / "scaling-out-1.kafka.solution.json").assignment
    stable = kafka("kip441/scaling-out-2.problem.yaml")
    # Stable: the KIP's actives (I3 runs T3), one standby each, nothing more to move.
    assert {c: list(h.active) for c, h in stable.assignment.items()} == {"I1": ["0_1"], "I2": ["0_2"], "I3": ["0_3"]}
    assert [len(h.standby) for h in stable.assignment.values()] == [1, 1, 1]
    assert not stable.followup_rebalance
    assert stable.assignment == load_solution(EXAMPLES / "kip441" / "scaling-out-2.kafka.solution.json").assignment


def test_kafka_assigns_the_kip925_balance_subtopology_example():
    solution = kafka("kip925/three-clients-1-2-3-threads.problem.yaml")
    expected = load_solution(EXAMPLES / "kip925" / "three-clients-1-2-3-threads.expected.solution.json")
    assert solution.assignment == expected.assignment  # {s1_1}, {s1_2, s2_1}, {s1_3, s2_2, s2_3}


def test_kip708_reaches_the_ideal_distribution():
    solution = kafka("kip708/nine-nodes.problem.yaml")
    expected = load_solution(EXAMPLES / "kip708" / "nine-nodes.ideal-5-9.solution.json")
    assert solution.assignment == expected.assignment
    assert solution.metrics.standby_tag_conflicts == 0


def test_kafka12464_constrained_sticky():
    solution = kafka("kafka12464/c2-joins.problem.yaml")
    assert solution.assignment == load_solution(EXAMPLES / "kafka12464" / "c2-joins.constrained.solution.json").assignment
    cooperative = kafka("kafka12464/c2-joins-cooperative.problem.yaml")
    expected = load_solution(EXAMPLES / "kafka12464" / "c2-joins-cooperative.first-round.solution.json")
    assert cooperative.assignment == expected.assignment and cooperative.followup_rebalance


@pytest.mark.parametrize(
    ("problem", "strategy", "label"),
    [
        ("example1-fresh", "sticky", "sticky"),
        ("example1-fresh", "roundrobin", "roundrobin"),
        ("example1-c1-removed", "roundrobin", "roundrobin"),
        ("example2-fresh", "sticky", "sticky"),
        ("example2-fresh", "roundrobin", "roundrobin"),
        ("example2-c0-removed-after-sticky", "sticky", "sticky"),
        ("example2-c0-removed-after-roundrobin", "roundrobin", "roundrobin"),
        ("example3-fresh", "range", "range"),
        ("example3-fresh", "roundrobin", "roundrobin"),
        ("example3-fresh", "sticky", "sticky"),
        ("example3-c2-joins", "range", "range"),
        ("example3-c2-joins", "roundrobin", "roundrobin"),
        ("example3-c2-joins", "sticky", "sticky"),
    ],
)
def test_kip54_examples(problem, strategy, label):
    solution = kafka(f"kip54/{problem}.problem.yaml", partition_assignment_strategy=strategy)
    expected = load_solution(EXAMPLES / "kip54" / f"{problem}.{label}.solution.json")
    assert {m: set(h.active) for m, h in solution.assignment.items()} == {m: set(h.active) for m, h in expected.assignment.items()}


def test_kip54_example1_sticky_keeps_5_partitions():
    # Since Kafka 2.8, equal subscriptions use KAFKA-9987's constrained algorithm: it keeps the
    # same 5 partitions as KIP-54's general algorithm but moves t0p1 to C0 instead of t2p0.
    solution = kafka("kip54/example1-c1-removed.problem.yaml")
    assert solution.metrics.owned_kept == 5
    assert {m: set(h.active) for m, h in solution.assignment.items()} == {
        "C0": {"t0-0", "t0-1", "t1-1", "t3-0"},
        "C2": {"t1-0", "t2-0", "t2-1", "t3-1"},
    }
