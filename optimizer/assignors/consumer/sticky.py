"""Kafka's sticky assignors (classic protocol), as Kafka 3.8+ runs them: AbstractStickyAssignor's
constrained and general builders, StickyAssignor and CooperativeStickyAssignor.

KAFKA-12464's constrained algorithm when every member subscribes to the same topics, KIP-54's
general algorithm (with KIP-341's fix) otherwise, both rack-aware per KIP-881. Owned partitions
contested by several members go to the highest generation; a tie invalidates them. Cooperative
rebalancing withholds every partition that changes owner until its holder has revoked it, and asks
for a follow-up rebalance.

Kafka iterates the group's members in a Java HashMap by member id; which member keeps the one
extra partition, and some tie-breaks, depend on that order, so it is reproduced.

Owned partitions numbered beyond their topic's partition count (a topic deleted and re-created
smaller) are not checked by Kafka's sticky assignors, which keep them like any other claim:
`sticky_assign` does the same, and where Kafka then raises IllegalStateException or returns an
invalid assignment (such a partition handed back, or a partition given twice after its list of
unassigned partitions stalled on one), it raises SolverUnavailableError saying so: Kafka's group
does not rebalance there, so there is no answer of Kafka's to reproduce.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from optimizer.assignors.consumer.group import (
    TP,
    ConsumerAssignorResult,
    ConsumerGroup,
    assignor_result,
    member_id_key,
    use_rack_aware_assignment,
)
from optimizer.assignors.java import java_hash_map_order, java_string_hash
from optimizer.errors import SolverUnavailableError
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import parse_partition_id, partition_id, shown
from optimizer.model.releases import release_text
from optimizer.text import plural


def _topic_partition_hash(tp: TP) -> int:
    """`TopicPartition.hashCode()`: 31 * (31 + partition) + topic.hashCode(), 32-bit."""
    value = (31 * (31 + tp[1]) + java_string_hash(tp[0])) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


class _RackInfo:
    def __init__(self, group: ConsumerGroup, members: Sequence[str]):
        consumers_by_rack: dict[str, list[str]] = defaultdict(list)
        for member in members:
            if member in group.member_rack:
                consumers_by_rack[group.member_rack[member]].append(member)
        self.member_rack: dict[str, str] = {}
        self.partition_racks: dict[TP, frozenset[str]] = {}
        self.consumers_per_partition: dict[TP, int] = {}
        if consumers_by_rack:
            local = {tp: racks for tp, racks in group.replica_racks.items()}
            all_racks = set().union(*local.values()) if local else set()
            self.consumers_per_partition = {
                tp: sum(len(consumers_by_rack.get(rack, ())) for rack in racks) for tp, racks in local.items()
            }
            if use_rack_aware_assignment(set(consumers_by_rack), all_racks, local):
                self.member_rack = {m: group.member_rack[m] for m in members if m in group.member_rack}
                self.partition_racks = local

    def mismatch(self, member: str, tp: TP) -> bool:
        rack = self.member_rack.get(member)
        return rack is not None and rack not in self.partition_racks.get(tp, frozenset())

    def by_scarcity(self, partitions: list[TP]) -> list[TP]:
        if not self.consumers_per_partition:
            return partitions
        return sorted(partitions, key=lambda tp: self.consumers_per_partition.get(tp, 0))

    def next_rack_consumer(self, tp: TP, members: list[str], first: int) -> int:
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        for step in range(len(members)):
            index = (first + step) % len(members)
            if self.member_rack.get(members[index]) in racks:
                return index
        return -1


def sticky_assign(problem: ConsumerProblem, cooperative: bool) -> ConsumerAssignorResult:
    group = ConsumerGroup(problem)
    members = group.hash_order()
    raw_owned: dict[str, list[TP]] = {}
    generation: dict[str, int] = {}
    # Claims on partitions numbered beyond their topic's partition count: Kafka checks only that
    # the topic exists, so they stay in its bookkeeping (see where `beyond` is used).
    beyond: dict[str, list[TP]] = {}
    phantom: set[TP] = set()
    for subscription in problem.members:
        claims: list[TP] = []
        for partition in subscription.owned_partitions:
            topic, p = parse_partition_id(partition)
            if topic in group.partitions:
                claims.append((topic, p))
                if p >= group.partitions[topic]:
                    beyond.setdefault(subscription.id, []).append((topic, p))
                    phantom.add((topic, p))
        raw_owned[subscription.id] = claims
        generation[subscription.id] = subscription.generation

    # Pre-pass (allSubscriptionsEqual): collect owned partitions, settle contested ones.
    subscribed: set[str] = set()
    all_equal = True
    owned: dict[str, list[TP]] = {}
    previous_owner: dict[TP, str] = {}
    contested: set[TP] = set()
    max_generation = -1
    for member in members:
        topics = set(group.subscriptions[member])
        if not subscribed:
            subscribed = topics
        elif topics != subscribed:
            all_equal = False
        own = generation[member]
        max_generation = max(max_generation, own)
        owned[member] = []
        for tp in raw_owned[member]:
            other = previous_owner.get(tp)
            if other is None:
                owned[member].append(tp)
                previous_owner[tp] = member
            elif own == generation[other]:
                contested.add(tp)
                _discard(owned[other], tp)
                previous_owner[tp] = member
            elif own > generation[other]:
                owned[member].append(tp)
                _discard(owned[other], tp)
                previous_owner[tp] = member

    racks = _RackInfo(group, members)
    kafka = f"Kafka {release_text(problem.config.release)}'s {'CooperativeStickyAssignor' if cooperative else 'StickyAssignor'}"
    if all_equal:
        try:
            assignment, transferring = _constrained(group, members, owned, contested, racks)
        except _KafkaThrows as error:
            raise SolverUnavailableError(
                f"{kafka} raises IllegalStateException ('{error}') on this group, so the group does not "
                f"rebalance. {_claims_beyond(group, beyond)}; Kafka keeps such claims (it checks only that the topic "
                "exists), and its list of unassigned partitions stalls on them"
            ) from None
        notes = ["constrained (equal subscriptions)"]
    else:
        # Kafka's general builder keeps such claims where they are: they count towards their
        # member's load while it balances, and come back in the member's assignment.
        assignment = _General(group, members, owned, raw_owned, generation, max_generation, racks).build()
        transferring = None
        notes = ["general (subscriptions differ)"]
    followup = False
    if cooperative:
        if transferring is None:  # general case: what changes owner, from the raw claims
            added = {tp: m for m, parts in assignment.items() for tp in parts if tp not in set(raw_owned[m])}
            revoked = {tp for m, parts in raw_owned.items() for tp in parts if tp not in set(assignment.get(m, ()))}
            transferring = {tp: m for tp, m in added.items() if tp in revoked}
        for tp, member in transferring.items():
            _discard(assignment[member], tp)
        # Like a claim on a deleted topic, one beyond its topic's partition count asks for no
        # follow-up round: nothing that exists waits for it.
        followup = any(
            tp not in set(assignment[m]) for m, parts in raw_owned.items() for tp in parts if tp not in phantom
        )
        if transferring:
            notes.append(f"{plural(len(transferring), 'partition')} withheld until their owners revoke them")
    given = Counter(tp for parts in assignment.values() for tp in parts)
    kept_phantoms = sorted(tp for tp in given if tp in phantom)
    twice = sorted(tp for tp, count in given.items() if tp not in phantom and count > 1)
    if kept_phantoms or twice:
        what = []
        if kept_phantoms:
            names = ", ".join(partition_id(*tp) for tp in kept_phantoms)
            what.append(f"hands back {names}, which {'does' if len(kept_phantoms) == 1 else 'do'} not exist")
        if twice:
            what.append(f"gives {', '.join(partition_id(*tp) for tp in twice)} twice")
        raise SolverUnavailableError(
            f"{kafka} returns an invalid assignment for this group: it {' and '.join(what)}. {_claims_beyond(group, beyond)}; "
            "Kafka keeps such claims (it checks only that the topic exists)"
        )
    return assignor_result(group.sorted_members, assignment, followup_rebalance=followup, notes=notes)


class _KafkaThrows(Exception):
    """Kafka's sticky assignor raises IllegalStateException: the message it raises with."""


def _claims_beyond(group: ConsumerGroup, beyond: Mapping[str, list[TP]]) -> str:
    """Who claims what beyond its topic's partition count, in words (a topic re-created smaller)."""
    claims = []
    for member, parts in beyond.items():
        topics = sorted({t for t, _ in parts})
        counts = ", ".join(f"{plural(group.partitions[t], 'partition')} of {t}" for t in topics)
        claims.append(f"{shown(member)} claims {', '.join(partition_id(*tp) for tp in parts)}, beyond the {counts}")
    return "Member " + "; member ".join(claims)


def _discard(items: list[TP], item: TP) -> None:
    if item in items:
        items.remove(item)


def _constrained(
    group: ConsumerGroup,
    members: list[str],
    owned: dict[str, list[TP]],
    contested: set[TP],
    racks: _RackInfo,
) -> tuple[dict[str, list[TP]], dict[TP, str]]:
    """KAFKA-12464: quotas floor and ceil, exactly P mod N members at the ceiling."""
    n_members = len(members)
    total = sum(group.partitions.values())
    min_quota = total // n_members
    max_quota = math.ceil(total / n_members)
    expected_over = total % n_members
    current_over = 0
    assignment: dict[str, list[TP]] = {m: [] for m in members}
    assigned: set[TP] = set()
    under: list[str] = []
    exact_min: list[str] = []
    maybe_revoked: dict[TP, str] = {}
    transferring: dict[TP, str] = {}

    for member in members:
        keep = []
        for tp in owned[member]:
            if racks.mismatch(member, tp):
                maybe_revoked[tp] = member
            else:
                keep.append(tp)
        keep.sort(key=lambda tp: (tp[1], tp[0]))  # KAFKA-16277: by partition, then topic
        keep = [tp for tp in keep if tp not in contested]
        if len(keep) < min_quota:
            take = keep
            under.append(member)
        elif len(keep) >= max_quota and current_over < expected_over:
            current_over += 1
            if current_over == expected_over:
                exact_min.clear()
            take = keep[:max_quota]
        else:
            take = keep[:min_quota]
            if current_over < expected_over:
                exact_min.append(member)
        for tp in keep[len(take) :]:
            maybe_revoked[tp] = member
        assignment[member].extend(take)
        assigned.update(take)

    unassigned = _merged_unassigned(group, [tp for member in members for tp in assignment[member]])
    under.sort(key=member_id_key)
    exact_min.sort(key=member_id_key)
    unassigned = racks.by_scarcity(unassigned)

    def assign_new(tp: TP, member: str) -> int:
        assignment[member].append(tp)
        revoked_from = maybe_revoked.get(tp)
        if (revoked_from is not None and revoked_from != member) or tp in contested:
            transferring[tp] = member
        return len(assignment[member])

    if racks.member_rack:
        left: list[TP] = []
        next_index = 0
        for tp in unassigned:
            rack_consumer: str | None = None
            i = racks.next_rack_consumer(tp, under, next_index) if under else -1
            if i >= 0:
                rack_consumer = under[i]
                k = len(assignment[rack_consumer]) + 1
                if k >= min_quota:
                    under.pop(i)
                    if k < max_quota and current_over < expected_over:
                        exact_min.append(rack_consumer)
                else:
                    i += 1
                next_index = 0 if not under else i % len(under)
            elif exact_min:
                j = racks.next_rack_consumer(tp, exact_min, 0)
                if j >= 0:
                    rack_consumer = exact_min[j]
                    if len(assignment[rack_consumer]) + 1 == max_quota:
                        exact_min.pop(j)
                        current_over += 1
                        if current_over == expected_over:
                            exact_min.clear()
            if rack_consumer is None:
                left.append(tp)
            else:
                assign_new(tp, rack_consumer)
        unassigned = left

    cursor = 0
    for tp in unassigned:
        from_under = True
        if cursor < len(under):
            member = under[cursor]
            cursor += 1
        elif not under and not exact_min:
            raise _KafkaThrows("No more unfilled consumers to be assigned.")
        elif not under:
            member = exact_min.pop(0)
            from_under = False
        else:
            member, cursor = under[0], 1
        k = assign_new(tp, member)
        if k == min_quota and from_under:
            cursor -= 1
            under.pop(cursor)
            exact_min.append(member)
        elif k == max_quota:
            current_over += 1
    # verifyUnfilledMembers
    if under and current_over != expected_over:
        raise _KafkaThrows(
            "We haven't reached the expected number of members with more than the minQuota partitions, "
            "but no more partitions to be assigned"
        )
    for member in under:
        if len(assignment[member]) != min_quota:
            raise _KafkaThrows(f"Consumer: [{member}] doesn't reach minQuota partitions, and no more partitions to be assigned")
    return assignment, transferring


def _merged_unassigned(group: ConsumerGroup, assigned: list[TP]) -> list[TP]:
    """`getUnassignedPartitions`: every partition (topics sorted) not matched while walking the kept
    partitions sorted by (topic, partition) alongside. A kept claim beyond its topic's partition
    count never matches, so the walk stalls on it and every partition after it counts as
    unassigned, kept ones included."""
    pending = sorted(assigned)
    cursor = 0
    unassigned = []
    for topic in sorted(group.partitions):
        for p in range(group.partitions[topic]):
            if cursor < len(pending) and pending[cursor] == (topic, p):
                cursor += 1
            else:
                unassigned.append((topic, p))
    return unassigned


class _Movements:
    """Kafka's PartitionMovements: undo an earlier opposite move of the same topic instead."""

    def __init__(self) -> None:
        self.moves: dict[TP, tuple[str, str]] = {}
        self.by_topic: dict[str, dict[tuple[str, str], list[TP]]] = {}

    def _add(self, tp: TP, pair: tuple[str, str]) -> None:
        self.moves[tp] = pair
        self.by_topic.setdefault(tp[0], {}).setdefault(pair, []).append(tp)

    def _remove(self, tp: TP) -> tuple[str, str]:
        pair = self.moves.pop(tp)
        pairs = self.by_topic[tp[0]]
        pairs[pair].remove(tp)
        if not pairs[pair]:
            del pairs[pair]
        if not pairs:
            del self.by_topic[tp[0]]
        return pair

    def record(self, tp: TP, old: str, new: str) -> None:
        if tp in self.moves:
            source, _ = self._remove(tp)
            if source != new:
                self._add(tp, (source, new))
        else:
            self._add(tp, (old, new))

    def partition_to_move(self, tp: TP, old: str, new: str) -> TP:
        pairs = self.by_topic.get(tp[0])
        if not pairs:
            return tp
        if tp in self.moves:
            old = self.moves[tp][0]
        reverse = pairs.get((new, old))
        if not reverse:
            return tp
        return java_hash_map_order(reverse, _topic_partition_hash)[0]


class _General:
    """KIP-54's general sticky algorithm (with KIP-341's fix and KIP-881 racks)."""

    def __init__(
        self,
        group: ConsumerGroup,
        members: Sequence[str],
        owned: Mapping[str, list[TP]],
        raw_owned: Mapping[str, list[TP]],
        generation: Mapping[str, int],
        max_generation: int,
        racks: _RackInfo,
    ):
        self.group = group
        self.racks = racks
        self.members = members
        self.current: dict[str, list[TP]] = {m: list(owned[m]) for m in members}
        self.topic_consumers: dict[str, list[str]] = {
            t: [m for m in members if t in group.subscriptions[m]] for t in group.partitions
        }
        self.member_topics = {m: [t for t in group.subscriptions[m] if t in group.partitions] for m in members}
        self.max_size = {m: sum(group.partitions[t] for t in self.member_topics[m]) for m in members}
        self.owner: dict[TP, str] = {tp: m for m in members for tp in owned[m]}
        self.topics = sorted(group.partitions, key=lambda t: (len(self.topic_consumers[t]), t))
        self.all_partitions = [(t, p) for t in self.topics for p in range(group.partitions[t])]
        self.previous: dict[TP, tuple[str, int]] = {}
        for member in members:
            if generation[member] < max_generation:
                for tp in raw_owned[member]:
                    known = self.previous.get(tp)
                    if known is None or generation[member] > known[1]:
                        self.previous[tp] = (member, generation[member])
        self.movements = _Movements()
        self.fixed: dict[str, list[TP]] = {}

    def size(self, member: str) -> int:
        return len(self.current[member])

    def ordered(self) -> list[str]:
        return sorted(self.current, key=lambda m: (len(self.current[m]), member_id_key(m)))

    def build(self) -> dict[str, list[TP]]:
        revocation_required = False
        for member in self.members:
            kept = []
            for tp in self.current[member]:
                if tp[0] not in self.group.subscriptions[member] or self.racks.mismatch(member, tp):
                    revocation_required = True
                else:
                    kept.append(tp)
            self.current[member] = kept
        # Kafka merges the kept partitions, sorted as all partitions are (topic order, then
        # number), into all partitions: a kept claim beyond its topic's partition count never
        # matches, so every partition after it counts as unassigned, kept ones included (and is
        # assigned again); the claim itself stays with its member (sticky_assign then refuses).
        rank = {t: i for i, t in enumerate(self.topics)}
        held = sorted((tp for parts in self.current.values() for tp in parts), key=lambda tp: (rank[tp[0]], tp[1]))
        cursor = 0
        unassigned = []
        for tp in self.all_partitions:
            if cursor < len(held) and held[cursor] == tp:
                cursor += 1
            else:
                unassigned.append(tp)
        initializing = self.size(self.ordered()[-1]) == 0

        if self.racks.member_rack:
            rest = self._maybe_assign(list(unassigned), rack_check=True)
            self._maybe_assign(rest, rack_check=False)
        else:
            self._maybe_assign(unassigned, rack_check=False)

        fixed_partitions = {tp for tp in self.all_partitions if len(self.topic_consumers[tp[0]]) < 2}
        reassignable = [tp for tp in self.all_partitions if tp not in fixed_partitions]
        unassigned = [tp for tp in unassigned if tp not in fixed_partitions]
        for member in list(self.current):
            if not self._can_participate(member):
                self.fixed[member] = self.current.pop(member)

        snapshot = {m: list(parts) for m, parts in self.current.items()}
        owner_snapshot = dict(self.owner)
        if not revocation_required:
            self._perform_reassignments(unassigned)
        performed = self._perform_reassignments(reassignable)
        if not initializing and performed and self._score(self.current) >= self._score(snapshot):
            self.current, self.owner = snapshot, owner_snapshot
        self.current.update(self.fixed)
        return self.current

    def _can_participate(self, member: str) -> bool:
        if self.size(member) < self.max_size[member]:
            return True
        return any(len(self.topic_consumers[tp[0]]) >= 2 for tp in self.current[member])

    def _maybe_assign(self, partitions: list[TP], rack_check: bool) -> list[TP]:
        left = []
        for tp in partitions:
            if not self.topic_consumers.get(tp[0]):
                continue
            target = next(
                (
                    m
                    for m in self.ordered()
                    if tp[0] in self.group.subscriptions[m] and not (rack_check and self.racks.mismatch(m, tp))
                ),
                None,
            )
            if target is None:
                left.append(tp)
                continue
            self.current[target].append(tp)
            self.owner[tp] = target
        return left

    @staticmethod
    def _score(assignment: dict[str, list[TP]]) -> int:
        sizes = sorted(len(parts) for parts in assignment.values())
        return sum(size * (2 * i - len(sizes) + 1) for i, size in enumerate(sizes))

    def _is_balanced(self) -> bool:
        order = self.ordered()
        if self.size(order[0]) >= self.size(order[-1]) - 1:
            return True
        for member in order:
            if self.size(member) >= self.max_size[member]:
                continue
            mine = set(self.current[member])
            for topic in self.member_topics[member]:
                for p in range(self.group.partitions[topic]):
                    tp = (topic, p)
                    holder = self.owner.get(tp)
                    if tp in mine or holder is None or holder not in self.current:
                        continue
                    if self.size(member) + 1 < self.size(holder):
                        return False
        return True

    def _perform_reassignments(self, partitions: list[TP]) -> bool:
        performed = False
        while True:
            modified = False
            for tp in partitions:
                if self._is_balanced():
                    break
                member = self.owner[tp]
                previous = self.previous.get(tp)
                if (
                    previous is not None
                    and previous[0] in self.current
                    and self.size(member) > self.size(previous[0]) + 1
                ):
                    self._reassign(tp, previous[0])
                    modified = True
                    continue
                rack = self.racks.member_rack.get(member)
                partition_racks = self.racks.partition_racks.get(tp)
                candidates = self.topic_consumers[tp[0]]
                if rack and partition_racks and rack in partition_racks:
                    local = [o for o in candidates if self.racks.member_rack.get(o) in partition_racks]
                    if any(self.size(member) > self.size(o) + 1 for o in local):
                        self._reassign_to_first(tp)
                        modified = True
                        continue
                if any(self.size(member) > self.size(o) + 1 for o in candidates if o in self.current):
                    self._reassign_to_first(tp)
                    modified = True
            if not modified:
                return performed
            performed = True

    def _reassign_to_first(self, tp: TP) -> None:
        target = next(m for m in self.ordered() if tp[0] in self.group.subscriptions[m])
        self._reassign(tp, target)

    def _reassign(self, tp: TP, new: str) -> None:
        # Kafka may move another partition of the topic instead (undoing an earlier opposite
        # move); its processPartitionMovement takes the owner of the partition actually moved.
        moved = self.movements.partition_to_move(tp, self.owner[tp], new)
        old = self.owner[moved]
        self.movements.record(moved, old, new)
        self.current[old].remove(moved)
        self.current[new].append(moved)
        self.owner[moved] = new
