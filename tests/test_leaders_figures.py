"""Leaders and follower fetching in every figure of what the bill counts: the evaluator, the goals,
the pipeline's per-rack traffic, compare; Kafka's assignors unchanged (issue 31, item 2)."""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest

from goals.cross_rack_traffic import CrossRackBytes, CrossRackTraffic
from optimizer.compare import compare
from optimizer.costs import StreamsIndex, active_cost_matrix
from optimizer.evaluate import evaluate
from optimizer.generate import random_consumer_problem, random_streams_problem, varied_problem
from optimizer.model import ClientAssignment, ConsumerProblem, Solution, StreamsProblem, problem_from_data, problem_to_data
from optimizer.model.group_protocol import with_protocol
from optimizer.pipeline.worker import rack_traffic
from optimizer.solve import solve
from tests.conftest import example_problems, example_solutions

FOLLOWERS = {"replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"}
CUSTOM = {"replica.selector.class": "com.example.ZoneSelector"}
RACKS = ["r1", "r2", "r3"]


def _with(data: dict[str, Any], config: dict[str, Any]) -> Any:
    return problem_from_data({**data, "config": {**data.get("config", {}), **config}})


def _assignment(**held: tuple[list[str], list[str]]) -> dict[str, ClientAssignment]:
    return {client: ClientAssignment(active=tuple(active), standby=tuple(standby)) for client, (active, standby) in held.items()}


# ------------------------------------------------------------------ hand-computed figures


def _streams_app() -> dict[str, Any]:
    """Three clients, one per rack; three stateful tasks with one standby; every partition with a
    replica in each rack, partition p's leader in rack r(p+1); sources 1000 B/s, changelogs 100 B/s."""

    def partition(topic: str, p: int) -> dict[str, Any]:
        return {"topic": topic, "partition": p, "replica_racks": RACKS, "leader_rack": RACKS[p]}

    return {
        "kind": "streams",
        "config": {"num.standby.replicas": 1},
        "clients": [{"id": "a", "rack": "r1"}, {"id": "b", "rack": "r2"}, {"id": "c", "rack": "r3"}],
        "tasks": [
            {"id": f"0_{p}", "stateful": True, "source_partitions": [partition("orders", p)], "changelog_partitions": [partition("app-store-changelog", p)]}
            for p in range(3)
        ],
        "topic_bytes_per_second": {"orders": 1000, "app-store-changelog": 100},
    }


# Each active and each standby away from its partition's leader.
AWAY = _assignment(a=(["0_1"], ["0_2"]), b=(["0_2"], ["0_0"]), c=(["0_0"], ["0_1"]))
# Each active beside its leader, each standby away.
BESIDE = _assignment(a=(["0_0"], ["0_1"]), b=(["0_1"], ["0_2"]), c=(["0_2"], ["0_0"]))


def test_streams_figures_under_leader_reads_and_follower_fetching():
    leaders = _with(_streams_app(), {})
    away = evaluate(leaders, AWAY).metrics
    # Leader reads: every copy reads its partition from the leader's rack, which is not its own.
    assert (away.cross_rack_active_partitions, away.cross_rack_standby_partitions, away.cross_rack_warmup_partitions) == (3, 3, 0)
    assert (away.cross_rack_active_bytes, away.cross_rack_standby_bytes) == (3000, 300)
    assert away.cross_rack_bytes_by_racks == {
        "r1": {"r2": 1000.0, "r3": 100.0},  # a: orders-1 from its leader in r2, the changelog of 0_2 from r3
        "r2": {"r1": 100.0, "r3": 1000.0},
        "r3": {"r1": 1000.0, "r2": 100.0},
    }
    assert away.kip925_cost == 3 * 10 + 3 * 1  # HA's traffic cost 10 per crossing, non-overlap 1 (no previous owner)
    assert away.rack_info_complete
    beside = evaluate(leaders, BESIDE).metrics
    assert (beside.cross_rack_active_partitions, beside.cross_rack_standby_partitions) == (0, 3)
    assert (beside.cross_rack_active_bytes, beside.cross_rack_standby_bytes) == (0, 300)
    assert beside.kip925_cost == 3

    # Follower fetching: every rack holds a replica of everything, nothing crosses racks.
    for assignment in (AWAY, BESIDE):
        following = evaluate(_with(_streams_app(), FOLLOWERS), assignment).metrics
        assert (following.cross_rack_active_partitions, following.cross_rack_standby_partitions) == (0, 0)
        assert (following.cross_rack_active_bytes, following.cross_rack_standby_bytes) == (0, 0)
        assert following.cross_rack_bytes_by_racks == {}
        assert following.kip925_cost == 3

    # A selector the project does not know counts from the leader, as Kafka's default does.
    custom = evaluate(_with(_streams_app(), CUSTOM), AWAY)
    assert custom.metrics == away
    assert [w.location for w in custom.warnings] == ["config.replica.selector.class"]


def test_streams_goals_costs_and_pipeline_count_as_the_evaluator():
    for config, crossing in (({}, 6), (FOLLOWERS, 0)):
        problem = _with(_streams_app(), config)
        assert CrossRackTraffic().evaluate(problem, AWAY) == crossing  # actives' sources + standbys' changelogs
        assert CrossRackBytes().evaluate(problem, AWAY) == (3300 if crossing else 0)
        assert rack_traffic(problem, _solution(problem, AWAY)) == ({"r1": 2, "r2": 2, "r3": 2} if crossing else {"r1": 0, "r2": 0, "r3": 0})
        index = StreamsIndex.of(problem)
        # The goals' arrays (tasks x racks r1, r2, r3): task 0_p crosses from every rack but its leader's.
        expected = [[0, 1, 1], [1, 0, 1], [1, 1, 0]] if crossing else [[0, 0, 0]] * 3
        assert index.source_cross_by_rack.tolist() == expected
        assert index.changelog_bytes_by_rack.tolist() == [[100 * cell for cell in row] for row in expected]
        # Kafka's KIP-925 cost (the reproductions') reads the replica racks: no crossing either way.
        assert active_cost_matrix(index, np.arange(3), 10, 1, index.previous_active()).tolist() == [[1, 1, 1]] * 3


def _solution(problem, assignment):
    return Solution(problem=problem.name, kind=problem.kind, assignment=assignment)


def _group() -> dict[str, Any]:
    """Three members, one per rack (and one without a rack); orders' three partitions with a replica
    in each rack, partition p's leader in rack r(p+1), at 100, 200 and 400 B/s."""
    return {
        "kind": "consumer",
        "topics": [
            {
                "name": "orders",
                "partitions": 3,
                "replica_racks": [RACKS] * 3,
                "leader_racks": RACKS,
                "partition_bytes_per_second": [100, 200, 400],
            }
        ],
        "members": [
            {"id": "m1", "rack": "r1", "subscriptions": ["orders"]},
            {"id": "m2", "rack": "r2", "subscriptions": ["orders"]},
            {"id": "m3", "rack": "r3", "subscriptions": ["orders"]},
            {"id": "m4", "subscriptions": ["orders"]},
        ],
    }


def _members(**held: list[str]) -> dict[str, ClientAssignment]:
    return {member: ClientAssignment(active=tuple(held.get(member, ()))) for member in ("m1", "m2", "m3", "m4")}


def test_consumer_figures_under_leader_reads_and_follower_fetching():
    rotated = _members(m1=["orders-2"], m2=["orders-0"], m3=["orders-1"])
    leaders = evaluate(_with(_group(), {}), rotated).metrics
    assert (leaders.cross_rack_partitions, leaders.cross_rack_bytes) == (3, 700)
    assert leaders.cross_rack_bytes_by_racks == {"r1": {"r3": 400.0}, "r2": {"r1": 100.0}, "r3": {"r2": 200.0}}
    following = evaluate(_with(_group(), FOLLOWERS), rotated).metrics
    assert (following.cross_rack_partitions, following.cross_rack_bytes, following.cross_rack_bytes_by_racks) == (0, 0, {})
    # The member without a rack never crosses racks, whoever serves.
    rackless = _members(m4=["orders-0", "orders-1", "orders-2"])
    assert evaluate(_with(_group(), {}), rackless).metrics.cross_rack_partitions == 0
    problem = _with(_group(), {})
    assert rack_traffic(problem, _solution(problem, rotated)) == {"r1": 1, "r2": 1, "r3": 1}
    # The goals score an answer as the evaluator counts it (solve's and compare's goal lines).
    for config, partitions, in_bytes in (({}, 3, 700), (FOLLOWERS, 0, 0)):
        problem = _with(_group(), config)
        assert (CrossRackTraffic().evaluate(problem, rotated), CrossRackBytes().evaluate(problem, rotated)) == (partitions, in_bytes)


def test_unknown_leaders_count_only_what_is_certain():
    data = _group()
    data["members"] = data["members"][:3]  # every member with a rack
    data["topics"][0]["replica_racks"] = [["r1", "r2"], ["r1", "r2"], ["r2", "r3"]]
    data["topics"][0]["leader_racks"] = ["r2", None, None]
    problem = _with(data, {})
    held = _members(m1=["orders-0", "orders-1", "orders-2"])  # m1 in r1
    del held["m4"]
    metrics = evaluate(problem, held).metrics
    # orders-0: its leader in r2 serves, crossing; orders-1: a replica in r1, leader unknown: not
    # certain, not counted; orders-2: no replica in r1, crossing whichever serves.
    assert (metrics.cross_rack_partitions, metrics.cross_rack_bytes) == (2, 500)
    assert metrics.cross_rack_bytes_by_racks == {"r1": {"r2": 100.0 + 200.0, "r3": 200.0}}  # orders-2 shared by r2 and r3
    assert not metrics.rack_info_complete  # leaders serve and two are missing
    assert evaluate(_with(data, FOLLOWERS), held).metrics.rack_info_complete


# ------------------------------------------------------------------ the exact solver


def test_the_exact_solver_places_streams_readers_beside_the_leaders():
    data = _streams_app()
    data["config"] = {"num.standby.replicas": 0}
    for task in data["tasks"]:
        task["stateful"] = False
        del task["changelog_partitions"]
    data["topic_bytes_per_second"] = {"orders": 1000}
    leaders = problem_from_data(data)
    result = solve(leaders, goals=["balance", "cross_rack_bytes"])
    rack = {c.id: c.rack for c in leaders.clients}
    placed = {task: rack[client] for client, held in result.assignment.items() for task in held.active}
    assert placed == {"0_0": "r1", "0_1": "r2", "0_2": "r3"}
    assert [(g.name, g.value, g.status) for g in result.goals] == [("balance", 0, "optimal"), ("cross_rack_bytes", 0, "optimal")]
    assert result.metrics.cross_rack_active_bytes == 0
    # Under follower fetching every placement is free, and the figures say so.
    following = solve(_with(data, FOLLOWERS), goals=["balance", "cross_rack_bytes"])
    assert following.metrics.cross_rack_active_bytes == 0


def test_the_exact_solver_places_consumers_beside_the_leaders():
    data = _group()
    data["members"] = data["members"][:3]
    data["topics"][0] |= {"partitions": 6, "replica_racks": [RACKS] * 6, "leader_racks": RACKS * 2, "partition_bytes_per_second": [100, 200, 400] * 2}
    problem = problem_from_data(data)
    result = solve(problem, goals=["balance", "cross_rack_bytes"])
    assert {m: sorted(h.active) for m, h in result.assignment.items()} == {
        "m1": ["orders-0", "orders-3"],
        "m2": ["orders-1", "orders-4"],
        "m3": ["orders-2", "orders-5"],
    }
    assert (result.metrics.cross_rack_partitions, result.metrics.cross_rack_bytes) == (0, 0)


# ------------------------------------------------------------------ Kafka's assignors


def _leaders_added(problem: StreamsProblem | ConsumerProblem, seed: int) -> dict[str, Any]:
    """The problem's document with a leader among each partition's replica racks (seeded)."""
    rng = random.Random(seed)
    data = problem_to_data(problem)
    if data["kind"] == "streams":
        for task in data.get("tasks", []):
            for field in ("source_partitions", "changelog_partitions"):
                for partition in task.get(field, []):
                    if partition.get("replica_racks"):
                        partition["leader_rack"] = rng.choice(partition["replica_racks"])
    else:
        for topic in data.get("topics", []):
            if topic.get("replica_racks") is not None:
                topic["leader_racks"] = [rng.choice(racks) if racks else None for racks in topic["replica_racks"]]
    return data


def _kafka_cases() -> list[StreamsProblem | ConsumerProblem]:
    cases: list[StreamsProblem | ConsumerProblem] = [varied_problem(seed) for seed in range(24)]
    for seed, strategy in enumerate(("min_traffic", "balance_subtopology")):
        cases.append(random_streams_problem(seed, tasks=16, clients=4, strategy=strategy, rates=True))
    for seed, strategy in enumerate(("range", "sticky", "cooperative-sticky", "roundrobin")):
        cases.append(random_consumer_problem(seed, members=5, strategy=strategy, rates=True))
    cases += [with_protocol(case, "new") for case in cases[-6:]]
    for seed, assignor in enumerate(("sticky", "kip924_sticky")):
        data = problem_to_data(random_streams_problem(seed + 5, tasks=12, clients=4, rates=True))
        cases.append(_with(data, {"task.assignor.class": assignor}))
    consumer = problem_to_data(random_consumer_problem(7, members=5, rates=True))
    cases.append(_with(consumer, {"group.protocol": "consumer", "group.remote.assignor": "range"}))
    return cases


KAFKA_CASES = len(_kafka_cases())


@pytest.mark.parametrize("case", range(KAFKA_CASES))
def test_kafkas_assignment_does_not_change_with_leaders_or_the_selector(case):
    problem = _kafka_cases()[case]
    led = _leaders_added(problem, case)
    racks_known = any(p.replica_racks for t in getattr(problem, "tasks", ()) for p in t.source_partitions) or any(
        t.replica_racks for t in getattr(problem, "topics", ())
    )
    assert problem_from_data(led).has_leaders == racks_known
    solvers = ["kafka", "kip925"] if problem.kind == "streams" else ["kafka"]
    for solver in solvers:
        answers = {
            label: solve(variant, solver=solver)
            for label, variant in (
                ("no leaders", problem),
                ("leaders", problem_from_data(led)),
                ("leaders, follower fetching", _with(led, FOLLOWERS)),
                ("leaders, custom selector", _with(led, CUSTOM)),
            )
        }
        assignments = {label: json.dumps({c: h.model_dump(mode="json") for c, h in s.assignment.items()}, sort_keys=True) for label, s in answers.items()}
        assert len(set(assignments.values())) == 1, (solver, assignments)
        # Follower fetching counts the same reads as before leaders were known; only where a
        # crossing read comes from is now the leader's rack, not a share of each replica's.
        following, before = answers["leaders, follower fetching"].metrics, answers["no leaders"].metrics
        assert following.model_copy(update={"cross_rack_bytes_by_racks": {}}) == before.model_copy(update={"cross_rack_bytes_by_racks": {}})
        per_reader = {reader: round(sum(row.values()), 6) for reader, row in following.cross_rack_bytes_by_racks.items()}
        assert per_reader == {reader: round(sum(row.values()), 6) for reader, row in before.cross_rack_bytes_by_racks.items()}


# ------------------------------------------------------------------ problems without leaders


def _replica_rule_count(problem: StreamsProblem | ConsumerProblem, assignment) -> int:
    """Cross-rack reads counted by the replica racks alone, written here independently: what
    every figure counted before leaders were in the format."""
    count = 0
    if isinstance(problem, ConsumerProblem):
        for member in problem.members:
            for partition in assignment[member.id].active:
                topic, number = partition.rsplit("-", 1)
                racks = problem.topic_by_name[topic].replica_racks
                replicas = racks[int(number)] if racks else ()
                count += bool(member.rack and replicas and member.rack not in replicas)
        return count
    for client in problem.clients:
        held = assignment[client.id]
        reads = [p for t in held.active for p in problem.task_by_id[t].source_partitions]
        reads += [p for t in (*held.standby, *held.warmup) for p in problem.task_by_id[t].changelog_partitions]
        count += sum(bool(client.rack and p.replica_racks and client.rack not in p.replica_racks) for p in reads)
    return count


def _cross(metrics) -> int:
    if hasattr(metrics, "cross_rack_partitions"):
        return metrics.cross_rack_partitions
    return metrics.cross_rack_active_partitions + metrics.cross_rack_standby_partitions + metrics.cross_rack_warmup_partitions


def test_problems_without_leaders_keep_their_figures():
    from optimizer import load_problem, load_solution

    pairs = [(load_problem(p), load_solution(s).assignment) for p, s in example_solutions()]
    for seed in range(12):
        problem = varied_problem(seed)
        pairs.append((problem, solve(problem, solver="kafka").assignment))
    pairs.append((p := random_streams_problem(3, tasks=30, clients=6, rates=True), solve(p, solver="kafka").assignment))
    pairs.append((p := random_consumer_problem(3, members=6, strategy="roundrobin", rates=True), solve(p, solver="kafka").assignment))
    assert len(pairs) > 40
    for problem, assignment in pairs:
        assert not problem.has_leaders
        before = evaluate(problem, assignment).metrics
        assert _cross(before) == _replica_rule_count(problem, assignment)
        for config in (FOLLOWERS, {"replica.selector.class": ""}):
            other = _with(problem_to_data(problem), config)
            assert evaluate(other, assignment).metrics == before
    assert len(example_problems()) == 16


def test_compare_says_how_reads_are_counted_only_when_it_differs_from_kafkas_view():
    data = _streams_app()
    leaders = compare(problem_from_data(data), goals=["balance", "cross_rack_traffic"])
    line = (
        "Reads are counted from each partition's leader (replica.selector.class unset: Kafka's default, no follower "
        "fetching); Kafka's assignors place readers by the replica racks, as if any replica served them."
    )
    assert leaders.reads == line
    assert leaders.to_dict()["reads"] == line
    assert line.split(";")[0] in " ".join(leaders.to_table().split())
    # The exact answer reads no source across racks; Kafka's, blind to the leaders, may.
    assert leaders.figures()["cross_rack_partitions"]["exact"] <= leaders.figures()["cross_rack_partitions"]["kafka"]
    custom = compare(_with(data, CUSTOM), goals=["balance"])
    assert custom.reads is not None and "com.example.ZoneSelector is not Kafka's RackAwareReplicaSelector" in custom.reads
    for quiet in (_with(data, FOLLOWERS), random_streams_problem(1, tasks=6, clients=3)):
        result = compare(quiet, goals=["balance"])
        assert result.reads is None and result.to_dict()["reads"] is None
        assert "Reads are counted" not in result.to_table()
