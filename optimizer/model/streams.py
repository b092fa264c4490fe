"""Kafka Streams problems: clients (application instances), tasks and the assignor config.

Field names follow DESIGN.md; config keys are Kafka's own (`num.standby.replicas`, ...), with
Kafka's defaults. Everything that Kafka would reject is rejected here; what Kafka tolerates is
kept as written and reported as a warning by `optimizer.model.normalize`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from enum import StrEnum
from functools import cached_property
from typing import Annotated, Any, Final, Literal

from pydantic import AliasChoices, BeforeValidator, Field, PrivateAttr, Strict, model_validator

from optimizer.model.base import FrozenModel
from optimizer.model.ids import (
    INT32_MAX,
    INT64_MAX,
    BytesPerSecond,
    Capacity,
    Currency,
    Int32,
    Int64,
    KafkaInt,
    Name,
    Price,
    ProcessId,
    StrictBool,
    TaskId,
    TopicName,
    Weight,
    distinct_task_keys,
    mean_rate,
    member_id_of,
    parse_task_id,
    partition_id,
    process_id_of,
    shown,
    task_key,
    whole_rate,
)
from optimizer.model.issues import Issue, Loc, raise_if_any
from optimizer.model.limits import MAX_CLIENTS, MAX_PARTITIONS, MAX_TASK_CLIENT_PAIRS, MAX_TASKS, MAX_THREADS
from optimizer.model.racks import ReplicaSelection, ReplicaSelectorClass, layout_violations, serving_racks
from optimizer.model.releases import DEFAULT_KAFKA_VERSION, STREAMS_GROUPS_SINCE, KafkaVersion, ReleaseOf
from optimizer.model.validation import duplicates_in, unique_by

PROBLEM_FORMAT: Final = "kafka-assignment-problem/v1"


class RackAwareStrategy(StrEnum):
    """`rack.aware.assignment.strategy` (KIP-925)."""

    NONE = "none"
    MIN_TRAFFIC = "min_traffic"
    BALANCE_SUBTOPOLOGY = "balance_subtopology"


class StreamsGroupProtocol(StrEnum):
    """`group.protocol` of a Kafka Streams application: `classic` (the client-side assignor of
    `task.assignor.class`) or `streams` (KIP-1071: early access in Kafka 4.1, generally available
    from 4.2; the broker assigns per member)."""

    CLASSIC = "classic"
    STREAMS = "streams"


class StreamsGroupAssignor(StrEnum):
    """`streams.assignor.name` (KIP-1357): the broker-side task assignor of a streams group."""

    STICKY = "sticky"
    BALANCED = "balanced"


def _lower_case(value: Any) -> Any:
    # Kafka validates group.protocol case-insensitively (CaseInsensitiveValidString).
    return value.strip().lower() if isinstance(value, str) else value


class TaskAssignor(StrEnum):
    """Which Kafka Streams assignor `--solver kafka` reproduces (`task.assignor.class`)."""

    HIGH_AVAILABILITY = "high_availability"
    STICKY = "sticky"
    """KIP-925's sticky task assignor (`LegacyStickyTaskAssignor` since Kafka 3.8)."""
    KIP924_STICKY = "kip924_sticky"
    """KIP-924's public `StickyTaskAssignor` (Kafka 3.8+, `org.apache.kafka.streams.processor.
    assignment.assignors.StickyTaskAssignor`)."""


_TASK_ASSIGNOR_CLASSES = {
    "org.apache.kafka.streams.processor.internals.assignment.HighAvailabilityTaskAssignor": (
        TaskAssignor.HIGH_AVAILABILITY
    ),
    "org.apache.kafka.streams.processor.internals.assignment.StickyTaskAssignor": TaskAssignor.STICKY,
    "org.apache.kafka.streams.processor.internals.assignment.LegacyStickyTaskAssignor": TaskAssignor.STICKY,
    "org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor": TaskAssignor.KIP924_STICKY,
}


def _task_assignor_name(value: Any) -> Any:
    if isinstance(value, str):
        value = value.strip()
        return _TASK_ASSIGNOR_CLASSES.get(value, value)
    return value


def _comma_separated(value: Any) -> Any:
    # Kafka's LIST config type is written "zone,cluster" in properties files.
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


class TopicPartition(FrozenModel):
    """A topic partition a task reads, with the racks holding its replicas."""

    topic: TopicName
    """Topic name."""
    partition: Int32
    """Partition number."""
    replica_racks: tuple[Name, ...] = ()
    """Racks of the brokers holding a replica (leader or follower); empty when unknown."""
    leader_rack: Name | None = None
    """Rack of the broker leading the partition: without follower fetching it serves every read
    (`replica.selector.class`; optimizer.model.racks). One of `replica_racks` when those are given;
    unset when unknown."""
    bytes_per_second: BytesPerSecond | None = None
    """Bytes per second written to the partition (optional; else the problem's
    `topic_bytes_per_second` for its topic; docs/file-formats.md, "Weights")."""

    @model_validator(mode="after")
    def _leader_among_replicas(self) -> TopicPartition:
        if self.leader_rack is not None and self.replica_racks and self.leader_rack not in self.replica_racks:
            raise_if_any(
                [
                    (
                        ("leader_rack",),
                        f"the leader's rack {shown(self.leader_rack)} of partition {self.id} is not among its replica racks "
                        f"{', '.join(map(shown, self.replica_racks))}: the leader is one of the replicas",
                    )
                ]
            )
        return self

    @property
    def id(self) -> str:
        return partition_id(self.topic, self.partition)


class TopicLayout(FrozenModel):
    """Where a topic's partitions live, given once for every task that reads it (a Streams
    problem's `topics`): the same fields as a consumer problem's topic."""

    name: TopicName
    """Topic name: a topic some task reads (source or changelog)."""
    partitions: Annotated[int, Strict(), Field(ge=1, le=MAX_PARTITIONS)] | None = None
    """Number of partitions (optional: the lists below give it); no task reads a partition beyond."""
    replica_racks: tuple[tuple[Name, ...], ...] | None = None
    """Per partition, the racks of its replicas; an empty list where unknown."""
    leader_racks: tuple[Name | None, ...] | None = None
    """Per partition, the rack of its leader's broker (null where unknown), one of that
    partition's `replica_racks` when those are given."""

    @model_validator(mode="after")
    def _one_entry_per_partition(self) -> TopicLayout:
        lengths = [len(given) for given in (self.replica_racks, self.leader_racks) if given is not None]
        if self.partitions is None and not lengths:
            raise_if_any([((), "gives neither replica_racks nor leader_racks: a layout gives at least one")])
        count = self.partitions if self.partitions is not None else max(lengths)
        raise_if_any(layout_violations(self.name, count, self.replica_racks, self.leader_racks))
        return self

    @property
    def count(self) -> int:
        """How many partitions the layout describes."""
        if self.partitions is not None:
            return self.partitions
        return len(self.replica_racks if self.replica_racks is not None else self.leader_racks or ())


class Task(FrozenModel):
    """A Kafka Streams task: one partition of one subtopology."""

    id: TaskId
    """`<subtopology>_<partition>`, for example `0_3`."""
    subtopology: Int32 | None = None
    """Subtopology number; taken from the id when omitted, and must agree with it when given."""
    stateful: StrictBool = False
    """Whether the task has state stores; with changelog partitions, it has standbys, lags and
    warm-ups (stores that log nothing make it stateless to every assignor: `normalize`)."""
    source_partitions: tuple[TopicPartition, ...] = Field(min_length=1)
    """Input partitions the active task consumes (at least one, as in Kafka)."""
    changelog_partitions: tuple[TopicPartition, ...] = ()
    """Changelog partitions standbys and restoring tasks read; empty for stores without logging."""
    changelog_end_offset: Int64 | None = None
    """Total offsets in the changelog: the lag of a client that has no state for the task."""
    weight: Weight = 1.0
    """Processing weight: what running the task costs relative to an ordinary task (1)."""

    @model_validator(mode="before")
    @classmethod
    def _subtopology_from_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("subtopology") is None:
            try:
                return {**data, "subtopology": parse_task_id(data.get("id")).subtopology}
            except ValueError:
                return data  # the id field reports the malformed id
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        problems: list[tuple[Loc, str]] = []
        if self.subtopology != task_key(self.id)[0]:  # (subtopology, partition); the id is well-formed here
            problems.append(
                (("subtopology",), f"subtopology {self.subtopology} disagrees with task id {shown(self.id)}")
            )
        if self.changelog_partitions and not self.stateful:
            problems.append(
                (("changelog_partitions",), "a stateless task has no changelog; set stateful: true")
            )
        for field in ("source_partitions", "changelog_partitions"):
            if len(getattr(self, field)) < 2:
                continue
            for ident, places in duplicates_in(p.id for p in getattr(self, field)).items():
                problems += [((field, later), f"partition {ident} is already listed") for later in places[1:]]
        raise_if_any(problems)
        return self

    @property
    def partition(self) -> int:
        _, partition = task_key(self.id)
        return partition


class StreamsMember(FrozenModel):
    """A member of a KIP-1071 streams group: one stream thread of a client, with its own current
    assignment (the group's target assignment for the member)."""

    id: Name | None = None
    """Kafka's member id; unset means `Uuid(UUID.nameUUIDFromBytes("member:<client>:<thread>"))`."""
    previous_active: tuple[TaskId, ...] = ()
    """Tasks the member ran as active before this rebalance."""
    previous_standby: tuple[TaskId, ...] = ()
    """Tasks the member held as standby."""
    previous_warmup: tuple[TaskId, ...] = ()
    """Tasks the member held as warm-up."""
    lags: Annotated[dict[TaskId, Int64], BeforeValidator(distinct_task_keys)] | None = None
    """The lags this member reported itself (its task offsets, as offsets behind the changelog
    end), per task with state on its process's disk: each of Kafka's stream threads reports them,
    and Kafka 4.4 takes every member reporting a task as a standby candidate (KAFKA-20719). Unset:
    the client's `lags`, reported by the member holding the task as standby or warm-up, else by its
    first thread. The client's `lags` stay what the figures and the other assignors read."""


class Client(FrozenModel):
    """A Kafka Streams client (application instance, a process id in Kafka)."""

    id: Name
    """Client (process) id, unique in the problem."""
    rack: Name | None = Field(None, validation_alias=AliasChoices("rack", "client.rack"))
    """`client.rack`; when some client has none, rack-aware assignment is disabled, as in Kafka.
    A file may write Kafka's key `client.rack` instead."""
    threads: Annotated[int, Strict(), Field(ge=1, le=MAX_THREADS)] = Field(1, validation_alias=AliasChoices("threads", "num.stream.threads"))
    """`num.stream.threads`: the client's capacity in KIP-441's per-thread load (at most
    MAX_THREADS, a sanity bound). A file may write Kafka's key `num.stream.threads` instead."""
    capacity: Capacity = 1.0
    """Instance size as a multiple of the default instance (1): weighted balance divides the
    client's load by threads x capacity (`threads` stays Kafka's count for its own balance)."""
    tags: dict[Name, Name] = Field(default_factory=dict)
    """`client.tag.*` values, for example `{zone: eu-central-1a, cluster: k8s-1}` (KIP-708)."""
    previous_active: tuple[TaskId, ...] = ()
    """Tasks the client ran as active before this rebalance."""
    previous_standby: tuple[TaskId, ...] = ()
    """Tasks the client held as standby (or warm-up) before this rebalance."""
    lags: Annotated[dict[TaskId, Int64], BeforeValidator(distinct_task_keys)] = Field(default_factory=dict)
    """Offsets behind the changelog end, per task the client has state for (KIP-441).

    Tasks that are not in the problem are ignored, as Kafka does. A previous active or standby
    without a reported lag is taken as caught up (lag 0); any other client without a lag has
    the task's `changelog_end_offset` to restore.
    """

    process_id: ProcessId | None = None
    """The process id the client's members report in a streams group (a UUID, as an imported client
    has it); default `process_id_of(id)`. Kafka's sticky assignor breaks ties between equally loaded
    processes by their ids, so a group read from a cluster keeps its own."""
    members: tuple[StreamsMember, ...] = ()
    """The client's members (stream threads) in a streams group, in thread order, each with its own
    previous tasks. When given, `threads` and the client's previous tasks may be left out: they are
    the member count and the unions (warm-ups count as standbys); when also given they must agree.
    Without members, a streams group deals the client's history to its threads round-robin
    (docs/assignors/streams-group-sticky.md)."""

    @property
    def kafka_process_id(self) -> str:
        """The process id Kafka sees for this client in a streams group."""
        return self.process_id if self.process_id is not None else process_id_of(self.id)

    @property
    def member_ids(self) -> tuple[str, ...]:
        """Kafka's member ids of the client's threads in a streams group: the listed members' ids,
        else `member_id_of(client, thread)`."""
        if self.members:
            return tuple(m.id or member_id_of(self.id, t) for t, m in enumerate(self.members))
        return tuple(member_id_of(self.id, t) for t in range(self.threads))

    @model_validator(mode="after")
    def _members_agree(self) -> Client:
        if not self.members:
            return self
        problems: list[tuple[Loc, str]] = []
        given = self.model_fields_set
        if "threads" in given and self.threads != len(self.members):
            problems.append((("threads",), f"{self.threads} threads but {len(self.members)} members: one member per thread"))
        elif len(self.members) > MAX_THREADS:
            problems.append((("members",), f"{len(self.members)} members: at most {MAX_THREADS} (a sanity bound)"))
        for m, member in enumerate(self.members):
            places: dict[str, tuple[str, int]] = {}
            for field in ("previous_active", "previous_standby", "previous_warmup"):
                for i, task in enumerate(getattr(member, field)):
                    if task in places:
                        first = places[task]
                        problems.append(
                            (("members", m, field, i), f"task {task} is already in this member's {first[0]}[{first[1]}]: a member holds one copy of a task")
                        )
                    places.setdefault(task, (field, i))
        # Two members of one process may report the same task (Kafka reads both reports): the
        # client's previous actives are every member's, its standbys the rest (normalize warns).
        active = tuple(dict.fromkeys(t for member in self.members for t in member.previous_active))
        held = set(active)
        standby = tuple(dict.fromkeys(t for member in self.members for t in member.previous_standby + member.previous_warmup if t not in held))
        for field, union in (("previous_active", active), ("previous_standby", standby)):
            if field in given and set(getattr(self, field)) != set(union):
                problems.append(((field,), f"disagrees with the union of the members' tasks {sorted(set(union), key=task_key)}; leave it out or make it equal"))
        raise_if_any(problems)
        return self.model_copy(update={"threads": len(self.members), "previous_active": active, "previous_standby": standby})

    @model_validator(mode="after")
    def _no_repeats(self) -> Client:
        problems: list[tuple[Loc, str]] = []
        for field in ("previous_active", "previous_standby"):
            for task, places in duplicates_in(getattr(self, field)).items():
                problems += [((field, later), f"task {task} is already listed") for later in places[1:]]
        both = sorted(set(self.previous_active) & set(self.previous_standby))
        for task in both:
            problems.append(
                (
                    ("previous_standby", self.previous_standby.index(task)),
                    f"task {task} is also in previous_active: a client holds one copy of a task",
                )
            )
        raise_if_any(problems)
        return self


class StreamsConfig(FrozenModel, ReleaseOf, ReplicaSelection):
    """The Kafka Streams assignor configuration, under Kafka's own keys and defaults."""

    num_standby_replicas: KafkaInt = Field(0, ge=0, le=INT32_MAX, alias="num.standby.replicas")
    """Standby replicas per stateful task (Kafka default 0)."""
    acceptable_recovery_lag: KafkaInt = Field(10_000, ge=0, le=INT64_MAX, alias="acceptable.recovery.lag")
    """Lag at or under which a client counts as caught up (Kafka default 10000)."""
    max_warmup_replicas: KafkaInt = Field(2, ge=1, le=INT32_MAX, alias="max.warmup.replicas")
    """Warm-up replicas allowed at once, beyond the standbys (Kafka default 2, minimum 1)."""
    probing_rebalance_interval_ms: KafkaInt = Field(
        600_000, ge=60_000, le=INT64_MAX, alias="probing.rebalance.interval.ms"
    )
    """Interval of the follow-up (probing) rebalance while warm-ups remain (default 10 min)."""
    rack_aware_assignment_strategy: RackAwareStrategy = Field(
        RackAwareStrategy.NONE, alias="rack.aware.assignment.strategy"
    )
    """`none`, `min_traffic` or `balance_subtopology` (KIP-925; Kafka default `none`)."""
    rack_aware_assignment_traffic_cost: KafkaInt | None = Field(
        None, ge=0, le=INT32_MAX, alias="rack.aware.assignment.traffic_cost"
    )
    """Cost per partition read across racks; unset means the assignor's default (HA: 10, sticky: 1;
    `kip925_costs`)."""
    rack_aware_assignment_non_overlap_cost: KafkaInt | None = Field(
        None, ge=0, le=INT32_MAX, alias="rack.aware.assignment.non_overlap_cost"
    )
    """Cost of a task not on its current client; unset means the assignor's default (HA: 1, sticky:
    10; `kip925_costs`)."""
    rack_aware_assignment_tags: Annotated[
        tuple[Name, ...], BeforeValidator(_comma_separated)
    ] = Field((), alias="rack.aware.assignment.tags")
    """Client tag keys standbys are spread over (KIP-708), for example `[zone, cluster]`."""
    task_assignor_class: Annotated[TaskAssignor, BeforeValidator(_task_assignor_name)] = Field(
        TaskAssignor.HIGH_AVAILABILITY,
        validation_alias=AliasChoices("task.assignor.class", "internal.task.assignor.class"),
        serialization_alias="task.assignor.class",
    )
    """`high_availability` (Kafka's default) or `sticky`; Kafka's class names are accepted, under
    `task.assignor.class` or the older `internal.task.assignor.class`."""

    group_protocol: Annotated[StreamsGroupProtocol, BeforeValidator(_lower_case)] = Field(
        StreamsGroupProtocol.CLASSIC, alias="group.protocol"
    )
    """`classic` (default) or `streams` (KIP-1071), in any letter case. Under `streams` the broker's
    assignor of `streams.assignor.name` decides, and of the keys above only `num.standby.replicas`
    and `rack.aware.assignment.tags` are read."""
    streams_assignor_name: StreamsGroupAssignor = Field(StreamsGroupAssignor.STICKY, alias="streams.assignor.name")
    """`sticky` (the broker's default) or `balanced` (proposed, KIP-1357); read under
    `group.protocol: streams` only."""
    kafka_version: KafkaVersion = Field(DEFAULT_KAFKA_VERSION, alias="kafka.version")
    """The Kafka release whose assignors `--solver kafka` reproduces: a line (`4.4`), a release
    (`4.0.0`) or `trunk` (optimizer.model.releases)."""
    replica_selector_class: ReplicaSelectorClass = Field(None, alias="replica.selector.class")
    """The brokers' `replica.selector.class` (KIP-392): unset (Kafka's default), the leader serves
    every read; `org.apache.kafka.common.replica.RackAwareReplicaSelector` (or `RackAwareReplicaSelector`),
    a replica in the reader's rack does. Only the cross-rack figures read it; Kafka's assignors do not."""

    @model_validator(mode="after")
    def _streams_protocol_needs_4_1(self) -> StreamsConfig:
        if self.group_protocol == StreamsGroupProtocol.STREAMS and self.release < STREAMS_GROUPS_SINCE:
            why = (
                f"streams groups (KIP-1071) first ship in Kafka 4.1, not in {self.kafka_version}: set kafka.version: 4.2 or later "
                "(4.1's sticky assignor is not reproduced), or group.protocol: classic"
            )
            raise_if_any([(("group.protocol",), why)])
        return self

    @model_validator(mode="after")
    def _tags_unique(self) -> StreamsConfig:
        raise_if_any(
            [
                (("rack.aware.assignment.tags", later), f"tag {shown(tag)} is already listed")
                for tag, places in duplicates_in(self.rack_aware_assignment_tags).items()
                for later in places[1:]
            ]
        )
        return self


# KIP-925's costs for stateful tasks where `rack.aware.assignment.traffic_cost` or
# `rack.aware.assignment.non_overlap_cost` is unset differ by assignor: the high-availability one
# weighs cross-rack traffic over movement (DEFAULT_HIGH_AVAILABILITY_TRAFFIC_COST 10,
# DEFAULT_HIGH_AVAILABILITY_NON_OVERLAP_COST 1), the sticky one keeping tasks where they are
# (LegacyStickyTaskAssignor's DEFAULT_STATEFUL_TRAFFIC_COST 1, DEFAULT_STATEFUL_NON_OVERLAP_COST 10).
DEFAULT_KIP925_COSTS: dict[TaskAssignor, tuple[int, int]] = {
    TaskAssignor.HIGH_AVAILABILITY: (10, 1),
    TaskAssignor.STICKY: (1, 10),
    TaskAssignor.KIP924_STICKY: (1, 10),  # StickyTaskAssignor's DEFAULT_STICKY_TRAFFIC_COST, _NON_OVERLAP_COST
}
# Stateless tasks are optimised with fixed costs whatever the config and the assignor
# (RackAwareTaskAssignor's STATELESS_TRAFFIC_COST and STATELESS_NON_OVERLAP_COST).
STATELESS_TRAFFIC_COST = 1
STATELESS_NON_OVERLAP_COST = 0


def kip925_costs(config: StreamsConfig, assignor: TaskAssignor) -> tuple[int, int]:
    """(traffic cost, non-overlap cost) of stateful tasks under `assignor`: each the config's when
    set, else that assignor's Kafka default (`DEFAULT_KIP925_COSTS`)."""
    traffic, non_overlap = DEFAULT_KIP925_COSTS[assignor]
    if config.rack_aware_assignment_traffic_cost is not None:
        traffic = config.rack_aware_assignment_traffic_cost
    if config.rack_aware_assignment_non_overlap_cost is not None:
        non_overlap = config.rack_aware_assignment_non_overlap_cost
    return traffic, non_overlap


def _laid_out(partition: TopicPartition, topic: TopicLayout, index: int) -> tuple[TopicPartition, list[tuple[Loc, str]]]:
    """`partition` with the racks its topic's layout (`topics[index]`) gives it, and what
    contradicts that layout (locations relative to the partition)."""
    where = f"topics[{index}] ({shown(topic.name)})"
    if partition.partition >= topic.count:
        return partition, [((), f"partition {partition.id} is beyond the {topic.count} partitions that {where} lays out")]
    problems: list[tuple[Loc, str]] = []
    update: dict[str, Any] = {}
    if topic.replica_racks is not None and topic.replica_racks[partition.partition]:
        racks = topic.replica_racks[partition.partition]
        if not partition.replica_racks:
            update["replica_racks"] = racks
        elif set(partition.replica_racks) != set(racks):
            problems.append(
                (
                    ("replica_racks",),
                    f"racks {', '.join(map(shown, partition.replica_racks))} of partition {partition.id} disagree with "
                    f"{where}: {', '.join(map(shown, racks))}; give them in one place",
                )
            )
    leader = topic.leader_racks[partition.partition] if topic.leader_racks is not None else None
    if leader is not None:
        if partition.leader_rack is None:
            update["leader_rack"] = leader
        elif partition.leader_rack != leader:
            problems.append(
                (("leader_rack",), f"leader rack {shown(partition.leader_rack)} of partition {partition.id} disagrees with {where}: {shown(leader)}")
            )
    if problems or not update:
        return partition, problems
    filled = partition.model_copy(update=update)
    if filled.leader_rack is not None and filled.replica_racks and filled.leader_rack not in filled.replica_racks:
        problems.append(
            (
                ("leader_rack",),
                f"the leader's rack {shown(filled.leader_rack)} of partition {partition.id} is not among its replica racks "
                f"{', '.join(map(shown, filled.replica_racks))} (one of them given by {where}): the leader is one of the replicas",
            )
        )
    return filled, problems


class StreamsProblem(FrozenModel):
    """A Kafka Streams application to assign: its clients, its tasks and its assignor config."""

    format: Literal["kafka-assignment-problem/v1"] = PROBLEM_FORMAT
    """File format and version."""
    kind: Literal["streams"]
    """`streams` for a Kafka Streams application."""
    name: Name | None = None
    """Application name (the pipeline keys results by it)."""
    description: str | None = None
    """Free text for people."""
    clients: Annotated[tuple[Client, ...], unique_by("id", "client"), unique_by("process_id", "client")] = Field(min_length=1, max_length=MAX_CLIENTS)
    """The application's clients; at least one, at most MAX_CLIENTS."""
    tasks: Annotated[tuple[Task, ...], unique_by("id", "task")] = Field((), max_length=MAX_TASKS)
    """The application's tasks (none: every client gets an empty assignment); at most MAX_TASKS,
    and at most MAX_TASK_CLIENT_PAIRS tasks x clients."""
    config: StreamsConfig = StreamsConfig()
    """Assignor configuration with Kafka's keys."""
    topic_bytes_per_second: dict[TopicName, BytesPerSecond] = Field(default_factory=dict)
    """Bytes per second into each partition of a topic, for partitions that do not give their own
    (optional; a topic no task reads is an error)."""
    price_per_gb: Price | None = None
    """What a gigabyte (10^9 bytes) of cross-zone traffic costs (optional; the reports' monthly
    cost; `--price-per-gb` gives it to problems without one)."""
    currency: Currency | None = None
    """The currency of `price_per_gb`, an ISO 4217 code (optional; `--currency` gives it to
    problems without one, else USD, the currency of the cloud providers' price lists)."""
    topics: Annotated[tuple[TopicLayout, ...], unique_by("name", "topic")] = ()
    """Replica and leader racks per topic, given once instead of on every partition of the tasks
    (optional). A partition that gives its own must agree; the layout fills those that give none."""

    _read_warnings: tuple[Issue, ...] = PrivateAttr(())
    """What reading the document found to warn about (`problem_from_document`: no format line),
    reported with `normalize`'s warnings; not part of the problem's data."""

    @model_validator(mode="after")
    def _layout_to_partitions(self) -> StreamsProblem:
        """The `topics` layout written onto the tasks' partitions, so that everything reading a
        partition's racks reads it there; a contradiction or a partition beyond the layout is an
        error naming the partition and the layout entry."""
        if not self.topics:
            return self
        layout = {topic.name: (index, topic) for index, topic in enumerate(self.topics)}
        problems: list[tuple[Loc, str]] = []
        tasks = []
        read = set()
        for t, task in enumerate(self.tasks):
            update = {}
            for field in ("source_partitions", "changelog_partitions"):
                partitions = list(getattr(task, field))
                for i, partition in enumerate(partitions):
                    read.add(partition.topic)
                    if partition.topic not in layout:
                        continue
                    index, topic = layout[partition.topic]
                    filled, wrong = _laid_out(partition, topic, index)
                    problems += [(("tasks", t, field, i, *where), why) for where, why in wrong]
                    partitions[i] = filled
                if partitions != list(getattr(task, field)):
                    update[field] = tuple(partitions)
            tasks.append(task.model_copy(update=update) if update else task)
        problems += [(("topics", index), f"topic {shown(topic.name)} is read by no task") for index, topic in enumerate(self.topics) if topic.name not in read]
        raise_if_any(problems)
        # Validation is still building this instance (a top-level validator cannot return another
        # one when called through __init__): the laid-out tasks replace the written ones here.
        self.__dict__["tasks"] = tuple(tasks)
        return self

    @model_validator(mode="after")
    def _cross_field(self) -> StreamsProblem:
        pairs = len(self.tasks) * len(self.clients)
        if pairs > MAX_TASK_CLIENT_PAIRS:
            raise_if_any(
                [
                    (
                        ("tasks",),
                        f"{len(self.tasks):,} tasks x {len(self.clients):,} clients = {pairs:,}: "
                        f"at most {MAX_TASK_CLIENT_PAIRS:,} (a sanity bound, docs/validation.md)",
                    )
                ]
            )
        raise_if_any(
            cross_field_violations(
                enumerate(self.clients),
                enumerate(self.tasks),
                self.config.rack_aware_assignment_tags,
                {task.id for task in self.tasks},
            )
            + self._statefulness_per_subtopology()
            + self._known_rate_topics()
        )
        return self

    def _known_rate_topics(self) -> list[tuple[Loc, str]]:
        read = {p.topic for task in self.tasks for p in (*task.source_partitions, *task.changelog_partitions)}
        return [
            (("topic_bytes_per_second", topic), f"topic {shown(topic)} is read by no task")
            for topic in self.topic_bytes_per_second
            if topic not in read
        ]

    def partition_rate(self, partition: TopicPartition) -> float | None:
        """Bytes per second into `partition`: its own figure, else its topic's, else None."""
        if partition.bytes_per_second is not None:
            return partition.bytes_per_second
        return self.topic_bytes_per_second.get(partition.topic)

    @cached_property
    def has_rates(self) -> bool:
        """Whether any partition's bytes per second is known (a topic's rate is given only for a
        topic some task reads: validation refuses others)."""
        return bool(self.topic_bytes_per_second) or any(
            p.bytes_per_second is not None for task in self.tasks for p in (*task.source_partitions, *task.changelog_partitions)
        )

    @cached_property
    def default_rate(self) -> float:
        """What a partition without a known rate counts for: the mean of the known rates over the
        distinct partitions the tasks read (1 when none is known; docs/decisions.md)."""
        return mean_rate(self._known_rates.values())

    @cached_property
    def _known_rates(self) -> dict[str, float | None]:
        return {
            p.id: self.partition_rate(p) for task in self.tasks for p in (*task.source_partitions, *task.changelog_partitions)
        }

    def rate_of(self, partition: TopicPartition) -> int:
        """Whole bytes per second counted for `partition`: its known rate, else `default_rate`, rounded."""
        rate = self.partition_rate(partition)
        return whole_rate(self.default_rate if rate is None else rate)

    def serving_racks(self, partition: TopicPartition) -> tuple[str, ...]:
        """The racks that can serve a read of `partition` under the problem's
        `replica.selector.class` (`optimizer.model.racks.serving_racks`); empty when unknown."""
        return serving_racks(partition.replica_racks, partition.leader_rack, self.config.follower_fetching) or ()

    @cached_property
    def has_leaders(self) -> bool:
        """Whether any partition gives its leader's rack."""
        return any(p.leader_rack is not None for task in self.tasks for p in (*task.source_partitions, *task.changelog_partitions))

    @property
    def weighted(self) -> bool:
        """Whether the problem gives any weight (throughputs, task weights, client capacities)."""
        return bool(self.topic_bytes_per_second) or any(
            task.weight != 1.0 or any(p.bytes_per_second is not None for p in (*task.source_partitions, *task.changelog_partitions))
            for task in self.tasks
        ) or any(client.capacity != 1.0 for client in self.clients)

    def _statefulness_per_subtopology(self) -> list[tuple[Loc, str]]:
        """A streams group's broker knows a subtopology, not its tasks: a task per partition up to
        `maxNumInputPartitions`, all stateful or all stateless (`isStateful`). Under
        `group.protocol: streams` the problem's tasks must say the same."""
        if self.config.group_protocol != StreamsGroupProtocol.STREAMS:
            return []
        first: dict[int | None, Task] = {}
        partitions: dict[int | None, set[int]] = defaultdict(set)
        for task in self.tasks:
            partitions[task.subtopology].add(task.partition)
        problems: list[tuple[Loc, str]] = [
            (
                ("tasks",),
                f"subtopology {subtopology} lacks tasks {', '.join(f'{subtopology}_{p}' for p in sorted(set(range(max(held) + 1)) - held)[:8])}: "
                "under group.protocol=streams Kafka has a task for every partition up to the subtopology's largest",
            )
            for subtopology, held in sorted(partitions.items(), key=lambda item: item[0] or 0)
            if len(held) != max(held) + 1
        ]
        for index, task in enumerate(self.tasks):
            seen = first.setdefault(task.subtopology, task)
            if seen.stateful != task.stateful:
                problems.append(
                    (
                        ("tasks", index, "stateful"),
                        f"task {task.id} is {'stateful' if task.stateful else 'stateless'} but task {seen.id} of the same "
                        "subtopology is not: under group.protocol=streams Kafka knows statefulness per subtopology",
                    )
                )
        return problems

    # Lookups derived once per (immutable) problem.

    @cached_property
    def task_by_id(self) -> dict[str, Task]:
        return {task.id: task for task in self.tasks}

    @cached_property
    def client_by_id(self) -> dict[str, Client]:
        return {client.id: client for client in self.clients}

    @property
    def effective_standby_replicas(self) -> int:
        """Standbys each stateful task gets: `min(num.standby.replicas, clients - 1)`."""
        return min(self.config.num_standby_replicas, len(self.clients) - 1)

    @cached_property
    def previous_active_client(self) -> dict[str, str]:
        """Task id -> client that ran it as active before (tasks in the problem only). A task that
        several clients report active (a zombie) counts as the first of them in id order's, for the
        figures and the optimizer's stickiness; Kafka's assignors read every report
        (`previous_active_clients`, docs/file-formats.md)."""
        return {task: min(holders) for task, holders in self.previous_active_clients.items()}

    @cached_property
    def previous_active_clients(self) -> dict[str, frozenset[str]]:
        """Task id -> every client that reports it active (tasks in the problem only): one, or
        several for a zombie."""
        return self._holders("previous_active")

    @cached_property
    def zombie_tasks(self) -> dict[str, tuple[str, ...]]:
        """Tasks previously active on several clients, each with its clients in id order."""
        return {task: tuple(sorted(ids)) for task, ids in self.previous_active_clients.items() if len(ids) > 1}

    @cached_property
    def previous_standby_clients(self) -> dict[str, frozenset[str]]:
        """Task id -> clients that held it as standby before (tasks in the problem only)."""
        return self._holders("previous_standby")

    def _holders(self, field: str) -> dict[str, frozenset[str]]:
        """Task id -> the clients listing it in `field` (tasks in the problem only)."""
        holders: dict[str, set[str]] = defaultdict(set)
        for client in self.clients:
            for task in getattr(client, field):
                if task in self.task_by_id:
                    holders[task].add(client.id)
        return {task: frozenset(ids) for task, ids in holders.items()}


def cross_field_violations(
    clients: Iterable[tuple[int, Client]],
    tasks: Iterable[tuple[int, Task]],
    tag_keys: tuple[str, ...],
    task_ids: set[str],
) -> list[tuple[Loc, str]]:
    """Checks that need several clients or tasks at once, over (position, item) pairs.

    Taking positions lets the loader run it over the items that validated on their own when
    others did not, so that one pass reports every problem. `task_ids` are the problem's tasks:
    previous assignments of other tasks are dropped with a warning, not checked.
    """
    problems: list[tuple[Loc, str]] = []
    member_owner: dict[str, str] = {}
    for index, client in clients:
        for m, member in enumerate(client.members):
            if member.id is None:
                continue
            if member.id in member_owner:
                problems.append(
                    (("clients", index, "members", m, "id"), f"member id {shown(member.id)} is already used by client {shown(member_owner[member.id])}")
                )
            member_owner.setdefault(member.id, client.id)
        missing = [tag for tag in tag_keys if tag not in client.tags]
        if missing:
            problems.append(
                (
                    ("clients", index, "tags"),
                    f"lacks tag {', '.join(map(repr, missing))} named in "
                    "rack.aware.assignment.tags; every client needs every tag",
                )
            )
    owner: dict[tuple[str, str], str] = {}
    for index, reading in tasks:
        for field, kind in (("source_partitions", "source"), ("changelog_partitions", "changelog")):
            for position, partition in enumerate(getattr(reading, field)):
                claimed = owner.setdefault((kind, partition.id), reading.id)
                if claimed != reading.id:
                    problems.append(
                        (
                            ("tasks", index, field, position),
                            f"{kind} partition {partition.id} belongs to task {claimed} too; "
                            "in Kafka Streams a partition belongs to one task",
                        )
                    )
    return problems
