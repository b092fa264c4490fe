"""What a KIP-848 broker-side consumer assignor is given: a consumer problem as the group coordinator
hands it to `ConsumerGroupPartitionAssignor.assign` (Kafka 1eb7644's `GroupSpecImpl` and
`SubscribedTopicDescriber`).

The translation is the one the golden cases were fed to Kafka with
(`../shared/kafka-parity/streams-group/README.md`, section on `consumer-group-current/`):

* topic ids are the problem's `topic_id`s, else `Uuid(UUID.nameUUIDFromBytes("topic:" + name))`; Kafka hashes them
  (`Uuid.hashCode`, in HashMaps and HashSets) and orders them (`Uuid.compareTo`, signed halves);
* member specs go into a `HashMap` keyed by member id, in problem order: `memberIds()` iterates
  that map;
* a member subscribes to the ids of its topics that have metadata (others are dropped), kept in a
  HashSet filled in subscription order;
* the previous target assignment is the owned partitions after de-conflicting them (`optimizer.model.consumer.deconflicted_owned`): the highest
  generation wins, a tie at the highest generation drops the partition; partitions of unknown
  topics or beyond their topic's partition count are dropped. Each member's is a
  `HashMap<Uuid, HashSet<Integer>>` filled in the order of its owned partitions (the winner of a
  contested partition places it where the partition was first claimed), except that the topics
  go into the map in the reverse of that order (`ServerGroup.previous_assignment`);
* the group is HOMOGENEOUS exactly when every member subscribes to the same set of topic names,
  including topics without metadata (as Kafka's subscription type counts names);
* the describer knows each partition's racks (those of its replicas; empty when unknown).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from optimizer.assignors.consumer.group import TP, joined
from optimizer.assignors.java import java_hash_map_order, java_string_hash
from optimizer.model.consumer import ConsumerProblem, deconflicted_owned
from optimizer.model.ids import kafka_uuid_bytes, kafka_uuid_text, name_uuid_bytes


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _int64(value: int) -> int:
    return value - (1 << 64) if value & (1 << 63) else value


@dataclass(frozen=True)
class TopicId:
    """A topic's Kafka `Uuid`, derived from its name."""

    name: str
    raw: bytes

    @classmethod
    def of(cls, name: str, topic_id: str | None = None) -> TopicId:
        """Kafka's id when the problem gives it, else the one derived from the name."""
        return cls(name, name_uuid_bytes(f"topic:{name}") if topic_id is None else kafka_uuid_bytes(topic_id))

    @property
    def text(self) -> str:
        """`Uuid.toString()`: URL-safe base64 without padding."""
        return kafka_uuid_text(self.raw)

    @property
    def halves(self) -> tuple[int, int]:
        """(mostSignificantBits, leastSignificantBits) as Java longs: `Uuid.compareTo` order."""
        value = int.from_bytes(self.raw, "big")
        return _int64(value >> 64), _int64(value & ((1 << 64) - 1))

    @property
    def java_hash(self) -> int:
        """`Uuid.hashCode()`: the two halves xor-ed, then the two ints of that xor-ed."""
        msb, lsb = self.halves
        folded = (msb ^ lsb) & ((1 << 64) - 1)
        return _int32((folded >> 32) ^ folded)


def uuid_set_order(topics: Sequence[TopicId], presized: bool = False) -> list[TopicId]:
    """Iteration order of a `HashSet<Uuid>` (or HashMap keyed by Uuid) filled in this order."""
    return java_hash_map_order(list(topics), lambda topic: topic.java_hash, presized)


def integer_set_order(partitions: Sequence[int], presized: bool = False) -> list[int]:
    """Iteration order of a `HashSet<Integer>` filled in this order (`Integer.hashCode` is the value)."""
    return java_hash_map_order(list(partitions), lambda p: p, presized)


PreviousSets = Literal["record", "incremental"]
"""How each member's previous target reaches the assignor. `record`: as the group coordinator
holds it, rebuilt from the member's target-assignment record (`Assignment.fromRecord`: per topic
a `HashSet` copied from the record's partition list, so presized to that list); `incremental`:
sets filled one partition at a time, as the frozen parity cases' harness built them. Iteration
orders differ from 25 partitions of a topic on, and with them the uniform assignor's choice among
equals."""


class ServerGroup:
    """A consumer problem as a KIP-848 assignor reads it (GroupSpec and SubscribedTopicDescriber)."""

    def __init__(self, problem: ConsumerProblem, previous_sets: PreviousSets = "record"):
        self.problem = problem
        self.previous_sets = previous_sets
        self.partition_count: dict[str, int] = {topic.name: topic.partitions for topic in problem.topics}
        self.topic_id: dict[str, TopicId] = {topic.name: TopicId.of(topic.name, topic.topic_id) for topic in problem.topics}
        self.member_ids: list[str] = java_hash_map_order(joined(problem), java_string_hash)
        """`GroupSpec.memberIds()`: the member HashMap's key order, filled in the order the
        coordinator iterates its members (`join_order`, else by member id), which decides between
        member ids in one bucket."""
        self.rack: dict[str, str | None] = {m.id: m.rack for m in problem.members}
        self._subscribed_in_order: dict[str, list[str]] = {
            m.id: [t for t in m.subscriptions if t in self.partition_count] for m in problem.members
        }
        self.subscriptions: dict[str, frozenset[str]] = {
            member: frozenset(topics) for member, topics in self._subscribed_in_order.items()
        }
        # Kafka derives the subscription type from the subscribed topic names, known or not.
        self.homogeneous = len({frozenset(m.subscriptions) for m in problem.members}) == 1
        self.previous: dict[str, list[TP]] = deconflicted_owned(problem)
        self.assigned: frozenset[TP] = frozenset(tp for parts in self.previous.values() for tp in parts)
        """`GroupSpec.isPartitionAssigned`: the inverted previous target assignment."""

    def subscribed_topic_ids(self, member: str) -> list[str]:
        """The member's subscribed topics (names) in the iteration order of its Uuid HashSet."""
        ids = [self.topic_id[t] for t in self._subscribed_in_order[member]]
        return [topic.name for topic in uuid_set_order(ids)]

    def previous_assignment(self, member: str) -> list[tuple[str, list[int]]]:
        """`memberAssignment(member).partitions()` in iteration order: topic -> its partitions.

        A default `HashMap<Uuid, HashSet<Integer>>` (`Collectors.toMap`): topics put in the
        reverse of the order they are first claimed in (that reproduces all 391 homogeneous golden
        cases; first-claim, problem or `Uuid` order do not, and it only decides which of two topics
        in one hash bucket comes first); each topic's partitions in claim order, in a set copied
        from that list (`previous_sets` "record", the coordinator's) or filled one at a time.
        """
        by_topic: dict[str, list[int]] = {}
        for topic, partition in self.previous[member]:
            by_topic.setdefault(topic, []).append(partition)
        topics = uuid_set_order([self.topic_id[t] for t in reversed(by_topic)])
        presized = self.previous_sets == "record"
        return [(topic.name, integer_set_order(by_topic[topic.name], presized)) for topic in topics]

    def racks_for_partition(self, topic: str, partition: int) -> frozenset[str]:
        return self._partition_racks[topic][partition]

    @cached_property
    def _partition_racks(self) -> dict[str, list[frozenset[str]]]:
        racks: dict[str, list[frozenset[str]]] = {}
        for topic in self.problem.topics:
            known = topic.replica_racks
            racks[topic.name] = [frozenset(known[p]) if known else frozenset() for p in range(topic.partitions)]
        return racks

    def uuid_key(self, topic: str) -> tuple[int, int]:
        """Sort key of a topic in `Uuid.compareTo` order."""
        return self.topic_id[topic].halves
