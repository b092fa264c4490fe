"""The consumer flow, goal by goal (issue 49): each stage optimal on one min-cost-flow network and
its optimal face kept for the next, so that no lexicographic weight can overflow, on a network of
classes of interchangeable partitions that grows with partitions + members.

Checked against enumeration on small groups of every shape (`varied_problem`, random groups,
cooperative ones, unequal subscriptions) and against MILP on groups whose one-flow weights would
have exceeded 2^60 (big rates: the flow used to decline them, and the MILP model of a 50,000 x 100
group needed 8 GB)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from optimizer import problem_from_data
from optimizer.backends import flow
from optimizer.catalogue import resolve_goals
from optimizer.engine.sequence import run_sequence
from optimizer.generate import random_consumer_problem, varied_problem
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import partition_id
from optimizer.model.normalize import normalize
from optimizer.model.solution import GoalStatus
from optimizer.testing import Claim, Enumeration, drawn_sequence
from tests.conftest import shuffled


def stage_values(problem, goals, **options):
    result = run_sequence(problem, goals, "flow", **options)
    assert result.assignment is not None and not result.fallback, result.notes
    for stage in result.stages:
        assert stage.status == GoalStatus.OPTIMAL and stage.bound == stage.objective, (stage.goal.name, result.notes)
        assert stage.goal.evaluate(problem, result.assignment) == stage.objective, stage.goal.name
    return [stage.objective for stage in result.stages], result


def enumerated_cases():
    """Small groups of every shape, with their default and a drawn sequence, where the flow takes
    the sequence (not with weighted balance, a movement budget or tolerances)."""
    cases = []
    for seed in range(1, 161, 2):  # odd seeds: consumer groups
        raw = varied_problem(seed, "consumer")
        for names in (None, drawn_sequence("consumer", seed)):
            cases.append((f"varied-{seed}-{'default' if names is None else ','.join(names)}", raw, names))
    for seed in range(24):
        raw = random_consumer_problem(
            seed, members=2 + seed % 3, topics=2, partitions=(1, 3), rates=seed % 2 == 0, equal_subscriptions=seed % 3 != 0,
            strategy="cooperative-sticky" if seed % 2 else "sticky",
        )  # fmt: skip
        cases.append((f"random-{seed}", raw, None))
    return [(label, raw, names) for label, raw, names in cases if flow.unsupported(normalize(raw).problem, resolve_goals(names, raw), {}) is None]


@pytest.mark.parametrize(("raw", "names"), [pytest.param(raw, names, id=label) for label, raw, names in enumerated_cases()])
def test_each_stage_is_the_enumerated_optimum(raw, names):
    problem = normalize(raw).problem
    goals = resolve_goals(names, raw)
    enumeration = Enumeration(problem, goals)
    values, result = stage_values(problem, goals)
    assert values == enumeration.lexicographic()
    claims = [Claim(stage.goal, stage.status, stage.objective, stage.bound) for stage in result.stages]
    assert not enumeration.audit(claims, result.assignment)


def test_the_enumerated_cases_cover_cooperative_groups_and_unequal_subscriptions():
    shapes = {"cooperative": 0, "unequal": 0, "balance_now": 0}
    for _, raw, names in enumerated_cases():
        problem = normalize(raw).problem
        goals = resolve_goals(names, raw)
        shapes["cooperative"] += problem.config.cooperative
        shapes["unequal"] += len({tuple(sorted(m.subscriptions)) for m in problem.members}) > 1
        shapes["balance_now"] += any(g.name == "balance_now" for g in goals)
    assert min(shapes.values()) >= 10, shapes


# --------------------------------------------------------------------------- big numbers


def heavy_group(partitions: int, members: int, strategy: str, seed: int = 1) -> ConsumerProblem:
    """Four topics of hundreds of MB/s per partition with replicas on one or two of racks r0-r2,
    members in r0 and r1 only (reads of partitions only in r2 cross racks), unequal subscriptions,
    most partitions owned."""
    rng = random.Random(seed)
    racks = ["r0", "r1", "r2"]
    topics = [
        {
            "name": f"t{i}", "partitions": partitions // 4,
            "replica_racks": [sorted(rng.sample(racks, rng.choice([1, 2]))) for _ in range(partitions // 4)],
            "partition_bytes_per_second": [rng.choice([1e3, 5e7, 1e8, 3e8]) * rng.randint(1, 9) for _ in range(partitions // 4)],
        }
        for i in range(4)
    ]  # fmt: skip
    member_docs = [{"id": f"m{i}", "rack": racks[i % 2], "subscriptions": [t["name"] for t in topics if rng.random() < 0.8] or ["t0"]} for i in range(members)]
    for topic in topics:
        for p in range(topic["partitions"]):
            holder = rng.choice(member_docs)
            if rng.random() < 0.7 and topic["name"] in holder["subscriptions"]:
                holder.setdefault("owned_partitions", []).append(partition_id(topic["name"], p))
    document = {"kind": "consumer", "name": "heavy", "config": {"partition.assignment.strategy": strategy}, "topics": topics, "members": member_docs}
    problem = problem_from_data(document)
    assert isinstance(problem, ConsumerProblem)
    return problem


def one_flow_weight(problem: ConsumerProblem) -> int:
    """The weight the one-flow encoding gave `balance` ahead of `cross_rack_bytes` and
    `stickiness` (each goal weighted by the range of every later one + 1; balance's range the
    squares' window of two partitions around each size): what had to stay below 2^60."""
    group = flow._ConsumerGroup(problem)
    terms = flow.ConsumerFlowTerms(problem, group)
    resolve_goals(["cross_rack_bytes"], problem)[0].flow(terms)
    traffic = int(terms.racks.max(axis=1, initial=0).sum())
    owned = int((group.owner >= 0).sum())
    sizes = np.full(len(group.members), group.n_partitions // len(group.members))
    window = int(((sizes + 2) ** 2 - np.maximum(sizes - 2, 0) ** 2).sum())
    return (window + 1) * (traffic + 1) * (owned + 1)


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_groups_whose_one_flow_weights_overflow_match_milp(strategy):
    raw = heavy_group(1_600, 4, strategy)
    problem = normalize(raw).problem
    assert one_flow_weight(problem) > 2**60
    goals = resolve_goals(None, raw)
    assert flow.unsupported(problem, goals, {}) is None
    values, _ = stage_values(problem, goals)
    milp = run_sequence(problem, goals, "milp")
    assert all(stage.status == GoalStatus.OPTIMAL for stage in milp.stages)
    assert values == [stage.objective for stage in milp.stages]
    assert values[1] > 0  # traffic that must cross racks: the stage has something to decide


# --------------------------------------------------------------------------- the network's size


def network_of(problem, goals) -> flow._ConsumerFlow:
    group = flow._ConsumerGroup(problem)
    terms = []
    for goal in goals:
        terms.append(flow.ConsumerFlowTerms(problem, group))
        goal.flow(terms[-1])
    return flow._ConsumerFlow(group, terms)


def test_interchangeable_partitions_are_one_class_and_the_network_is_linear():
    for topics, members in ((5, 20), (20, 50)):
        raw = random_consumer_problem(3, members=members, topics=topics, partitions=(1000, 1000), rates=True)
        problem = normalize(raw).problem
        goals = resolve_goals(None, raw)
        network = network_of(problem, goals)
        group = network.group
        # partitions of one subscription class, rate and replica racks are one class, or two
        # (owned or not; each owner's share of it has an arc): 2 x 3 rack pairs per topic here
        alike = {(t, tuple(cross), rate) for t, cross, rate in zip(group.partition_topic.tolist(), group.cross.tolist(), group.rates.tolist(), strict=True)}
        assert network.n_classes <= 2 * len(alike) <= group.n_partitions // 50
        subscriptions = sum(len(m) for m in group.class_members)
        assert network.n_arcs <= group.rack_columns * network.n_classes + group.n_partitions + subscriptions + 2 * members
        _, result = stage_values(problem, goals)
        assert any("classes of interchangeable partitions" in note for note in result.notes)


def test_every_partition_its_own_class_still_matches_milp():
    raw = random_consumer_problem(5, members=12, topics=4, partitions=(150, 150), rates=True, equal_subscriptions=False)
    data = raw.model_dump(mode="json", exclude_none=True)
    rng = random.Random(5)
    for topic in data["topics"]:
        topic.pop("bytes_per_second", None)
        topic["partition_bytes_per_second"] = [rng.randint(1_000, 50_000_000) for _ in range(topic["partitions"])]
    problem = normalize(problem_from_data(data)).problem
    goals = resolve_goals(None, problem)
    assert network_of(problem, goals).n_classes == 600
    values, _ = stage_values(problem, goals)
    assert values == [stage.objective for stage in run_sequence(problem, goals, "milp").stages]


# --------------------------------------------------------------------------- time and determinism


def test_a_stage_that_does_not_fit_the_time_limit_keeps_the_stages_before(monkeypatch):
    raw = random_consumer_problem(7, members=6, topics=3, partitions=(4, 8), rates=True)
    problem = normalize(raw).problem
    goals = resolve_goals(None, raw)
    full = run_sequence(problem, goals, "flow")
    solves = {"left": 1}
    original = flow._Clock.flow

    def one_flow_only(self, *arrays):
        if solves["left"] == 0:
            raise flow._OutOfTime
        solves["left"] -= 1
        return original(self, *arrays)

    monkeypatch.setattr(flow._Clock, "flow", one_flow_only)
    cut = run_sequence(problem, goals, "flow", time_limit=60)
    assert cut.assignment is not None and not cut.fallback
    first, *rest = cut.stages
    assert (first.status, first.objective, first.bound) == (GoalStatus.OPTIMAL, full.stages[0].objective, full.stages[0].objective)
    assert first.goal.evaluate(problem, cut.assignment) == first.objective
    assert all(stage.status == GoalStatus.TIME_LIMIT and stage.objective is None and stage.bound is None for stage in rest)
    assert any("stopped: the time limit leaves no room" in note for note in cut.notes)


def test_no_time_left_means_no_assignment_and_says_so():
    raw = random_consumer_problem(7, members=6, topics=3, partitions=(4, 8))
    problem = normalize(raw).problem
    result = run_sequence(problem, resolve_goals(None, raw), "flow", time_limit=0.0)
    assert result.assignment is None and result.fallback
    assert all(stage.status == GoalStatus.TIME_LIMIT for stage in result.stages)


def test_a_large_flow_in_a_child_process_gives_the_same_answer(monkeypatch):
    raw = random_consumer_problem(11, members=8, topics=3, partitions=(10, 20), rates=True, strategy="cooperative-sticky")
    problem = normalize(raw).problem
    goals = resolve_goals(None, raw)
    here = run_sequence(problem, goals, "flow", time_limit=60)
    monkeypatch.setattr(flow, "CHILD_ARCS", 0)
    child = run_sequence(problem, goals, "flow", time_limit=60)
    assert [s.objective for s in child.stages] == [s.objective for s in here.stages]
    assert child.assignment == here.assignment


def test_the_same_group_in_any_order_gets_the_same_assignment():
    raw = random_consumer_problem(13, members=9, topics=4, partitions=(5, 30), rates=True, equal_subscriptions=False)
    answers = []
    for seed in range(3):
        problem = normalize(shuffled(raw, seed) if seed else raw).problem
        result = run_sequence(problem, resolve_goals(None, problem), "flow")
        answers.append({member: sorted(held.active) for member, held in (result.assignment or {}).items()})
    assert answers[0] == answers[1] == answers[2]


def test_a_hard_bound_is_declined_not_ignored():
    # movement_budget=0 is a bound the network cannot hold: it used to be dropped silently
    raw = random_consumer_problem(16, members=4, topics=2, partitions=(2, 4))
    problem = normalize(raw).problem
    goals = resolve_goals(["balance", "movement_budget=0", "stickiness"], raw)
    assert flow.unsupported(problem, goals, {}) == "goal 'movement_budget' is a hard bound, which the consumer flow cannot hold"
    result = run_sequence(problem, goals, "exact")
    assert result.stages[0].goal.name == "movement_budget" and result.stages[0].objective == 0


def test_no_goal_still_gets_an_assignment():
    raw = random_consumer_problem(17, members=4, topics=2, partitions=(2, 5))
    problem = normalize(raw).problem
    result = run_sequence(problem, [], "flow")
    assert result.stages == [] and not result.fallback and result.assignment is not None
    assigned = sorted(p for held in result.assignment.values() for p in held.active)
    assert assigned == sorted(partition_id(t.name, n) for t in problem.topics for n in range(t.partitions))
