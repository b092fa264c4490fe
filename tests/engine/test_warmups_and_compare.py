"""The assignment applied now and the plan to the target (KIP-441 warm-ups, cooperative
withholding), and `compare`."""

from __future__ import annotations

import json

from click.testing import CliRunner

from optimizer import compare, load_problem, next_rebalance, problem_from_data, solve
from optimizer.cli import cli
from optimizer.generate import random_streams_problem
from optimizer.model import problem_to_data
from tests.conftest import EXAMPLES

SCALING_OUT = EXAMPLES / "kip441" / "scaling-out-1.problem.yaml"


def with_config(problem, **config):
    data = problem_to_data(problem)
    data.setdefault("config", {}).update(config)
    return problem_from_data(data)


def test_an_active_whose_target_is_not_caught_up_waits_behind_a_warm_up():
    problem = load_problem(SCALING_OUT)  # I3 joins with no state; every task has a caught-up copy
    target = solve(problem, warmups=False)
    assert target.assignment["I3"].active and not target.followup_rebalance
    planned = solve(problem)
    assert planned.followup_rebalance
    i3 = planned.assignment["I3"]
    # Nothing runs on I3 yet: what the target gives it, it restores first (a warm-up, or a
    # standby of the same task, which restores the same state without counting as a warm-up).
    assert not i3.active and set(target.assignment["I3"].active) <= set(i3.warmup) | set(i3.standby)
    assert sum(len(h.warmup) for h in planned.assignment.values()) <= 2  # max.warmup.replicas default
    for client, held in planned.assignment.items():
        assert not held.active or client in ("I1", "I2")  # actives only on the caught-up holders
    # The plan: I3 warms up now, the probing rebalance 10 minutes later moves its active there.
    assert planned.target == target.assignment
    plan = planned.plan
    assert [r.round for r in plan.rounds] == [1, 2] and plan.followup_rebalances == 1
    assert plan.rounds[0].warmups == ({"I3": i3.warmup} if i3.warmup else {}) and plan.rounds[1].moves == 1
    assert plan.seconds_to_target == 600.0
    # Every copy I3 starts now (warm-up or standby) replays the whole changelog: 1,000,000 each.
    assert plan.rounds[0].restore_offsets == 1_000_000 * (len(i3.warmup) + len(i3.standby))


def test_max_warmup_replicas_limits_the_warm_ups_at_a_time():
    problem = with_config(random_streams_problem(2, tasks=30, clients=4, standby_replicas=1, churn=0.5), **{"max.warmup.replicas": 1})
    planned = solve(problem)
    assert sum(len(h.warmup) for h in planned.assignment.values()) <= 1
    assert planned.followup_rebalance


def test_warm_ups_converge_to_a_balanced_fixed_point():
    # Feed each solution back with its warm-ups caught up (a probing rebalance): within a few
    # rounds nothing is pending, the assignment is balanced, and solving again changes nothing.
    problem = load_problem(SCALING_OUT)
    for _ in range(5):
        solution = solve(problem)
        if not solution.followup_rebalance:
            break
        problem = next_rebalance(problem, solution)
    assert not solution.followup_rebalance
    assert {g.name: g.value for g in solution.goals}["balance"] == 0
    assert all(len(held.active) == 1 for held in solution.assignment.values())
    again = solve(next_rebalance(problem, solution))
    assert again.assignment == solution.assignment and not again.followup_rebalance


def test_caught_up_clients_take_their_target_at_once():
    data = problem_to_data(load_problem(SCALING_OUT))
    data["config"]["acceptable.recovery.lag"] = 2**62  # everybody counts as caught up
    solution = solve(problem_from_data(data))
    assert not solution.followup_rebalance
    assert all(not held.warmup for held in solution.assignment.values())


def test_cooperative_sticky_withholds_partitions_that_change_owner():
    group = load_problem(EXAMPLES / "kip54" / "example3-c2-joins.problem.yaml")
    cooperative = with_config(group, **{"partition.assignment.strategy": "cooperative-sticky"})
    target = solve(with_config(group, **{"partition.assignment.strategy": "sticky"}))
    now = solve(cooperative)
    owned = {p: m.id for m in cooperative.members for p in m.owned_partitions}
    moving = [(m, p) for m, held in target.assignment.items() for p in held.active if owned.get(p, m) != m]
    assert moving  # C2 joins: it takes partitions that others own
    assert now.followup_rebalance
    for member, partition in moving:
        assert partition not in now.assignment[member].active
    assert sum(len(h.active) for h in now.assignment.values()) == sum(len(h.active) for h in target.assignment.values()) - len(moving)


def test_compare_reports_each_goal_for_both_and_the_moves():
    problem = load_problem(EXAMPLES / "kip925" / "three-clients-1-2-3-threads.problem.yaml")
    comparison = compare(problem)
    names = [g.name for g in comparison.goals]
    assert names == ["balance", "standby_rack_diversity", "subtopology_spread", "cross_rack_traffic", "stickiness"]
    exact = [g.exact for g in comparison.goals]
    kafka = [g.kafka for g in comparison.goals]
    assert exact <= kafka  # never worse on the first goal where they differ
    for g in comparison.goals:
        assert g.status == "optimal" and g.bound is not None and g.gap == 0
    data = comparison.to_dict()
    assert data["moves"] == comparison.moves >= 0 and len(data["goals"]) == 5
    table = comparison.to_table()
    assert "Kafka heuristic vs exact" in table and "cross_rack_traffic" in table


def test_compare_from_the_command_line():
    path = EXAMPLES / "kip441" / "scaling-in-standbys-in-sync.problem.yaml"
    result = CliRunner().invoke(cli, ["compare", str(path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {g["name"] for g in data["goals"]} >= {"balance", "stickiness"}
    assert all(set(g) >= {"kafka", "exact", "bound", "gap", "seconds", "status"} for g in data["goals"])
    result = CliRunner().invoke(cli, ["compare", str(path), "--goals", "balance,cross_rack_traffic"])
    assert result.exit_code == 0 and "cross_rack_traffic" in result.output and "placed differently" in result.output
    result = CliRunner().invoke(cli, ["compare", str(path), "--goals", "nonsense"])
    assert result.exit_code == 2 and "unknown goal 'nonsense'" in result.output
