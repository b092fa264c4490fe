"""Kafka's proposed streams-group `BalancedTaskAssignor` (KIP-1071 / KIP-1357, `streams.assignor.name: balanced`).

Reproduces `group-coordinator/.../streams/assignor/BalancedTaskAssignor.java` at commit
07a283acad20eb98936d789eeaa39c2acb5479b7 (open PR #23419, KAFKA-20998), the placement half of the
classic `HighAvailabilityTaskAssignor` moved to the broker:

1. Processes in process-id order (a TreeMap), members of a process in member-id order (a TreeSet).
2. Stateful active tasks, in TaskId order, are dealt round-robin over the processes, then moved
   from more to less loaded processes (tasks per member) while a move reduces the skew.
3. Each stateful task gets `num_standby_replicas` standbys, each on the least loaded process (by
   active + standby tasks per member, ties by process id) not holding it yet; then evened out the
   same way as the actives.
4. Stateless tasks go, one by one, to the process with the lowest active tasks per member.
5. Within a process, three rounds (stateful actives, standbys, stateless actives) spread the tasks
   over the members, each levelling the members' total counts; stateful tasks stay on the member
   currently holding them (as active, standby or warm-up) while it is below the round's level.

Offsets, racks and client tags are not read. Processes and members are sorted, so the member
insertion order never matters; every priority queue orders by a total order (load, process id)
of keys that do not change while queued, so a plain binary heap yields Java's polls.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from optimizer.assignors.streams.group.spec import MemberTasks, StreamsGroupSpec

TaskId = tuple[str, int]
"""Kafka's streams-group `TaskId(subtopologyId, partition)`."""


def _java_string_key(text: str) -> bytes:
    """Sort key of `String.compareTo` (UTF-16 code units)."""
    return text.encode("utf-16-be")


def _task_order(task: TaskId) -> tuple[bytes, int]:
    """`TaskId.compareTo`: subtopology id as a String, then partition."""
    return _java_string_key(task[0]), task[1]


def _parse_task(task_id: str) -> TaskId:
    subtopology, _, partition = task_id.rpartition("_")
    return subtopology, int(partition)


def _task_text(task: TaskId) -> str:
    return f"{task[0]}_{task[1]}"


@dataclass
class _ProcessTasks:
    """`BalancedTaskAssignor.ProcessTasks`: the tasks placed on one process and its members."""

    process_id: str
    member_ids: list[str] = field(default_factory=list)
    """Kept in member-id order (a TreeSet in Kafka)."""
    stateful_active: set[TaskId] = field(default_factory=set)
    stateless_active: set[TaskId] = field(default_factory=set)
    standby: set[TaskId] = field(default_factory=set)
    current_owner: dict[TaskId, str] = field(default_factory=dict)
    """The member of this process currently holding a task in any role (smallest id on a clash)."""

    def add_member(self, member_id: str, held: Iterable[str]) -> None:
        if member_id not in self.member_ids:
            self.member_ids.append(member_id)
            self.member_ids.sort(key=_java_string_key)
        for task_id in held:
            task = _parse_task(task_id)
            owner = self.current_owner.get(task)
            if owner is None or _java_string_key(member_id) < _java_string_key(owner):
                self.current_owner[task] = member_id

    @property
    def capacity(self) -> int:
        return len(self.member_ids)

    def active_count(self) -> int:
        return len(self.stateful_active) + len(self.stateless_active)

    def assigned_count(self) -> int:
        return self.active_count() + len(self.standby)

    def assigned_load(self) -> float:
        return self.assigned_count() / self.capacity

    def active_load(self) -> float:
        return self.active_count() / self.capacity

    def has_task(self, task: TaskId) -> bool:
        return task in self.stateful_active or task in self.stateless_active or task in self.standby


def _initialize_processes(spec: StreamsGroupSpec) -> list[_ProcessTasks]:
    """The processes in process-id order, each with its members and who holds what."""
    processes: dict[str, _ProcessTasks] = {}
    for member in spec.members:
        process = processes.setdefault(member.process_id, _ProcessTasks(member.process_id))
        process.add_member(member.member_id, (*member.active, *member.standby, *member.warmup))
    return [processes[pid] for pid in sorted(processes, key=_java_string_key)]


def _should_move_a_task(source: _ProcessTasks, destination: _ProcessTasks) -> bool:
    """Only if the destination is less loaded per member and the move narrows the skew without
    tipping it the other way. Python floats are Java doubles, so the comparisons agree."""
    skew = source.assigned_load() - destination.assigned_load()
    if skew <= 0:
        return False
    proposed_destination = (destination.assigned_count() + 1.0) / destination.capacity
    proposed_source = (source.assigned_count() - 1.0) / source.capacity
    proposed_skew = proposed_source - proposed_destination
    if proposed_skew < 0:
        return False
    return proposed_skew < skew


def _balance_over_processes(processes: list[_ProcessTasks], tasks_of: Callable[[_ProcessTasks], set[TaskId]]) -> None:
    """Every ordered (source, destination) pair, repeated until a full sweep moves nothing; the
    source's tasks are offered in TaskId order."""
    keep_balancing = True
    while keep_balancing:
        keep_balancing = False
        for source in processes:
            for destination in processes:
                if source is destination or not _should_move_a_task(source, destination):
                    continue
                source_tasks = tasks_of(source)
                destination_tasks = tasks_of(destination)
                # Only the task just offered leaves the source, so a sorted snapshot walks exactly
                # what Java's TreeSet iterator (with remove) walks.
                for task in sorted(source_tasks, key=_task_order):
                    if not _should_move_a_task(source, destination):
                        break
                    if not destination.has_task(task):
                        source_tasks.remove(task)
                        destination_tasks.add(task)
                        keep_balancing = True


def _assign_stateful_active(processes: list[_ProcessTasks], stateful: list[TaskId]) -> None:
    for index, task in enumerate(stateful):
        processes[index % len(processes)].stateful_active.add(task)
    _balance_over_processes(processes, lambda process: process.stateful_active)


class _LoadQueue:
    """A `PriorityQueue` of processes by (load, process id), loads taken when offered."""

    def __init__(self, load: Callable[[_ProcessTasks], float], processes: Iterable[_ProcessTasks]):
        self._load = load
        self._heap: list[tuple[float, bytes, int, _ProcessTasks]] = []
        self._offers = 0
        for process in processes:
            self.offer(process)

    def offer(self, process: _ProcessTasks) -> None:
        self._offers += 1
        heapq.heappush(self._heap, (self._load(process), _java_string_key(process.process_id), self._offers, process))

    def poll(self) -> _ProcessTasks | None:
        return heapq.heappop(self._heap)[3] if self._heap else None


def _poll_least_loaded_without(queue: _LoadQueue, task: TaskId) -> _ProcessTasks | None:
    skipped: list[_ProcessTasks] = []
    found = None
    while (candidate := queue.poll()) is not None:
        if not candidate.has_task(task):
            found = candidate
            break
        skipped.append(candidate)
    for process in skipped:
        queue.offer(process)
    return found


def _assign_standbys(processes: list[_ProcessTasks], stateful: list[TaskId], replicas: int) -> None:
    queue = _LoadQueue(_ProcessTasks.assigned_load, processes)
    for task in stateful:
        for _ in range(replicas):
            process = _poll_least_loaded_without(queue, task)
            if process is None:
                # Fewer processes than copies: Kafka logs the shortfall and goes on.
                break
            process.standby.add(task)
            queue.offer(process)
    _balance_over_processes(processes, lambda process: process.standby)


def _assign_stateless_active(processes: list[_ProcessTasks], stateless: list[TaskId]) -> None:
    queue = _LoadQueue(_ProcessTasks.active_load, processes)
    for task in stateless:
        process = queue.poll()
        assert process is not None
        process.stateless_active.add(task)
        queue.offer(process)


def _place(task: TaskId, member: str, counts: dict[str, int], placed: dict[str, set[TaskId]]) -> None:
    placed[member].add(task)
    counts[member] += 1


def _distribute_round(
    process: _ProcessTasks,
    tasks: set[TaskId],
    owners: dict[TaskId, str],
    counts: dict[str, int],
    placed: dict[str, set[TaskId]],
) -> None:
    """One round of the fan-out: members end at `level` (tasks so far + this round, per member) or
    one above. Owners below the level keep their tasks; members below the level take the rest in
    turn (member-id order); the few left go to members at the level, the owner first."""
    if not tasks:
        return
    level = (sum(counts.values()) + len(tasks)) // process.capacity

    unassigned: list[TaskId] = []
    skipped_owner: dict[TaskId, str] = {}
    for task in sorted(tasks, key=_task_order):
        owner = owners.get(task)
        if owner is not None and counts[owner] < level:
            _place(task, owner, counts, placed)
        else:
            unassigned.append(task)
            if owner is not None:
                skipped_owner[task] = owner

    to_fill = [m for m in process.member_ids if counts[m] < level]
    next_task = 0
    while to_fill and next_task < len(unassigned):
        member = to_fill.pop(0)
        _place(unassigned[next_task], member, counts, placed)
        next_task += 1
        if counts[member] < level:
            to_fill.append(member)

    at_level = [m for m in process.member_ids if counts[m] == level]
    without_owner_at_level: list[TaskId] = []
    for task in unassigned[next_task:]:
        owner = skipped_owner.get(task)
        if owner is not None and owner in at_level:
            at_level.remove(owner)
            _place(task, owner, counts, placed)
        else:
            without_owner_at_level.append(task)
    for task in without_owner_at_level:
        # Kafka's iterator().next() throws on an empty set; the earlier levelling rounds rule it out.
        _place(task, at_level.pop(0), counts, placed)


def _distribute_over_members(process: _ProcessTasks) -> dict[str, MemberTasks]:
    counts = dict.fromkeys(process.member_ids, 0)
    active: dict[str, set[TaskId]] = {m: set() for m in process.member_ids}
    standby: dict[str, set[TaskId]] = {m: set() for m in process.member_ids}
    _distribute_round(process, process.stateful_active, process.current_owner, counts, active)
    _distribute_round(process, process.standby, process.current_owner, counts, standby)
    # Stateless tasks have no state to keep close: no owners in their round.
    _distribute_round(process, process.stateless_active, {}, counts, active)
    return {
        m: MemberTasks(
            active=[_task_text(t) for t in sorted(active[m], key=_task_order)],
            standby=[_task_text(t) for t in sorted(standby[m], key=_task_order)],
        )
        for m in process.member_ids
    }


def balanced_assign(spec: StreamsGroupSpec) -> dict[str, MemberTasks]:
    """Kafka's `BalancedTaskAssignor.assign`: every member id maps to its tasks (maybe none)."""
    stateful: list[TaskId] = []
    stateless: list[TaskId] = []
    for subtopology in spec.subtopologies:
        tasks = stateful if subtopology.stateful else stateless
        tasks.extend((subtopology.id, partition) for partition in range(subtopology.partitions))
    stateful.sort(key=_task_order)
    stateless.sort(key=_task_order)

    processes = _initialize_processes(spec)
    if not processes:
        if stateful or stateless:
            raise ValueError("No process available to assign active tasks.")
        return {}

    _assign_stateful_active(processes, stateful)
    if spec.num_standby_replicas > 0:
        _assign_standbys(processes, stateful, spec.num_standby_replicas)
    _assign_stateless_active(processes, stateless)

    assignment: dict[str, MemberTasks] = {}
    for process in processes:
        assignment.update(_distribute_over_members(process))
    return assignment
