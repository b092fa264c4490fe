"""The Kafka Streams oracle: Kafka's classic task assignors (the internal HighAvailabilityTaskAssignor
and LegacyStickyTaskAssignor, KIP-924's public StickyTaskAssignor) on the project's Streams problems,
through the adapter `kao.jvm.TaskAssignors`, all problems in one JVM.

Kafka's inputs are built from the problem as the group leader's StreamsPartitionAssignor has them
after a rebalance (the mapping of `../shared/kafka-parity/streams/README.md`):

* a client is a process: its id must be a UUID (`with_process_ids` gives a problem whose ids are).
  Clients enter the leader's HashMap of process ids sorted (as the reproduction assumes and the
  frozen sets' harness did: in Kafka the order comes from the group's members, which no problem
  fixes; it matters only among process ids in one hash bucket); capacity = `threads` (one consumer per thread); `client.rack` on every consumer; its tags;
* its owned partitions are the source partitions of its previous actives; the task offset sums it
  reports are, per stateful task of the problem: `end - lag` for a reported lag, Kafka's
  LATEST_OFFSET (-2) for a previous active without one, `end` (caught up) for a previous standby
  without one; a previous standby of a stateless task reports 0. `end` is the task's changelog end
  offset (the largest long when unknown, 0 without changelog). Kafka's own initializePrevTasks and
  computeTaskLags turn these into previous tasks and lags;
* tasks the problem does not have are left out (the reproduction drops them too, with a warning);
  a task is stateful when the problem says so;
* source partitions are in the Cluster metadata, one broker per replica rack; changelog topics
  are described (Kafka's Admin call) from the same data.

Each answer is `StreamsAnswer`: per client its actives and standbys (Kafka sends warm-ups as
standbys), whether a follow-up rebalance was asked for, and for KIP-924 the order its JVM placed
standbys in (a HashSet of TaskInfo, whose hash is the object's identity).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from optimizer.assignors.answers import kip924_view
from optimizer.assignors.java import kafka_client_order
from optimizer.assignors.streams.high_availability import StreamsAssignorResult
from optimizer.assignors.streams.task_assignors import TASK_ASSIGNORS
from optimizer.generate import add_zombies, random_streams_problem
from optimizer.model.ids import INT64_MAX, TaskKey, name_uuid_bytes, parse_task_id, task_id, task_key
from optimizer.model.normalize import normalize
from optimizer.model.problem import problem_from_data, problem_to_data
from optimizer.model.streams import StreamsGroupProtocol, StreamsProblem, TaskAssignor
from optimizer.oracle.batch import batch
from optimizer.solve import solve

STRATEGIES = ("none", "min_traffic", "balance_subtopology")
"""`rack.aware.assignment.strategy`'s values."""
LATEST_OFFSET = -2
MAIN = "kao.jvm.TaskAssignors"


@dataclass(frozen=True)
class StreamsAnswer:
    """Kafka's assignment of one application."""

    active: dict[str, frozenset[str]]
    """Client (process id) → its active tasks."""
    standby: dict[str, frozenset[str]]
    """Client → its standby tasks, warm-ups included (Kafka sends them as standbys)."""
    followup: bool
    """Whether the assignor asked for a follow-up (probing) rebalance."""
    standby_order: tuple[TaskKey, ...] | None = None
    """KIP-924: the order its StickyTaskAssignor placed standbys in, task by task."""
    micros: int | None = None
    """The fastest run's microseconds (inputs built and the assignor called, in a warm JVM)."""


def process_id(client_id: str) -> str:
    """A client id as a process id: itself when it is a UUID, else the name-based UUID of its
    bytes (Java's UUID.nameUUIDFromBytes)."""
    try:
        return str(uuid.UUID(client_id))
    except ValueError:
        return str(uuid.UUID(bytes=name_uuid_bytes(client_id)))


def with_process_ids(problem: StreamsProblem) -> StreamsProblem:
    """The same problem with every client id a process id (`process_id`): Kafka keys clients by
    UUID, and the reproduction's orders (sorted UUIDs, UUID hash codes) then are Kafka's."""
    data = problem_to_data(problem)
    for client in data["clients"]:
        client["id"] = process_id(client["id"])
    renamed = problem_from_data(data)
    assert isinstance(renamed, StreamsProblem)
    return renamed


def task_case(problem: StreamsProblem, task_sets: str = "grouper") -> dict[str, Any]:
    """Kafka's inputs for `problem`, as `kao.jvm.TaskAssignors` reads them (module docstring).
    `task_sets`: how the legacy sticky assignor's HashSets of all and of stateful tasks are filled
    (their iteration order is the hash order, ties in a bucket in fill order): `grouper` as
    StreamsPartitionAssignor fills them (subtopology by subtopology, the PartitionGrouper's and
    ChangelogTopics' HashMaps of Subtopology), `sorted` in task order as the frozen parity sets'
    harness did."""
    config = problem.config
    if config.group_protocol != StreamsGroupProtocol.CLASSIC:
        raise ValueError(f"{problem.name}: the classic task assignors run under group.protocol=classic only")
    for client in problem.clients:
        uuid.UUID(client.id)  # ValueError: Kafka's process ids are UUIDs (with_process_ids)
    known = {t.id: t for t in problem.tasks}
    end: dict[str, int] = {}
    for task in problem.tasks:
        if task.stateful:
            end[task.id] = 0 if not task.changelog_partitions else (task.changelog_end_offset if task.changelog_end_offset is not None else INT64_MAX)
    clients = []
    for client in (problem.client_by_id[c] for c in kafka_client_order(c.id for c in problem.clients)):
        active = [t for t in client.previous_active if t in known]
        standby = {t for t in client.previous_standby if t in known}
        sums: dict[str, int] = {}
        for ident, total in end.items():
            if ident in client.lags and total > 0:
                sums[ident] = total - client.lags[ident]
            elif ident in active:
                sums[ident] = LATEST_OFFSET
            elif ident in standby or ident in client.lags:
                sums[ident] = total
        for ident in standby:
            if ident not in end:
                sums[ident] = 0
        clients.append(
            {
                "process": client.id,
                "rack": client.rack,
                "threads": client.threads,
                "tags": dict(client.tags),
                "owned": [[p.topic, p.partition] for t in active for p in known[t].source_partitions],
                "offset_sums": [[*parse_task_id(t), s] for t, s in sums.items()],
            }
        )
    return {
        "assignor": str(config.task_assignor_class),
        "task_sets": task_sets,
        "configs": {
            "acceptable_recovery_lag": config.acceptable_recovery_lag,
            "max_warmup_replicas": config.max_warmup_replicas,
            "num_standby_replicas": config.num_standby_replicas,
            "probing_rebalance_interval_ms": config.probing_rebalance_interval_ms,
            "tags": list(config.rack_aware_assignment_tags),
            "strategy": str(config.rack_aware_assignment_strategy),
            "traffic_cost": config.rack_aware_assignment_traffic_cost,
            "non_overlap_cost": config.rack_aware_assignment_non_overlap_cost,
        },
        "tasks": [
            {
                "subtopology": parse_task_id(t.id).subtopology,
                "partition": parse_task_id(t.id).partition,
                "stateful": t.stateful,
                "source": [[p.topic, p.partition, list(p.replica_racks)] for p in t.source_partitions],
                "changelog": [[p.topic, p.partition, list(p.replica_racks)] for p in t.changelog_partitions],
                "end_offset_sum": end.get(t.id, 0),
            }
            for t in sorted(problem.tasks, key=lambda t: parse_task_id(t.id))
        ],
        "clients": clients,
    }


def task_assignor_answers(
    problems: Sequence[StreamsProblem], repeat: int = 1, timeout: float = 300.0, release: str | None = None, task_sets: str = "grouper"
) -> list[StreamsAnswer | str]:
    """Kafka's answer for each problem (its `task.assignor.class`), in order, or the error Kafka
    raised; `release` runs that Kafka release's jars instead of the pinned 4.4.0; `task_sets` as
    in `task_case`."""
    answers: list[StreamsAnswer | str] = []
    for answer, micros in batch(MAIN, [task_case(p, task_sets) for p in problems], repeat, timeout, release):
        if isinstance(answer, str):
            answers.append(answer)
            continue
        clients = answer["clients"]
        order = answer.get("standby_order")
        answers.append(
            StreamsAnswer(
                active={c: frozenset(task_id(s, p) for s, p in held["active"]) for c, held in clients.items()},
                standby={c: frozenset(task_id(s, p) for s, p in held["standby"]) for c, held in clients.items()},
                followup=bool(answer["followup"]),
                standby_order=None if order is None else tuple(parse_task_id(task_id(s, p)) for s, p in order),
                micros=micros,
            )
        )
    return answers


def application(
    seed: int, assignor: str, strategy: str, version: str | None = None, unlogged: float = 0.0, zombies: float = 0.0
) -> StreamsProblem:
    """A seeded application for the oracle: up to 30 tasks over up to 7 clients (process ids),
    racks (some clients without), 0-2 standbys, client tags, explicit KIP-925 costs in a third of
    them; `task.assignor.class: assignor`, `rack.aware.assignment.strategy: strategy` and, when
    given, `kafka.version: version`; each stateful subtopology's stores log nothing (no
    changelog partitions) with probability `unlogged`; each previous active is also reported by
    another client (a zombie) with probability `zombies`."""
    rng = random.Random(f"{assignor}-{strategy}-{seed}")
    clients = rng.randint(1, 7)
    problem = random_streams_problem(
        seed, tasks=rng.randint(1, 30), clients=clients, racks=rng.choice([0, 2, 3, 3]), replication=rng.randint(1, 3),
        standby_replicas=rng.choice([0, 1, 1, 2]), stateful_fraction=rng.choice([0.0, 0.5, 0.7, 1.0]),
        tags=rng.choice([(), (), ("zone",), ("zone", "cluster")]), strategy=strategy, churn=rng.random() * 0.5,
        rackless_clients=rng.choice([0, 0, 0, 1]) if clients > 1 else 0, name=f"{assignor}-{strategy}-{seed}",
    )  # fmt: skip
    data = problem_to_data(problem)
    if unlogged:
        quiet = {sub for sub in {task_key(t["id"])[0] for t in data["tasks"]} if rng.random() < unlogged}
        for task in data["tasks"]:
            if task_key(task["id"])[0] in quiet:
                task.pop("changelog_partitions", None)
                task.pop("changelog_end_offset", None)
    if zombies:
        add_zombies(rng, data, zombies)
    config = data.setdefault("config", {})
    config["task.assignor.class"] = assignor
    if rng.random() < 0.3:
        config["acceptable.recovery.lag"] = rng.choice([0, 1_000, 100_000])
    if rng.random() < 0.3:
        config["max.warmup.replicas"] = rng.randint(1, 4)
    if rng.random() < 0.33:
        config["rack.aware.assignment.traffic_cost"] = rng.randint(0, 20)
        config["rack.aware.assignment.non_overlap_cost"] = rng.randint(0, 20)
    if version is not None:
        config["kafka.version"] = version
    made = problem_from_data(data)
    assert isinstance(made, StreamsProblem)
    return with_process_ids(made)


def larger_application(seed: int, assignor: str, strategy: str) -> StreamsProblem:
    """40-150 tasks in 1-8 subtopologies over 5-20 clients in 3 racks, 0-2 standbys, client tags in
    half, KIP-925 costs configured in a third."""
    rng = random.Random(f"larger-{assignor}-{seed}")
    problem = random_streams_problem(
        seed, tasks=rng.randint(40, 150), clients=rng.randint(5, 20), racks=3, standby_replicas=rng.choice([0, 1, 2]),
        strategy=strategy, tags=rng.choice([(), ("zone",)]), churn=rng.random() * 0.5, subtopologies=rng.randint(1, 8),
        name=f"larger-{assignor}-{strategy}-{seed}",
    )  # fmt: skip
    data = problem_to_data(problem)
    config = data.setdefault("config", {})
    config["task.assignor.class"] = assignor
    if seed % 3 == 0:
        config["rack.aware.assignment.traffic_cost"] = 5
        config["rack.aware.assignment.non_overlap_cost"] = 2
    made = problem_from_data(data)
    assert isinstance(made, StreamsProblem)
    return with_process_ids(made)


def _held(clients: dict[str, frozenset[str]], client: str) -> frozenset[str]:
    return clients.get(client, frozenset())


def disagreements(problems: Sequence[StreamsProblem], answers: Sequence[StreamsAnswer | str], standbys: bool = True) -> list[str]:
    """Where `--solver kafka` (at each problem's `kafka.version`) is not Kafka's answer, one line
    per client and role, or where Kafka raised: actives per client; unless `standbys` is False,
    standbys with warm-ups per client (Kafka sends warm-ups as standbys); the follow-up rebalance.
    KIP-924: `--solver kafka` is held to Kafka's actives, and the reproduction, run in the order
    Kafka's JVM placed standbys in (TaskInfo's identity hashes), to the whole answer."""
    found = []
    for problem, kafka in zip(problems, answers, strict=True):
        if isinstance(kafka, str):
            found.append(f"{problem.name}: Kafka raised {kafka}")
            continue
        ours = solve(problem, solver="kafka")
        active = {c: frozenset(held.active) for c, held in ours.assignment.items()}
        standby = {c: frozenset(held.standby) | frozenset(held.warmup) for c, held in ours.assignment.items()}
        followup = bool(ours.followup_rebalance)
        if problem.config.task_assignor_class == TaskAssignor.KIP924_STICKY and kafka.standby_order is not None:
            run = cast(Callable[..., StreamsAssignorResult], TASK_ASSIGNORS.select(TaskAssignor.KIP924_STICKY, problem.config.release))
            result = run(kip924_view(normalize(problem).problem, problem), list(kafka.standby_order))
            standby = {c.id: frozenset(task_id(*t) for t in c.standby) for c in result.clients}
            if {c.id: frozenset(task_id(*t) for t in c.active) for c in result.clients} != active:
                found.append(f"{problem.name}: the reproduction's actives in Kafka's standby order are not --solver kafka's")
        for client in active:
            if active[client] != _held(kafka.active, client):
                found.append(f"{problem.name} {client} active: ours {sorted(active[client])}, Kafka's {sorted(_held(kafka.active, client))}")
            if standbys and standby[client] != _held(kafka.standby, client):
                found.append(f"{problem.name} {client} standby: ours {sorted(standby[client])}, Kafka's {sorted(_held(kafka.standby, client))}")
        if set(kafka.active) - set(active):
            found.append(f"{problem.name}: Kafka assigned clients {sorted(set(kafka.active) - set(active))}")
        if followup != kafka.followup:
            found.append(f"{problem.name}: follow-up rebalance ours {followup}, Kafka's {kafka.followup}")
    return found
