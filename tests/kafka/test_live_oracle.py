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
from optimizer.kafka.oracle import classic_consumer_answers
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


def _disagreements(groups: list[ConsumerProblem]) -> list[str]:
    found = []
    for problem, kafka in zip(groups, classic_consumer_answers(groups), strict=True):
        ours = {member: tuple(sorted(held.active)) for member, held in solve(problem, solver="kafka").assignment.items()}
        if isinstance(kafka, str):
            found.append(f"{problem.name}: Kafka raised {kafka}")
            continue
        theirs = {member: tuple(sorted(kafka.get(member, ()))) for member in ours}
        if ours != theirs or set(kafka) - set(ours):
            found.append(f"{problem.name}: ours {ours}, Kafka's {dict(kafka)}")
    return found


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_kafkas_classic_consumer_assignor_gives_our_answer(strategy):
    assert _disagreements(_random_groups(strategy)) == []


def test_kafkas_classic_assignors_give_our_answer_with_contested_claims_and_generations():
    groups = _varied_groups(300)
    assert {str(g.config.partition_assignment_strategy) for g in groups} == set(STRATEGIES)
    assert _disagreements(groups) == []
