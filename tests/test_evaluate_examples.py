"""Golden: every worked example of the seed documents, as problem and solution files, measured by
the evaluator against the figures the documents state (Kafka's assignors reproducing them:
tests/assignors/test_kip_examples_kafka.py)."""

from __future__ import annotations

import numpy as np
import pytest

from optimizer import evaluate, load_problem, load_solution
from optimizer.assignors.streams.kip925.optimize import subtopology_caps
from tests.conftest import EXAMPLES, example_problems, example_solutions


def evaluated(problem: str, label: str):
    folder, name = problem.split("/")
    problem_path = next((EXAMPLES / folder).glob(f"{name}.problem.*"))
    solution_path = EXAMPLES / folder / f"{name}.{label}.solution.json"
    evaluation = evaluate(load_problem(problem_path), load_solution(solution_path))
    assert evaluation.valid, evaluation.violations
    return evaluation.metrics


def test_every_example_problem_is_valid_and_warning_free():
    from optimizer import normalize

    assert len(example_problems()) == 16
    for path in example_problems():
        assert normalize(load_problem(path)).warnings == (), path


@pytest.mark.parametrize("pair", example_solutions(), ids=lambda pair: pair[1].name)
def test_every_expected_solution_is_valid(pair):
    problem, solution = pair
    evaluation = evaluate(load_problem(problem), load_solution(solution))
    assert evaluation.valid, evaluation.violations


# KIP-54 ----------------------------------------------------------------------------------------


def test_kip54_example1_sticky_keeps_5_round_robin_3():
    assert evaluated("kip54/example1-c1-removed", "sticky").owned_kept == 5
    assert evaluated("kip54/example1-c1-removed", "roundrobin").owned_kept == 3
    fresh = evaluated("kip54/example1-fresh", "sticky")
    assert (fresh.min_size, fresh.max_size) == (2, 3)


def test_kip54_example2_sticky_keeps_5_round_robin_3_and_is_more_balanced():
    sticky = evaluated("kip54/example2-c0-removed-after-sticky", "sticky")
    round_robin = evaluated("kip54/example2-c0-removed-after-roundrobin", "roundrobin")
    assert (sticky.owned_kept, round_robin.owned_kept) == (5, 3)
    assert sticky.balance_score < round_robin.balance_score
    # Before C0 leaves: round robin gives sizes 1, 1, 4 and sticky 1, 2, 3.
    assert evaluated("kip54/example2-fresh", "roundrobin").balance_score == 6
    assert evaluated("kip54/example2-fresh", "sticky").balance_score == 4


def test_kip54_example3_c2_joins():
    range_ = evaluated("kip54/example3-c2-joins", "range")
    assert (range_.min_size, range_.max_size) == (0, 2)  # "not a fair assignment"
    sticky = evaluated("kip54/example3-c2-joins", "sticky")
    assert sticky.owned_kept == 3 and sticky.size_skew == 1
    round_robin = evaluated("kip54/example3-c2-joins", "roundrobin")
    assert round_robin.owned_kept < sticky.owned_kept  # "not the stickiest"


# KAFKA-12464 -----------------------------------------------------------------------------------


def test_kafka12464_quotas():
    for label in ("constrained", "four-phase"):
        metrics = evaluated("kafka12464/c2-joins", label)
        assert (metrics.min_size, metrics.max_size, metrics.owned_kept) == (3, 4, 7)
    cooperative = evaluated("kafka12464/c2-joins-cooperative", "first-round")
    assert cooperative.withheld_partitions == 3 and cooperative.owned_kept == 7


# KIP-441 ---------------------------------------------------------------------------------------


def test_kip441_scaling_out_documents_measure_as_the_kip_says():
    first = evaluated("kip441/scaling-out-1", "expected")
    assert first.warmup_tasks == 2 and first.active_moves == 0 and first.actives_not_caught_up == 0
    for label in ("expected", "kafka"):
        stable = evaluated("kip441/scaling-out-2", label)
        assert stable.active_load_skew == 0 and stable.stateful_load_skew == 0
        assert stable.active_moves == 1  # T3 moves to the warmed-up I3
        assert stable.actives_not_caught_up == 0


def test_kip441_scaling_in_standbys_in_sync_balances_at_once():
    metrics = evaluated("kip441/scaling-in-standbys-in-sync", "expected")
    assert metrics.active_load_skew == 0 and metrics.actives_not_caught_up == 0


def test_kip441_scaling_in_lagging_standbys_first_unbalanced_then_stable():
    first = evaluated("kip441/scaling-in-standbys-lagging-1", "expected")
    assert first.active_load_skew == 2  # I2 runs three actives while I3 restores
    assert first.stateful_load_skew == 0 and first.actives_not_caught_up == 0
    stable = evaluated("kip441/scaling-in-standbys-lagging-2", "expected")
    assert stable.active_load_skew == 0 and stable.active_moves == 1  # T4 moves to I3


# KIP-925 and KIP-708 ---------------------------------------------------------------------------


def test_kip925_example_document_is_balanced_within_the_kips_caps():
    metrics = evaluated("kip925/three-clients-1-2-3-threads", "expected")
    assert metrics.active_load_skew == 0  # 1, 2 and 3 tasks on 1, 2 and 3 threads
    assert metrics.cross_rack_active_partitions == 0
    assert metrics.subtopology_cap_excess == 0
    assert metrics.kip925_cost == 6  # no previous assignment: every task pays non-overlap 1
    # "the limit of tasks within a sub-topology for each client would be ... 1, 1, and 2"
    caps = subtopology_caps(np.array([0, 0, 0, 1, 1, 1]), np.array([1, 2, 3]))
    assert caps.tolist() == [[1, 1, 2], [1, 1, 2]]


def test_kip708_ideal_distributions_have_no_tag_conflicts():
    for label in ("ideal-5-9", "ideal-6-8"):
        metrics = evaluated("kip708/nine-nodes", label)
        assert metrics.standby_tag_conflicts == 0 and metrics.tag_conflicts == {"zone": 0, "cluster": 0}


def test_kip708_non_ideal_distribution_conflicts_in_both_dimensions():
    from optimizer.model import ClientAssignment

    problem = load_problem(EXAMPLES / "kip708" / "nine-nodes.problem.yaml")
    assignment = {c.id: ClientAssignment() for c in problem.clients}
    assignment["Node-1"] = ClientAssignment(active=["0_0"])
    # Node-2 shares Node-1's cluster, Node-4 shares its zone.
    assignment["Node-2"] = ClientAssignment(standby=["0_0"])
    assignment["Node-4"] = ClientAssignment(standby=["0_0"])
    metrics = evaluate(problem, assignment).metrics
    assert metrics.tag_conflicts == {"zone": 1, "cluster": 1}
