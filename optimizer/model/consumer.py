"""Consumer-group problems: topics, members and `partition.assignment.strategy`; the replica racks a
member reads each partition from (KIP-881)."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from functools import cached_property
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import AliasChoices, BeforeValidator, Field, PrivateAttr, Strict, model_validator

from optimizer.model.base import FrozenModel
from optimizer.model.ids import (
    INT32_MAX,
    BytesPerSecond,
    Capacity,
    Currency,
    Name,
    PartitionId,
    Price,
    TopicName,
    TopicUuid,
    described,
    mean_rate,
    natural_key,
    partition_id,
    partition_key,
    shown,
    whole_rate,
)
from optimizer.model.issues import Issue, Loc, raise_if_any
from optimizer.model.limits import MAX_MEMBERS, MAX_PARTITIONS
from optimizer.model.racks import ReplicaSelection, ReplicaSelectorClass, cross_by_rack, layout_violations, serving_racks
from optimizer.model.releases import DEFAULT_KAFKA_VERSION, KafkaVersion, ReleaseOf
from optimizer.model.streams import PROBLEM_FORMAT
from optimizer.model.validation import duplicates_in, unique_by

# Kafka's DEFAULT_GENERATION: a member that reports no generation.
DEFAULT_GENERATION = -1


class AssignmentStrategy(StrEnum):
    """`partition.assignment.strategy`, by the assignors' short names."""

    RANGE = "range"
    ROUNDROBIN = "roundrobin"
    STICKY = "sticky"
    COOPERATIVE_STICKY = "cooperative-sticky"


# Kafka configures the strategy as a class name; users paste those.
_KAFKA_CLASS_NAMES = {
    "org.apache.kafka.clients.consumer.RangeAssignor": AssignmentStrategy.RANGE,
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": AssignmentStrategy.ROUNDROBIN,
    "org.apache.kafka.clients.consumer.StickyAssignor": AssignmentStrategy.STICKY,
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": (
        AssignmentStrategy.COOPERATIVE_STICKY
    ),
}


def _strategy_name(value: Any) -> Any:
    # Kafka takes a list and uses the first strategy every member supports; all members of a
    # problem share the config, so that is the first entry. Every entry must be a known one.
    if isinstance(value, str) and "," in value:
        value = [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list | tuple):
        if not value:
            raise ValueError("partition.assignment.strategy needs at least one strategy")
        not_names = [i for i, entry in enumerate(value) if not isinstance(entry, str)]
        if not_names:
            raise ValueError(
                f"entry [{not_names[0]}] is {described(value[not_names[0]])}: each strategy is a name "
                "(range, roundrobin, sticky, cooperative-sticky) or one of Kafka's assignor class names"
            )
        names = [_strategy_name(entry) for entry in value]
        known = set(AssignmentStrategy)
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(
                f"unknown strategy {shown(unknown[0])}: expected range, roundrobin, sticky, "
                "cooperative-sticky or Kafka's assignor class names"
            )
        return names[0]
    if isinstance(value, str):
        return _KAFKA_CLASS_NAMES.get(value.strip(), value.strip())
    return value


class GroupProtocol(StrEnum):
    """`group.protocol` of a consumer (KIP-848): `classic` (the client-side assignors of
    `partition.assignment.strategy`) or `consumer` (the broker assigns, `group.remote.assignor`)."""

    CLASSIC = "classic"
    CONSUMER = "consumer"


class RemoteAssignor(StrEnum):
    """`group.remote.assignor`: the broker-side assignor of a KIP-848 consumer group."""

    UNIFORM = "uniform"
    RANGE = "range"


_REMOTE_ASSIGNOR_CLASSES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": RemoteAssignor.UNIFORM,
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": RemoteAssignor.RANGE,
}


def lower_case_name(value: Any) -> Any:
    """Kafka validates `group.protocol` case-insensitively (`CaseInsensitiveValidString`)."""
    return value.strip().lower() if isinstance(value, str) else value


def _remote_assignor_name(value: Any) -> Any:
    if isinstance(value, str):
        value = value.strip()
        return _REMOTE_ASSIGNOR_CLASSES.get(value, value)
    return value


class Topic(FrozenModel):
    """A topic the group may subscribe to."""

    name: TopicName
    """Topic name."""
    topic_id: TopicUuid | None = None
    """Kafka's topic id (`Uuid.toString()`), when known: the KIP-848 assignors break ties between
    topics by it. Unset: `Uuid(UUID.nameUUIDFromBytes("topic:" + name))`, as the parity cases were made."""
    partitions: Annotated[int, Strict(), Field(ge=1, le=MAX_PARTITIONS)]
    """Number of partitions (at least one; at most MAX_PARTITIONS, a sanity bound that holds for
    all topics of a problem together too)."""
    replica_racks: tuple[tuple[Name, ...], ...] | None = None
    """Per partition, the racks of its replicas (KIP-881); omitted when unknown."""
    leader_racks: tuple[Name | None, ...] | None = None
    """Per partition, the rack of its leader's broker (None: unknown), one of that partition's
    `replica_racks` when those are given; omitted when unknown. Without follower fetching the
    leader serves every read (`replica.selector.class`; optimizer.model.racks)."""
    bytes_per_second: BytesPerSecond | None = None
    """Bytes per second into each partition (optional; `partition_bytes_per_second` overrides)."""
    partition_bytes_per_second: tuple[BytesPerSecond, ...] | None = None
    """Per partition, bytes per second into it (optional; one entry per partition)."""

    @model_validator(mode="after")
    def _racks_per_partition(self) -> Topic:
        problems: list[tuple[Loc, str]] = layout_violations(self.name, self.partitions, self.replica_racks, self.leader_racks)
        rates = self.partition_bytes_per_second
        if rates is not None and len(rates) != self.partitions:
            problems.append(
                (
                    ("partition_bytes_per_second",),
                    f"has {len(rates)} entries but the topic has {self.partitions} partitions; give one rate per partition",
                )
            )
        raise_if_any(problems)
        return self

    def leader_rack(self, partition: int) -> str | None:
        """Rack of the leader of partition `partition`; None when unknown."""
        leaders = self.leader_racks
        return leaders[partition] if leaders is not None and partition < len(leaders) else None

    def partition_rate(self, partition: int) -> float | None:
        """Bytes per second into partition `partition`: its own figure, else the topic's, else None."""
        if self.partition_bytes_per_second is not None:
            return self.partition_bytes_per_second[partition]
        return self.bytes_per_second

    def partition_ids(self) -> list[str]:
        return [partition_id(self.name, p) for p in range(self.partitions)]


class Member(FrozenModel):
    """A consumer-group member."""

    id: Name
    """Member id, unique in the group."""
    rack: Name | None = Field(None, validation_alias=AliasChoices("rack", "client.rack"))
    """`client.rack` of the consumer (KIP-881); a file may write Kafka's key instead."""
    group_instance_id: Name | None = Field(None, validation_alias=AliasChoices("group_instance_id", "group.instance.id"))
    """`group.instance.id` of a static member (KIP-345), unique in the group; a file may write
    Kafka's key instead. Kafka's classic range and round-robin assignors put static members
    first, in the order of these ids (`AbstractPartitionAssignor.MemberInfo.compareTo`), then the
    others by member id."""
    subscriptions: tuple[TopicName, ...] = Field(min_length=1)
    """Topics the member subscribes to."""
    owned_partitions: tuple[PartitionId, ...] = ()
    """Partitions the member owned before this rebalance, like `orders-3`."""
    generation: Annotated[int, Strict()] = Field(DEFAULT_GENERATION, ge=DEFAULT_GENERATION, le=INT32_MAX)
    """Generation of the owned partitions; -1 when unknown (Kafka's DEFAULT_GENERATION)."""
    capacity: Capacity = 1.0
    """Instance size as a multiple of the default instance (1): what weighted balance divides
    the load by."""

    @model_validator(mode="after")
    def _no_repeats(self) -> Member:
        problems: list[tuple[Loc, str]] = []
        for field, noun in (("subscriptions", "topic"), ("owned_partitions", "partition")):
            for value, places in duplicates_in(getattr(self, field)).items():
                problems += [((field, later), f"{noun} {value} is already listed") for later in places[1:]]
        raise_if_any(problems)
        return self


class ConsumerConfig(FrozenModel, ReleaseOf, ReplicaSelection):
    """The consumer assignor configuration, under Kafka's own key."""

    partition_assignment_strategy: Annotated[
        AssignmentStrategy, BeforeValidator(_strategy_name)
    ] = Field(AssignmentStrategy.RANGE, alias="partition.assignment.strategy")
    """`range` (Kafka's default, first in its default list), `roundrobin`, `sticky` or
    `cooperative-sticky`; Kafka's class names are accepted too. Used under the classic protocol
    only."""
    group_protocol: Annotated[GroupProtocol, BeforeValidator(lower_case_name)] = Field(
        GroupProtocol.CLASSIC, alias="group.protocol"
    )
    """`classic` (Kafka's default) or `consumer` (KIP-848, Kafka 4.0+), in any letter case."""
    group_remote_assignor: Annotated[RemoteAssignor | None, BeforeValidator(_remote_assignor_name)] = Field(
        None, alias="group.remote.assignor"
    )
    """The broker-side assignor under `group.protocol: consumer`: `uniform` or `range` (or their
    class names). Unset means the broker's default, the first of `group.consumer.assignors`:
    `uniform`. Kafka refuses it under the classic protocol, and so does the project."""
    kafka_version: KafkaVersion = Field(DEFAULT_KAFKA_VERSION, alias="kafka.version")
    """The Kafka release whose assignors `--solver kafka` reproduces: a line (`4.4`), a release
    (`4.0.0`) or `trunk` (optimizer.model.releases)."""
    replica_selector_class: ReplicaSelectorClass = Field(None, alias="replica.selector.class")
    """The brokers' `replica.selector.class` (KIP-392): unset (Kafka's default), the leader serves
    every read; `org.apache.kafka.common.replica.RackAwareReplicaSelector` (or `RackAwareReplicaSelector`),
    a replica in the member's rack does. Only the cross-rack figures read it; Kafka's assignors do not."""

    @model_validator(mode="after")
    def _remote_assignor_needs_consumer_protocol(self) -> ConsumerConfig:
        if self.group_protocol == GroupProtocol.CLASSIC and self.group_remote_assignor is not None:
            raise_if_any(
                [(("group.remote.assignor",), "cannot be set when group.protocol=classic (Kafka's ConfigException): set group.protocol: consumer")]
            )
        return self

    @property
    def cooperative(self) -> bool:
        """Whether partitions change owner in two rounds (classic `cooperative-sticky`). Under the
        consumer protocol the broker computes a target assignment and members converge to it;
        that target is what the broker's assignor answers, and what the project reproduces."""
        return self.group_protocol == GroupProtocol.CLASSIC and (
            self.partition_assignment_strategy == AssignmentStrategy.COOPERATIVE_STICKY
        )

    @property
    def remote_assignor(self) -> RemoteAssignor:
        """The broker-side assignor that runs under the consumer protocol."""
        return self.group_remote_assignor or RemoteAssignor.UNIFORM


class ConsumerProblem(FrozenModel):
    """A consumer group to assign: topics, members and the assignment strategy."""

    format: Literal["kafka-assignment-problem/v1"] = PROBLEM_FORMAT
    """File format and version."""
    kind: Literal["consumer"]
    """`consumer` for a consumer group."""
    name: Name | None = None
    """Group name (the pipeline keys results by it)."""
    description: str | None = None
    """Free text for people."""
    topics: Annotated[tuple[Topic, ...], unique_by("name", "topic")] = ()
    """Topics with their partition counts."""
    members: Annotated[tuple[Member, ...], unique_by("id", "member"), unique_by("group_instance_id", "member")] = Field(
        min_length=1, max_length=MAX_MEMBERS
    )
    """The group's members; at least one, at most MAX_MEMBERS."""
    join_order: tuple[Name, ...] | None = None
    """Every member id once, in the order the group coordinator lists the members (its JoinGroup
    response to the leader, which `DescribeGroups` repeats; for a KIP-848 group the order it
    iterates its members into the assignor's member map; `import` records both): the order of
    the `HashMap` the classic sticky and cooperative-sticky assignors and the broker's uniform
    assignor walk, which decides between members whose ids share a hash bucket. Optional; by
    member id when not given."""
    config: ConsumerConfig = ConsumerConfig()
    """Assignor configuration with Kafka's key."""
    price_per_gb: Price | None = None
    """What a gigabyte (10^9 bytes) of cross-zone traffic costs (optional; the reports' monthly
    cost; `--price-per-gb` gives it to problems without one)."""
    currency: Currency | None = None
    """The currency of `price_per_gb`, an ISO 4217 code (optional; `--currency` gives it to
    problems without one, else USD, the currency of the cloud providers' price lists)."""

    @property
    def weighted(self) -> bool:
        """Whether the problem gives any weight (throughputs, member capacities)."""
        return any(t.bytes_per_second is not None or t.partition_bytes_per_second is not None for t in self.topics) or any(
            m.capacity != 1.0 for m in self.members
        )

    @cached_property
    def has_rates(self) -> bool:
        """Whether any partition's bytes per second is known."""
        return any(t.bytes_per_second is not None or t.partition_bytes_per_second is not None for t in self.topics)

    @cached_property
    def default_rate(self) -> float:
        """What a partition without a known rate counts for: the mean of the known rates (1 when
        none is known; docs/decisions.md)."""
        return mean_rate(t.partition_rate(p) for t in self.topics for p in range(t.partitions))

    def rate_of(self, partition: str) -> int:
        """Whole bytes per second counted for `partition` (a partition id): its known rate, else
        `default_rate`, rounded; `default_rate` for a partition not in the problem."""
        topic, number = partition_key(partition)
        known = self.topic_by_name.get(topic)
        rate = known.partition_rate(number) if known is not None and number < known.partitions else None
        return whole_rate(self.default_rate if rate is None else rate)

    _read_warnings: tuple[Issue, ...] = PrivateAttr(())
    """What reading the document found to warn about (`problem_from_document`: no format line),
    reported with `normalize`'s warnings; not part of the problem's data."""

    @model_validator(mode="after")
    def _join_order_lists_every_member_once(self) -> ConsumerProblem:
        if self.join_order is None:
            return self
        ids = {m.id for m in self.members}
        problems: list[tuple[Loc, str]] = []
        seen: set[str] = set()
        for position, member in enumerate(self.join_order):
            if member not in ids:
                problems.append((("join_order", position), f"{shown(member)} is not a member of the group"))
            elif member in seen:
                problems.append((("join_order", position), f"member {shown(member)} is listed twice"))
            seen.add(member)
        missing = sorted(ids - seen, key=natural_key)
        if missing:
            more = " ..." if len(missing) > 8 else ""
            problems.append((("join_order",), f"lacks members {', '.join(map(shown, missing[:8]))}{more}: it lists every member once"))
        raise_if_any(problems)
        return self

    @model_validator(mode="after")
    def _partitions_in_all(self) -> ConsumerProblem:
        total = sum(topic.partitions for topic in self.topics)
        if total > MAX_PARTITIONS:
            raise_if_any(
                [(("topics",), f"{total:,} partitions in all: at most {MAX_PARTITIONS:,} (a sanity bound, docs/validation.md)")]
            )
        return self

    @cached_property
    def topic_by_name(self) -> dict[str, Topic]:
        return {topic.name: topic for topic in self.topics}

    @cached_property
    def member_by_id(self) -> dict[str, Member]:
        return {member.id: member for member in self.members}

    def replica_racks_of(self, partition: str) -> tuple[str, ...] | None:
        """Racks of the replicas of `partition` (a well-formed partition id); None when they are
        unknown or the partition is not in the problem."""
        topic, number = partition_key(partition)
        known = self.topic_by_name.get(topic)
        racks = known.replica_racks if known is not None else None
        return racks[number] if racks is not None and number < len(racks) else None

    def leader_rack_of(self, partition: str) -> str | None:
        """Rack of the leader of `partition` (a well-formed partition id); None when unknown or the
        partition is not in the problem."""
        topic, number = partition_key(partition)
        known = self.topic_by_name.get(topic)
        return known.leader_rack(number) if known is not None else None

    def serving_racks_of(self, partition: str) -> tuple[str, ...] | None:
        """The racks that can serve a read of `partition` under the problem's `replica.selector.class`
        (`optimizer.model.racks.serving_racks`): what cross-rack figures count by. None or empty: unknown."""
        return serving_racks(self.replica_racks_of(partition), self.leader_rack_of(partition), self.config.follower_fetching)

    @cached_property
    def has_leaders(self) -> bool:
        """Whether any partition gives its leader's rack."""
        return any(t.leader_racks is not None and any(r is not None for r in t.leader_racks) for t in self.topics)

    def cross_by_rack(self, partitions: Sequence[str], racks: Sequence[str | None]) -> np.ndarray:
        """partitions x racks, 0/1: whether a member in `racks[j]` reading `partitions[i]` reads
        across racks, counted from the replicas that serve the read (`serving_racks_of`,
        `reads_across_racks`); a `None` in `racks` is the column of members without a rack."""
        return cross_by_rack([self.serving_racks_of(p) for p in partitions], racks)

    def bytes_by_rack(self, partitions: Sequence[str], racks: Sequence[str | None]) -> np.ndarray:
        """`cross_by_rack` weighted by each partition's `rate_of`: bytes per second read across racks."""
        rates = np.array([self.rate_of(p) for p in partitions], dtype=np.int64)
        return self.cross_by_rack(partitions, racks) * rates[:, None]


def deconflicted_owned(problem: ConsumerProblem) -> dict[str, list[tuple[str, int]]]:
    """Owned partitions as a KIP-848 group coordinator holds them as the previous target
    assignment: highest generation wins, a tie drops the partition (unless a later claim has a
    higher generation still), partitions of unknown topics or beyond their count are dropped; each
    member's (topic, partition) pairs in claim order."""
    counts = {topic.name: topic.partitions for topic in problem.topics}
    claims: dict[tuple[str, int], tuple[str | None, int]] = {}
    for member in problem.members:
        for partition in member.owned_partitions:
            tp = partition_key(partition)
            if tp[0] not in counts or tp[1] >= counts[tp[0]]:
                continue
            held = claims.get(tp)
            if held is None or member.generation > held[1]:
                claims[tp] = (member.id, member.generation)
            elif member.generation == held[1]:
                claims[tp] = (None, member.generation)
    owned: dict[str, list[tuple[str, int]]] = {member.id: [] for member in problem.members}
    for tp, (owner, _) in claims.items():
        if owner is not None:
            owned[owner].append(tp)
    return owned
