"""The live oracle: Kafka's own consumer assignors, run from the jars, against `--solver kafka` on
seeded groups (`optimizer.generate`'s oracle groups): the same assignment, member by member, or,
where Kafka raises or returns no valid assignment, `--solver kafka` refusing and saying so.

Kafka 4.4.0 (the pinned jars): the client's RangeAssignor, RoundRobinAssignor, StickyAssignor and
CooperativeStickyAssignor (with contested claims, generations, and claims beyond a topic's
partition count), and the group coordinator's `uniform` and `range` (KIP-848). Older releases'
jars (Maven Central, cached in jvm/target/releases): 4.0.0's `uniform` and `range`, 3.9.1's
`uniform`, each under that `kafka.version`. bench/consumer_releases.py checks every release.

Members enter Kafka's subscription HashMap in the problem's order, which is the order the
project's reproduction simulates (optimizer.assignors.java), so the answers must be equal, not
only equally good."""

from __future__ import annotations

import random

import pytest

from optimizer.errors import SolverUnavailableError
from optimizer.generate import (
    CLASSIC_STRATEGIES,
    oracle_classic_groups,
    oracle_joined_groups,
    oracle_kip848_groups,
    oracle_large_target_groups,
    oracle_stale_claim_groups,
    oracle_static_kip848_groups,
    oracle_varied_classic_groups,
)
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import kafka_uuid_text, partition_key
from optimizer.model.problem import problem_from_data, problem_to_data
from optimizer.oracle.batch import Answer, at_release
from optimizer.oracle.consumer import classic_consumer_answers, kip848_answers
from optimizer.solve import solve

pytestmark = pytest.mark.kafka

PER_STRATEGY = 150


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


@pytest.mark.parametrize("strategy", CLASSIC_STRATEGIES)
def test_kafkas_classic_consumer_assignor_gives_our_answer(strategy):
    groups = oracle_classic_groups(strategy, PER_STRATEGY)
    assert _disagreements(groups, classic_consumer_answers(groups)) == []


def test_kafkas_classic_assignors_give_our_answer_with_contested_claims_and_generations():
    groups = oracle_varied_classic_groups(300)
    assert {str(g.config.partition_assignment_strategy) for g in groups} == set(CLASSIC_STRATEGIES)
    assert _disagreements(groups, classic_consumer_answers(groups)) == []


def test_with_static_members_the_classic_assignors_give_our_answer():
    """Static members (`group.instance.id`, KIP-345): Kafka's range and round-robin assignors put them first, in
    the order of their instance ids (`MemberInfo.compareTo`), which is not their member ids' order here; the
    sticky ones do not read them. Some members of each group static, some not; every group differs from the
    same group without instance ids on at least one of range and round-robin overall."""
    rng = random.Random(345)
    groups = []
    for problem in oracle_varied_classic_groups(300):
        data = problem_to_data(problem)
        for member in data["members"]:
            if rng.random() < 0.6:
                member["group_instance_id"] = f"instance-{rng.randrange(10**6):06d}"
        groups.append(problem_from_data(data))
    assert _disagreements(groups, classic_consumer_answers(groups)) == []
    eager = [g for g in groups if str(g.config.partition_assignment_strategy) in ("range", "roundrobin")]
    moved = sum(_ours(g) != _ours(problem_from_data({**problem_to_data(g), "members": [
        {k: v for k, v in m.items() if k != "group_instance_id"} for m in problem_to_data(g)["members"]]})) for g in eager)  # fmt: skip
    assert moved > len(eager) // 4, (moved, len(eager))


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_the_sticky_assignors_follow_the_order_the_coordinator_lists_members_in(strategy):
    """The leader fills its HashMap of subscriptions in the order the coordinator lists the members
    (`join_order`); where ids share a bucket, the sticky assignors' ties follow it. 100 groups of
    8-30 members with a shuffled join order: Kafka's answer is ours, and on some of them it is not
    the answer for members joined in id order (so the order is what is tested)."""
    groups = oracle_joined_groups(strategy, 100)
    assert _disagreements(groups, classic_consumer_answers(groups)) == []
    unordered = [problem_from_data({k: v for k, v in problem_to_data(g).items() if k != "join_order"}) for g in groups]
    assert sum(_ours(g) != _ours(u) for g, u in zip(groups, unordered, strict=True)) > 0


def test_with_claims_beyond_a_topics_partitions_we_answer_as_kafka_or_refuse_as_kafka_fails():
    """Kafka 4.4.0's sticky assignors, given claims of partitions that no longer exist, answer as we
    do, or raise IllegalStateException, or return an assignment that is no assignment (such
    partitions handed back, others given twice). On every group: where Kafka's answer is valid,
    ours is the same; where Kafka raises, `--solver kafka` refuses saying Kafka raises, with
    Kafka's message; where Kafka's answer is invalid, it refuses naming exactly the partitions
    Kafka hands back and gives twice. 201, 40 and 59 of these 300 groups."""
    groups = oracle_stale_claim_groups(300)
    kinds: dict[str, int] = {}
    for problem, kafka in zip(groups, classic_consumer_answers(groups), strict=True):
        try:
            _ours(problem)
        except SolverUnavailableError as error:
            ours_error = str(error)
        else:
            assert _disagreements([problem], [kafka]) == []
            kinds["agree"] = kinds.get("agree", 0) + 1
            continue
        if isinstance(kafka, str):
            assert kafka.startswith("IllegalStateException: ")
            assert f"raises IllegalStateException ('{kafka.removeprefix('IllegalStateException: ')}')" in ours_error
            kinds["raised"] = kinds.get("raised", 0) + 1
            continue
        existing = {f"{t.name}-{p}" for t in problem.topics for p in range(t.partitions)}
        given = [p for parts in kafka.values() for p in parts]
        back = sorted(set(given) - existing, key=partition_key)
        twice = sorted({p for p in given if p in existing and given.count(p) > 1}, key=partition_key)
        assert back or twice, f"{problem.name}: we refuse, Kafka answers validly"
        said = [f"hands back {', '.join(back)}, which {'does' if len(back) == 1 else 'do'} not exist"] if back else []
        said += [f"gives {', '.join(twice)} twice"] if twice else []
        assert "returns an invalid assignment for this group: it " + " and ".join(said) + "." in ours_error
        kinds["invalid"] = kinds.get("invalid", 0) + 1
    assert kinds == {"agree": 201, "raised": 40, "invalid": 59}


def test_kafkas_kip848_range_assignor_gives_our_answer():
    groups = oracle_kip848_groups("range", 200)
    assert _disagreements(groups, kip848_answers(groups)) == []


def test_with_static_members_the_kip848_assignors_give_our_answer():
    """KIP-848's `range` orders members as `RangeAssignor.sortMemberIds` does: static members first,
    by `group.instance.id`, then the others by member id (`uniform` reads no instance id). Some
    members of each group static; `range` moves on over a quarter of the groups against the
    same groups without instance ids, so the order is what is tested."""
    groups = [*oracle_static_kip848_groups("range", 100), *oracle_static_kip848_groups("uniform", 100)]
    assert _disagreements(groups, kip848_answers(groups)) == []
    ranged = groups[:100]
    moved = sum(_ours(g) != _ours(problem_from_data({**problem_to_data(g), "members": [
        {k: v for k, v in m.items() if k != "group_instance_id"} for m in problem_to_data(g)["members"]]})) for g in ranged)  # fmt: skip
    assert moved > len(ranged) // 4, (moved, len(ranged))


def test_kip848_uniform_reads_previous_targets_as_the_coordinator_holds_them():
    """The coordinator holds each member's previous target as `Assignment.fromRecord` rebuilds it:
    per topic a HashSet copied from the record's partition list, presized, whose iteration order
    differs from a set filled one partition at a time from 25 partitions on. Groups of 1-4 members
    owning up to 200 partitions of a topic: Kafka's answer is ours, and with sets filled one at a
    time it would not be on some of them (so the order is what is tested)."""
    from optimizer.assignors.consumer.uniform import uniform_assign_4_0_1
    from optimizer.model.normalize import normalize

    groups = oracle_large_target_groups(60)
    assert _disagreements(groups, kip848_answers(groups)) == []
    filled = 0
    for group in groups:
        normalized = normalize(group).problem
        incremental = uniform_assign_4_0_1(normalized, previous_sets="incremental").assignment
        filled += {m: tuple(sorted(p)) for m, p in incremental.items()} != {m: tuple(sorted(p)) for m, p in uniform_assign_4_0_1(normalized).assignment.items()}
    assert filled > 0


def test_kip848_uniform_follows_the_order_members_enter_the_coordinators_map():
    """"Aa" and "BB" share a Java hash code: Kafka's uniform assignor, fed the members in each
    `join_order`, answers as `--solver kafka` does, and the two orders give two answers."""
    groups = []
    for order in (["Aa", "BB"], ["BB", "Aa"]):
        groups.append(
            problem_from_data(
                {
                    "kind": "consumer",
                    "name": "-".join(order),
                    "config": {"group.protocol": "consumer", "group.remote.assignor": "uniform"},
                    "topics": [{"name": "t", "partitions": 3}],
                    "members": [{"id": "Aa", "subscriptions": ["t"]}, {"id": "BB", "subscriptions": ["t"]}],
                    "join_order": order,
                }
            )
        )
    answers = kip848_answers(groups)
    assert _disagreements(groups, answers) == []
    assert answers[0] != answers[1]


def test_kafkas_kip848_uniform_assignor_gives_our_answer():
    """Kafka 4.4.0's `uniform` (KAFKA-18688's homogeneous builder, no racks read) on every group,
    rack-aware homogeneous ones included."""
    groups = oracle_kip848_groups("uniform", 200)
    assert _disagreements(groups, kip848_answers(groups)) == []


def test_with_kafkas_own_topic_ids_the_kip848_assignors_give_our_answer():
    """A problem's `topic_id`s (as a live cluster and the broker-side plug-in give them) are the
    Uuids Kafka breaks ties between topics by; the adapter gives Kafka the same ids."""
    rng = random.Random(848)
    groups = []
    for problem in oracle_kip848_groups("uniform", 100) + oracle_kip848_groups("range", 60):
        data = problem_to_data(problem)
        for topic in data["topics"]:
            topic["topic_id"] = kafka_uuid_text(rng.randbytes(16))
        groups.append(problem_from_data(data))
    assert all(t.topic_id for g in groups for t in g.topics)
    assert _disagreements(groups, kip848_answers(groups)) == []


def test_kafka_4_0_0s_kip848_assignors_give_our_answer_under_kafka_version_4_0_0():
    """Kafka 4.0.0's jars (Maven Central): `uniform`'s homogeneous builder before KAFKA-18688 (the
    first members take the extra partitions), which differs from 4.4.0's on many of these groups,
    and `range`."""
    groups = [at_release(g, "4.0.0") for g in oracle_kip848_groups("uniform", 100) + oracle_kip848_groups("range", 50)]
    answers = kip848_answers(groups, release="4.0.0")
    assert _disagreements(groups, answers) == []
    at_4_4 = [at_release(g, "4.4.0") for g in groups[:100]]
    assert len(_disagreements(at_4_4, answers[:100])) > 20  # the release matters: 4.4.0's uniform answers otherwise


def test_kafka_3_9_1s_uniform_assignor_gives_our_answer_or_throws_as_we_say_under_kafka_version_3_9_1():
    """Kafka 3.9.1's jars: `uniform` with the homogeneous builder of 4.0.0 and the heterogeneous
    builder from before KAFKA-17710. Where it throws (its movement record check is inverted: a
    partition that would move twice), `--solver kafka` refuses quoting Kafka's message."""
    groups = [at_release(g, "3.9.1") for g in oracle_kip848_groups("uniform", 200)]
    refused = 0
    for problem, kafka in zip(groups, kip848_answers(groups, release="3.9.1"), strict=True):
        try:
            _ours(problem)
        except SolverUnavailableError as error:
            assert isinstance(kafka, str) and kafka.startswith("PartitionAssignorException: "), f"{problem.name}: {error}"
            assert f"('{kafka.removeprefix('PartitionAssignorException: ')}')" in str(error)
            refused += 1
            continue
        assert _disagreements([problem], [kafka]) == []
    assert refused == 1
