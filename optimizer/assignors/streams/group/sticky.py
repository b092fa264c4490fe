"""Kafka's broker-side streams-group `StickyTaskAssignor` (KIP-1071), reproduced exactly.

Variants (`StickyVariant`), selected by `kafka.version` (assign.py), each checked against its
releases' jars (bench/streams_group_releases.py):

* `KAFKA_4_2` reproduces the class of 4.2.0, 4.2.1, 4.3.0 and 4.3.1 (KAFKA-19478/19661's rewrite:
  heaps, range-style order, quotas for standbys): as 4.4.0 below, but the standby candidates are
  the members holding the task as a standby, in member order (offsets are not read), the map of
  processes is filled by `putIfAbsent`, and `findPrevMemberWithLeastLoad` is the one before
  KAFKA-20899; `KAFKA_4_2_2` is 4.2.2, with that fix.
* `KAFKA_4_4` reproduces the class shipped in Kafka 4.4.0 (`kafka-group-coordinator-4.4.0.jar`,
  branch 4.4 at KAFKA-20790): all active tasks on one quota, processes by load alone, standbys by
  stickiness only (`rack.aware.assignment.tags` are not read), a member's current standbys (not
  its warm-ups) ahead of the members that only report offsets (KAFKA-20719). Checked against the
  jar by the live oracle (tests/kafka/test_streams_group_oracle.py).
* `TRUNK` reproduces `StickyTaskAssignor` and `ProcessState` at commit 058944c8144d (unreleased:
  KAFKA-21001 warm-ups as holders, KAFKA-20999 rack-aware standbys, KAFKA-21060 stateful and
  stateless tasks on quotas of their own), with `RackAwareStandbyPicker` at 3392e36f3c82
  (`standby_picker`) and the record `TaskId(subtopologyId, partition)` of a75696aa9d22; checked
  against the frozen cases in ../shared/kafka-parity/streams-group/.

Per member (stream thread), per process (all members sharing a process id), in the trunk variant
(the released variants do the same without the split of step 1 and without the rack-aware pass
of step 2):

1. Stateful active tasks, then stateless ones, each flavour on its own quota: a task stays with its
   previous active member, else goes to the least-loaded previous standby member (current standbys
   and warm-ups before members that only report offsets, most caught up first), while that member
   is below the quota (ceil(tasks / members), shrinking as members fill up); the rest go to the
   least-loaded process (load = tasks / members, then stateless load) and its least-loaded member.
2. Standbys of each stateful task: with `rack.aware.assignment.tags`, first every standby that makes
   the task more rack-diverse (ties: previous holders first, then load); then the previous active
   member, then the least-loaded previous standby member, each below the total quota; the rest to
   the least-loaded process that does not hold the task.

Java iteration orders decide the ties and are reproduced: members in `HashMap` bucket order of
their ids (or insertion order for a `LinkedHashMap`); processes in the bucket order of
`new HashMap<>(members)` filled by `computeIfAbsent`, which puts a new key at the head of its bin
and resizes late, so the heaps see colliding processes newest first (4.2 and 4.3 fill it by
`putIfAbsent`: oldest first); members of a process in the
bucket order of a default `HashMap`; `PriorityQueue` heap order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from optimizer.assignors.java import JavaPriorityQueue, java_hash_map_order, java_string_hash
from optimizer.assignors.streams.group.spec import GroupMember, MemberTasks, StreamsGroupSpec
from optimizer.assignors.streams.group.standby_picker import RackAwareStandbyPicker


@dataclass(frozen=True)
class StickyVariant:
    """What differs between the released assignor and trunk's."""

    name: str
    separate_stateful: bool
    """KAFKA-21060: stateful active tasks placed first on a quota of their own, then stateless ones
    on the active quota, and processes with equal load ordered by stateless active load. Without
    it (4.4.0) every active task goes through one pass on the active quota, processes by load."""
    rack_aware_standbys: bool
    """KAFKA-20999: with `rack.aware.assignment.tags`, standbys first placed for rack diversity."""
    warmups_hold_state: bool
    """KAFKA-21001: a member's current warm-ups rank as standby holders, as its standbys do.
    Without it (4.4.0) warm-ups are not read: a warm-up with a reported offset is a weaker
    candidate, like any offset a member reports."""
    offset_candidates: bool = True
    """KAFKA-20719 (4.4.0): the previous standby holders of a task ranked by their reported offset
    sum, then the members that only report an offset for it (a restarted member's local state).
    Without it (4.2, 4.3) the candidates are the members holding it as a standby, in member order,
    and offsets are not read."""
    processes_by_compute_if_absent: bool = True
    """4.4.0 fills its map of processes with `computeIfAbsent` (a new key at the head of its bin),
    4.2 and 4.3 with `putIfAbsent` (at the tail): colliding processes iterate in the other order."""
    standby_fix: bool = True
    """KAFKA-20899 (4.2.2, 4.4.0): `findPrevMemberWithLeastLoad` skips candidates whose process
    holds the task and starts from the first one left. Without it (4.2.0, 4.2.1, 4.3.x) it starts
    from the first candidate, skips a later one only while looking for a less loaded one, and
    returns nothing when the first candidate's process holds the task."""


KAFKA_4_2 = StickyVariant(
    "4.2.0", separate_stateful=False, rack_aware_standbys=False, warmups_hold_state=False,
    offset_candidates=False, processes_by_compute_if_absent=False, standby_fix=False,
)  # fmt: skip
"""4.2.0 to 4.2.1 and 4.3.0 to 4.3.1 (KAFKA-19478/19661's rewrite, before KAFKA-20899)."""
KAFKA_4_2_2 = dataclasses.replace(KAFKA_4_2, name="4.2.2", standby_fix=True)
"""4.2.2: 4.2 with KAFKA-20899's standby fix."""
KAFKA_4_4 = StickyVariant("4.4.0", separate_stateful=False, rack_aware_standbys=False, warmups_hold_state=False)
TRUNK = StickyVariant("trunk (058944c)", separate_stateful=True, rack_aware_standbys=True, warmups_hold_state=True)

TaskId = tuple[str, int]
"""`(subtopologyId, partition)`, as Kafka's `TaskId` record."""

K = TypeVar("K")

_PREV_ACTIVE_HOLDER = 0
_FIRST_PREV_STANDBY_HOLDER = 1
_NOT_PREV_HOLDER = 2**31 - 1


class TaskAssignorError(RuntimeError):
    """Kafka's `TaskAssignorException`: an active task found no process or member."""


def parse_task(task: str) -> TaskId:
    subtopology, _, partition = task.rpartition("_")
    return subtopology, int(partition)


def task_text(task: TaskId) -> str:
    return f"{task[0]}_{task[1]}"


def _java_string_key(text: str) -> bytes:
    """`String.compareTo` order: UTF-16 code units."""
    return text.encode("utf-16-be")


def task_order_key(task: TaskId) -> tuple[bytes, int]:
    """`TaskId.compareTo`: subtopology id as a Java string, then partition."""
    return _java_string_key(task[0]), task[1]


def _partition_first_key(task: TaskId) -> tuple[int, bytes]:
    return task[1], _java_string_key(task[0])


def _table_size_for(capacity: int) -> int:
    size = 1
    while size < capacity:
        size *= 2
    return size


def _bucket(hash_code: int, capacity: int) -> int:
    h = hash_code & 0xFFFFFFFF
    return (h ^ (h >> 16)) & (capacity - 1)


def java_compute_if_absent_order(calls: Sequence[K], hash_of: Callable[[K], int], initial_capacity: int) -> list[K]:
    """Iteration order of `new HashMap<>(initial_capacity)` after `computeIfAbsent(key, ...)` for
    each of `calls` (repeats included).

    Unlike `put`, `computeIfAbsent` links a new key at the head of its bin, and resizes only at
    the start of a call, when the size already exceeds three quarters of the table. A resize
    splits each bin keeping its order, so a bin lists its keys newest first.
    """
    capacity = 0
    bins: dict[int, list[K]] = {}
    present: set[K] = set()
    for key in calls:
        if capacity == 0 or len(present) > int(capacity * 0.75):
            capacity = _table_size_for(initial_capacity) if capacity == 0 else capacity * 2
            old = [k for b in sorted(bins) for k in bins[b]]
            bins = {}
            for k in old:
                bins.setdefault(_bucket(hash_of(k), capacity), []).append(k)
        if key not in present:
            present.add(key)
            bins.setdefault(_bucket(hash_of(key), capacity), []).insert(0, key)
    return [key for b in sorted(bins) for key in bins[b]]


def java_put_order(calls: Sequence[K], hash_of: Callable[[K], int], initial_capacity: int) -> list[K]:
    """Iteration order of `new HashMap<>(initial_capacity)` after `putIfAbsent(key, ...)` for each
    of `calls` (repeats included): a new key at the tail of its bin; the table resized after an
    insertion that takes the size past three quarters of it, keeping each bin's order."""
    keys = list(dict.fromkeys(calls))
    capacity = _table_size_for(initial_capacity)
    while len(keys) > int(capacity * 0.75):
        capacity *= 2
    bins: dict[int, list[K]] = {}
    for key in keys:
        bins.setdefault(_bucket(hash_of(key), capacity), []).append(key)
    return [key for b in sorted(bins) for key in bins[b]]


@dataclass(eq=False)
class _Member:
    process_id: str
    member_id: str


class ProcessState:
    """Kafka's `ProcessState`: one process, its members' task counts and its assigned tasks."""

    def __init__(self, process_id: str):
        self.process_id = process_id
        self.capacity = 0
        self.load = float("inf")
        self.stateless_active_load = 0.0
        self.task_count = 0
        self.active_task_count = 0
        self.stateful_active_task_count = 0
        # Iterated in Java HashMap order: `order_members` rearranges it once every member is in.
        self.member_to_task_counts: dict[str, int] = {}
        self.assigned_active: dict[str, set[TaskId]] = {}
        self.assigned_standby: dict[str, set[TaskId]] = {}
        self.assigned_tasks: set[TaskId] = set()
        # Heap of [member id, task count], kept between calls of add_task_to_least_loaded_member
        # and dropped by add_task, as in Kafka.
        self._members_by_load: JavaPriorityQueue[list] | None = None

    def add_member(self, member_id: str) -> None:
        self.member_to_task_counts[member_id] = 0
        self.capacity += 1
        self._compute_load()

    def order_members(self) -> None:
        order = java_hash_map_order(list(self.member_to_task_counts), java_string_hash)
        self.member_to_task_counts = {member: self.member_to_task_counts[member] for member in order}

    def _compute_load(self) -> None:
        if self.capacity <= 0:
            self.load = -1.0
            self.stateless_active_load = -1.0
        else:
            self.load = self.task_count / self.capacity
            self.stateless_active_load = (self.active_task_count - self.stateful_active_task_count) / self.capacity

    def has_task(self, task: TaskId) -> bool:
        return task in self.assigned_tasks

    def add_task(self, member_id: str, task: TaskId, active: bool, stateful: bool) -> int:
        count = self._add_task_internal(member_id, task, active, stateful)
        self._members_by_load = None
        return count

    def _add_task_internal(self, member_id: str, task: TaskId, active: bool, stateful: bool) -> int:
        self.task_count += 1
        self.assigned_tasks.add(task)
        if active:
            self.active_task_count += 1
            self.assigned_active.setdefault(member_id, set()).add(task)
            if stateful:
                self.stateful_active_task_count += 1
        else:
            self.assigned_standby.setdefault(member_id, set()).add(task)
        count = self.member_to_task_counts[member_id] + 1
        self.member_to_task_counts[member_id] = count
        self._compute_load()
        return count

    def add_task_to_least_loaded_member(self, task: TaskId, active: bool, stateful: bool) -> int:
        if not self.member_to_task_counts:
            return -1
        if len(self.member_to_task_counts) == 1:
            return self._add_task_internal(next(iter(self.member_to_task_counts)), task, active, stateful)
        if self._members_by_load is None:
            self._members_by_load = JavaPriorityQueue(lambda a, b: a[1] < b[1])
            for member_id, count in self.member_to_task_counts.items():
                self._members_by_load.offer([member_id, count])
        entry = self._members_by_load.poll()
        if entry is None:
            raise TaskAssignorError(f"No members available to assign task {task_text(task)}")
        count = self._add_task_internal(entry[0], task, active, stateful)
        entry[1] = count
        self._members_by_load.offer(entry)
        return count

    def least_loaded_member(self) -> str | None:
        """First member with the fewest tasks, by a scan in map order."""
        best: str | None = None
        fewest = 2**31 - 1
        for member_id, count in self.member_to_task_counts.items():
            if count < fewest:
                best, fewest = member_id, count
        return best


def _process_by_load_alone(first: ProcessState, second: ProcessState) -> bool:
    """4.4.0's `Comparator.comparingDouble(ProcessState::load)` as "first < second"."""
    return first.load < second.load


def _process_by_load(first: ProcessState, second: ProcessState) -> bool:
    """`PROCESS_BY_LOAD` as "first < second": load, then stateless active load."""
    if first.load != second.load:
        return first.load < second.load
    return first.stateless_active_load < second.stateless_active_load


@dataclass
class _StandbyToAssign:
    task: TaskId
    remaining: int


class _LocalState:
    """Kafka's `LocalState`: the quotas and lookups of one assignment."""

    def __init__(self, variant: StickyVariant) -> None:
        self.variant = variant
        self.num_standby_replicas = 0
        self.tags: tuple[str, ...] = ()
        self.active_task_to_prev_member: dict[TaskId, _Member] = {}
        self.standby_task_to_prev_member: dict[TaskId, list[_Member]] = {}
        self.stateful_active_task_to_process: dict[TaskId, ProcessState] = {}
        self.processes: dict[str, ProcessState] = {}
        """Process id -> state, iterated in Java HashMap order."""
        self.process_tags: dict[str, Mapping[str, str]] = {}
        self.stateful_tasks: list[TaskId] = []
        self.stateless_tasks: list[TaskId] = []
        self.total_stateful_active_tasks = 0
        self.total_active_tasks = 0
        self.total_tasks = 0
        self.members_with_stateful_active_capacity = 0
        self.members_with_active_capacity = 0
        self.members_with_task_capacity = 0
        self.stateful_active_tasks_per_member = 0
        self.active_tasks_per_member = 0
        self.total_tasks_per_member = 0


def _tasks_per_member(tasks: int, members: int) -> int:
    """`computeTasksPerMember`: a ceiling in Java int arithmetic. The counts can go negative (a
    member that reaches a shrinking quota twice is counted twice), so division truncates and the
    remainder takes the dividend's sign, as in Java."""
    if members == 0:
        return 0
    quotient = abs(tasks) // abs(members)
    if (tasks < 0) != (members < 0):
        quotient = -quotient
    remainder = tasks - quotient * members
    return quotient + 1 if remainder > 0 else quotient


def _member_order(spec: StreamsGroupSpec, member_map: str) -> list[GroupMember]:
    if member_map == "linked":
        return list(spec.members)
    by_id = {member.member_id: member for member in spec.members}
    return [by_id[member_id] for member_id in java_hash_map_order(list(by_id), java_string_hash)]


def _initialize(spec: StreamsGroupSpec, members: Sequence[GroupMember], variant: StickyVariant) -> _LocalState:
    state = _LocalState(variant)
    state.num_standby_replicas = spec.num_standby_replicas
    state.tags = spec.rack_aware_assignment_tags
    for subtopology in spec.subtopologies:
        tasks = state.stateful_tasks if subtopology.stateful else state.stateless_tasks
        tasks.extend((subtopology.id, partition) for partition in range(subtopology.partitions))
        state.total_tasks += subtopology.partitions
        state.total_active_tasks += subtopology.partitions
        if subtopology.stateful:
            state.total_stateful_active_tasks += subtopology.partitions
            state.total_tasks += subtopology.partitions * state.num_standby_replicas
    count = len(members)
    state.members_with_stateful_active_capacity = count
    state.members_with_active_capacity = count
    state.members_with_task_capacity = count
    state.stateful_active_tasks_per_member = _tasks_per_member(state.total_stateful_active_tasks, count)
    state.active_tasks_per_member = _tasks_per_member(state.total_active_tasks, count)
    state.total_tasks_per_member = _tasks_per_member(state.total_tasks, count)

    processes: dict[str, ProcessState] = {}
    candidates: dict[TaskId, list[tuple[_Member, bool, int]]] = {}
    for member in members:
        ref = _Member(member.process_id, member.member_id)
        processes.setdefault(member.process_id, ProcessState(member.process_id)).add_member(member.member_id)
        state.process_tags.setdefault(member.process_id, member.client_tags)
        for task in member.active:
            state.active_task_to_prev_member[parse_task(task)] = ref
        _collect_standby_candidates(candidates, member, ref, variant.warmups_hold_state)
    # `new HashMap<>(number of members)`, filled by `computeIfAbsent` once per member.
    calls = [member.process_id for member in members]
    if variant.processes_by_compute_if_absent:
        order = java_compute_if_absent_order(calls, java_string_hash, count)
    else:
        order = java_put_order(calls, java_string_hash, count)
    state.processes = {process_id: processes[process_id] for process_id in order}
    for process in state.processes.values():
        process.order_members()
    if variant.offset_candidates:
        state.standby_task_to_prev_member = {task: _rank_standby_candidates(found) for task, found in candidates.items()}
    else:
        state.standby_task_to_prev_member = {task: [member for member, holds, _ in found if holds] for task, found in candidates.items()}
    return state


def _collect_standby_candidates(candidates: dict[TaskId, list[tuple[_Member, bool, int]]], member: GroupMember, ref: _Member, warmups: bool) -> None:
    # Current standbys (and warm-ups, when they hold state) carry their reported offset sum (0
    # when none is reported).
    holding = (*member.standby, *member.warmup) if warmups else member.standby
    for task in holding:
        candidates.setdefault(parse_task(task), []).append((ref, True, member.task_offsets.get(task, 0)))
    # Offsets alone (a restarted member's local state) make a weaker candidate.
    held = set(holding)
    for task, offset in member.task_offsets.items():
        if task not in held:
            candidates.setdefault(parse_task(task), []).append((ref, False, offset))


def _rank_standby_candidates(found: list[tuple[_Member, bool, int]]) -> list[_Member]:
    """`STANDBY_CANDIDATE_ORDER` (a stable sort): holders first, then most caught up."""
    return [member for member, _, _ in sorted(found, key=lambda c: (0 if c[1] else 1, -c[2]))]


def _maybe_update_stateful_active_quota(state: _LocalState, count: int) -> None:
    if count == state.stateful_active_tasks_per_member:
        state.members_with_stateful_active_capacity -= 1
        state.total_stateful_active_tasks -= count
        state.stateful_active_tasks_per_member = _tasks_per_member(state.total_stateful_active_tasks, state.members_with_stateful_active_capacity)


def _maybe_update_active_quota(state: _LocalState, count: int) -> None:
    if count == state.active_tasks_per_member:
        state.members_with_active_capacity -= 1
        state.total_active_tasks -= count
        state.active_tasks_per_member = _tasks_per_member(state.total_active_tasks, state.members_with_active_capacity)


def _maybe_update_total_quota(state: _LocalState, count: int) -> None:
    if count == state.total_tasks_per_member:
        state.members_with_task_capacity -= 1
        state.total_tasks -= count
        state.total_tasks_per_member = _tasks_per_member(state.total_tasks, state.members_with_task_capacity)


def _below_active_quota(state: _LocalState, process: ProcessState, member: _Member, stateful: bool) -> bool:
    # In the stateful pass nothing else is assigned yet, so the task count is the stateful count.
    quota = state.stateful_active_tasks_per_member if stateful else state.active_tasks_per_member
    return process.member_to_task_counts[member.member_id] < quota


def _below_total_quota(state: _LocalState, process: ProcessState, member: _Member) -> bool:
    return process.member_to_task_counts[member.member_id] < state.total_tasks_per_member


def _add_active_task(state: _LocalState, process: ProcessState, member: _Member, task: TaskId, stateful: bool) -> None:
    count = process.add_task(member.member_id, task, True, stateful)
    if stateful:
        _maybe_update_stateful_active_quota(state, count)
    _maybe_update_active_quota(state, count)
    _maybe_update_total_quota(state, count)
    if stateful:
        state.stateful_active_task_to_process[task] = process


def _prev_member_with_least_load(state: _LocalState, members: list[_Member] | None, standby_task: TaskId | None) -> _Member | None:
    """Kafka's `findPrevMemberWithLeastLoad`: the first candidate, replaced only by one that is
    lower on both process load and member task count."""
    if not members:
        return None
    if not state.variant.standby_fix:
        return _prev_member_with_least_load_before_fix(state, members, standby_task)
    best: _Member | None = None
    best_process_load = best_member_load = float("inf")
    for member in members:
        process = state.processes[member.process_id]
        if standby_task is not None and process.has_task(standby_task):
            continue
        process_load = process.load
        member_load = process.member_to_task_counts[member.member_id]
        if best is None or (process_load < best_process_load and member_load < best_member_load):
            best, best_process_load, best_member_load = member, process_load, member_load
    return best


def _prev_member_with_least_load_before_fix(state: _LocalState, members: list[_Member], standby_task: TaskId | None) -> _Member | None:
    """`findPrevMemberWithLeastLoad` before KAFKA-20899: the first candidate stands unless a later
    one is lower on both loads and (for a standby) its process lacks the task; the answer is
    dropped when the first candidate's process holds the task (the process checked is the first
    one's, whoever was chosen)."""
    first = state.processes[members[0].process_id]
    best = members[0]
    best_process_load, best_member_load = first.load, first.member_to_task_counts[best.member_id]
    for member in members[1:]:
        process = state.processes[member.process_id]
        if process.load < best_process_load and (standby_task is None or not process.has_task(standby_task)):
            member_load = process.member_to_task_counts[member.member_id]
            if member_load < best_member_load:
                best, best_process_load, best_member_load = member, process.load, member_load
    if standby_task is None or not first.has_task(standby_task):
        return best
    return None


def _assign_active(state: _LocalState, tasks: list[TaskId], stateful: bool) -> None:
    # Partition first, so that a range-like previous assignment pairs up.
    tasks = sorted(tasks, key=_partition_first_key)

    remaining: list[TaskId] = []
    for task in tasks:
        prev = state.active_task_to_prev_member.get(task)
        if prev is not None:
            process = state.processes[prev.process_id]
            if _below_active_quota(state, process, prev, stateful):
                _add_active_task(state, process, prev, task, stateful)
                continue
        remaining.append(task)

    tasks, remaining = remaining, []
    for task in tasks:
        prev = _prev_member_with_least_load(state, state.standby_task_to_prev_member.get(task), None)
        if prev is not None:
            process = state.processes[prev.process_id]
            if _below_active_quota(state, process, prev, stateful):
                _add_active_task(state, process, prev, task, stateful)
                continue
        remaining.append(task)

    remaining.sort(key=task_order_key)
    by_load = _process_by_load if state.variant.separate_stateful else _process_by_load_alone
    queue: JavaPriorityQueue[ProcessState] = JavaPriorityQueue(by_load)
    for process in state.processes.values():
        queue.offer(process)
    for task in remaining:
        least_loaded = queue.poll()
        if least_loaded is None:
            raise TaskAssignorError(f"No process available to assign active task {task_text(task)}.")
        count = least_loaded.add_task_to_least_loaded_member(task, True, stateful)
        if count == -1:
            raise TaskAssignorError(f"No member available to assign active task {task_text(task)}.")
        # The stateful quota is only read in the first two steps.
        _maybe_update_active_quota(state, count)
        _maybe_update_total_quota(state, count)
        if stateful:
            state.stateful_active_task_to_process[task] = least_loaded
        queue.offer(least_loaded)


def _has_room(state: _LocalState, process: ProcessState) -> bool:
    return any(count < state.total_tasks_per_member for count in process.member_to_task_counts.values())


def _prev_holders(state: _LocalState, task: TaskId) -> dict[str, tuple[_Member, int]]:
    """Process id -> (its best-ranked previous holder of the task, rank): the previous active
    member ranks 0, previous standby candidates 1, 2, ... in candidate order."""
    holders: dict[str, tuple[_Member, int]] = {}
    for index, member in enumerate(state.standby_task_to_prev_member.get(task) or ()):
        holders.setdefault(member.process_id, (member, _FIRST_PREV_STANDBY_HOLDER + index))
    prev_active = state.active_task_to_prev_member.get(task)
    if prev_active is not None:
        holders[prev_active.process_id] = (prev_active, _PREV_ACTIVE_HOLDER)
    return holders


def _compare(first: float, second: float) -> int:
    return (first > second) - (first < second)


def _assign_rack_aware_standbys(state: _LocalState, picker: RackAwareStandbyPicker[ProcessState], task: TaskId) -> int:
    picker.start_task()
    picker.mark_used(state.stateful_active_task_to_process[task])
    holders = _prev_holders(state, task)

    def rank(process: ProcessState) -> int:
        holder = holders.get(process.process_id)
        return _NOT_PREV_HOLDER if holder is None else holder[1]

    def eligible(process: ProcessState) -> bool:
        return not process.has_task(task) and _has_room(state, process)

    def tie_break(first: ProcessState, second: ProcessState) -> int:
        by_holder = _compare(rank(first), rank(second))
        return by_holder if by_holder != 0 else _compare(first.load, second.load)

    placed = 0
    while placed < state.num_standby_replicas:
        winner = picker.pick_next(eligible, tie_break)
        if winner is None:
            break
        holder = holders.get(winner.process_id)
        if holder is not None and _below_total_quota(state, winner, holder[0]):
            member_id = holder[0].member_id
        else:
            member_id = winner.least_loaded_member()  # type: ignore[assignment]
        _maybe_update_total_quota(state, winner.add_task(member_id, task, False, True))
        picker.mark_used(winner)
        placed += 1
    return placed


def _assign_sticky_standbys(state: _LocalState, task: TaskId, first_replica: int, to_least_loaded: list[_StandbyToAssign]) -> None:
    for replica in range(first_replica, state.num_standby_replicas):
        prev_active = state.active_task_to_prev_member.get(task)
        if prev_active is not None:
            process = state.processes[prev_active.process_id]
            if not process.has_task(task) and _below_total_quota(state, process, prev_active):
                _maybe_update_total_quota(state, process.add_task(prev_active.member_id, task, False, True))
                continue
        prev_standbys = state.standby_task_to_prev_member.get(task)
        if prev_standbys:
            prev = _prev_member_with_least_load(state, prev_standbys, task)
            if prev is not None:
                process = state.processes[prev.process_id]
                if _below_total_quota(state, process, prev):
                    _maybe_update_total_quota(state, process.add_task(prev.member_id, task, False, True))
                    continue
        to_least_loaded.append(_StandbyToAssign(task, state.num_standby_replicas - replica))
        return


def _assign_standby_to_least_loaded(state: _LocalState, queue: JavaPriorityQueue[ProcessState], task: TaskId) -> bool:
    """Kafka's recursive `assignStandbyToMemberWithLeastLoad`, unrolled: poll processes until one
    does not hold the task, then put them back innermost first."""
    polled: list[ProcessState] = []
    found = False
    while True:
        process = queue.poll()
        if process is None:
            break
        polled.append(process)
        if not process.has_task(task):
            count = process.add_task_to_least_loaded_member(task, False, True)
            if count != -1:
                found = True
                _maybe_update_total_quota(state, count)
            break
        if len(queue) == 0:
            break
    for process in reversed(polled):
        queue.offer(process)
    return found


def _assign_standby(state: _LocalState, tasks: list[TaskId]) -> None:
    to_least_loaded: list[_StandbyToAssign] = []
    picker = None
    if state.tags and state.variant.rack_aware_standbys:
        picker = RackAwareStandbyPicker(state.tags, state.processes.values(), lambda process: state.process_tags[process.process_id])
    for task in sorted(tasks, key=_partition_first_key, reverse=True):
        # Rack diversity ranks above stickiness; the sticky pass places the rest.
        placed = 0 if picker is None else _assign_rack_aware_standbys(state, picker, task)
        _assign_sticky_standbys(state, task, placed, to_least_loaded)

    to_least_loaded.sort(key=lambda item: task_order_key(item.task), reverse=True)
    queue: JavaPriorityQueue[ProcessState] = JavaPriorityQueue(lambda a, b: a.load < b.load)
    for process in state.processes.values():
        queue.offer(process)
    for item in to_least_loaded:
        for _ in range(item.remaining):
            if not _assign_standby_to_least_loaded(state, queue, item.task):
                break  # Kafka logs that capacity is short and moves on


def _tasks_of(subtopology: str, partitions: int) -> list[TaskId]:
    return [(subtopology, partition) for partition in range(partitions)]


def sticky_assign_4_4(spec: StreamsGroupSpec, member_map: Literal["hash", "linked"] = "hash") -> dict[str, MemberTasks]:
    """Kafka 4.4.0's `StickyTaskAssignor.assign` (`sticky_assign` with `KAFKA_4_4`)."""
    return sticky_assign(spec, member_map, KAFKA_4_4)


def sticky_assign_4_2(spec: StreamsGroupSpec, member_map: Literal["hash", "linked"] = "hash") -> dict[str, MemberTasks]:
    """Kafka 4.2.0, 4.2.1, 4.3.0 and 4.3.1's `StickyTaskAssignor.assign` (`KAFKA_4_2`)."""
    return sticky_assign(spec, member_map, KAFKA_4_2)


def sticky_assign_4_2_2(spec: StreamsGroupSpec, member_map: Literal["hash", "linked"] = "hash") -> dict[str, MemberTasks]:
    """Kafka 4.2.2's `StickyTaskAssignor.assign` (`KAFKA_4_2_2`: with KAFKA-20899)."""
    return sticky_assign(spec, member_map, KAFKA_4_2_2)


def _member_tasks(tasks: Iterable[TaskId]) -> list[str]:
    return [task_text(task) for task in sorted(tasks, key=task_order_key)]


def sticky_assign(spec: StreamsGroupSpec, member_map: Literal["hash", "linked"] = "hash", variant: StickyVariant = TRUNK) -> dict[str, MemberTasks]:
    """Kafka's `StickyTaskAssignor.assign`: member id -> its active and standby tasks (every
    member a key, in spec order).

    `member_map` is the map the members were given in: `hash` (a `java.util.HashMap` filled in
    spec order, as the broker and the golden cases do) or `linked` (iterated in spec order, as a
    `LinkedHashMap` in Kafka's unit tests). `variant`: trunk's assignor (default) or 4.4.0's.
    """
    state = _initialize(spec, _member_order(spec, member_map), variant)
    if variant.separate_stateful:
        _assign_active(state, list(state.stateful_tasks), True)
        _assign_active(state, state.stateless_tasks, False)
    else:
        # One pass over every active task on the active quota: the stateless pass's code (it
        # neither reads the stateful quota nor records the task's process for rack-aware standbys).
        _assign_active(state, [task for s in spec.subtopologies for task in _tasks_of(s.id, s.partitions)], False)
    if state.num_standby_replicas > 0:
        _assign_standby(state, state.stateful_tasks)

    active: dict[str, set[TaskId]] = {}
    standby: dict[str, set[TaskId]] = {}
    for process in state.processes.values():
        for member_id, tasks in process.assigned_active.items():
            active.setdefault(member_id, set()).update(tasks)
        for member_id, tasks in process.assigned_standby.items():
            standby.setdefault(member_id, set()).update(tasks)
    return {
        member.member_id: MemberTasks(active=_member_tasks(active.get(member.member_id, ())), standby=_member_tasks(standby.get(member.member_id, ())))
        for member in spec.members
    }
