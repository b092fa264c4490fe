"""The live oracle: Kafka 4.4.0's own classic consumer assignors (the client's RangeAssignor,
RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor, run from the pinned jars) against
`--solver kafka` on seeded random groups: the same assignment, member by member.

Members enter Kafka's subscription HashMap in the problem's order, which is the order the
project's reproduction simulates (optimizer.assignors.java), so the answers must be equal, not
only equally good."""

from __future__ import annotations

import random

import pytest

from optimizer.generate import random_consumer_problem, varied_problem
from optimizer.kafka.oracle.batch import Answer
from optimizer.kafka.oracle.consumer import classic_consumer_answers, kip848_answers
from optimizer.model.consumer import ConsumerProblem, GroupProtocol
from optimizer.solve import solve

pytestmark = pytest.mark.kafka

STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky")
PER_STRATEGY = 150


def _random_groups(strategy: str) -> list[ConsumerProblem]:
    groups = []
    for seed in range(PER_STRATEGY):
        rng = random.Random(f"{strategy}-{seed}")
        groups.append(
            random_consumer_problem(
                seed, members=rng.randint(1, 9), topics=rng.randint(1, 4), partitions=(1, 12), racks=rng.choice([0, 2, 3]),
                replication=rng.randint(1, 3), equal_subscriptions=rng.random() < 0.5, strategy=strategy,
                owned=rng.random() < 0.8, churn=rng.random() * 0.5, name=f"{strategy}-{seed}",
            )
        )  # fmt: skip
    return groups


def _varied_groups(count: int) -> list[ConsumerProblem]:
    """Small groups with contested claims and generations of every classic strategy."""
    groups: list[ConsumerProblem] = []
    seed = 1
    while len(groups) < count:
        problem = varied_problem(seed, "consumer")
        seed += 2
        if isinstance(problem, ConsumerProblem) and problem.config.group_protocol == GroupProtocol.CLASSIC:
            groups.append(problem)
    return groups


def _ours(problem: ConsumerProblem) -> dict[str, tuple[str, ...]]:
    """`--solver kafka`'s assignment applied now, each member's partitions sorted."""
    return {member: tuple(sorted(held.active)) for member, held in solve(problem, solver="kafka").assignment.items()}


def _disagreements(groups: list[ConsumerProblem], answers: list[Answer]) -> list[str]:
    """The groups where Kafka's answer is not ours, member by member, or where Kafka raised."""
    found = []
    for problem, kafka in zip(groups, answers, strict=True):
        if isinstance(kafka, str):
            found.append(f"{problem.name}: Kafka raised {kafka}")
            continue
        ours = _ours(problem)
        if ours != {member: tuple(sorted(kafka.get(member, ()))) for member in ours} or set(kafka) - set(ours):
            found.append(f"{problem.name}: ours {ours}, Kafka's {dict(kafka)}")
    return found


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_kafkas_classic_consumer_assignor_gives_our_answer(strategy):
    groups = _random_groups(strategy)
    assert _disagreements(groups, classic_consumer_answers(groups)) == []


def test_kafkas_classic_assignors_give_our_answer_with_contested_claims_and_generations():
    groups = _varied_groups(300)
    assert {str(g.config.partition_assignment_strategy) for g in groups} == set(STRATEGIES)
    assert _disagreements(groups, classic_consumer_answers(groups)) == []


def _with_stale_claims(count: int) -> list[ConsumerProblem]:
    """Sticky groups where a member claims partitions beyond a topic's current count (the topic was
    deleted and re-created smaller), with a generation."""
    from optimizer.model.problem import problem_from_data, problem_to_data

    groups: list[ConsumerProblem] = []
    seed = 1
    while len(groups) < count:
        problem = varied_problem(seed, "consumer")
        seed += 2
        if not (isinstance(problem, ConsumerProblem) and problem.config.group_protocol == GroupProtocol.CLASSIC):
            continue
        if str(problem.config.partition_assignment_strategy) not in ("sticky", "cooperative-sticky"):
            continue
        data = problem_to_data(problem)
        rng = random.Random(seed)
        topic, member = rng.choice(data["topics"]), rng.choice(data["members"])
        stale = [f"{topic['name']}-{topic['partitions'] + k}" for k in range(rng.randint(1, 3))]
        member["owned_partitions"] = [*member.get("owned_partitions", []), *stale]
        member["generation"] = max(1, member.get("generation", -1))
        groups.append(problem_from_data(data))
    return groups


def test_with_claims_beyond_a_topics_partitions_kafka_answers_validly_only_where_it_agrees():
    """Kafka 4.4.0's sticky assignors, given claims of partitions that no longer exist, either
    answer as we do, or raise (IllegalStateException), or return an assignment that is no
    assignment (those partitions kept, others given twice): never a valid answer different from
    ours. Measured on these 300 groups: 201 agree, 40 raise, 59 invalid; what `--solver kafka`
    should say in the last two cases is open (issue 30)."""
    groups = _with_stale_claims(300)
    kinds: dict[str, int] = {}
    for problem, kafka in zip(groups, classic_consumer_answers(groups), strict=True):
        if isinstance(kafka, str):
            kinds["raised"] = kinds.get("raised", 0) + 1
            continue
        existing = {f"{t.name}-{p}" for t in problem.topics for p in range(t.partitions)}
        given = [p for parts in kafka.values() for p in parts]
        if set(given) - existing or len(given) != len(set(given)):
            kinds["invalid"] = kinds.get("invalid", 0) + 1
            continue
        assert _disagreements([problem], [kafka]) == []
        kinds["agree"] = kinds.get("agree", 0) + 1
    assert kinds.get("agree", 0) > 150  # most groups: the comparison is not vacuous


def _kip848_groups(assignor: str, count: int) -> list[ConsumerProblem]:
    """Seeded KIP-848 groups (`group.protocol=consumer`) with racks on some members."""
    from optimizer.model.problem import problem_from_data, problem_to_data

    groups = []
    for seed in range(count):
        rng = random.Random(f"{assignor}-{seed}")
        problem = random_consumer_problem(
            seed, members=rng.randint(1, 9), topics=rng.randint(1, 4), partitions=(1, 12), racks=rng.choice([0, 2, 3]),
            equal_subscriptions=rng.random() < 0.5, owned=rng.random() < 0.8, churn=rng.random() * 0.5, name=f"{assignor}-{seed}",
        )  # fmt: skip
        data = problem_to_data(problem)
        data["config"] = {"group.protocol": "consumer", "group.remote.assignor": assignor}
        for member in data["members"]:
            if rng.random() < 0.5:
                member["rack"] = rng.choice(["rack-a", "rack-b", "rack-c"])
        groups.append(problem_from_data(data))
    return groups


def _rack_aware_homogeneous(problem: ConsumerProblem) -> bool:
    homogeneous = len({frozenset(m.subscriptions) for m in problem.members}) == 1
    return homogeneous and any(m.rack for m in problem.members) and any(t.replica_racks for t in problem.topics)


def test_kafkas_kip848_range_assignor_gives_our_answer():
    groups = _kip848_groups("range", 200)
    assert _disagreements(groups, kip848_answers(groups)) == []


def test_kafkas_kip848_uniform_assignor_gives_our_answer_but_rack_aware_homogeneous():
    """Kafka 4.4.0's `uniform` agrees with ours on heterogeneous groups and on groups without racks;
    on homogeneous groups with racks it differs (37 of these 86; 114 others agree): 4.4.0's rack-aware
    homogeneous builder is not the one reproduced (issue 30, open)."""
    groups = [g for g in _kip848_groups("uniform", 200) if not _rack_aware_homogeneous(g)]
    assert len(groups) > 80
    assert _disagreements(groups, kip848_answers(groups)) == []
