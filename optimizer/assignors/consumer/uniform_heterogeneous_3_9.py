"""KIP-848 `uniform` for groups whose members subscribe to different topics, as Kafka 3.9 ships it:
UniformHeterogeneousAssignmentBuilder before KAFKA-17710 rewrote it for 4.0.0.

Members keep their previous partitions of topics they still subscribe to. The unassigned partitions,
sorted by partitions per subscriber (descending), subscriber count, then partition number (ties in
the iteration order of Kafka's HashSet of partitions), each go to the subscriber with the fewest
partitions (then the smallest member id) that has room. Then, unless a full pass changes nothing,
passes over the partitions of topics with two or more subscribers, in that order, each pass over
those no earlier pass moved: a partition whose owner holds two more than some other subscriber
moves to the member with the fewest partitions (then the smallest id) that subscribes to its
topic; a pass stops as soon as the group is balanced after a move (`isBalanced`). Not rack-aware.

Kafka 3.9's builder records each move (`PartitionMovements`) and throws
PartitionAssignorException when a partition would move a second time, or when a move would undo
an earlier one of the same topic between the same two members (its check of the record is
inverted): `KafkaThrows` carries Kafka's message then.
"""

from __future__ import annotations

from optimizer.assignors.consumer.group import TP, member_id_key
from optimizer.assignors.consumer.kip848 import ServerGroup, uuid_set_order
from optimizer.assignors.java import java_hash_map_order


class KafkaThrows(Exception):
    """Kafka 3.9's builder throws PartitionAssignorException: Kafka's message."""


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


class Heterogeneous39:
    def __init__(self, group: ServerGroup):
        self.group = group
        self.member_ids = list(group.member_ids)
        self.members_per_topic: dict[str, list[str]] = {}
        inserted: list[str] = []
        for member in self.member_ids:
            for topic in group.subscribed_topic_ids(member):
                if topic not in self.members_per_topic:
                    inserted.append(topic)
                self.members_per_topic.setdefault(topic, []).append(member)
        # subscribedTopicIds: a HashSet<Uuid>; every partition of those topics, in its order,
        # into a HashSet<TopicIdPartition> (Objects.hash(topicId, partitionId)).
        self.topics = [t.name for t in uuid_set_order([group.topic_id[t] for t in inserted])]
        everything = [(t, p) for t in self.topics for p in range(group.partition_count[t])]
        order = java_hash_map_order(everything, lambda tp: _int32(961 + 31 * group.topic_id[tp[0]].java_hash + tp[1]))
        self.rank = {tp: i for i, tp in enumerate(order)}
        self.size = dict.fromkeys(self.member_ids, 0)
        self.max_size = {m: sum(group.partition_count[t] for t in group.subscriptions[m]) for m in self.member_ids}
        self.target: dict[str, set[TP]] = {m: set() for m in self.member_ids}
        self.owner: dict[TP, str] = {}
        self.unassigned: set[TP] = set(everything)
        self.tree: set[str] = {m for m in self.member_ids if self.max_size[m] > 0}
        """`sortedMembersByAssignmentSize`: a TreeSet by (size, member id)."""
        self.moved: dict[TP, tuple[str, str]] = {}
        self.moves_by_topic: dict[str, set[tuple[str, str]]] = {}

    def build(self) -> dict[str, list[TP]]:
        if not self.topics:
            return {}
        for member in self.member_ids:
            for topic, partitions in self.group.previous_assignment(member):
                if topic in self.group.subscriptions[member]:
                    for p in partitions:
                        self._add((topic, p), member)
        for tp in self._sorted(self.unassigned):
            for member in sorted((m for m in self.members_per_topic[tp[0]] if self.size[m] < self.max_size[m]), key=self._load):
                if self.size[member] < self.max_size[member]:
                    self._add(tp, member)
                    break
        self._balance()
        return {member: sorted(parts) for member, parts in self.target.items()}

    def _load(self, member: str) -> tuple[int, bytes]:
        return self.size[member], member_id_key(member)

    def _sorted(self, partitions: set[TP]) -> list[TP]:
        def key(tp: TP) -> tuple[float, int, int, int]:
            subscribers = len(self.members_per_topic[tp[0]])
            return -(self.group.partition_count[tp[0]] / subscribers), subscribers, tp[1], self.rank[tp]

        return sorted(partitions, key=key)

    def _add(self, tp: TP, member: str) -> None:
        self.target[member].add(tp)
        self.owner[tp] = member
        self.tree.discard(member)
        self.size[member] += 1
        if self.size[member] < self.max_size[member]:
            self.tree.add(member)
        self.unassigned.discard(tp)

    def _remove(self, tp: TP, member: str) -> None:
        self.target[member].discard(tp)
        if self.owner.get(tp) == member:
            del self.owner[tp]
        self.tree.discard(member)
        self.size[member] = max(0, self.size[member] - 1)
        if self.size[member] < self.max_size[member]:
            self.tree.add(member)

    def _can_participate(self, member: str) -> bool:
        if self.size[member] < self.max_size[member]:
            return True
        return any(len(self.members_per_topic[t]) >= 2 for t in {t for t, _ in self.target[member]})

    def _balance(self) -> None:
        if self.unassigned:
            raise KafkaThrows("Some partitions were left unassigned")
        # The set of unassigned partitions is reused for the reassignable ones, and a move takes
        # its partition out of it (addPartitionToTargetAssignment): each pass visits only the
        # partitions that no earlier pass moved.
        self.unassigned = {
            (t, p) for t in self.topics if len(self.members_per_topic[t]) >= 2 for p in range(self.group.partition_count[t])
        }
        for member in self.member_ids:
            if not self._can_participate(member):
                self.tree.discard(member)
        modified = bool(self.unassigned)
        while modified:
            modified = False
            occurred = False
            for tp in self._sorted(self.unassigned):
                if occurred and self._is_balanced():
                    return
                occurred = False
                current = self.owner[tp]
                for other in self.members_per_topic[tp[0]]:
                    if self.size[current] > self.size[other] + 1:
                        self._reassign(tp)
                        modified = occurred = True
                        break

    def _reassign(self, tp: TP) -> None:
        topic = tp[0]
        new = next((m for m in sorted(self.tree, key=self._load) if topic in self.group.subscriptions[m]), None)
        if new is None:
            raise KafkaThrows(f"No suitable new owner was found for the partition{self._text(tp)}")
        old = self.owner[tp]
        if tp in self.moved:
            # computeActualPartitionToBeMoved gives tp or another partition that moved before;
            # movePartition then finds its record's destination equal to its owner, and throws.
            raise KafkaThrows("Mismatch in partition movement record with respect to partition ownership during a rebalance")
        if (new, old) in self.moves_by_topic.get(topic, set()):
            raise KafkaThrows("Mismatch in partition movement record with respect to partition ownership during a rebalance")
        self.moved[tp] = (old, new)
        self.moves_by_topic.setdefault(topic, set()).add((old, new))
        self._remove(tp, old)
        self._add(tp, new)

    def _text(self, tp: TP) -> str:
        return f"{self.group.topic_id[tp[0]].text}:{tp[1]}"

    def _is_balanced(self) -> bool:
        ordered = sorted(self.tree, key=self._load)
        if self.size[ordered[0]] >= self.size[ordered[-1]] - 1:
            return True
        for member in ordered:
            count = self.size[member]
            if count == self.max_size[member]:
                continue
            for topic in self.group.subscriptions[member]:
                for p in range(self.group.partition_count[topic]):
                    if (topic, p) not in self.target[member]:
                        other = self.owner.get((topic, p))
                        if count + 1 < (self.size[other] if other is not None else 0):
                            return False
        return True
