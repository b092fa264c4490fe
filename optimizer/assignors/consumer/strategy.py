"""Which of Kafka's consumer assignors runs: one table per protocol.

Classic protocol, `partition.assignment.strategy`: `range` (RangeAssignor), `roundrobin`
(RoundRobinAssignor), `sticky` (StickyAssignor) and `cooperative-sticky`
(CooperativeStickyAssignor). KIP-848's consumer protocol, `group.remote.assignor`: the broker's
`uniform` (UniformAssignor) and `range` (its RangeAssignor). One module each beside this one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from optimizer.assignors.consumer.group import ConsumerAssignorResult
from optimizer.assignors.consumer.range import range_assign
from optimizer.assignors.consumer.roundrobin import roundrobin_assign
from optimizer.assignors.consumer.server_range import server_range_assign
from optimizer.assignors.consumer.sticky import sticky_assign
from optimizer.assignors.consumer.uniform import uniform_assign, uniform_assign_3_9, uniform_assign_4_0_0, uniform_assign_4_0_1
from optimizer.assignors.table import AssignorTable
from optimizer.model.consumer import AssignmentStrategy, ConsumerProblem, GroupProtocol, RemoteAssignor
from optimizer.model.releases import EARLIEST, TRUNK, KafkaRelease, release_text

ConsumerAssignor = Callable[[ConsumerProblem], ConsumerAssignorResult]

CLASSIC_ASSIGNORS: AssignorTable[AssignmentStrategy, ConsumerAssignor] = AssignorTable(
    "partition.assignment.strategy",
    {
        (AssignmentStrategy.RANGE, EARLIEST): range_assign,
        (AssignmentStrategy.ROUNDROBIN, EARLIEST): roundrobin_assign,
        (AssignmentStrategy.STICKY, EARLIEST): functools.partial(sticky_assign, cooperative=False),
        (AssignmentStrategy.COOPERATIVE_STICKY, EARLIEST): functools.partial(sticky_assign, cooperative=True),
    },
)
"""The classic protocol's client-side assignors (the group leader runs the first strategy all
members support; a problem names that one)."""

KIP848_ASSIGNORS: AssignorTable[RemoteAssignor, ConsumerAssignor] = AssignorTable(
    "group.remote.assignor",
    {
        (RemoteAssignor.UNIFORM, EARLIEST): uniform_assign_3_9,
        (RemoteAssignor.UNIFORM, (4, 0, 0)): uniform_assign_4_0_0,
        (RemoteAssignor.UNIFORM, (4, 0, 1)): uniform_assign_4_0_1,
        (RemoteAssignor.UNIFORM, TRUNK): uniform_assign,
        (RemoteAssignor.RANGE, EARLIEST): server_range_assign,
    },
)
"""KIP-848's broker-side assignors (the group coordinator's `group.consumer.assignors`)."""


def kafka_consumer_assign(problem: ConsumerProblem, release: KafkaRelease | None = None) -> ConsumerAssignorResult:
    """Kafka's answer for the group: the assignor its `group.protocol` and that protocol's key select,
    in Kafka `release` (the problem's `kafka.version` unless given)."""
    release = problem.config.release if release is None else release
    if release not in (problem.config.release, EARLIEST):  # what the assignors say names the release that ran
        problem = problem.model_copy(update={"config": problem.config.model_copy(update={"kafka_version": release_text(release)})})
    if problem.config.group_protocol == GroupProtocol.CONSUMER:
        return KIP848_ASSIGNORS.select(problem.config.remote_assignor, release)(problem)
    return CLASSIC_ASSIGNORS.select(problem.config.partition_assignment_strategy, release)(problem)
