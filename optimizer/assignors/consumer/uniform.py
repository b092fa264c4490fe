"""KIP-848's broker-side `uniform` assignor (group.remote.assignor=uniform): Kafka's UniformAssignor.

A HOMOGENEOUS group (every member subscribes to the same topics) runs
UniformHomogeneousAssignmentBuilder; any other group runs UniformHeterogeneousAssignmentBuilder
(`uniform_heterogeneous`, the builder of KAFKA-17710, Kafka 4.0.0 to 4.4.0 and trunk; Kafka 3.9's
in `uniform_heterogeneous_3_9`). No released
builder reads racks (KAFKA-16694 removed them from the server-side assignors before 3.9). The
homogeneous builder in three variants, one per row of `KIP848_ASSIGNORS`:

* `uniform_assign_4_0_0` (Kafka 4.0.0; and `uniform_assign_3_9`, Kafka 3.9, whose heterogeneous
  builder is the one before KAFKA-17710, `uniform_heterogeneous_3_9`): quotas floor(P/N), the first P mod N members in
  `memberIds()` order allowed one extra whatever they hold. Members keep their previous partitions
  up to their quota (a whole topic when it fits, else partition by partition, in the topic's
  HashSet order); revoked partitions follow the never-assigned ones; the unfilled members, in
  order, then take blocks of them up to their remaining quota.
* `uniform_assign_4_0_1` (KAFKA-18688, Kafka 4.0.1, 4.1.0 and every release since, 4.4.0
  included): any member may keep the extra partition. A member that cannot fill a quota with the
  extra gives the extra up for a later member, unless it is one of the last members that must take
  the remaining extras.
* `uniform_assign` (trunk, Kafka 2ae93771 with the rack-aware assignment of KAFKA-19909 /
  PR #20000, in no release): as 4.0.1, and when `Utils.useRackAwareAssignment` holds, members keep
  only rack-matching partitions and unassigned partitions go first to unfilled members on a
  matching rack; the last unfilled members then take the remaining extras.
"""

from __future__ import annotations

from dataclasses import dataclass

from optimizer.assignors.consumer.group import TP, ConsumerAssignorResult, assignor_result, member_id_key
from optimizer.assignors.consumer.kip848 import PreviousSets, ServerGroup, uuid_set_order
from optimizer.assignors.consumer.uniform_heterogeneous import heterogeneous_assign
from optimizer.assignors.consumer.uniform_heterogeneous_3_9 import Heterogeneous39, KafkaThrows
from optimizer.errors import SolverUnavailableError
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.releases import release_text


def uniform_assign(problem: ConsumerProblem, previous_sets: PreviousSets = "record") -> ConsumerAssignorResult:
    """Trunk's `uniform`: the rack-aware homogeneous builder of KAFKA-19909 (in no release)."""
    group = ServerGroup(problem, previous_sets)
    return _result(group, _Homogeneous(group).build() if group.homogeneous else heterogeneous_assign(group))


def uniform_assign_4_0_1(problem: ConsumerProblem, previous_sets: PreviousSets = "record") -> ConsumerAssignorResult:
    """`uniform` of Kafka 4.0.1 to 4.4.0: KAFKA-18688's homogeneous builder, no racks."""
    group = ServerGroup(problem, previous_sets)
    return _result(group, _Released(group, stable=True).build() if group.homogeneous else heterogeneous_assign(group))


def uniform_assign_4_0_0(problem: ConsumerProblem, previous_sets: PreviousSets = "record") -> ConsumerAssignorResult:
    """`uniform` of Kafka 4.0.0 (and 3.9's homogeneous builder): the extras go to the first members."""
    group = ServerGroup(problem, previous_sets)
    return _result(group, _Released(group, stable=False).build() if group.homogeneous else heterogeneous_assign(group))


def uniform_assign_3_9(problem: ConsumerProblem, previous_sets: PreviousSets = "record") -> ConsumerAssignorResult:
    """`uniform` of Kafka 3.9: 4.0.0's homogeneous builder, and the heterogeneous builder from
    before KAFKA-17710 (`uniform_heterogeneous_3_9`)."""
    group = ServerGroup(problem, previous_sets)
    if group.homogeneous:
        return _result(group, _Released(group, stable=False).build())
    try:
        assignment = Heterogeneous39(group).build()
    except KafkaThrows as error:
        raise SolverUnavailableError(
            f"Kafka {release_text(problem.config.release)}'s uniform assignor throws PartitionAssignorException "
            f"('{error}') on this group (its heterogeneous builder before KAFKA-17710), so the group coordinator "
            "computes no new target assignment"
        ) from None
    return _result(group, (assignment, ["heterogeneous (subscriptions differ), Kafka 3.9's builder"], []))


_Built = tuple[dict[str, list[TP]], list[str], list[tuple[str, str]]]


def _result(group: ServerGroup, built: _Built) -> ConsumerAssignorResult:
    assignment, notes, warnings = built
    members = sorted(group.member_ids, key=member_id_key)
    lists = {member: sorted(parts) for member, parts in assignment.items()}
    return assignor_result(members, lists, notes=notes, warnings=warnings)


_LEFT_UNASSIGNED = (
    "Kafka's uniform assignor throws PartitionAssignorException ('Partitions were left unassigned') on this group "
    "({} left), so the group coordinator computes no new target assignment"
)
"""Where the homogeneous builders would leave partitions without a member: Kafka throws, and so
`--solver kafka` refuses (SolverUnavailableError), as it does wherever Kafka's assignor throws."""


class _Released:
    """UniformHomogeneousAssignmentBuilder as released: 3.9 and 4.0.0 (`stable=False`), 4.0.1 to
    4.4.0 (`stable=True`, KAFKA-18688). Racks are not read."""

    def __init__(self, group: ServerGroup, stable: bool):
        self.group = group
        self.stable = stable
        self.members = group.member_ids
        # The builder copies the first member's subscribed ids into a presized HashSet.
        self.topics = _copied_set_order(group, group.subscribed_topic_ids(self.members[0]))

    def build(self) -> _Built:
        notes = ["homogeneous (equal subscriptions)"]
        if not self.topics:
            return {}, notes, []
        subscribed = frozenset(self.topics)
        unassigned: list[TP] = []
        total = 0
        for topic in self.topics:
            count = self.group.partition_count[topic]
            unassigned += [(topic, p) for p in range(count) if (topic, p) not in self.group.assigned]
            total += count
        min_quota, extra = divmod(total, len(self.members))
        target: dict[str, list[TP]] = {}
        unfilled: list[tuple[str, int]] = []
        for index, member in enumerate(self.members):
            quota, has_extra = min_quota, False
            if extra > 0:
                quota, has_extra = quota + 1, True
                if not self.stable:
                    extra -= 1
            kept: list[TP] = []
            for topic, partitions in self.group.previous_assignment(member):
                if topic not in subscribed:
                    continue
                if len(partitions) <= quota:
                    quota -= len(partitions)
                    kept += [(topic, p) for p in partitions]
                    continue
                for p in partitions:
                    if quota > 0:
                        quota -= 1
                        kept.append((topic, p))
                    else:
                        unassigned.append((topic, p))
            if self.stable:
                if quota > 0 and has_extra and len(self.members) - index > extra:
                    # Gives the extra up for another member, unless it is one of the last `extra`.
                    quota, has_extra = quota - 1, False
                if has_extra:
                    extra -= 1
            if quota > 0:
                unfilled.append((member, quota))
            target[member] = kept
        index = 0
        for member, quota in unfilled:
            take = unassigned[index : index + quota]
            target[member] += take
            index += len(take)
        if index < len(unassigned):
            raise SolverUnavailableError(_LEFT_UNASSIGNED.format(len(unassigned) - index))
        return target, notes, []


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
    """UniformHomogeneousAssignmentBuilder of 2ae93771 (trunk, with PR #20000's rack strategy)."""

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

    def build(self) -> _Built:
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
            raise SolverUnavailableError(_LEFT_UNASSIGNED.format(len(self.unassigned) - index))
        return []


def _copied_set_order(group: ServerGroup, topics: list[str]) -> list[str]:
    """`new HashSet<>(collection)`: presized to the collection, filled in its order."""
    return [t.name for t in uuid_set_order([group.topic_id[t] for t in topics], presized=True)]
