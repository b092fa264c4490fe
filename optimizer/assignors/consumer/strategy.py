"""Which of Kafka's consumer assignors runs.

Classic protocol, `partition.assignment.strategy`: `range` (RangeAssignor), `roundrobin`
(RoundRobinAssignor), `sticky` (StickyAssignor) and `cooperative-sticky`
(CooperativeStickyAssignor). KIP-848's consumer protocol, `group.remote.assignor`: the broker's
`uniform` (UniformAssignor) and `range` (its RangeAssignor). One module each beside this one.
"""

from __future__ import annotations

from optimizer.assignors.consumer.group import ConsumerAssignorResult
from optimizer.assignors.consumer.range import range_assign
from optimizer.assignors.consumer.roundrobin import roundrobin_assign
from optimizer.assignors.consumer.server_range import server_range_assign
from optimizer.assignors.consumer.sticky import sticky_assign
from optimizer.assignors.consumer.uniform import uniform_assign
from optimizer.model.consumer import AssignmentStrategy, ConsumerProblem, GroupProtocol, RemoteAssignor


def kafka_consumer_assign(problem: ConsumerProblem) -> ConsumerAssignorResult:
    if problem.config.group_protocol == GroupProtocol.CONSUMER:
        if problem.config.remote_assignor == RemoteAssignor.RANGE:
            return server_range_assign(problem)
        return uniform_assign(problem)
    strategy = problem.config.partition_assignment_strategy
    if strategy == AssignmentStrategy.RANGE:
        return range_assign(problem)
    if strategy == AssignmentStrategy.ROUNDROBIN:
        return roundrobin_assign(problem)
    return sticky_assign(problem, cooperative=strategy == AssignmentStrategy.COOPERATIVE_STICKY)
