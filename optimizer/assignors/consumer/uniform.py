"""KIP-848's broker-side `uniform` assignor (group.remote.assignor=uniform): Kafka's UniformAssignor.

A HOMOGENEOUS group (every member subscribes to the same topics) runs
UniformHomogeneousAssignmentBuilder as of Kafka 2ae93771 (KAFKA-18688: any member may keep the
extra partition; with the rack-aware assignment of PR #20000) and its `assignor/Utils.java`; any
other group runs UniformHeterogeneousAssignmentBuilder of 1eb7644 (`uniform_heterogeneous`).

Homogeneous algorithm: quotas floor(P/N), with P mod N members allowed one extra. Members, in
`memberIds()` order, keep their previous partitions up to the quota (a whole topic when it fits,
else partition by partition; with the rack strategy only rack-matching ones), the first members
that can keep an extra partition claim the extras. Revoked and never-assigned partitions then go,
in that order, first to unfilled members on a matching rack (rack strategy), then in blocks to the
unfilled members, the last of which take the remaining extras.
"""

from __future__ import annotations

from dataclasses import dataclass

from optimizer.assignors.consumer.group import TP, ConsumerAssignorResult, assignor_result, member_id_key
from optimizer.assignors.consumer.kip848 import ServerGroup, uuid_set_order
from optimizer.assignors.consumer.uniform_heterogeneous import heterogeneous_assign
from optimizer.model.consumer import ConsumerProblem


def uniform_assign(problem: ConsumerProblem) -> ConsumerAssignorResult:
    group = ServerGroup(problem)
    if group.homogeneous:
        assignment, notes, warnings = _Homogeneous(group).build()
    else:
        assignment, notes, warnings = heterogeneous_assign(group)
    members = sorted(group.member_ids, key=member_id_key)
    lists = {member: sorted(parts) for member, parts in assignment.items()}
    return assignor_result(members, lists, notes=notes, warnings=warnings)


def use_rack_strategy(member_racks: set[str], racks_per_partition: dict[TP, frozenset[str]]) -> bool:
    """`Utils.useRackAwareAssignment`: a member rack shared with some replica, and partitions whose
    rack sets are not all the same (a partition without racks counts as a different set)."""
    all_racks: set[str] = set().union(*racks_per_partition.values()) if racks_per_partition else set()
    if not member_racks or not member_racks & all_racks:
        return False
    return any(racks != all_racks for racks in racks_per_partition.values())


@dataclass
class _Unfilled:
    member: str
    quota: int


class _Homogeneous:
    """UniformHomogeneousAssignmentBuilder (2ae93771)."""

    def __init__(self, group: ServerGroup):
        self.group = group
        self.members = group.member_ids
        # The builder copies the first member's subscribed ids into a presized HashSet.
        self.topics = _copied_set_order(group, group.subscribed_topic_ids(self.members[0]))
        self.subscribed = frozenset(self.topics)
        member_racks = {r for m in self.members if (r := group.rack[m]) is not None}
        racks_per_partition = {
            (t, p): group.racks_for_partition(t, p) for t in self.topics for p in range(group.partition_count[t])
        }
        self.rack_strategy = use_rack_strategy(member_racks, racks_per_partition)
        self.target: dict[str, list[TP]] = {}
        self.unassigned: list[TP] = []
        self.unfilled: list[_Unfilled] = []
        self.min_quota = 0
        self.extra = 0

    def build(self) -> tuple[dict[str, list[TP]], list[str], list[tuple[str, str]]]:
        notes = ["homogeneous (equal subscriptions)" + (", rack-aware" if self.rack_strategy else "")]
        if not self.topics:
            return {}, notes, []
        total = 0
        for topic in self.topics:
            count = self.group.partition_count[topic]
            self.unassigned += [(topic, p) for p in range(count) if (topic, p) not in self.group.assigned]
            total += count
        self.min_quota, self.extra = divmod(total, len(self.members))
        self._revoke()
        if self.rack_strategy:
            self._assign_on_matching_racks()
        warnings = self._assign_remaining()
        return self.target, notes, warnings

    def _rack_match(self, member: str, tp: TP) -> bool:
        rack = self.group.rack[member]
        return rack is not None and rack in self.group.racks_for_partition(*tp)

    def _revoke(self) -> None:
        for member in self.members:
            quota = self.min_quota
            has_extra = False
            if self.extra > 0:
                quota += 1
                has_extra = True
            kept: list[TP] = []
            for topic, partitions in self.group.previous_assignment(member):
                if topic not in self.subscribed:
                    continue
                if len(partitions) <= quota and not self.rack_strategy:
                    quota -= len(partitions)
                    kept += [(topic, p) for p in partitions]
                    continue
                for p in partitions:
                    if quota > 0 and (not self.rack_strategy or self._rack_match(member, (topic, p))):
                        quota -= 1
                        kept.append((topic, p))
                    else:
                        self.unassigned.append((topic, p))
            if quota > 0 and has_extra:
                # A member that could not fill its quota gives the extra up for another to claim.
                quota -= 1
                has_extra = False
            if quota == 0 and has_extra:
                self.extra -= 1
            if quota > 0 or (self.extra > 0 and not has_extra):
                self.unfilled.append(_Unfilled(member, quota))
            self.target[member] = kept

    def _assign_on_matching_racks(self) -> None:
        left: list[TP] = []
        for tp in self.unassigned:
            placed = False
            i = 0
            while i < len(self.unfilled):
                entry = self.unfilled[i]
                if entry.quota == 0 and self.extra == 0:
                    del self.unfilled[i]
                    continue
                if not self._rack_match(entry.member, tp):
                    i += 1
                    continue
                self.target[entry.member].append(tp)
                if entry.quota > 0:
                    entry.quota -= 1
                else:
                    del self.unfilled[i]
                    self.extra -= 1
                placed = True
                break
            if not placed:
                left.append(tp)
        self.unassigned = left

    def _assign_remaining(self) -> list[tuple[str, str]]:
        # The last unfilled members take the remaining extra partitions.
        for entry in reversed(list(self.unfilled)):
            if self.extra > 0:
                self.extra -= 1
                entry.quota += 1
            if entry.quota == 0:
                self.unfilled.remove(entry)
        index = 0
        for entry in self.unfilled:
            take = self.unassigned[index : index + entry.quota]
            self.target[entry.member] += take
            index += len(take)
        if index < len(self.unassigned):
            left = len(self.unassigned) - index
            return [("group", f"Kafka's uniform assignor throws PartitionAssignorException 'Partitions were left unassigned' ({left} left)")]
        return []


def _copied_set_order(group: ServerGroup, topics: list[str]) -> list[str]:
    """`new HashSet<>(collection)`: presized to the collection, filled in its order."""
    return [t.name for t in uuid_set_order([group.topic_id[t] for t in topics], presized=True)]
