"""Kafka's answer for a problem, in one place: which assignor Kafka runs and what it returns.

The problem's kind and `group.protocol` choose the family (`FAMILIES`); the family's key chooses
the assignor in its table (`optimizer.assignors.table`): `partition.assignment.strategy` and
`group.remote.assignor` for consumer groups (`consumer.strategy`), `task.assignor.class` and
`streams.assignor.name` for Kafka Streams (`streams.task_assignors`, `streams.group.assign`). Each
family turns its assignor's answer into a `KafkaAnswer`: the assignment applied now, the target a
cooperative or KIP-441 assignor defers to a follow-up rebalance, and what ran. The `kip925`
reference goal answers through the same type (`reference_answer`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from optimizer.assignors.consumer.group import TP
from optimizer.assignors.consumer.strategy import kafka_consumer_assign
from optimizer.assignors.streams.group.assign import StreamsGroupResult, streams_group_assign
from optimizer.assignors.streams.high_availability import StreamsAssignorResult
from optimizer.assignors.streams.kip925_reference import kip925_reference
from optimizer.assignors.streams.task_assignors import TASK_ASSIGNORS
from optimizer.errors import SolverUnavailableError
from optimizer.model.consumer import ConsumerProblem, GroupProtocol
from optimizer.model.ids import partition_id, task_id, task_key
from optimizer.model.issues import Issue, warning
from optimizer.model.normalize import unlogged_tasks
from optimizer.model.problem import Problem
from optimizer.model.releases import KafkaRelease, release_text
from optimizer.model.solution import ClientAssignment, MemberAssignment
from optimizer.model.streams import StreamsGroupAssignor, StreamsGroupProtocol, StreamsProblem, TaskAssignor

Assigned = dict[str, ClientAssignment]


@dataclass(frozen=True)
class KafkaAnswer:
    """What Kafka's assignor (or the kip925 reference) answers for one problem."""

    assignment: Assigned
    """Each client's or member's assignment applied at this rebalance (warm-ups included)."""
    followup_rebalance: bool
    """Whether the assignor asks for a follow-up rebalance (probing, or cooperative revocation)."""
    target: Assigned | None = None
    """Where its follow-up rebalances end, when that differs from `assignment`."""
    notes: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    """What ran, as the solution's solver options report it (`assignor`, `protocol`, `goal`, and
    `kafka.version`, the release whose assignor it is)."""
    warnings: tuple[Issue, ...] = ()
    """Config keys the problem sets that the selected assignor does not read, and the claims
    Kafka's assignor settled (KAFKA-12464), as warnings about the problem."""


def kafka_answer(problem: Problem, raw: Problem, release: KafkaRelease | None = None) -> KafkaAnswer:
    """Kafka's answer for `problem` (normalised), in Kafka `release` (the problem's
    `kafka.version` unless given); `raw` is the problem as given, which the assignors that read the
    members' reports as they are get. SolverUnavailableError when that release's assignor is not
    reproduced (or not shipped)."""
    protocol = str(problem.config.group_protocol)
    release = problem.config.release if release is None else release
    answer = FAMILIES[(problem.kind, protocol)](problem, raw, release)
    if "proposal" in answer.options:  # no release ships it: no release to name
        return answer
    return replace(answer, options={**answer.options, "kafka.version": release_text(release)})


def reference_answer(problem: Problem) -> KafkaAnswer:
    """The KIP-925 reference goal's answer (Kafka Streams only)."""
    if not isinstance(problem, StreamsProblem):
        raise SolverUnavailableError("the kip925 reference goal applies to Kafka Streams problems only")
    return _from_task_assignor(kip925_reference(problem), {"goal": "kip925"}, ())


def _consumer(problem: Problem, raw: Problem, release: KafkaRelease) -> KafkaAnswer:
    # Kafka's sticky assignors settle contested and stale claims themselves (KAFKA-12464):
    # they get the members' claims as reported; partitions that no longer exist are dropped.
    assert isinstance(problem, ConsumerProblem) and isinstance(raw, ConsumerProblem)
    consumer = kafka_consumer_assign(raw, release)
    assignment = {member: ClientAssignment(active=tuple(partition_id(*tp) for tp in sorted(parts))) for member, parts in sorted(consumer.assignment.items())}
    warnings = tuple(warning(where, what) for where, what in consumer.warnings)
    options: dict[str, Any]
    if raw.config.group_protocol == GroupProtocol.CONSUMER:
        options = {"assignor": str(raw.config.remote_assignor), "protocol": "consumer"}
        if "partition_assignment_strategy" in raw.config.model_fields_set:
            warnings += (_not_read("partition.assignment.strategy", "consumer (KIP-848)"),)
    else:
        options = {"assignor": str(problem.config.partition_assignment_strategy)}
    target = _next_rounds(raw, consumer.assignment, release) if consumer.followup_rebalance else None
    return KafkaAnswer(assignment, consumer.followup_rebalance, target, tuple(consumer.notes), options, warnings)


def _classic_streams(problem: Problem, raw: Problem, release: KafkaRelease) -> KafkaAnswer:
    assert isinstance(problem, StreamsProblem) and isinstance(raw, StreamsProblem)
    name = problem.config.task_assignor_class
    unread: tuple[Issue, ...] = ()
    if "streams_assignor_name" in raw.config.model_fields_set:
        unread = (_not_read("streams.assignor.name", "classic"),)
    if name == TaskAssignor.KIP924_STICKY:
        problem = kip924_view(problem, raw)
    return _from_task_assignor(TASK_ASSIGNORS.select(name, release)(problem), {"assignor": str(name)}, unread)


def kip924_view(problem: StreamsProblem, raw: StreamsProblem) -> StreamsProblem:
    """The normalised `problem` as KIP-924's StickyTaskAssignor reads it: its `TaskInfo.isStateful`
    is whether a task has stores, so a task whose stores log nothing (`unlogged_tasks` of the
    problem as given, `raw`) is placed with the stateful actives again; it still gets no standby,
    having no changelog."""
    unlogged = unlogged_tasks(raw)
    if not unlogged:
        return problem
    return problem.model_copy(update={"tasks": tuple(t.model_copy(update={"stateful": True}) if t.id in unlogged else t for t in problem.tasks)})


def _streams_group(problem: Problem, raw: Problem, release: KafkaRelease) -> KafkaAnswer:
    # The broker sees the members' history as reported, tasks that no longer exist included.
    assert isinstance(problem, StreamsProblem) and isinstance(raw, StreamsProblem)
    group = streams_group_assign(raw, release)
    ignored = tuple(_not_read(key, "streams (KIP-1071)") for key in group.ignored if key != TAGS)
    if TAGS in group.ignored:
        trunk = "; trunk's sticky reads it (KAFKA-20999)" if group.assignor == StreamsGroupAssignor.STICKY else ""
        ran = f"Kafka {release_text(release)}'s" if group.assignor == StreamsGroupAssignor.STICKY else "the"
        ignored += (warning(f"config.{TAGS}", f"not read by {ran} streams-group {group.assignor} assignor{trunk}"),)
    options: dict[str, Any] = {"assignor": f"streams-group {group.assignor}", "protocol": "streams"}
    if group.assignor == StreamsGroupAssignor.BALANCED:
        ignored += (warning("config.streams.assignor.name", BALANCED_IS_A_PROPOSAL),)
        options["proposal"] = "KAFKA-20998, pull request #23419"
    return KafkaAnswer(_streams_group_assignment(problem, group), False, options=options, warnings=ignored)


TAGS = "rack.aware.assignment.tags"

BALANCED_IS_A_PROPOSAL = (
    "balanced is a proposal that no Kafka release ships (KAFKA-20998, pull request #23419, aimed at 4.5): "
    "reproduced from that pull request's code whatever kafka.version says; a released broker refuses the name"
)


FAMILIES: dict[tuple[str, str], Callable[[Problem, Problem, KafkaRelease], KafkaAnswer]] = {
    ("consumer", str(GroupProtocol.CLASSIC)): _consumer,
    ("consumer", str(GroupProtocol.CONSUMER)): _consumer,
    ("streams", str(StreamsGroupProtocol.CLASSIC)): _classic_streams,
    ("streams", str(StreamsGroupProtocol.STREAMS)): _streams_group,
}
"""The assignor families by (kind, `group.protocol`): the classic and KIP-848 consumer groups
(one adapter: `kafka_consumer_assign` reads the protocol's key), the classic Kafka Streams task
assignors and KIP-1071's streams-group assignors."""


NEXT_ROUNDS = 50
"""Follow-up rebalances simulated to find where Kafka's cooperative assignor settles. Its general
sticky assignor (members with different subscriptions) can withhold partitions again in the
follow-up rounds: 4 and 6 rounds on two of Kafka's answers in the parity cases, 13 on
catalog-group-186 of the sample fleet (0.23 s in all), which 3 rounds left without a target (and
so with partitions no rebalance would assign, as the evaluator says)."""


def _next_rounds(problem: ConsumerProblem, assigned: Mapping[str, list[TP]], release: KafkaRelease) -> Assigned | None:
    """Kafka's target when its cooperative assignor withholds partitions: its answer in the
    follow-up rebalance, where every member owns what it was given now (one generation later),
    repeated while it still withholds (at most NEXT_ROUNDS); None when it does not settle."""
    generation = max(0, *(m.generation for m in problem.members)) + 1
    seen: set[tuple[tuple[str, tuple[TP, ...]], ...]] = set()
    for _ in range(NEXT_ROUNDS):
        state = tuple(sorted((member, tuple(sorted(parts))) for member, parts in assigned.items()))
        if state in seen:
            return None  # a round it has been in before: it would go round for ever
        seen.add(state)
        members = tuple(
            m.model_copy(update={"owned_partitions": tuple(partition_id(*tp) for tp in sorted(assigned.get(m.id, ()))), "generation": generation})
            for m in problem.members
        )
        result = kafka_consumer_assign(problem.model_copy(update={"members": members}), release)
        assigned, generation = result.assignment, generation + 1
        if not result.followup_rebalance:
            return {m: ClientAssignment(active=tuple(partition_id(*tp) for tp in sorted(parts))) for m, parts in sorted(assigned.items())}
    return None


def _not_read(key: str, protocol: str) -> Issue:
    return warning(f"config.{key}", f"not read under group.protocol={protocol}: Kafka's assignor there ignores it")


def _from_task_assignor(result: StreamsAssignorResult, options: dict[str, Any], unread: tuple[Issue, ...]) -> KafkaAnswer:
    """A classic task assignor's ClientStates as assignments: warm-ups apart from standbys; its
    KIP-441 target when it defers one."""
    assignment = {}
    for client in sorted(result.clients, key=lambda c: c.id):
        warmups = result.warmups.get(client.id, set())
        assignment[client.id] = ClientAssignment(
            active=tuple(task_id(*key) for key in sorted(client.active)),
            standby=tuple(task_id(*key) for key in sorted(client.standby - warmups)),
            warmup=tuple(task_id(*key) for key in sorted(warmups)),
        )
    target = None
    if result.target is not None:
        target = {
            client: ClientAssignment(active=tuple(task_id(*key) for key in sorted(active)), standby=tuple(task_id(*key) for key in sorted(standby)))
            for client, (active, standby) in sorted(result.target.items())
        }
    return KafkaAnswer(assignment, result.followup_rebalance, target, tuple(result.notes), options, unread)


def _streams_group_assignment(problem: StreamsProblem, group: StreamsGroupResult) -> Assigned:
    """A streams-group assignor's answer per member, gathered per client (its process)."""
    assignment = {}
    for client in sorted(problem.client_by_id):
        members = {
            member: MemberAssignment(
                active=tuple(sorted(tasks.active, key=task_key)),
                standby=tuple(sorted(tasks.standby, key=task_key)),
                warmup=tuple(sorted(tasks.warmup, key=task_key)),
            )
            for member, tasks in group.of_client(client).items()
        }
        assignment[client] = ClientAssignment(
            active=tuple(sorted((t for m in members.values() for t in m.active), key=task_key)),
            standby=tuple(sorted((t for m in members.values() for t in m.standby), key=task_key)),
            warmup=tuple(sorted((t for m in members.values() for t in m.warmup), key=task_key)),
            members=members,
        )
    return assignment
