"""The evaluator on hand-computed cases: every metric, every violation code."""

from __future__ import annotations

import copy
import random

import pytest

from optimizer import evaluate
from optimizer.evaluate import ViolationCode
from optimizer.model import ClientAssignment, Solution, problem_from_data

STREAMS = {
    "kind": "streams",
    "config": {"num.standby.replicas": 1, "rack.aware.assignment.tags": ["zone"]},
    "clients": [
        {"id": "a", "rack": "r1", "threads": 2, "tags": {"zone": "z1"}, "previous_active": ["0_0", "0_1"]},
        {"id": "b", "rack": "r2", "tags": {"zone": "z2"}, "previous_standby": ["0_0"], "lags": {"0_1": 50_000}},
        {"id": "c", "rack": "r1", "tags": {"zone": "z1"}, "lags": {"0_1": 200}},
    ],
    "tasks": [
        {
            "id": "0_0", "stateful": True, "changelog_end_offset": 1_000_000,
            "source_partitions": [{"topic": "in", "partition": 0, "replica_racks": ["r1"]}],
            "changelog_partitions": [{"topic": "cl", "partition": 0, "replica_racks": ["r2"]}],
        },
        {
            "id": "0_1", "stateful": True, "changelog_end_offset": 1_000_000,
            "source_partitions": [{"topic": "in", "partition": 1, "replica_racks": ["r2", "r3"]}],
            "changelog_partitions": [{"topic": "cl", "partition": 1, "replica_racks": ["r1"]}],
        },
        {
            "id": "0_2", "stateful": True, "changelog_end_offset": 3_000,
            "source_partitions": [{"topic": "in", "partition": 2, "replica_racks": ["r2"]}],
            "changelog_partitions": [{"topic": "cl", "partition": 2, "replica_racks": ["r3"]}],
        },
        {
            "id": "1_0",
            "source_partitions": [
                {"topic": "x", "partition": 0, "replica_racks": ["r3"]},
                {"topic": "y", "partition": 0, "replica_racks": ["r1"]},
            ],
        },
    ],
}

ASSIGNMENT = {
    "a": {"active": ["0_0", "1_0"], "standby": ["0_1"]},
    "b": {"active": ["0_1"], "standby": ["0_2"]},
    "c": {"active": ["0_2"], "standby": ["0_0"], "warmup": ["0_1"]},
}


def solution(assignment=ASSIGNMENT, followup=True):
    return Solution(
        assignment={k: ClientAssignment(**v) for k, v in assignment.items()},
        followup_rebalance=followup,
    )


def test_streams_metrics_by_hand():
    evaluation = evaluate(problem_from_data(STREAMS), solution())
    assert evaluation.valid, evaluation.violations
    m = evaluation.metrics
    assert (m.active_tasks, m.standby_tasks, m.warmup_tasks) == (4, 3, 1)
    # a reads x-0 (r3) for 1_0; c (r1) reads in-2 (r2) for 0_2.
    assert m.cross_rack_active_partitions == 2
    # b (r2) reads cl-2 (r3) for 0_2; c (r1) reads cl-0 (r2) for 0_0.
    assert m.cross_rack_standby_partitions == 2
    assert m.cross_rack_warmup_partitions == 0
    # 0_1 moved a->b: non-overlap 1; 0_2 (no previous owner) crosses racks on c: 10 + 1;
    # stateless 1_0 crosses once at Kafka's stateless traffic cost 1.
    assert m.kip925_cost == 1 + 11 + 1
    assert m.active_moves == 1
    assert m.standby_moves == 3
    assert m.active_load_skew == 0.0  # a: 2 tasks / 2 threads, b and c: 1 / 1
    assert m.stateful_load_skew == 1.0  # a: (1 + 1) / 2, b and c: 2 / 1
    assert m.subtopology_skews == {"0": 0, "1": 1} and m.subtopology_skew == 1
    assert m.standby_rack_conflicts == 1  # 0_0 on a and c, both r1
    assert m.standby_tag_conflicts == 1 and m.tag_conflicts == {"zone": 1}
    # 0_1 on b lags 50,000 while a (its previous active) is caught up. 0_2 on c restores only
    # 3,000 offsets, within acceptable.recovery.lag.
    assert m.actives_not_caught_up == 1
    assert m.rack_info_complete


def test_metrics_do_not_depend_on_list_order():
    expected = evaluate(problem_from_data(STREAMS), solution()).metrics
    rng = random.Random(7)
    for _ in range(5):
        data = copy.deepcopy(STREAMS)
        rng.shuffle(data["clients"])
        rng.shuffle(data["tasks"])
        assignment = {k: {r: rng.sample(v, len(v)) for r, v in ASSIGNMENT[k].items()} for k in rng.sample(list(ASSIGNMENT), 3)}
        assert evaluate(problem_from_data(data), solution(assignment)).metrics == expected


def changed(change, followup=True):
    assignment = copy.deepcopy(ASSIGNMENT)
    change(assignment)
    return solution(assignment, followup)


STREAMS_VIOLATIONS = [
    (lambda a: a.update(z={}), ViolationCode.UNKNOWN_PROCESS_ID),
    (lambda a: a.pop("c"), ViolationCode.MISSING_PROCESS_ID),
    (lambda a: a["a"]["active"].append("9_9"), ViolationCode.UNKNOWN_TASK_ID),
    (lambda a: a["b"]["active"].append("0_0"), ViolationCode.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES),
    (lambda a: a["a"]["standby"].append("0_0"), ViolationCode.ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS),
    (lambda a: a["b"]["standby"].append("1_0"), ViolationCode.INVALID_STANDBY_TASK),
    (lambda a: a["c"]["active"].remove("0_2"), ViolationCode.ACTIVE_TASK_UNASSIGNED),
    (lambda a: a["b"]["standby"].append("0_0"), ViolationCode.WRONG_STANDBY_COUNT),
    (lambda a: a["c"]["standby"].remove("0_0"), ViolationCode.WRONG_STANDBY_COUNT),
    (lambda a: (a["a"].update(warmup=["0_2"]), a["b"].update(warmup=["0_0"])), ViolationCode.TOO_MANY_WARMUPS),
]


@pytest.mark.parametrize(("change", "code"), STREAMS_VIOLATIONS, ids=[c.value + str(i) for i, (_, c) in enumerate(STREAMS_VIOLATIONS)])
def test_streams_violations(change, code):
    evaluation = evaluate(problem_from_data(STREAMS), changed(change))
    assert not evaluation.valid
    assert code in {v.code for v in evaluation.violations}, evaluation.violations


def test_warmup_needs_a_followup_rebalance():
    evaluation = evaluate(problem_from_data(STREAMS), solution(followup=False))
    assert [v.code for v in evaluation.violations] == [ViolationCode.WARMUP_WITHOUT_FOLLOWUP]


CONSUMER = {
    "kind": "consumer",
    "config": {"partition.assignment.strategy": "sticky"},
    "topics": [
        {"name": "orders", "partitions": 4, "replica_racks": [["r1"], ["r2"], ["r1", "r2"], ["r3"]]},
        {"name": "audit", "partitions": 1},
    ],
    "members": [
        {"id": "m1", "rack": "r1", "subscriptions": ["orders", "audit"], "owned_partitions": ["orders-0", "orders-1"], "generation": 2},
        {"id": "m2", "rack": "r2", "subscriptions": ["orders"], "owned_partitions": ["orders-2"], "generation": 2},
        {"id": "m3", "rack": "r3", "subscriptions": ["orders"], "generation": 1},
    ],
}
GROUP_ASSIGNMENT = {"m1": ["orders-0", "audit-0"], "m2": ["orders-2", "orders-3"], "m3": ["orders-1"]}


def group_solution(assignment=GROUP_ASSIGNMENT, followup=False):
    return Solution(
        assignment={k: ClientAssignment(active=v) for k, v in assignment.items()},
        followup_rebalance=followup,
    )


def test_consumer_metrics_by_hand():
    evaluation = evaluate(problem_from_data(CONSUMER), group_solution())
    assert evaluation.valid, evaluation.violations
    m = evaluation.metrics
    assert (m.members, m.partitions, m.assigned_partitions) == (3, 5, 5)
    assert (m.min_size, m.max_size, m.size_skew) == (1, 2, 1)
    assert m.balance_score == 0 + 1 + 1  # pairs (m1, m2), (m1, m3), (m2, m3)
    assert (m.owned_kept, m.owned_moved) == (2, 1)  # orders-1 left m1
    assert m.cross_rack_partitions == 2  # m2 (r2) reads orders-3 (r3); m3 (r3) reads orders-1 (r2)
    assert not m.rack_info_complete  # audit has no replica racks


def test_balance_score_matches_pairwise_definition():
    rng = random.Random(3)
    for _ in range(20):
        sizes = [rng.randint(0, 6) for _ in range(rng.randint(1, 7))]
        partitions = sum(sizes)
        data = {
            "kind": "consumer",
            "topics": [{"name": "t", "partitions": max(partitions, 1)}],
            "members": [{"id": f"m{i}", "subscriptions": ["t"]} for i in range(len(sizes))],
        }
        ids = iter(f"t-{p}" for p in range(partitions))
        assignment = {f"m{i}": [next(ids) for _ in range(s)] for i, s in enumerate(sizes)}
        if partitions == 0:
            assignment["m0"] = ["t-0"]
            sizes[0] = 1
        metrics = evaluate(problem_from_data(data), group_solution(assignment)).metrics
        assert metrics.balance_score == sum(abs(x - y) for i, x in enumerate(sizes) for y in sizes[i + 1:])


def group_changed(change, strategy="sticky", followup=False):
    data = copy.deepcopy(CONSUMER)
    data["config"]["partition.assignment.strategy"] = strategy
    assignment = copy.deepcopy(GROUP_ASSIGNMENT)
    change(assignment)
    return problem_from_data(data), group_solution(assignment, followup)


CONSUMER_VIOLATIONS = [
    (lambda a: a.update(m9=[]), ViolationCode.UNKNOWN_MEMBER),
    (lambda a: a.pop("m3"), ViolationCode.MISSING_MEMBER),
    (lambda a: a["m1"].append("orders-9"), ViolationCode.UNKNOWN_PARTITION),
    (lambda a: a["m1"].append("not a partition"), ViolationCode.UNKNOWN_PARTITION),
    (lambda a: a["m3"].append("orders-0"), ViolationCode.PARTITION_ASSIGNED_MULTIPLE_TIMES),
    (lambda a: a["m2"].remove("orders-3"), ViolationCode.PARTITION_UNASSIGNED),
    (lambda a: (a["m1"].remove("audit-0"), a["m2"].append("audit-0")), ViolationCode.NOT_SUBSCRIBED),
]


@pytest.mark.parametrize(("change", "code"), CONSUMER_VIOLATIONS, ids=[c.value + str(i) for i, (_, c) in enumerate(CONSUMER_VIOLATIONS)])
def test_consumer_violations(change, code):
    problem, sol = group_changed(change)
    evaluation = evaluate(problem, sol)
    assert code in {v.code for v in evaluation.violations}, evaluation.violations


def test_consumer_has_no_standbys():
    problem = problem_from_data(CONSUMER)
    sol = Solution(assignment={**group_solution().assignment, "m3": ClientAssignment(active=["orders-1"], standby=["orders-1"])})
    assert ViolationCode.STANDBY_FOR_CONSUMER in {v.code for v in evaluate(problem, sol).violations}


def test_cooperative_rebalancing_withholds_transfers():
    # orders-1 is owned by m1 (generation 2, the current one): under cooperative-sticky it cannot
    # go to m3 in the same round...
    problem, sol = group_changed(lambda a: None, strategy="cooperative-sticky")
    codes = [v.code for v in evaluate(problem, sol).violations]
    assert codes == [ViolationCode.COOPERATIVE_TRANSFER_IN_ONE_ROUND]
    # ...it is withheld for a follow-up rebalance instead, which leads to a target that gives it to m3.
    problem, sol = group_changed(lambda a: a["m3"].remove("orders-1"), strategy="cooperative-sticky", followup=True)
    target = group_solution().assignment
    evaluation = evaluate(problem, sol.model_copy(update={"target": target}))
    assert evaluation.valid, evaluation.violations
    assert evaluation.metrics.withheld_partitions == 1
    # A withheld partition that no target assigns would never be consumed: with no target, or
    # one that gives it to nobody (the empty assignment an earlier CP-SAT start once returned).
    nobody = {member: ClientAssignment() for member in target}
    for broken in (None, nobody):
        violations = evaluate(problem, sol.model_copy(update={"target": broken})).violations
        assert [(v.code, v.task) for v in violations] == [(ViolationCode.PARTITION_UNASSIGNED, "orders-1")]
        assert "withheld" in violations[0].message
    # Without the follow-up rebalance an unassigned partition is just unassigned.
    problem, sol = group_changed(lambda a: a["m3"].remove("orders-1"), strategy="cooperative-sticky")
    assert [v.code for v in evaluate(problem, sol).violations] == [ViolationCode.PARTITION_UNASSIGNED]


def test_violations_and_warnings_do_not_depend_on_list_order():
    broken = copy.deepcopy(ASSIGNMENT)
    broken["a"]["active"].append("9_9")
    broken["b"]["active"].append("0_0")
    broken["c"]["standby"].remove("0_0")
    data = copy.deepcopy(STREAMS)
    data["clients"][0]["previous_active"] += ["8_1", "8_0"]
    expected = evaluate(problem_from_data(data), solution(broken))
    assert [v.code for v in expected.violations] == sorted(v.code for v in expected.violations)
    rng = random.Random(11)
    for _ in range(5):
        shuffled = copy.deepcopy(data)
        rng.shuffle(shuffled["clients"])
        rng.shuffle(shuffled["tasks"])
        for client in shuffled["clients"]:
            rng.shuffle(client.get("previous_active", []))
        assignment = {k: {r: rng.sample(v, len(v)) for r, v in broken[k].items()} for k in rng.sample(list(broken), 3)}
        again = evaluate(problem_from_data(shuffled), solution(assignment))
        assert again.violations == expected.violations
        # A warning's location names the entry's position in the file, which moves with it.
        assert without_positions(again.warnings) == without_positions(expected.warnings)
        assert again.metrics == expected.metrics


def without_positions(warnings):
    import re

    return sorted((re.sub(r"\[\d+\] ", "", w.location), w.message) for w in warnings)


def test_a_task_twice_on_one_client_counts_once():
    doubled = copy.deepcopy(ASSIGNMENT)
    doubled["a"]["active"].append("0_0")
    evaluation = evaluate(problem_from_data(STREAMS), solution(doubled))
    assert [v.code for v in evaluation.violations] == [ViolationCode.ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS]
    assert evaluation.metrics.active_tasks == 4


def test_subtopology_cap_excess():
    # 4 tasks of subtopology 0 on two single-thread clients with 2 tasks each: caps ceil(4*2/4) = 2.
    data = {
        "kind": "streams",
        "clients": [{"id": "a"}, {"id": "b"}],
        "tasks": [{"id": f"{s}_{p}", "source_partitions": [{"topic": f"t{s}", "partition": p}]} for s in (0, 1) for p in (0, 1)],
    }
    problem = problem_from_data(data)
    spread = {"a": ClientAssignment(active=["0_0", "1_0"]), "b": ClientAssignment(active=["0_1", "1_1"])}
    lumped = {"a": ClientAssignment(active=["0_0", "0_1"]), "b": ClientAssignment(active=["1_0", "1_1"])}
    assert evaluate(problem, spread).metrics.subtopology_cap_excess == 0
    # caps are ceil(2 * 2 / 4) = 1 per subtopology and client: a and b each hold one too many.
    assert evaluate(problem, lumped).metrics.subtopology_cap_excess == 2
    assert evaluate(problem, lumped).metrics.subtopology_skews == {"0": 2, "1": 2}


def test_cooperative_claims_of_any_generation_are_withheld():
    data = copy.deepcopy(CONSUMER)
    data["config"]["partition.assignment.strategy"] = "cooperative-sticky"
    # m3 (an old generation) still holds orders-3: it may keep it, or the partition waits a round.
    data["members"][2]["owned_partitions"] = ["orders-3"]
    problem = problem_from_data(data)
    moved = group_solution({"m1": ["orders-0", "orders-1", "audit-0"], "m2": ["orders-2", "orders-3"], "m3": []})
    codes = [v.code for v in evaluate(problem, moved).violations]
    assert codes == [ViolationCode.COOPERATIVE_TRANSFER_IN_ONE_ROUND]
    waiting = group_solution({"m1": ["orders-0", "orders-1", "audit-0"], "m2": ["orders-2"], "m3": []}, followup=True)
    evaluation = evaluate(problem, waiting.model_copy(update={"target": moved.assignment}))
    assert evaluation.valid and evaluation.metrics.withheld_partitions == 1


def test_solution_for_another_problem_is_warned_about():
    problem = problem_from_data({**STREAMS, "name": "orders"})
    sol = solution().model_copy(update={"problem": "payments"})
    assert [w.message for w in evaluate(problem, sol).warnings] == ["the solution is for problem 'payments', not 'orders'"]


def test_a_target_with_ids_that_are_no_partitions_is_read_without_failing():
    problem, sol = group_changed(lambda a: a["m3"].remove("orders-1"), strategy="cooperative-sticky", followup=True)
    odd = {**group_solution().assignment, "m3": ClientAssignment(active=("not a partition", "orders-x"))}
    violations = evaluate(problem, sol.model_copy(update={"target": odd})).violations
    assert [(v.code, v.task) for v in violations] == [(ViolationCode.PARTITION_UNASSIGNED, "orders-1")]


def test_cross_rack_bytes_are_exact_past_what_int64_sums_hold():
    """2,600 partitions of 9,999,999,999,999 B/s, each read across racks by its active, over 200
    clients: the total is the exact whole number (the evaluator sums in Python integers once the
    sums could pass 2**62), and the by-racks matrix carries it too."""
    rate = 9_999_999_999_999
    problem = problem_from_data(
        {
            "kind": "streams",
            "clients": [{"id": f"c{i:03d}", "rack": "r1"} for i in range(200)],
            "tasks": [
                {"id": f"0_{n}", "source_partitions": [{"topic": "in", "partition": n, "replica_racks": ["r2"], "bytes_per_second": rate}]}
                for n in range(2600)
            ],
        }
    )
    held = {f"c{i:03d}": {"active": [f"0_{n}" for n in range(i, 2600, 200)]} for i in range(200)}
    metrics = evaluate(problem, solution(held)).metrics
    assert metrics.cross_rack_active_bytes == 2600 * rate
    assert metrics.cross_rack_bytes_by_racks == {"r1": {"r2": pytest.approx(2600 * rate, rel=1e-12)}}
