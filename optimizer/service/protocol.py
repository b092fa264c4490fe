"""The assignment service's wire contract (docs/service-protocol.md): a request's JSON to the
project's problem, and a solution to the answer's `assignment`.

`parse_request(data)` reads the envelope and Kafka's inputs by kind, and maps them to a
`StreamsProblem` or `ConsumerProblem` under the config of the plug point's own default assignor, so
that `solve(problem, solver="kafka")` is the answer that assignor gives on the same inputs:

* `streams_task_assignor` (KIP-924, classic Kafka Streams): `task.assignor.class` KIP-924's
  `StickyTaskAssignor` (Streams cannot fall back from a custom assignor to its internal
  high-availability one); one client per process id; Kafka's lags (`lagFor`) become the model's
  reported lags and the tasks' changelog end offsets (`_client_lags`, `_end_offset_sums`);
* `consumer_group` (KIP-848): `group.protocol: consumer`, `group.remote.assignor: uniform` (the
  broker's default); topic ids stand for topic names and are the topics' `topic_id`s (Kafka's
  assignors break ties between topics by them); each member's target assignment is its owned
  partitions;
* `streams_group` (KIP-1071): `group.protocol: streams`, `streams.assignor.name: sticky`, mapped by
  the importer's own mapping of a described streams group (`optimizer.sources.kafka_streams`);
* `classic_consumer`: `partition.assignment.strategy` `cooperative-sticky` or `range`;
* `problem`: a problem in the project's format, as it is.

Malformed requests raise `RequestError` naming every problem found, each as "where: what".
`answer_assignment(request, solution)` gives the answer's `assignment` by kind, and
`request_to_problem_data(request)` the problem as a problem file's data.

Orders. Where Kafka's order of a list decides its assignor's ties, the order given is kept: a
consumer group's members (they enter Kafka's member HashMap in that order), each classic member's
subscriptions and owned partitions, each KIP-848 member's subscribed topics and target assignment,
and a streams group's members (`_kafka_member_order`). Every other list is sorted, so a request
with those lists in another order maps to an equal problem.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from heapq import heappop, heappush
from itertools import pairwise
from typing import Annotated, Any, Final, Literal, TypeVar

from pydantic import BaseModel, Field, Strict, TypeAdapter, ValidationError

from optimizer.assignors.java import java_hash_map_order, java_string_hash, kafka_client_order
from optimizer.errors import InvalidInputError
from optimizer.model.base import FrozenModel
from optimizer.model.ids import (
    INT32_MAX,
    INT64_MAX,
    Name,
    ProcessId,
    StrictBool,
    TaskId,
    TopicName,
    described,
    kafka_uuid_bytes,
    parse_task_id,
    partition_key,
    shown,
    task_key,
)
from optimizer.model.issues import Issue, issues_from_validation_error
from optimizer.model.limits import MAX_CLIENTS, MAX_MEMBERS, MAX_PARTITIONS, MAX_TASKS, MAX_THREADS
from optimizer.model.problem import Problem, problem_from_data, problem_to_data, solution_to_data
from optimizer.model.releases import KafkaVersion
from optimizer.model.solution import ClientAssignment, MemberAssignment, Solution
from optimizer.model.streams import Client, RackAwareStrategy, StreamsProblem, TaskAssignor
from optimizer.model.validation import unique_by
from optimizer.sources.kafka_streams import map_streams_application

Kind = Literal["streams_task_assignor", "consumer_group", "streams_group", "classic_consumer", "problem"]
KINDS: Final[tuple[Kind, ...]] = ("streams_task_assignor", "consumer_group", "streams_group", "classic_consumer", "problem")
"""The request kinds, one per plug point, and the project's own format."""
PROTOCOL_VERSION: Final = 1

LATEST_OFFSET: Final = -2
"""`Task.LATEST_OFFSET`: the lag (and offset sum) of a running active task."""
UNKNOWN_OFFSET_SUM: Final = -3
"""`SubscriptionInfo.UNKNOWN_OFFSET_SUM`: an offset sum Streams could not compute, kept by Kafka
as the lag (below any acceptable recovery lag: caught up)."""
NO_METADATA_TOPIC: Final = "kao.subscribed-topic-without-metadata"
"""The topic a member subscribes to when Kafka resolved none of its subscribed topic names (see
`_subscriptions_of_ids`): a topic without metadata, as Kafka's member has one."""
STREAMS_GROUP_TOPICS: Final = ("subtopology-{id}", "subtopology-{id}-changelog")
"""A streams group's topology describer gives subtopologies, not topics: a subtopology's tasks read
partition p of these made-up topics (source; changelog when stateful)."""


MAX_PROBLEM_LENGTH: Final = 500
"""A problem's text is cut past this many characters (a value quoted whole can be long)."""


class RequestError(Exception):
    """A request that cannot be read or mapped: `problems` names each one, "where: what" (at most
    MAX_PROBLEM_LENGTH characters each); the message is one line."""

    def __init__(self, message: str, problems: Sequence[str]):
        self.problems = [_clipped(problem) for problem in problems]
        super().__init__(message)


def _clipped(text: str) -> str:
    return text if len(text) <= MAX_PROBLEM_LENGTH else f"{text[: MAX_PROBLEM_LENGTH - 30]}... ({len(text):,} characters)"


@dataclass(frozen=True)
class Request:
    """A request, read: the envelope, the problem Kafka's inputs map to, and what the answer needs."""

    version: int
    kind: Kind
    group: str | None
    """The group id or application.id, when the plug-in knows it."""
    deadline_ms: int | None
    """How long the caller waits (from when the request was read); None: the service's default."""
    problem: Problem
    """Kafka's inputs as the project's problem (kind `problem`: the problem sent)."""
    clients: tuple[str, ...] = ()
    """`streams_task_assignor`: the clients' process ids (the problem's client ids), every one
    answered."""
    members: tuple[str, ...] = ()
    """`consumer_group`, `classic_consumer`, `streams_group`: the member ids in the request's order
    (a consumer problem's member ids; a streams group's members of its clients), every one
    answered."""


# ---- the requests' shapes: Kafka's inputs as the plug-ins write them (docs/service-protocol.md) ----

Int32 = Annotated[int, Strict(), Field(ge=0, le=INT32_MAX)]
Count = Annotated[int, Strict(), Field(ge=1, le=MAX_PARTITIONS)]
Offset = Annotated[int, Strict(), Field(ge=0, le=INT64_MAX)]
ReportedOffset = Annotated[int, Strict(), Field(ge=UNKNOWN_OFFSET_SUM, le=INT64_MAX)]
"""An offset or lag as Kafka reports it: 0 or more, or -2 (`LATEST_OFFSET`), -3 (`UNKNOWN_OFFSET_SUM`)."""


class _TaskPartition(FrozenModel):
    topic: TopicName
    partition: Int32
    racks: tuple[Name, ...] | None
    """`TaskTopicPartition.rackIds()`: null when Kafka has none."""


class _TaskInfo(FrozenModel):
    id: TaskId
    stateful: StrictBool
    source: tuple[_TaskPartition, ...] = Field(min_length=1)
    changelog: tuple[_TaskPartition, ...]


class _StreamsConfigs(FrozenModel):
    num_standby_replicas: Int32
    acceptable_recovery_lag: Offset
    max_warmup_replicas: Annotated[int, Strict(), Field(ge=1, le=INT32_MAX)]
    probing_rebalance_interval_ms: Annotated[int, Strict(), Field(ge=60_000, le=INT64_MAX)]
    rack_aware_assignment_tags: tuple[Name, ...]
    rack_aware_assignment_strategy: RackAwareStrategy
    rack_aware_assignment_traffic_cost: Int32 | None
    rack_aware_assignment_non_overlap_cost: Int32 | None


class _StreamsClient(FrozenModel):
    process_id: ProcessId
    rack: Name | None
    threads: Annotated[int, Strict(), Field(ge=1, le=MAX_THREADS)]
    consumers: tuple[Name, ...]
    tags: dict[Name, Name]
    previous_active: tuple[TaskId, ...]
    previous_standby: tuple[TaskId, ...]
    lags: dict[TaskId, ReportedOffset]


class _ApplicationState(FrozenModel):
    """`streams_task_assignor`: KIP-924's ApplicationState."""

    configs: _StreamsConfigs
    tasks: Annotated[tuple[_TaskInfo, ...], unique_by("id", "task")] = Field(max_length=MAX_TASKS)
    clients: Annotated[tuple[_StreamsClient, ...], unique_by("process_id", "client")] = Field(min_length=1, max_length=MAX_CLIENTS)


class _GroupTopic(FrozenModel):
    id: TopicName
    partitions: Count
    racks: tuple[tuple[Name, ...], ...]


class _GroupMember(FrozenModel):
    id: Name
    instance_id: Name | None
    rack: Name | None
    subscribed: tuple[TopicName, ...]
    assigned: tuple[tuple[TopicName, tuple[Int32, ...]], ...]


class _GroupSpec(FrozenModel):
    """`consumer_group`: KIP-848's GroupSpec and SubscribedTopicDescriber."""

    subscription_type: Literal["homogeneous", "heterogeneous"]
    topics: Annotated[tuple[_GroupTopic, ...], unique_by("id", "topic")]
    members: Annotated[tuple[_GroupMember, ...], unique_by("id", "member")] = Field(min_length=1, max_length=MAX_MEMBERS)


class _Subtopology(FrozenModel):
    id: Name
    partitions: Annotated[int, Strict(), Field(ge=1, le=MAX_TASKS)]
    stateful: StrictBool


class _StreamsGroupMember(FrozenModel):
    member_id: Name
    process_id: ProcessId
    instance_id: Name | None
    rack: Name | None
    client_tags: dict[Name, Name]
    active: tuple[TaskId, ...]
    standby: tuple[TaskId, ...]
    warmup: tuple[TaskId, ...]
    task_offsets: dict[TaskId, ReportedOffset]
    task_end_offsets: dict[TaskId, Offset]


class _StreamsGroupSpec(FrozenModel):
    """`streams_group`: KIP-1071's GroupSpec and TopologyDescriber."""

    num_standby_replicas: Int32
    rack_aware_assignment_tags: tuple[Name, ...]
    subtopologies: Annotated[tuple[_Subtopology, ...], unique_by("id", "subtopology")] = Field(max_length=MAX_TASKS)
    members: Annotated[tuple[_StreamsGroupMember, ...], unique_by("member_id", "member")] = Field(min_length=1, max_length=MAX_MEMBERS)


class _ClassicTopic(FrozenModel):
    name: TopicName
    partitions: Count
    replica_racks: tuple[tuple[Name, ...], ...]
    leader_racks: tuple[Name | None, ...]


class _ClassicMember(FrozenModel):
    id: Name
    instance_id: Name | None
    rack: Name | None
    subscriptions: tuple[TopicName, ...]
    owned: tuple[tuple[TopicName, Int32], ...]
    generation: Annotated[int, Strict(), Field(ge=-1, le=INT32_MAX)] | None


class _GroupSubscription(FrozenModel):
    """`classic_consumer`: the leader's Cluster and GroupSubscription."""

    rebalance_protocol: Literal["cooperative", "eager"]
    topics: Annotated[tuple[_ClassicTopic, ...], unique_by("name", "topic")]
    members: Annotated[tuple[_ClassicMember, ...], unique_by("id", "member")] = Field(min_length=1, max_length=MAX_MEMBERS)


_PAYLOADS: dict[str, type[FrozenModel]] = {
    "streams_task_assignor": _ApplicationState,
    "consumer_group": _GroupSpec,
    "streams_group": _StreamsGroupSpec,
    "classic_consumer": _GroupSubscription,
}
_ENVELOPE_KEYS = ("version", "kind", "group", "deadline_ms", "kafka_version", "kafka", "problem")
_DEADLINE: TypeAdapter[int] = TypeAdapter(Annotated[int, Strict(), Field(ge=1, le=INT64_MAX)])
_GROUP: TypeAdapter[str] = TypeAdapter(Name)
_VERSION: TypeAdapter[str] = TypeAdapter(KafkaVersion)

M = TypeVar("M", bound=BaseModel)


# ---- parse_request ----


def parse_request(data: object) -> Request:
    """`data` (a parsed JSON body) as a Request; RequestError naming every problem otherwise."""
    if not isinstance(data, dict):
        raise RequestError("the request is not a JSON object", [f"request: expected an object, got {described(data)}"])
    problems: list[str] = [f"{shown(key)}: unknown field" for key in data if key not in _ENVELOPE_KEYS]
    version = data.get("version")
    if "version" not in data:
        problems.append("version: missing required field (1)")
    elif type(version) is not int or version != PROTOCOL_VERSION:
        problems.append(f"version: this service speaks version {PROTOCOL_VERSION}, got {shown(version)}")
    kind = data.get("kind")
    if "kind" not in data:
        problems.append(f"kind: missing required field ({', '.join(KINDS)})")
    elif kind not in KINDS:
        problems.append(f"kind: unknown kind {shown(kind)}: expected one of {', '.join(KINDS)}")
    group = _checked(_GROUP, data.get("group"), "group", problems)
    deadline_ms = _checked(_DEADLINE, data.get("deadline_ms"), "deadline_ms", problems)
    kafka_version = data.get("kafka_version")
    if kafka_version is not None and not isinstance(kafka_version, str):
        problems.append(f'kafka_version: a Kafka release as text, such as "4.4.0", got {described(kafka_version)}')
        kafka_version = None
    kafka_version = _checked(_VERSION, kafka_version, "kafka_version", problems)
    if kind not in KINDS:
        raise RequestError(_summary(None, problems), problems)
    problems += _one_payload(kind, data)
    if kind == "problem" and kafka_version is not None:
        problems.append("kafka_version: a problem says its release in its own config (kafka.version)")
    name = group if group is not None else kind
    payload = data.get("problem" if kind == "problem" else "kafka")
    mapped: tuple[Problem, tuple[str, ...], tuple[str, ...]] | None = None
    if kind == "problem":
        if isinstance(payload, dict):
            mapped = _own_problem(payload, name, problems)
    elif "kafka" in data:
        mapped = _kafka_problem(kind, payload, name, kafka_version, problems)
    if problems or mapped is None:
        raise RequestError(_summary(kind, problems), problems)
    problem, clients, members = mapped
    assert isinstance(version, int)
    return Request(version, kind, group, deadline_ms, problem, clients, members)


def _checked(adapter: TypeAdapter[Any], value: object, where: str, problems: list[str]) -> Any:
    """An optional envelope field: None when absent or null, else its checked value (or a problem)."""
    if value is None:
        return None
    try:
        return adapter.validate_python(value)
    except ValidationError as error:
        problems += [f"{where}: {issue.message}" for issue in issues_from_validation_error(error, value)]
        return None


def _one_payload(kind: Kind, data: Mapping[str, Any]) -> list[str]:
    wanted, other = ("problem", "kafka") if kind == "problem" else ("kafka", "problem")
    problems = []
    if wanted not in data:
        problems.append(f"{wanted}: missing required field (a {kind} request carries {'its problem' if kind == 'problem' else 'Kafka inputs'})")
    elif not isinstance(data[wanted], dict):
        problems.append(f"{wanted}: expected an object, got {described(data[wanted])}")
    if other in data:
        problems.append(f"{other}: not part of a {kind} request (it carries '{wanted}' only)")
    return problems


def _summary(kind: str | None, problems: Sequence[str]) -> str:
    count = len(problems)
    return f"invalid {kind + ' ' if kind else ''}request: {count} problem{'s' if count != 1 else ''}"


def _located(issues: Iterable[Issue], prefix: str) -> list[str]:
    """Issues of a part of the request as "where: what", `prefix` naming the part."""
    found = []
    for issue in issues:
        location = issue.location
        where = prefix if not location else f"{prefix}{'' if location.startswith('[') else '.'}{location}"
        found.append(f"{where}: {issue.message}")
    return list(dict.fromkeys(found))


def _own_problem(payload: dict[str, Any], name: str, problems: list[str]) -> tuple[Problem, tuple[str, ...], tuple[str, ...]] | None:
    try:
        problem = problem_from_data(payload, "problem")
    except InvalidInputError as error:
        problems += _located(error.issues, "problem")
        return None
    if problem.name is None:
        problem = problem.model_copy(update={"name": name})
    return problem, (), ()


def _kafka_problem(
    kind: Kind, payload: object, name: str, kafka_version: str | None, problems: list[str]
) -> tuple[Problem, tuple[str, ...], tuple[str, ...]] | None:
    """Kafka's inputs of `kind` checked (every problem into `problems`) and mapped to a problem."""
    model = _PAYLOADS[kind]
    if not isinstance(payload, dict):
        return None
    try:
        spec = model.model_validate(payload)
    except ValidationError as error:
        problems += _located(issues_from_validation_error(error, payload, model), "kafka")
        spec = None
    # The checks across fields run over the parts that are valid on their own, so that one pass
    # names every problem.
    checks = {
        "streams_task_assignor": _application_state_problems,
        "consumer_group": _group_spec_problems,
        "streams_group": _streams_group_problems,
        "classic_consumer": _group_subscription_problems,
    }
    problems += [f"kafka.{problem}" for problem in checks[kind](payload)]
    if spec is None or problems:
        return None
    clients: tuple[str, ...] = ()
    members: tuple[str, ...] = ()
    if isinstance(spec, _ApplicationState):
        data, clients = _application_state_data(spec), tuple(c.process_id for c in spec.clients)
    elif isinstance(spec, _GroupSpec):
        data, members = _group_spec_data(spec), tuple(m.id for m in spec.members)
    elif isinstance(spec, _StreamsGroupSpec):
        found = _streams_group_data(spec, name, problems)
        if found is None:
            return None
        data, members = found, tuple(m.member_id for m in spec.members)
    else:
        assert isinstance(spec, _GroupSubscription)
        data, members = _group_subscription_data(spec), tuple(m.id for m in spec.members)
    data["name"] = name
    if kafka_version is not None:
        data["config"]["kafka.version"] = kafka_version
    try:
        problem = problem_from_data(data, "kafka")
    except InvalidInputError as error:
        problems += _located(error.issues, "kafka (as the project's problem)")
        return None
    return problem, clients, members


def _valid(model: type[M], items: object) -> list[tuple[int, M]]:
    """The items of a list that are valid on their own, with their places."""
    found = []
    for index, item in enumerate(items if isinstance(items, list) else []):
        try:
            found.append((index, model.model_validate(item)))
        except ValidationError:
            continue
    return found


def _valid_one(model: type[M], value: object) -> M | None:
    try:
        return model.model_validate(value)
    except ValidationError:
        return None


# ---- streams_task_assignor: KIP-924's ApplicationState ----


def _application_state_problems(payload: Mapping[str, Any]) -> list[str]:
    tasks = dict((task.id, task) for _, task in _valid(_TaskInfo, payload.get("tasks")))
    configs = _valid_one(_StreamsConfigs, payload.get("configs"))
    tags = configs.rack_aware_assignment_tags if configs is not None else ()
    problems = []
    known = _ids_given(payload.get("tasks"), "id")
    # A task previously active on several clients (a zombie) is Kafka's input as it comes: read.
    for index, client in _valid(_StreamsClient, payload.get("clients")):
        where = f"clients[{index}]"
        for field in ("previous_active", "previous_standby"):
            problems += _unknown_tasks(getattr(client, field), known, f"{where}.{field}")
            problems += _repeated(getattr(client, field), f"{where}.{field}")
        for position, task in enumerate(client.previous_standby):
            if task in client.previous_active:
                problems.append(f"{where}.previous_standby[{position}]: task {task} is also in previous_active: a client holds one copy of a task")
        for task, lag in client.lags.items():
            if task not in known:
                problems.append(f"{where}.lags.{task}: task {task} is not in kafka.tasks")
            elif task in tasks and not tasks[task].stateful:
                problems.append(f"{where}.lags.{task}: task {task} is stateless: Kafka has lags for stateful tasks only")
            if lag == -1:
                problems.append(f"{where}.lags.{task}: -1 is not a lag: Kafka's are 0 or more, -2 (Task.LATEST_OFFSET) or -3 (UNKNOWN_OFFSET_SUM)")
        missing = [tag for tag in tags if tag not in client.tags]
        if missing:
            problems.append(f"{where}.tags: lacks {', '.join(map(shown, missing))}, named in configs.rack_aware_assignment_tags")
    return problems


def _ids_given(items: object, field: str) -> set[str]:
    """The ids the items of a list give (valid or not): what references to them may name."""
    if not isinstance(items, list):
        return set()
    return {item[field] for item in items if isinstance(item, dict) and isinstance(item.get(field), str)}


def _unknown_tasks(tasks: Iterable[str], known: set[Any], where: str) -> list[str]:
    return [f"{where}[{position}]: task {task} is not in kafka.tasks" for position, task in enumerate(tasks) if task not in known]


def _repeated(values: Sequence[Any], where: str) -> list[str]:
    seen: set[Any] = set()
    found = []
    for position, value in enumerate(values):
        if value in seen:
            found.append(f"{where}[{position}]: {shown(value)} is already listed")
        seen.add(value)
    return found


def _racks(racks: Iterable[str] | None) -> list[str]:
    # Kafka's rack ids are sets: their order says nothing.
    return sorted(set(racks or ()))


def _application_state_data(spec: _ApplicationState) -> dict[str, Any]:
    configs = spec.configs
    config: dict[str, Any] = {
        "group.protocol": "classic",
        # The plug point's default: Streams cannot fall back from a custom task.assignor.class to
        # its internal HighAvailabilityTaskAssignor, only to KIP-924's public StickyTaskAssignor.
        "task.assignor.class": str(TaskAssignor.KIP924_STICKY),
        "num.standby.replicas": configs.num_standby_replicas,
        "acceptable.recovery.lag": configs.acceptable_recovery_lag,
        "max.warmup.replicas": configs.max_warmup_replicas,
        "probing.rebalance.interval.ms": configs.probing_rebalance_interval_ms,
        "rack.aware.assignment.strategy": str(configs.rack_aware_assignment_strategy),
        "rack.aware.assignment.tags": list(configs.rack_aware_assignment_tags),
    }
    if configs.rack_aware_assignment_traffic_cost is not None:
        config["rack.aware.assignment.traffic_cost"] = configs.rack_aware_assignment_traffic_cost
    if configs.rack_aware_assignment_non_overlap_cost is not None:
        config["rack.aware.assignment.non_overlap_cost"] = configs.rack_aware_assignment_non_overlap_cost
    ends = _end_offset_sums(spec)
    tasks = []
    for task in sorted(spec.tasks, key=lambda t: task_key(t.id)):
        entry: dict[str, Any] = {"id": task.id, "stateful": task.stateful}
        for field, partitions in (("source_partitions", task.source), ("changelog_partitions", task.changelog)):
            if partitions:
                entry[field] = [
                    {"topic": p.topic, "partition": p.partition, **({"replica_racks": _racks(p.racks)} if p.racks else {})}
                    for p in sorted(partitions, key=lambda p: (p.topic, p.partition))
                ]
        if task.id in ends and task.changelog:
            entry["changelog_end_offset"] = ends[task.id]
        tasks.append(entry)
    by_id = {client.process_id: client for client in spec.clients}
    clients = []
    # Kafka's assignors visit process ids in UUID order (the reproduction too), whatever the order given.
    for process_id in kafka_client_order(by_id):
        client = by_id[process_id]
        entry = {"id": process_id, "threads": client.threads}
        if client.rack is not None:
            entry["rack"] = client.rack
        entry["tags"] = dict(sorted(client.tags.items()))
        entry["previous_active"] = sorted(client.previous_active, key=task_key)
        entry["previous_standby"] = sorted(client.previous_standby, key=task_key)
        entry["lags"] = _client_lags(client)
        clients.append(entry)
    return {"kind": "streams", "description": _DESCRIPTIONS["streams_task_assignor"], "config": config, "tasks": tasks, "clients": clients}


def _end_offset_sums(spec: _ApplicationState) -> dict[str, int]:
    """Each stateful task's changelog end offset sum, where ApplicationState shows it: Kafka's
    `computeTaskLags` gives a client that reported no offset sum for a task (one that held it
    neither as active nor as standby) the whole end offset sum as its lag."""
    ends: dict[str, int] = {}
    for client in spec.clients:
        held = {*client.previous_active, *client.previous_standby}
        for task, lag in client.lags.items():
            if task not in held and lag >= 0:
                ends[task] = max(ends.get(task, 0), lag)
    return ends


def _client_lags(client: _StreamsClient) -> dict[str, int]:
    """`lagFor(task)` as the project's lags (docs/file-formats.md, "Lags"), which are reported
    lags: Kafka's offset sums, of the tasks a client has state for (a lag makes a task one of the
    client's previous standbys unless it was active, as Kafka's `initializePrevTasks` does). So
    only the lags of the client's previous actives and standbys are kept; the others are the end
    offset sum (`_end_offset_sums`), the model's lag of a client without state. Of those kept, a
    lag of 0 or more stays; -2 (`Task.LATEST_OFFSET`, a running active) of a previous active is
    left out, the model's running active, which ranks first as in Kafka; -2 of a standby and -3
    (`UNKNOWN_OFFSET_SUM`, which Kafka keeps as the lag: below any acceptable recovery lag) are 0,
    caught up, as the importer reads them (`kafka_streams._Mapping.lags`), where Kafka would rank
    them just ahead of the clients at lag 0."""
    held = {*client.previous_active, *client.previous_standby}
    lags = {}
    for task in sorted(client.lags, key=task_key):
        lag = client.lags[task]
        if task not in held or (lag == LATEST_OFFSET and task in client.previous_active):
            continue
        lags[task] = max(lag, 0)
    return lags


# ---- consumer_group: KIP-848's GroupSpec ----


def _group_spec_problems(payload: Mapping[str, Any]) -> list[str]:
    counts = {}
    problems = []
    for index, described_topic in _valid(_GroupTopic, payload.get("topics")):
        counts[described_topic.id] = described_topic.partitions
        if len(described_topic.racks) != described_topic.partitions:
            problems.append(
                f"topics[{index}].racks: has {len(described_topic.racks)} entries for {described_topic.partitions} partitions: one list of racks per partition"
            )
    known = _ids_given(payload.get("topics"), "id")
    members = _valid(_GroupMember, payload.get("members"))
    owner: dict[tuple[str, int], str] = {}
    for index, member in members:
        where = f"members[{index}]"
        problems += [f"{where}.subscribed[{p}]: topic {shown(t)} is not in kafka.topics" for p, t in enumerate(member.subscribed) if t not in known]
        problems += _repeated(member.subscribed, f"{where}.subscribed")
        problems += _repeated([topic for topic, _ in member.assigned], f"{where}.assigned")
        for position, (topic, partitions) in enumerate(member.assigned):
            # A topic of the target assignment that no member subscribes to any more is not among the
            # topics: Kafka's assignors drop its partitions, and so does the reproduction.
            count = counts.get(topic)
            for place, partition in enumerate(partitions):
                if count is not None and partition >= count:
                    problems.append(f"{where}.assigned[{position}][1][{place}]: partition {partition} of topic {shown(topic)}, which has {count}")
                elif (topic, partition) in owner:
                    problems.append(
                        f"{where}.assigned[{position}][1][{place}]: partition {partition} of topic {shown(topic)} is also assigned to member "
                        f"{shown(owner[(topic, partition)])}"
                    )
                owner.setdefault((topic, partition), member.id)
    kind = payload.get("subscription_type")
    subscribed = {frozenset(member.subscribed) for _, member in members}
    if kind == "homogeneous" and len(subscribed) > 1:
        problems.append("subscription_type: homogeneous, but the members subscribe to different topics")
    elif kind == "heterogeneous" and isinstance(payload.get("members"), list) and len(payload["members"]) == 1:
        problems.append("subscription_type: heterogeneous, but a group of one member is homogeneous")
    return problems


def _group_spec_data(spec: _GroupSpec) -> dict[str, Any]:
    topics = []
    for topic in sorted(spec.topics, key=lambda t: t.id):
        entry: dict[str, Any] = {"name": topic.id, "partitions": topic.partitions}
        if _is_kafka_uuid(topic.id):  # Kafka's ids, as the plug-in sends them: the reproduction breaks ties by them
            entry["topic_id"] = topic.id
        if any(topic.racks):
            entry["replica_racks"] = [_racks(racks) for racks in topic.racks]
        topics.append(entry)
    subscriptions = _subscriptions_of_ids([m.subscribed for m in spec.members], spec.subscription_type == "homogeneous", {t.id for t in spec.topics})
    members = []
    # Members in the order given: Kafka's member HashMap order, which decides its ties.
    for member, subscribed in zip(spec.members, subscriptions, strict=True):
        entry = {"id": member.id, "subscriptions": subscribed}
        if member.rack is not None:
            entry["rack"] = member.rack
        if member.instance_id is not None:
            entry["group_instance_id"] = member.instance_id
        # The reproduction fills a member's assignment map with topics in the reverse of their
        # first claim (kip848.ServerGroup.previous_assignment, as kip848_case sends them): owned
        # partitions list the topics in the reverse of Kafka's map order, partitions in its order.
        entry["owned_partitions"] = [f"{topic}-{partition}" for topic, partitions in reversed(member.assigned) for partition in partitions]
        members.append(entry)
    config = {"group.protocol": "consumer", "group.remote.assignor": "uniform"}
    return {"kind": "consumer", "description": _DESCRIPTIONS["consumer_group"], "config": config, "topics": topics, "members": members}


def _is_kafka_uuid(text: str) -> bool:
    try:
        kafka_uuid_bytes(text)
    except ValueError:
        return False
    return True


def _subscriptions_of_ids(subscribed: Sequence[Sequence[str]], homogeneous: bool, topics: set[str]) -> list[list[str]]:
    """Each member's subscriptions for the problem, from the topic ids Kafka resolved. Kafka's
    subscription type counts the subscribed topic names, resolved or not, and the problem's model
    derives it the same way from its subscriptions (topics it does not have count, and get no
    partitions): a heterogeneous group whose resolved topics are the same for every member (some
    member subscribes to a topic without metadata), or a member that resolved none, gets a made-up
    topic without metadata in its subscriptions, so that the problem's type is the request's."""
    absent = _topics_without_metadata(topics, 2)
    lists = [list(ids) for ids in subscribed]
    if homogeneous:
        return [ids or [absent[0]] for ids in lists]
    if len({frozenset(ids) for ids in lists}) > 1:
        return [ids or [absent[0]] for ids in lists]
    return [[*ids, absent[0]] if position == 0 else ids or [absent[1]] for position, ids in enumerate(lists)]


def _topics_without_metadata(topics: set[str], count: int) -> list[str]:
    """`count` names of made-up topics that are not among `topics` (NO_METADATA_TOPIC first)."""
    names = (NO_METADATA_TOPIC if n == 0 else f"{NO_METADATA_TOPIC}-{n}" for n in range(len(topics) + count + 1))
    return [name for name in names if name not in topics][:count]


# ---- classic_consumer: the leader's GroupSubscription ----


def _group_subscription_problems(payload: Mapping[str, Any]) -> list[str]:
    problems = []
    for index, topic in _valid(_ClassicTopic, payload.get("topics")):
        for field in ("replica_racks", "leader_racks"):
            if len(getattr(topic, field)) != topic.partitions:
                problems.append(f"topics[{index}].{field}: has {len(getattr(topic, field))} entries for {topic.partitions} partitions: one per partition")
    for index, member in _valid(_ClassicMember, payload.get("members")):
        problems += _repeated(member.subscriptions, f"members[{index}].subscriptions")
        problems += _repeated(member.owned, f"members[{index}].owned")
    # Subscriptions to topics the Cluster lacks, owned partitions of such topics or beyond a topic's
    # count, and partitions owned twice are Kafka's inputs too (a topic deleted, a member back from
    # a pause): the problem keeps them and the reproduction settles them as Kafka does.
    return problems


def _group_subscription_data(spec: _GroupSubscription) -> dict[str, Any]:
    topics = []
    for topic in sorted(spec.topics, key=lambda t: t.name):
        entry: dict[str, Any] = {"name": topic.name, "partitions": topic.partitions}
        if any(topic.replica_racks):
            entry["replica_racks"] = [_racks(racks) for racks in topic.replica_racks]
        if any(rack is not None for rack in topic.leader_racks):
            entry["leader_racks"] = list(topic.leader_racks)
        topics.append(entry)
    [absent] = _topics_without_metadata({t.name for t in spec.topics}, 1)
    members: list[dict[str, Any]] = []
    # Members, their subscriptions and owned partitions in the order given: Kafka's orders, which
    # decide its assignors' ties.
    for member in spec.members:
        # A member without subscriptions gets a topic without metadata: as in Kafka, no partitions.
        entry = {"id": member.id, "subscriptions": list(member.subscriptions) or [absent]}
        if member.rack is not None:
            entry["rack"] = member.rack
        if member.instance_id is not None:  # static members come first in the range and round-robin assignors
            entry["group_instance_id"] = member.instance_id
        entry["owned_partitions"] = [f"{topic}-{partition}" for topic, partition in member.owned]
        if member.generation is not None:
            entry["generation"] = member.generation
        members.append(entry)
    strategy = "cooperative-sticky" if spec.rebalance_protocol == "cooperative" else "range"
    config = {"group.protocol": "classic", "partition.assignment.strategy": strategy}
    return {"kind": "consumer", "description": _DESCRIPTIONS["classic_consumer"], "config": config, "topics": topics, "members": members}


# ---- streams_group: KIP-1071's GroupSpec ----


def _streams_group_problems(payload: Mapping[str, Any]) -> list[str]:
    problems = []
    partitions: dict[str, int] = {}
    for index, subtopology in _valid(_Subtopology, payload.get("subtopologies")):
        try:
            parse_task_id(f"{subtopology.id}_0")
        except ValueError:
            problems.append(
                f"subtopologies[{index}].id: {shown(subtopology.id)} is not a whole number without leading zeros (named topologies are not supported)"
            )
            continue
        partitions[subtopology.id] = subtopology.partitions
    raw = payload.get("subtopologies")
    usable = isinstance(raw, list) and len(partitions) == len(raw)
    # A task active on several members (a zombie, or two members of one process) is read as it
    # comes, as the coordinator's assignor reads it; one member holds one copy of a task.
    for index, member in _valid(_StreamsGroupMember, payload.get("members")):
        held: dict[str, str] = {}
        for task, offset in member.task_offsets.items():
            if offset == -1:
                problems.append(
                    f"members[{index}].task_offsets.{task}: -1 is not an offset: Kafka's are 0 or more, -2 (LATEST_OFFSET) or -3 (UNKNOWN_OFFSET_SUM)"
                )
        for field in ("active", "standby", "warmup"):
            for position, task in enumerate(getattr(member, field)):
                where = f"members[{index}].{field}[{position}]"
                number, partition = task_key(task)
                if usable and partition >= partitions.get(str(number), 0):
                    problems.append(f"{where}: task {task} is not in the topology (kafka.subtopologies)")
                if task in held:
                    problems.append(f"{where}: task {task} is also in this member's {held[task]}: a member holds one copy of a task")
                held.setdefault(task, field)
    return problems


def _streams_group_data(spec: _StreamsGroupSpec, name: str, problems: list[str]) -> dict[str, Any] | None:
    """The problem of a streams group, through the importer's mapping of a described streams group
    (`optimizer.sources.kafka_streams.map_streams_application`): the request is written as
    `kao.jvm.DescribeStreams` describes a group, with made-up topics for the subtopologies
    (`STREAMS_GROUP_TOPICS`), and mapped as an import maps it: one client per process id with its
    members, each member's reported offsets as its own lags (KAFKA-20719), the clients' lags."""
    source, changelog = STREAMS_GROUP_TOPICS
    subtopologies = sorted(spec.subtopologies, key=lambda s: int(s.id))
    # A task's changelog end offset: the highest end offset or offset any member reported for it, so
    # that every offset is a lag of 0 or more behind it and maps back to itself (spec.group_spec).
    ends: dict[str, int] = {}
    for member in spec.members:
        for offsets in (member.task_end_offsets, member.task_offsets):
            for task, offset in offsets.items():
                ends[task] = max(ends.get(task, 0), offset)
    topics: dict[str, Any] = {}
    end_offsets: dict[str, list[int]] = {}
    described_subtopologies = []
    for subtopology in subtopologies:
        no_replicas: list[dict[str, Any]] = [{"replicas": [], "leader": None} for _ in range(subtopology.partitions)]
        topics[source.format(id=subtopology.id)] = {"partitions": no_replicas}
        entry: dict[str, Any] = {"id": subtopology.id, "source_topics": [source.format(id=subtopology.id)], "state_changelog_topics": {}}
        if subtopology.stateful:
            topic = changelog.format(id=subtopology.id)
            topics[topic] = {"partitions": no_replicas}
            end_offsets[topic] = [ends.get(f"{subtopology.id}_{p}", 0) for p in range(subtopology.partitions)]
            entry["state_changelog_topics"] = {topic: {}}
        described_subtopologies.append(entry)
    members = [
        {
            "member_id": member.member_id,
            "process_id": member.process_id,
            "client_id": None,
            "rack": member.rack,
            "client_tags": dict(member.client_tags),
            "assignment": {"active": list(member.active), "standby": list(member.standby), "warmup": list(member.warmup)},
            "task_offsets": dict(member.task_offsets),
        }
        for member in spec.members
    ]
    described = {
        "application_id": name,
        "protocol": "streams",
        "state": "Assigning",
        "assignor": "sticky",
        "brokers": [],
        "topics": topics,
        "end_offsets": end_offsets,
        "subtopologies": described_subtopologies,
        "group_configs": {"streams.num.standby.replicas": {"value": str(spec.num_standby_replicas)}},
        "members": members,
    }
    try:
        document = map_streams_application(described, "assignment-service").document
    except InvalidInputError as error:
        problems += _located(error.issues, "kafka")
        return None
    for task in document["tasks"]:
        if task["id"] not in ends:
            task.pop("changelog_end_offset", None)  # no member reported it: unknown
    config = document["config"]
    config.pop("kafka.version", None)  # the importer's default; the request's when it gives one
    config["rack.aware.assignment.tags"] = list(spec.rack_aware_assignment_tags)
    document["clients"] = _kafka_member_order(document["clients"], [m.member_id for m in spec.members])
    document["description"] = _DESCRIPTIONS["streams_group"]
    return dict(document)


def _kafka_member_order(clients: list[dict[str, Any]], order: Sequence[str]) -> list[dict[str, Any]]:
    """The clients and their members ordered so that the reproduction's member HashMap, filled
    client by client (spec.group_spec), iterates as Kafka's did. The request lists the members in
    Kafka's iteration order: a HashMap walks its buckets in order, each in insertion order, so the
    same capacity filled in that order iterates the same way, and so does any order that keeps each
    bucket's insertion order. Clients are therefore ordered so that of two members in one bucket
    the one listed first comes first (by their first member in the request when that leaves a
    choice), and members within a client as listed. When two buckets want two clients in opposite
    orders, no order of clients keeps both: the client listed first goes first, and Kafka's ties
    among those members may fall otherwise."""
    client_of = {member["id"]: client["id"] for client in clients for member in client["members"]}
    first: dict[str, int] = {}
    for position, member_id in enumerate(order):
        first.setdefault(client_of[member_id], position)
    # The buckets of Kafka's map, from the reproduction's own HashMap: filled in the request's
    # order and in the reverse order, members of one bucket swap places, others do not.
    forward = java_hash_map_order(list(order), java_string_hash)
    backward = java_hash_map_order(list(reversed(order)), java_string_hash)
    place = {member_id: position for position, member_id in enumerate(forward)}
    after: dict[str, set[str]] = {client["id"]: set() for client in clients}
    start = 0
    while start < len(forward):
        end = place[backward[start]] + 1  # the bucket's last member comes first in the reverse fill
        bucket = forward[start:end]
        for earlier, later in pairwise(bucket):
            if client_of[earlier] != client_of[later]:
                after[client_of[earlier]].add(client_of[later])
        start = end
    blocking = {client: 0 for client in after}
    for successors in after.values():
        for successor in successors:
            blocking[successor] += 1
    ready: list[tuple[int, str]] = []
    for client, count in blocking.items():
        if count == 0:
            heappush(ready, (first[client], client))
    ordered: list[str] = []
    done: set[str] = set()
    while len(ordered) < len(after):
        if ready:
            _, client = heappop(ready)
        else:  # a cycle: the client whose first member comes first goes next
            client = min((c for c in after if c not in done), key=first.__getitem__)
        if client in done:
            continue
        done.add(client)
        ordered.append(client)
        for successor in after[client]:
            blocking[successor] -= 1
            if blocking[successor] == 0 and successor not in done:
                heappush(ready, (first[successor], successor))
    by_id = {client["id"]: client for client in clients}
    listed = {member_id: index for index, member_id in enumerate(order)}
    return [{**by_id[client_id], "members": sorted(by_id[client_id]["members"], key=lambda m: listed[m["id"]])} for client_id in ordered]


_DESCRIPTIONS = {
    "streams_task_assignor": (
        "Kafka's inputs to KIP-924's TaskAssignor.assign(ApplicationState) in a classic Kafka Streams application, as the assignment "
        "service read them (docs/service-protocol.md). task.assignor.class is the plug point's default, KIP-924's StickyTaskAssignor; "
        "client ids are process ids; every lag is Kafka's lagFor."
    ),
    "consumer_group": (
        "Kafka's inputs to a KIP-848 ConsumerGroupPartitionAssignor.assign(GroupSpec, SubscribedTopicDescriber), as the assignment "
        "service read them (docs/service-protocol.md). Topic names are Kafka's topic ids; owned partitions are each member's target "
        "assignment; group.remote.assignor is the broker's default, uniform."
    ),
    "streams_group": (
        "Kafka's inputs to a KIP-1071 streams-group TaskAssignor.assign(GroupSpec, TopologyDescriber), as the assignment service read "
        "them (docs/service-protocol.md). The topics are made up (subtopology-<id>, subtopology-<id>-changelog): a topology describer "
        "names none; a changelog end offset is the highest offset a member reported for the task."
    ),
    "classic_consumer": (
        "Kafka's inputs to a classic ConsumerPartitionAssignor.assign(Cluster, GroupSubscription), as the assignment service read them "
        "(docs/service-protocol.md). partition.assignment.strategy is the fallback of the group's rebalance protocol: cooperative-sticky "
        "(cooperative) or range (eager)."
    ),
}


# ---- answers ----


def answer_assignment(request: Request, solution: Solution) -> dict[str, Any]:
    """The answer's `assignment` for `request` from `solution` (docs/service-protocol.md): every
    client or member of the request listed, tasks in task order, partitions as [topic, partition]
    in (topic, partition) order."""
    held = solution.assignment
    if request.kind == "problem":
        return {"solution": solution_to_data(solution)}
    if request.kind in ("consumer_group", "classic_consumer"):
        return {"members": {member: _partitions(held[member].active if member in held else ()) for member in request.members}}
    problem = request.problem
    assert isinstance(problem, StreamsProblem)
    if request.kind == "streams_task_assignor":
        clients = {}
        for client in request.clients:
            got = held.get(client, ClientAssignment())
            # Kafka sends warm-ups as standbys (KIP-441); the follow-up rebalance moves them on.
            clients[client] = {"active": _tasks(got.active), "standby": _tasks((*got.standby, *got.warmup))}
        followup = problem.config.probing_rebalance_interval_ms if solution.followup_rebalance else None
        return {"clients": clients, "followup_rebalance_ms": followup}
    # A streams group's assignor gives the target: Kafka 4.4's MemberAssignment has no warm-ups (the
    # coordinator decides them while it reconciles), so the answer is the solution's target.
    target = solution.target if solution.target is not None else held
    members: dict[str, dict[str, list[str]]] = {}
    for streams_client in problem.clients:
        got = target.get(streams_client.id, ClientAssignment())
        dealt = dict(got.members) if got.members else _deal_to_members(streams_client, got)
        for member in streams_client.member_ids:
            tasks = dealt.get(member, MemberAssignment())
            members[member] = {"active": _tasks(tasks.active), "standby": _tasks(tasks.standby)}
    return {"members": {member: members.get(member, {"active": [], "standby": []}) for member in request.members}}


def _tasks(tasks: Iterable[str]) -> list[str]:
    return sorted(set(tasks), key=task_key)


def _partitions(partitions: Iterable[str]) -> list[list[Any]]:
    return [[topic, number] for topic, number in sorted({partition_key(p) for p in partitions})]


def _deal_to_members(client: Client, held: ClientAssignment) -> dict[str, MemberAssignment]:
    """A client's tasks over its members (stream threads), when the solution gives them per client
    only (the exact engine assigns processes: a process's threads share its state directory). Role
    by role, a task stays with the member that held it before while that member has fewer than its
    share (ceil(tasks / members)); the others go to the member with the fewest tasks of the role,
    then the fewest in all, then the first listed."""
    ids = client.member_ids
    holder: dict[str, str] = {}
    for member_id, thread in zip(ids, client.members, strict=False):
        for task in (*thread.previous_active, *thread.previous_standby, *thread.previous_warmup):
            holder.setdefault(task, member_id)
    dealt: dict[str, dict[str, list[str]]] = {member: {"active": [], "standby": [], "warmup": []} for member in ids}
    for role in ("active", "standby", "warmup"):
        tasks = _tasks(getattr(held, role))
        share = math.ceil(len(tasks) / len(ids))
        rest = []
        for task in tasks:
            previous = holder.get(task)
            if previous is not None and len(dealt[previous][role]) < share:
                dealt[previous][role].append(task)
            else:
                rest.append(task)
        for task in rest:
            least = min(enumerate(ids), key=lambda item: (len(dealt[item[1]][role]), sum(map(len, dealt[item[1]].values())), item[0]))[1]
            dealt[least][role].append(task)
    return {member: MemberAssignment(active=tuple(got["active"]), standby=tuple(got["standby"]), warmup=tuple(got["warmup"])) for member, got in dealt.items()}


def request_to_problem_data(request: Request) -> dict[str, Any]:
    """The request's problem as a problem file's data: `kafka-assign solve` reads it back equal."""
    return problem_to_data(request.problem)
