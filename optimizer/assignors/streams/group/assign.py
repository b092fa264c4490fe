"""`group.protocol: streams`: the broker's task assignor for the group, and its answer per client.

The group spec is built from the problem as given (`spec.group_spec`); the assignor named by
`streams.assignor.name` answers per member; a client's lists are the unions over its members.
Under this protocol Kafka reads `num.standby.replicas` only, and `rack.aware.assignment.tags` in
trunk's `sticky` (no release reads them): the other assignor keys a problem sets are reported as
ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from optimizer.assignors.streams.group.balanced import balanced_assign
from optimizer.assignors.streams.group.spec import MemberTasks, StreamsGroupSpec, group_spec
from optimizer.assignors.streams.group.sticky import sticky_assign, sticky_assign_4_2, sticky_assign_4_2_2, sticky_assign_4_4
from optimizer.assignors.table import AssignorTable, NotReproduced
from optimizer.model.releases import EARLIEST, TRUNK, KafkaRelease
from optimizer.model.streams import StreamsGroupAssignor, StreamsProblem

# StreamsConfig fields (and their Kafka keys) that no streams-group assignor reads.
IGNORED_UNDER_STREAMS_PROTOCOL = {
    "acceptable_recovery_lag": "acceptable.recovery.lag",
    "max_warmup_replicas": "max.warmup.replicas",
    "probing_rebalance_interval_ms": "probing.rebalance.interval.ms",
    "rack_aware_assignment_strategy": "rack.aware.assignment.strategy",
    "rack_aware_assignment_traffic_cost": "rack.aware.assignment.traffic_cost",
    "rack_aware_assignment_non_overlap_cost": "rack.aware.assignment.non_overlap_cost",
    "task_assignor_class": "task.assignor.class",
}


@dataclass
class StreamsGroupResult:
    """The assignor's answer per member, and which client each member belongs to."""

    members: dict[str, MemberTasks]
    client_of: dict[str, str]
    assignor: StreamsGroupAssignor
    ignored: list[str] = field(default_factory=list)
    """Config keys the problem sets that Kafka does not read under this protocol."""

    def of_client(self, client: str) -> dict[str, MemberTasks]:
        return {m: tasks for m, tasks in self.members.items() if self.client_of[m] == client}


GroupAssignor = Callable[[StreamsGroupSpec], dict[str, MemberTasks]]

ASSIGNORS: AssignorTable[StreamsGroupAssignor, GroupAssignor] = AssignorTable(
    "streams.assignor.name",
    {
        (StreamsGroupAssignor.STICKY, (4, 1, 0)): NotReproduced(
            "its ties fall by Java identity hash codes (members in hash sets of a class without hashCode), "
            "which change from one broker run to the next"
        ),
        (StreamsGroupAssignor.STICKY, (4, 2, 0)): sticky_assign_4_2,
        (StreamsGroupAssignor.STICKY, (4, 2, 2)): sticky_assign_4_2_2,
        (StreamsGroupAssignor.STICKY, (4, 3, 0)): sticky_assign_4_2,
        (StreamsGroupAssignor.STICKY, (4, 4, 0)): sticky_assign_4_4,
        (StreamsGroupAssignor.STICKY, TRUNK): sticky_assign,
        (StreamsGroupAssignor.BALANCED, EARLIEST): balanced_assign,
    },
)
"""The broker's streams-group assignors, each answering per member (stream thread). `sticky`, each
variant checked against its releases' jars (bench/streams_group_releases.py): 4.2.0-4.2.1 and
4.3.0-4.3.1 (KAFKA-19478/19661's rewrite), 4.2.2 (with KAFKA-20899's standby fix, which 4.3.x
lacks), 4.4.0 (the current assignment and reported offsets, KAFKA-20719), and trunk (commit
058944c, with unreleased changes; the frozen parity cases). 4.1.x is not reproduced: its answer
depends on Java identity hash codes (docs/assignors/streams-group-sticky.md), so `select` refuses
it. `balanced` is a proposal no release ships (KAFKA-20998): one row for every release, warned
about by the answers."""


def streams_group_assign(problem: StreamsProblem, release: KafkaRelease | None = None) -> StreamsGroupResult:
    """Kafka's broker-side answer for `problem` under `group.protocol: streams`."""
    spec = group_spec(problem)
    name = problem.config.streams_assignor_name
    release = problem.config.release if release is None else release
    answer = ASSIGNORS.select(name, release)(spec)
    client_of = {m.member_id: m.client for m in spec.members}
    members = {m.member_id: answer.get(m.member_id, MemberTasks()) for m in spec.members}
    given = problem.config.model_fields_set
    ignored = [key for attribute, key in IGNORED_UNDER_STREAMS_PROTOCOL.items() if attribute in given]
    if "rack_aware_assignment_tags" in given and (name != StreamsGroupAssignor.STICKY or release < TRUNK):
        ignored.append("rack.aware.assignment.tags")  # only trunk's sticky reads them (KAFKA-20999)
    return StreamsGroupResult(members, client_of, name, ignored)
