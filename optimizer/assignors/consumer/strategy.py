"""`partition.assignment.strategy`: which of Kafka's consumer assignors runs (classic protocol).

`range` (RangeAssignor), `roundrobin` (RoundRobinAssignor), `sticky` (StickyAssignor) and
`cooperative-sticky` (CooperativeStickyAssignor), one module each beside this one.
"""

from __future__ import annotations

from optimizer.assignors.consumer.group import ConsumerAssignorResult
from optimizer.assignors.consumer.range import range_assign
from optimizer.assignors.consumer.roundrobin import roundrobin_assign
from optimizer.assignors.consumer.sticky import sticky_assign
from optimizer.errors import SolverUnavailableError
from optimizer.model.consumer import AssignmentStrategy, ConsumerProblem, GroupProtocol


def kafka_consumer_assign(problem: ConsumerProblem) -> ConsumerAssignorResult:
    if problem.config.group_protocol == GroupProtocol.CONSUMER:
        raise SolverUnavailableError("KIP-848's broker-side assignors (group.protocol=consumer) are not reproduced yet")
    strategy = problem.config.partition_assignment_strategy
    if strategy == AssignmentStrategy.RANGE:
        return range_assign(problem)
    if strategy == AssignmentStrategy.ROUNDROBIN:
        return roundrobin_assign(problem)
    return sticky_assign(problem, cooperative=strategy == AssignmentStrategy.COOPERATIVE_STICKY)
