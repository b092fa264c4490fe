"""What a KIP-1071 streams-group task assignor is given: the group spec, built from a problem.

Kafka's broker-side assignors (`StickyTaskAssignor`, the proposed `BalancedTaskAssignor`) see a
streams group as members (one per stream thread), each with its process id, rack, client tags,
its current assignment (active, standby and warm-up tasks; Kafka 4.4 passes the member's current
assignment, 4.1 to 4.3 its target assignment: the same history here) and the task offsets it reports;
a topology describer (subtopology ids, partitions, statefulness); and two configs (standby count,
`rack.aware.assignment.tags`). This module holds that input as plain data (`StreamsGroupSpec`) and
builds it from a project problem the way the golden cases were fed to Kafka
(`../shared/kafka-parity/streams-group/README.md`, "Mapping a project Streams problem"):

* process id `UUID.nameUUIDFromBytes("process:" + client)`; member id of thread t
  `Uuid(UUID.nameUUIDFromBytes("member:" + client + ":" + t))` unless the client lists its members;
* members in the problem's client order, threads in order (Kafka puts them in a HashMap);
* a client-level history is dealt to its threads round-robin: previous actives sorted by
  (subtopology, partition), then previous standbys the same way, continuing the rotation;
* offsets: each stateful task a client has state for (its standbys and the keys of `lags`, not its
  previous actives) is reported as `max(0, changelog_end_offset - lag)` with end offset
  `changelog_end_offset`, by the member holding it as a standby or warm-up, else by thread 0;
  a client that lists its members' own lags reports those, -2 and -3 included (`SPECIAL_OFFSETS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Kafka's ids are built in the model; re-exported here beside the spec that uses them.
from optimizer.model.ids import kafka_uuid_text, member_id_of, name_uuid_bytes, process_id_of, task_key  # noqa: F401
from optimizer.model.streams import Client, StreamsProblem, Task

SPECIAL_OFFSETS = (-2, -3)
"""The offsets below 0 a streams-group member reports: `Task.LATEST_OFFSET` (a running active task)
and `UNKNOWN_OFFSET_SUM`. Kafka 4.4's sticky assignor ranks standby candidates by the offset as
reported, so these rank below 0; a member's lag of `changelog_end_offset + 2` (`+ 3`) stands for
them (as the importer and the service write them), any other lag past the end offset for 0."""


@dataclass(frozen=True)
class Subtopology:
    """One subtopology as the topology describer reports it."""

    id: str
    """The subtopology number as a decimal string (Kafka's subtopology ids are strings)."""
    partitions: int
    """`maxNumInputPartitions`: the largest partition of its tasks, plus one."""
    stateful: bool


@dataclass(frozen=True)
class GroupMember:
    """One member (stream thread) of a streams group, with its current assignment (the target
    assignment before Kafka 4.4)."""

    member_id: str
    process_id: str
    client: str
    """The project's client id the member belongs to."""
    thread: int
    rack: str | None
    client_tags: Mapping[str, str]
    active: tuple[str, ...]
    standby: tuple[str, ...]
    warmup: tuple[str, ...]
    task_offsets: Mapping[str, int]
    """Task id -> offset sum the member reports (stateful tasks it has state for)."""
    task_end_offsets: Mapping[str, int]


@dataclass(frozen=True)
class StreamsGroupSpec:
    """Everything a streams-group task assignor reads."""

    num_standby_replicas: int
    rack_aware_assignment_tags: tuple[str, ...]
    subtopologies: tuple[Subtopology, ...]
    """In Java `String` order of their ids, as Kafka's TreeMap keeps them ("10" before "2")."""
    members: tuple[GroupMember, ...]
    """In the order they were put into Kafka's member HashMap."""


@dataclass
class MemberTasks:
    """What an assignor gives one member. Task ids are `<subtopology>_<partition>`."""

    active: list[str] = field(default_factory=list)
    standby: list[str] = field(default_factory=list)
    warmup: list[str] = field(default_factory=list)

def java_string_order(texts: Sequence[str]) -> list[str]:
    """`String.compareTo` order (UTF-16 code units)."""
    return sorted(texts, key=lambda text: text.encode("utf-16-be"))


def spec_from_golden(data: Mapping[str, Any]) -> StreamsGroupSpec:
    """The spec recorded in a golden case's `streams_input` (what Kafka was given)."""
    members = tuple(
        GroupMember(
            member_id=m["member_id"],
            process_id=m["process_id"],
            client=m["client"],
            thread=m["thread"],
            rack=m.get("rack"),
            client_tags=dict(m.get("client_tags") or {}),
            active=tuple(m.get("active") or ()),
            standby=tuple(m.get("standby") or ()),
            warmup=tuple(m.get("warmup") or ()),
            task_offsets=dict(m.get("task_offsets") or {}),
            task_end_offsets=dict(m.get("task_end_offsets") or {}),
        )
        for m in data["members"]
    )
    subtopologies = tuple(
        Subtopology(id=str(s["id"]), partitions=int(s["partitions"]), stateful=bool(s["stateful"]))
        for s in data["subtopologies"]
    )
    by_id = {s.id: s for s in subtopologies}
    return StreamsGroupSpec(
        num_standby_replicas=int(data["num_standby_replicas"]),
        rack_aware_assignment_tags=tuple(data.get("rack_aware_assignment_tags") or ()),
        subtopologies=tuple(by_id[i] for i in java_string_order(list(by_id))),
        members=members,
    )


def deal_round_robin(active: Sequence[str], standby: Sequence[str], threads: int) -> list[tuple[list[str], list[str]]]:
    """A client-level history spread over `threads` members: actives sorted by (subtopology,
    partition) dealt thread 0, 1, ..., then standbys (those not also active) the same way,
    continuing the rotation."""
    dealt: list[tuple[list[str], list[str]]] = [([], []) for _ in range(threads)]
    turn = 0
    for task in sorted(active, key=task_key):
        dealt[turn % threads][0].append(task)
        turn += 1
    held = set(active)
    for task in sorted(standby, key=task_key):
        if task in held:
            continue
        dealt[turn % threads][1].append(task)
        turn += 1
    return dealt


def group_spec(problem: StreamsProblem) -> StreamsGroupSpec:
    """The streams group Kafka's broker would see for `problem` (the module docstring's mapping)."""
    tasks = problem.task_by_id
    subtopologies: dict[str, list[Task]] = {}
    for task in problem.tasks:
        subtopologies.setdefault(str(task.subtopology), []).append(task)
    members = []
    for client in problem.clients:
        members += _members_of(client, tasks)
    return StreamsGroupSpec(
        num_standby_replicas=problem.config.num_standby_replicas,
        rack_aware_assignment_tags=tuple(problem.config.rack_aware_assignment_tags),
        subtopologies=tuple(
            Subtopology(
                id=ident,
                partitions=max(t.partition for t in subtopologies[ident]) + 1,
                # TopologyMetadata.isStateful: the subtopology has a changelog topic (stores that log)
                stateful=any(t.stateful and bool(t.changelog_partitions) for t in subtopologies[ident]),
            )
            for ident in java_string_order(list(subtopologies))
        ),
        members=tuple(members),
    )


def _members_of(client: Client, tasks: Mapping[str, Task]) -> list[GroupMember]:
    ids = client.member_ids
    if client.members:
        held = [(list(m.previous_active), list(m.previous_standby), list(m.previous_warmup)) for m in client.members]
    else:
        held = [(active, standby, []) for active, standby in deal_round_robin(client.previous_active, client.previous_standby, client.threads)]
    # Offsets for the stateful tasks the client has state for, except its previous actives,
    # reported by the member holding the task as a standby or warm-up, else by thread 0.
    active = set(client.previous_active)
    reporter: dict[str, int] = {}
    for thread, (_, standby, warmup) in enumerate(held):
        for task in standby + warmup:
            reporter.setdefault(task, thread)
    offsets: list[dict[str, int]] = [{} for _ in held]
    ends: list[dict[str, int]] = [{} for _ in held]
    if any(m.lags is not None for m in client.members):  # each member's own report, as the coordinator holds it
        for thread, member in enumerate(client.members):
            for task_id, lag in (member.lags or {}).items():
                known = tasks.get(task_id)
                if known is None or not known.stateful:
                    continue
                end = known.changelog_end_offset or 0
                offset = end - lag  # a lag of end + 2 or end + 3 is what the member reported as -2 or -3
                offsets[thread][task_id] = offset if offset in SPECIAL_OFFSETS else max(0, offset)
                ends[thread][task_id] = end
        return _group_members(client, ids, held, offsets, ends)
    for task_id in list(dict.fromkeys([*client.previous_standby, *client.lags])):
        known = tasks.get(task_id)
        if known is None or not known.stateful or task_id in active:
            continue
        end = known.changelog_end_offset or 0
        thread = reporter.get(task_id, 0)
        offsets[thread][task_id] = max(0, end - client.lags.get(task_id, 0))
        ends[thread][task_id] = end
    return _group_members(client, ids, held, offsets, ends)


def _group_members(
    client: Client, ids: Sequence[str], held: Sequence[tuple[list[str], list[str], list[str]]],
    offsets: Sequence[dict[str, int]], ends: Sequence[dict[str, int]],
) -> list[GroupMember]:  # fmt: skip
    process = client.kafka_process_id
    return [
        GroupMember(
            member_id=ids[thread],
            process_id=process,
            client=client.id,
            thread=thread,
            rack=client.rack,
            client_tags=dict(client.tags),
            active=tuple(a),
            standby=tuple(s),
            warmup=tuple(w),
            task_offsets=offsets[thread],
            task_end_offsets=ends[thread],
        )
        for thread, (a, s, w) in enumerate(held)
    ]
