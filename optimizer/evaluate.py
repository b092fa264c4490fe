"""The independent evaluator: is an assignment valid and complete, and what are its metrics.

It shares no code with any solver or goal encoding, so a bug in a solver cannot hide itself here.
Validity follows KIP-924's AssignmentError list (names kept where KIP-924 has one) plus
completeness: every task active exactly once, every stateful task with
`min(num.standby.replicas, clients - 1)` standbys, warm-ups on top, no client with two copies of a
task, no standby of a stateless task; consumers: every partition of a subscribed topic assigned
exactly once, and only to a subscriber. Definitions of every metric are in docs/metrics.md.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from optimizer.model.base import FrozenModel, derived
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import MILLI, milli, parse_partition_id, partition_id, shown
from optimizer.model.issues import Issue, warning
from optimizer.model.metrics import ConsumerMetrics, Metrics, StreamsMetrics
from optimizer.model.normalize import normalize
from optimizer.model.problem import Problem
from optimizer.model.racks import read_from_racks, reads_across_racks, serving_racks
from optimizer.model.solution import ClientAssignment, Solution
from optimizer.model.streams import (
    STATELESS_NON_OVERLAP_COST,
    STATELESS_TRAFFIC_COST,
    Client,
    StreamsProblem,
    Task,
    TaskAssignor,
    TopicPartition,
    kip925_costs,
)


class ViolationCode(StrEnum):
    """Why an assignment is invalid or incomplete. KIP-924's names where it has one."""

    UNKNOWN_PROCESS_ID = "UNKNOWN_PROCESS_ID"
    MISSING_PROCESS_ID = "MISSING_PROCESS_ID"
    UNKNOWN_TASK_ID = "UNKNOWN_TASK_ID"
    ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES = "ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES"
    ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS = (
        "ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS"
    )
    INVALID_STANDBY_TASK = "INVALID_STANDBY_TASK"
    ACTIVE_TASK_UNASSIGNED = "ACTIVE_TASK_UNASSIGNED"
    WRONG_STANDBY_COUNT = "WRONG_STANDBY_COUNT"
    TOO_MANY_WARMUPS = "TOO_MANY_WARMUPS"
    WARMUP_WITHOUT_FOLLOWUP = "WARMUP_WITHOUT_FOLLOWUP"
    UNKNOWN_MEMBER = "UNKNOWN_MEMBER"
    MISSING_MEMBER = "MISSING_MEMBER"
    MEMBERS_DISAGREE_WITH_CLIENT = "MEMBERS_DISAGREE_WITH_CLIENT"
    UNKNOWN_PARTITION = "UNKNOWN_PARTITION"
    PARTITION_ASSIGNED_MULTIPLE_TIMES = "PARTITION_ASSIGNED_MULTIPLE_TIMES"
    PARTITION_UNASSIGNED = "PARTITION_UNASSIGNED"
    NOT_SUBSCRIBED = "NOT_SUBSCRIBED"
    STANDBY_FOR_CONSUMER = "STANDBY_FOR_CONSUMER"
    COOPERATIVE_TRANSFER_IN_ONE_ROUND = "COOPERATIVE_TRANSFER_IN_ONE_ROUND"


class Violation(FrozenModel):
    code: ViolationCode
    """What kind of violation."""
    message: str
    """What exactly is wrong."""
    client: str | None = None
    """The client or member concerned, if one."""
    task: str | None = None
    """The task or partition concerned, if one."""


class Evaluation(FrozenModel):
    """The evaluator's verdict on one assignment."""

    kind: str
    """`streams` or `consumer`."""
    valid: bool
    """True when there are no violations."""
    violations: tuple[Violation, ...]
    """Every violation found."""
    metrics: Metrics
    """Metrics of the assignment (computed even when it is invalid, over what is valid)."""
    warnings: tuple[Issue, ...]
    """Warnings about the problem (conditions Kafka tolerates)."""


Assignment = Mapping[str, ClientAssignment]


def evaluate(problem: Problem, solution: Solution | Assignment) -> Evaluation:
    """Check an assignment against its problem and measure it."""
    assignment = solution.assignment if isinstance(solution, Solution) else solution
    followup = solution.followup_rebalance if isinstance(solution, Solution) else False
    normalized = normalize(problem)
    violations: _Findings
    metrics: Metrics
    if isinstance(normalized.problem, StreamsProblem):
        violations, metrics = _evaluate_streams(normalized.problem, assignment, followup)
    else:
        assert isinstance(problem, ConsumerProblem)  # normalising keeps the kind
        target = solution.target if isinstance(solution, Solution) else None
        violations, metrics = _evaluate_consumer(normalized.problem, problem, assignment, followup, target)
    violations.sort(key=lambda v: (v.code.value, v.client or "", v.task or "", v.message))
    warnings = normalized.warnings + tuple(violations.anomalies)
    named = solution.problem if isinstance(solution, Solution) else None
    if named and problem.name and named != problem.name:
        warnings += (
            warning("problem", f"the solution is for problem {shown(named)}, not {shown(problem.name)}"),
        )
    return Evaluation(
        kind=problem.kind,
        valid=not violations,
        violations=tuple(violations),
        metrics=metrics,
        warnings=warnings,
    )


class _Findings(list[Violation]):
    """The violations found so far, and the anomalies: what Kafka's own assignors do and Kafka
    tolerates, reported as warnings."""

    def __init__(self) -> None:
        super().__init__()
        self.anomalies: list[Issue] = []

    def flag(
        self, code: ViolationCode, message: str, client: str | None = None, task: str | None = None
    ) -> None:
        self.append(Violation(code=code, message=message, client=client, task=task))

    def check_roster(
        self,
        assigned: Iterable[str],
        expected: Iterable[str],
        noun: str,
        unknown: ViolationCode,
        missing: ViolationCode,
    ) -> None:
        """Every client (member) of the problem in the assignment, and no other."""
        assigned, expected = set(assigned), set(expected)
        for ident in sorted(assigned - expected):
            self.flag(unknown, f"{noun} {shown(ident)} is not in the problem", ident)
        for ident in sorted(expected - assigned):
            self.flag(
                missing,
                f"{noun} {shown(ident)} is missing from the assignment (list it, even with nothing)",
                ident,
            )


# --------------------------------------------------------------------------- Kafka Streams


def _check_members(problem: StreamsProblem, assignment: Assignment, flag: Callable[..., None]) -> None:
    """A streams group's per-member lists: members of that client only, each task once over them,
    and their unions the client's lists."""
    for client_id, held in sorted(assignment.items()):
        if not held.members or client_id not in problem.client_by_id:
            continue
        own = set(problem.client_by_id[client_id].member_ids)
        for member in sorted(set(held.members) - own):
            flag(ViolationCode.UNKNOWN_MEMBER, f"member {shown(member)} is not a member of client {shown(client_id)}", client_id)
        for role in ("active", "standby", "warmup"):
            listed = [t for m in held.members.values() for t in getattr(m, role)]
            if Counter(listed) != Counter(getattr(held, role)):
                flag(
                    ViolationCode.MEMBERS_DISAGREE_WITH_CLIENT,
                    f"the {role} tasks of client {shown(client_id)}'s members do not add up to the client's {role} tasks",
                    client_id,
                )


def _evaluate_streams(
    problem: StreamsProblem, assignment: Assignment, followup: bool
) -> tuple[_Findings, StreamsMetrics]:
    violations = _Findings()
    flag = violations.flag
    tasks = problem.task_by_id
    clients = problem.client_by_id
    violations.check_roster(
        assignment,
        clients,
        "client",
        ViolationCode.UNKNOWN_PROCESS_ID,
        ViolationCode.MISSING_PROCESS_ID,
    )

    _check_members(problem, assignment, flag)

    # (client, task) copies that refer to known clients and tasks; invalid ones are flagged.
    actives: dict[str, list[str]] = defaultdict(list)  # task -> clients
    standbys: dict[str, list[str]] = defaultdict(list)
    warmups: dict[str, list[str]] = defaultdict(list)
    held: dict[str, dict[str, int]] = {}  # client -> task -> copies
    for client_id in sorted(assignment):
        if client_id not in clients:
            continue
        held[client_id] = Counter()
        for role, copies in (
            ("active", actives),
            ("standby", standbys),
            ("warmup", warmups),
        ):
            for task in getattr(assignment[client_id], role):
                if held[client_id][task]:
                    held[client_id][task] += 1  # a second copy on one client: flagged below
                    continue
                if task not in tasks:
                    flag(
                        ViolationCode.UNKNOWN_TASK_ID,
                        f"{role} task {shown(task)} on client {shown(client_id)} is not in the problem",
                        client_id,
                        task,
                    )
                    continue
                if role != "active" and not tasks[task].stateful:
                    flag(
                        ViolationCode.INVALID_STANDBY_TASK,
                        f"{role} of stateless task {task} on client {shown(client_id)}",
                        client_id,
                        task,
                    )
                copies[task].append(client_id)
                held[client_id][task] = 1

    for client_id, counts in held.items():
        for task, count in sorted(counts.items()):
            if count > 1:
                flag(
                    ViolationCode.ACTIVE_AND_STANDBY_TASK_ASSIGNED_TO_SAME_KAFKASTREAMS,
                    f"client {shown(client_id)} holds {count} copies of task {task}",
                    client_id,
                    task,
                )

    wanted_standbys = problem.effective_standby_replicas
    for task_id in sorted(tasks):
        owners = actives.get(task_id, [])
        if not owners:
            flag(ViolationCode.ACTIVE_TASK_UNASSIGNED, f"task {task_id} has no active", task=task_id)
        elif len(owners) > 1:
            flag(
                ViolationCode.ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES,
                f"task {task_id} is active on {len(owners)} clients: {', '.join(shown(o) for o in sorted(owners))}",
                task=task_id,
            )
        if tasks[task_id].stateful and len(standbys.get(task_id, [])) != wanted_standbys:
            flag(
                ViolationCode.WRONG_STANDBY_COUNT,
                f"stateful task {task_id} has {len(standbys.get(task_id, []))} standbys, needs "
                f"{wanted_standbys} (min(num.standby.replicas, clients - 1))",
                task=task_id,
            )
    warmup_count = sum(len(v) for v in warmups.values())
    if warmup_count > problem.config.max_warmup_replicas:
        flag(
            ViolationCode.TOO_MANY_WARMUPS,
            f"{warmup_count} warm-up replicas exceed max.warmup.replicas="
            f"{problem.config.max_warmup_replicas}",
        )
    if warmup_count and not followup:
        flag(
            ViolationCode.WARMUP_WITHOUT_FOLLOWUP,
            "warm-ups are assigned but followup_rebalance is false: they would never take over",
        )

    return violations, _streams_metrics(problem, actives, standbys, warmups)


def cross_rack_reads(problem: StreamsProblem, partitions: tuple[TopicPartition, ...], rack: str | None) -> int:
    """Partitions a client in `rack` reads across racks: from no replica in its rack that can
    serve the read (`StreamsProblem.serving_racks`, `reads_across_racks`)."""
    if rack is None:  # never across racks: no need to look at the partitions
        return 0
    return sum(reads_across_racks(rack, problem.serving_racks(p)) for p in partitions)


def headline(metrics: Metrics | None) -> dict[str, Any]:
    """The headline figures of an evaluation's metrics, as every comparison counts them (the
    pipeline's summary columns, `compare`, the report): `cross_rack_partitions` (Streams:
    actives, standbys and warm-ups), `load_skew` (Streams: active tasks per thread, max - min;
    consumers: partitions per member), `moves` (Streams: active + standby moves; consumers:
    owned partitions moved or withheld), `cross_rack_bytes` (the same reads as
    `cross_rack_partitions` in bytes per second; None without rates). Empty for None."""
    if metrics is None:
        return {}
    if isinstance(metrics, StreamsMetrics):
        role_bytes = (metrics.cross_rack_active_bytes, metrics.cross_rack_standby_bytes, metrics.cross_rack_warmup_bytes)
        return {
            "cross_rack_partitions": metrics.cross_rack_active_partitions
            + metrics.cross_rack_standby_partitions
            + metrics.cross_rack_warmup_partitions,
            "load_skew": float(metrics.active_load_skew),
            "moves": metrics.active_moves + metrics.standby_moves,
            "cross_rack_bytes": None if metrics.cross_rack_active_bytes is None else sum(b or 0 for b in role_bytes),
        }
    return {
        "cross_rack_partitions": metrics.cross_rack_partitions,
        "load_skew": float(metrics.size_skew),
        "moves": metrics.owned_moved,
        "cross_rack_bytes": metrics.cross_rack_bytes,
    }


def streams_now_figures(problem: StreamsProblem, assignment: Mapping[str, ClientAssignment]) -> tuple[int, float]:
    """(`actives_not_caught_up`, `active_load_skew`) of an assignment, as the metrics count them:
    what an assignment applied now must not make worse than Kafka's (optimizer.engine.transition)."""
    client_ids = [c.id for c in problem.clients]
    position = {c: i for i, c in enumerate(client_ids)}
    counts = np.zeros(len(client_ids))
    actives: dict[str, list[str]] = defaultdict(list)
    for client_id, held in assignment.items():
        counts[position[client_id]] += len(held.active)
        for task in held.active:
            actives[task].append(client_id)
    threads = np.array([c.threads for c in problem.clients], dtype=float)
    return _actives_not_caught_up(problem, actives), _skew(counts, threads)


@dataclass(eq=False)
class _Reads:
    """What the copies of one kind of partition (sources for actives, changelogs for standbys and
    warm-ups) read across racks, by task position: each task's partitions in `offsets[t]` to
    `offsets[t + 1]`, each partition's set of serving racks (a row of `crosses`: 1 where a
    reader in that rack reads it across racks), its whole rate, and the racks its bytes come from
    (`read_from_racks`: `source` in `source_offsets[p]` to `source_offsets[p + 1]`)."""

    offsets: np.ndarray
    serving: np.ndarray
    crosses: np.ndarray
    rate: np.ndarray
    """int64, or Python ints (dtype object) where the sums could pass 2**62 (`_reads_of`)."""
    source_offsets: np.ndarray
    source: np.ndarray


@dataclass(frozen=True)
class _Read:
    """The figures of some copies of one kind (`_Layout.read`)."""

    crossing: np.ndarray
    """Per copy: its partitions read across racks."""
    total: int
    """Their bytes per second in all (whole bytes, exact at any magnitude)."""
    by_racks: np.ndarray
    """(reader rack, rack read from): their bytes per second."""
    read: np.ndarray
    """(reader rack, rack read from): whether any of them reads from there (a rate may be 0)."""


@dataclass(eq=False)
class _Layout:
    """The evaluator's own index of a Streams problem, built once per problem (`_layout_of`):
    tasks and clients by position (sorted by id, so that no list's order changes a sum), and
    what each copy's figures need, so that an evaluation counts its copies with numpy (the two
    evaluations of one solve, the assignment applied now and its target, share it). Clients'
    racks are numbered in `racks`, the last column standing for a client without a rack (which
    reads nothing across racks); the racks bytes come from in `sources`; tag values per key."""

    problem: StreamsProblem
    tasks: tuple[Task, ...]
    task_position: dict[str, int]
    clients: tuple[Client, ...]
    client_position: dict[str, int]
    rack_of_client: np.ndarray
    racks: tuple[str | None, ...]
    sources: dict[str, int]
    tag_of_client: dict[str, np.ndarray]
    subtopology: np.ndarray
    stateful: np.ndarray
    weight: np.ndarray
    previous_active: np.ndarray
    previous_standby: np.ndarray
    kinds: dict[str, _Reads] = field(default_factory=dict)

    def reads(self, kind: str) -> _Reads:
        found = self.kinds.get(kind)
        if found is None:
            found = self.kinds[kind] = _reads_of(self, kind)
        return found

    def read(self, kind: str, tasks: np.ndarray, clients: np.ndarray) -> _Read:
        """The reads of `kind` of the copies tasks[i] on clients[i]: each (task, rack) is
        counted once, times its number of copies, its partitions gathered at once."""
        reads, width = self.reads(kind), len(self.racks)
        keys, inverse, copies = np.unique(tasks * width + self.rack_of_client[clients], return_inverse=True, return_counts=True)
        task, rack = np.divmod(keys, width)
        first, lengths = reads.offsets[task], reads.offsets[task + 1] - reads.offsets[task]
        of_key = np.repeat(np.arange(len(keys)), lengths)
        partition = np.repeat(first - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
        across = reads.crosses[reads.serving[partition], rack[of_key]].astype(bool)
        per_key = np.bincount(of_key, weights=across, minlength=len(keys)).astype(np.int64)
        partition, of_key = partition[across], of_key[across]
        total = int((reads.rate[partition] * copies[of_key]).sum())
        begin, count = reads.source_offsets[partition], reads.source_offsets[partition + 1] - reads.source_offsets[partition]
        of_read = np.repeat(np.arange(len(partition)), count)
        source = reads.source[np.repeat(begin - np.cumsum(count) + count, count) + np.arange(int(count.sum()))]
        share = (reads.rate[partition].astype(float) * copies[of_key] / count)[of_read]
        cell, cells = rack[of_key][of_read] * len(self.sources) + source, width * len(self.sources)
        by_racks = np.bincount(cell, weights=share, minlength=cells).reshape(width, len(self.sources))
        read = np.bincount(cell, minlength=cells).reshape(width, len(self.sources)) > 0
        return _Read(per_key[inverse], total, by_racks, read)


def _reads_of(layout: _Layout, kind: str) -> _Reads:
    problem, racks, rate_of = layout.problem, layout.racks, layout.problem.rate_of
    serving_sets: dict[tuple[str, ...] | None, int] = {}
    placed: dict[tuple[tuple[str, ...], str | None], tuple[int, list[int]]] = {}  # by (replica racks, leader's)
    offsets, serving, rates, source_offsets, sources = [0], [], [], [0], []
    for task in layout.tasks:
        for partition in getattr(task, kind):
            where = (partition.replica_racks, partition.leader_rack)
            found = placed.get(where)
            if found is None:
                found = placed[where] = (
                    serving_sets.setdefault(problem.serving_racks(partition), len(serving_sets)),
                    [layout.sources[rack] for rack in read_from_racks(*where)],
                )
            serving.append(found[0])
            rates.append(rate_of(partition))
            sources += found[1]
            source_offsets.append(len(sources))
        offsets.append(len(serving))
    crosses = np.array([[reads_across_racks(rack, racks_serving) for rack in racks] for racks_serving in serving_sets], dtype=np.int64)
    # A (task, rack) counts at most once per client: below 2**62 in all, int64 sums are exact.
    exact = sum(rates) * max(len(layout.clients), 1) < 2**62
    return _Reads(
        offsets=np.array(offsets, dtype=np.int64),
        serving=np.array(serving, dtype=np.int64),
        crosses=crosses.reshape(len(serving_sets), len(racks)),
        rate=np.array(rates, dtype=np.int64 if exact else object),
        source_offsets=np.array(source_offsets, dtype=np.int64),
        source=np.array(sources, dtype=np.int64),
    )


@derived
def _layout_of(problem: StreamsProblem) -> _Layout:
    clients = tuple(sorted(problem.clients, key=lambda c: c.id))
    tasks = tuple(sorted(problem.tasks, key=lambda t: t.id))
    client_position = {c.id: i for i, c in enumerate(clients)}
    task_position = {t.id: i for i, t in enumerate(tasks)}
    racks = (*sorted({c.rack for c in clients if c.rack is not None}), None)
    rack_number = {rack: i for i, rack in enumerate(racks)}
    partitions = [p for t in tasks for p in (*t.source_partitions, *t.changelog_partitions)]
    sources = sorted({rack for p in partitions for rack in read_from_racks(p.replica_racks, p.leader_rack)})
    tags = {}
    for key in problem.config.rack_aware_assignment_tags:
        values = {value: i for i, value in enumerate(sorted({c.tags[key] for c in clients}))}
        tags[key] = np.array([values[c.tags[key]] for c in clients], dtype=np.int64)
    previous_active = np.full(len(tasks), -1, dtype=np.int64)
    for task, client in problem.previous_active_client.items():
        previous_active[task_position[task]] = client_position[client]
    previous_standby = sorted(
        task_position[task] * len(clients) + client_position[client]
        for task, holders in problem.previous_standby_clients.items()
        for client in holders
    )
    return _Layout(
        problem=problem,
        tasks=tasks,
        task_position=task_position,
        clients=clients,
        client_position=client_position,
        rack_of_client=np.array([rack_number[c.rack] for c in clients], dtype=np.int64),
        racks=racks,
        sources={rack: i for i, rack in enumerate(sources)},
        tag_of_client=tags,
        subtopology=np.array([t.subtopology for t in tasks], dtype=np.int64),
        stateful=np.array([t.stateful for t in tasks], dtype=bool),
        weight=np.array([milli(t.weight) for t in tasks], dtype=float),
        previous_active=previous_active,
        previous_standby=np.array(previous_standby, dtype=np.int64),
    )


def _positions(layout: _Layout, held: dict[str, list[str]]) -> tuple[np.ndarray, np.ndarray]:
    """(task positions, client positions) of the copies in `held` (task -> clients), in order."""
    task_position, client_position = layout.task_position, layout.client_position
    tasks: list[int] = []
    clients: list[int] = []
    for task_id, holders in held.items():
        position = task_position[task_id]
        for client_id in holders:
            tasks.append(position)
            clients.append(client_position[client_id])
    return np.array(tasks, dtype=np.int64), np.array(clients, dtype=np.int64)


class _CrossRackBytes:
    """Bytes per second read across racks, in total per role and by (reader rack, rack read
    from): each partition's whole rate (`rate_of`), from its leader's rack when that is known, else
    shared equally among its replica racks (`read_from_racks`)."""

    def __init__(self) -> None:
        self.total: Counter[str] = Counter()
        self.by_racks: defaultdict[str, defaultdict[str, float]] = defaultdict(lambda: defaultdict(float))

    def read(
        self, role: str, rack: str | None, rate: int, serving: Sequence[str] | None, replica_racks: tuple[str, ...] | None, leader: str | None
    ) -> None:
        """A client or member in `rack` reads a partition of `rate` bytes per second that the
        racks `serving` can serve (`serving_racks`), whose replicas and leader are in `replica_racks`
        and `leader`."""
        if not reads_across_racks(rack, serving):
            return
        assert rack is not None  # a reader without a rack never reads across racks
        self.total[role] += rate
        sources = read_from_racks(replica_racks, leader)
        for source in sources:
            self.by_racks[rack][source] += rate / len(sources)

    def matrix(self) -> dict[str, dict[str, float]]:
        return {reader: dict(sorted(row.items())) for reader, row in sorted(self.by_racks.items())}


def _per_capacity(loads: np.ndarray, capacities: np.ndarray) -> tuple[float, float]:
    """(max, max - min) of load / capacity over clients (0, 0 without clients)."""
    if not len(loads):
        return 0.0, 0.0
    ratio = loads / capacities
    return float(ratio.max()), float(ratio.max() - ratio.min())


def _skew(counts: np.ndarray, threads: np.ndarray) -> float:
    load = counts / threads
    return round(float(load.max() - load.min()), 6) if len(load) else 0.0


def _streams_metrics(
    problem: StreamsProblem,
    actives: dict[str, list[str]],
    standbys: dict[str, list[str]],
    warmups: dict[str, list[str]],
) -> StreamsMetrics:
    layout = _layout_of(problem)
    n = len(layout.clients)
    threads = np.array([c.threads for c in layout.clients], dtype=float)
    # The metric uses the high-availability assignor's defaults whatever the assignor (kip925_cost).
    traffic_cost, non_overlap_cost = kip925_costs(problem.config, TaskAssignor.HIGH_AVAILABILITY)
    at, ac = _positions(layout, actives)
    st, sc = _positions(layout, standbys)
    wt, wc = _positions(layout, warmups)

    active_count = np.bincount(ac, minlength=n).astype(float)
    stateful_count = (np.bincount(ac[layout.stateful[at]], minlength=n) + np.bincount(sc, minlength=n)).astype(float)
    keys, counts = np.unique(layout.subtopology[at] * n + ac, return_counts=True)
    on_client = Counter({divmod(key, n): count for key, count in zip(keys.tolist(), counts.tolist(), strict=True)})

    active, standby, warmup = (
        layout.read("source_partitions", at, ac),
        layout.read("changelog_partitions", st, sc),
        layout.read("changelog_partitions", wt, wc),
    )
    elsewhere = layout.previous_active[at] != ac
    stateful = layout.stateful[at]
    kip925 = (
        traffic_cost * int(active.crossing[stateful].sum())
        + non_overlap_cost * int(elsewhere[stateful].sum())
        + STATELESS_TRAFFIC_COST * int(active.crossing[~stateful].sum())
        + STATELESS_NON_OVERLAP_COST * int(elsewhere[~stateful].sum())
    )
    load = np.bincount(ac, weights=layout.weight[at], minlength=n)
    capacity = np.array([c.threads * milli(c.capacity) for c in layout.clients], dtype=float)
    max_load, load_skew = _per_capacity(load, capacity)
    subtopology_skews, cap_excess = _subtopology_spread(on_client, active_count, n)

    # Diversity of the copies of each stateful task (KIP-708): copies minus distinct values.
    copy_tasks, copy_clients = np.concatenate([at, st]), np.concatenate([ac, sc])
    kept = layout.stateful[copy_tasks]
    copy_tasks, copy_clients = copy_tasks[kept], copy_clients[kept]
    racks = layout.rack_of_client[copy_clients]
    with_rack = racks < len(layout.racks) - 1
    rack_conflicts = int(with_rack.sum()) - len(np.unique((copy_tasks * len(layout.racks) + racks)[with_rack]))
    tag_conflicts = {}
    for key, values in layout.tag_of_client.items():
        tag_conflicts[key] = len(copy_tasks) - len(np.unique(copy_tasks * n + values[copy_clients]))

    rates = problem.has_rates
    by_racks = active.by_racks + standby.by_racks + warmup.by_racks
    read = active.read | standby.read | warmup.read
    sources = list(layout.sources)
    return StreamsMetrics(
        clients=n,
        tasks=len(layout.tasks),
        active_tasks=len(at),
        standby_tasks=len(st),
        warmup_tasks=len(wt),
        cross_rack_active_partitions=int(active.crossing.sum()),
        cross_rack_standby_partitions=int(standby.crossing.sum()),
        cross_rack_warmup_partitions=int(warmup.crossing.sum()),
        kip925_cost=kip925,
        active_moves=len(np.unique(at[(layout.previous_active[at] >= 0) & elsewhere])),
        standby_moves=int((~np.isin(st * n + sc, layout.previous_standby)).sum()),
        active_load_skew=_skew(active_count, threads),
        stateful_load_skew=_skew(stateful_count, threads),
        subtopology_skew=max(subtopology_skews.values(), default=0),
        subtopology_skews=subtopology_skews,
        subtopology_cap_excess=cap_excess,
        standby_rack_conflicts=rack_conflicts,
        standby_tag_conflicts=sum(tag_conflicts.values()),
        tag_conflicts=tag_conflicts,
        actives_not_caught_up=_actives_not_caught_up(problem, actives),
        rack_info_complete=_rack_info_complete(problem),
        cross_rack_active_bytes=active.total if rates else None,
        cross_rack_standby_bytes=standby.total if rates else None,
        cross_rack_warmup_bytes=warmup.total if rates else None,
        cross_rack_bytes_by_racks={
            str(reader): {sources[j]: float(by_racks[i, j]) for j in np.flatnonzero(row).tolist()}
            for i, (reader, row) in enumerate(zip(layout.racks, read, strict=True))
            if row.any()
        }
        if rates
        else {},
        max_load_per_capacity=max_load,
        load_per_capacity_skew=load_skew,
    )


@derived
def _rack_info_complete(problem: StreamsProblem) -> bool:
    """Whether every client has a rack and every partition its replicas' racks (and leader's
    rack where leaders serve the reads and some are given)."""
    partitions = [p for t in problem.tasks for p in (*t.source_partitions, *t.changelog_partitions)]
    # Where leaders serve the reads and some are given, a partition without one is counted by its
    # replica racks only: what is certain, not all there is.
    leaders_missing = problem.has_leaders and not problem.config.follower_fetching and any(p.leader_rack is None for p in partitions)
    return all(c.rack is not None for c in problem.clients) and all(p.replica_racks for p in partitions) and not leaders_missing


def _subtopology_spread(
    on_client: Counter[tuple[int, int]], active_count: np.ndarray, n_clients: int
) -> tuple[dict[str, int], int]:
    """Per subtopology max - min actives per client, and the actives beyond KIP-925's caps."""
    total = int(active_count.sum())
    size: Counter[int] = Counter()
    most: dict[int, int] = {}
    clients_with: Counter[int] = Counter()
    least: dict[int, int] = {}
    excess = 0
    for (sub, _client), count in on_client.items():
        size[sub] += count
        clients_with[sub] += 1
        most[sub] = max(most.get(sub, 0), count)
        least[sub] = min(least.get(sub, count), count)
    for (sub, client), count in on_client.items():
        cap = math.ceil(float(active_count[client]) / max(total, 1) * size[sub])  # as Kafka, in doubles
        excess += max(0, count - cap)
    skews = {
        str(sub): most[sub] - (least[sub] if clients_with[sub] == n_clients else 0)
        for sub in sorted(most)
    }
    return skews, excess


@dataclass(eq=False)
class _Lags:
    """Per stateful task, who is within acceptable.recovery.lag (`_lags_of`, once per problem)."""

    caught: dict[str, set[str]]
    """Task -> clients within acceptable.recovery.lag."""
    known: dict[str, set[str]]
    """Task -> clients whose lag is known."""


@derived
def _lags_of(problem: StreamsProblem) -> _Lags:
    acceptable = problem.config.acceptable_recovery_lag
    known: dict[str, set[str]] = defaultdict(set)
    caught: dict[str, set[str]] = defaultdict(set)
    for client in problem.clients:
        for task, lag in client.lags.items():
            known[task].add(client.id)
            if lag <= acceptable:
                caught[task].add(client.id)
        for task in (*client.previous_active, *client.previous_standby):
            if task not in client.lags:
                known[task].add(client.id)
                caught[task].add(client.id)
    return _Lags(caught=dict(caught), known=dict(known))


def _actives_not_caught_up(problem: StreamsProblem, actives: dict[str, list[str]]) -> int:
    """Stateful actives on a client beyond acceptable.recovery.lag while some client is within it.

    Lag of a client for a task: the reported lag; else 0 for a previous active or standby holder
    (it ran or replicated the task); else the task's changelog end offset, or unbounded if unknown;
    0 for every client when the task has no changelog.
    """
    acceptable = problem.config.acceptable_recovery_lag
    lags = _lags_of(problem)
    nobody: set[str] = set()

    def fresh_is_caught_up(task: Task) -> bool:
        # A client with no state restores the whole changelog; without a changelog (logging
        # disabled) there is nothing to restore and every client is as caught up as any (KIP-441).
        if not task.changelog_partitions:
            return True
        end = task.changelog_end_offset
        return end is not None and end <= acceptable

    count = 0
    for task_id, owners in actives.items():
        task = problem.task_by_id[task_id]
        if not task.stateful:
            continue
        caught, known = lags.caught.get(task_id, nobody), lags.known.get(task_id, nobody)
        fresh_ok = fresh_is_caught_up(task)
        someone_fresh = len(known) < len(problem.clients)
        any_caught_up = bool(caught) or (fresh_ok and someone_fresh)
        if not any_caught_up:
            continue
        for client_id in owners:
            count += client_id not in caught and not (fresh_ok and client_id not in known)
    return count


# --------------------------------------------------------------------------- consumer groups


def _taken_by_target(problem: ConsumerProblem, target: Assignment | None) -> set[str]:
    """The partitions `target` gives to a member of the group that subscribes to their topic
    (ids as a file may have them: one that is no partition id matches no partition)."""
    members = problem.member_by_id
    return {
        partition
        for member, held in (target or {}).items()
        if member in members
        for partition in held.active
        if partition.rpartition("-")[0] in members[member].subscriptions
    }


def _evaluate_consumer(
    problem: ConsumerProblem, raw: ConsumerProblem, assignment: Assignment, followup: bool, target: Assignment | None = None
) -> tuple[_Findings, ConsumerMetrics]:
    """`target`: where a cooperative rebalance's follow-up leads (the solution's), which must give
    every partition withheld now to a member that subscribes to it."""
    violations = _Findings()
    flag = violations.flag
    members = problem.member_by_id
    topics = problem.topic_by_name
    violations.check_roster(
        assignment, members, "member", ViolationCode.UNKNOWN_MEMBER, ViolationCode.MISSING_MEMBER
    )

    subscribed = {t for m in problem.members for t in m.subscriptions if t in topics}
    assignable = [p for name in sorted(subscribed) for p in topics[name].partition_ids()]
    # The partitions of the problem's topics by id, so that only ids outside them are parsed.
    known = {partition_id(t.name, n): (t.name, n) for t in problem.topics for n in range(t.partitions)}
    # Who claims each partition, as reported (before Kafka's clean-up).
    claimed_by: dict[str, set[str]] = defaultdict(set)
    for member in raw.members:
        for partition in member.owned_partitions:
            claimed_by[partition].add(member.id)
    owners: dict[str, list[str]] = defaultdict(list)
    sizes: dict[str, int] = dict.fromkeys(members, 0)
    for member_id in sorted(assignment):
        if member_id not in members:
            continue
        held = assignment[member_id]
        if held.standby or held.warmup:
            flag(
                ViolationCode.STANDBY_FOR_CONSUMER,
                f"member {shown(member_id)} has standby or warm-up entries; consumers only have active",
                member_id,
            )
        for partition in held.active:
            if partition in known:
                topic, number = known[partition]
            else:
                try:
                    topic, number = parse_partition_id(partition)
                except ValueError as error:
                    flag(ViolationCode.UNKNOWN_PARTITION, str(error), member_id, partition)
                    continue
            if topic not in topics or number >= topics[topic].partitions:
                flag(
                    ViolationCode.UNKNOWN_PARTITION,
                    f"partition {shown(partition)} on member {shown(member_id)} does not exist",
                    member_id,
                    partition,
                )
                continue
            if topic not in members[member_id].subscriptions:
                if member_id in claimed_by.get(partition, ()):
                    # Kafka's general sticky assignor returns a partition to a previous owner of
                    # an older generation without checking its subscription (decision 47).
                    violations.anomalies.append(
                        warning(
                            "assignment",
                            f"Kafka anomaly: member {shown(member_id)} gets {partition}, which it owned, "
                            f"but no longer subscribes to {topic}; its consumer will not fetch it and "
                            "will rejoin the group (a further rebalance)",
                        )
                    )
                else:
                    flag(
                        ViolationCode.NOT_SUBSCRIBED,
                        f"member {shown(member_id)} got {partition} but does not subscribe to {topic}",
                        member_id,
                        partition,
                    )
            owners[partition].append(member_id)
            sizes[member_id] += 1

    # Ownership after Kafka's clean-up, for stickiness. For cooperative rebalancing what counts is
    # who still holds a partition: every member listing it, whatever the generation, keeps
    # consuming it until it revokes it, so no other member may get it in the same round.
    previous_owner = {p: m.id for m in problem.members for p in m.owned_partitions}
    cooperative = problem.config.cooperative
    withheld = 0
    taken = _taken_by_target(problem, target) if cooperative and followup else set()
    for partition in assignable:
        holders = owners.get(partition, [])
        if len(holders) > 1:
            flag(
                ViolationCode.PARTITION_ASSIGNED_MULTIPLE_TIMES,
                f"partition {partition} is assigned to {', '.join(shown(h) for h in holders)}",
                task=partition,
            )
        if cooperative and claimed_by.get(partition):
            claimants = claimed_by[partition]
            if holders and not claimants & set(holders):
                flag(
                    ViolationCode.COOPERATIVE_TRANSFER_IN_ONE_ROUND,
                    f"partition {partition} moves from {', '.join(shown(c) for c in sorted(claimants))} to "
                    f"{shown(holders[0])} in one round; cooperative rebalancing withholds it until "
                    "it is revoked",
                    holders[0],
                    partition,
                )
            if not holders and followup:
                withheld += 1
                if partition not in taken:
                    flag(
                        ViolationCode.PARTITION_UNASSIGNED,
                        f"partition {partition} is withheld until its holders revoke it, but "
                        + ("the solution has no target" if target is None else "its target gives it to no subscribed member")
                        + ": no rebalance would assign it",
                        task=partition,
                    )
                continue
        if not holders:
            flag(ViolationCode.PARTITION_UNASSIGNED, f"partition {partition} is unassigned", task=partition)

    kept = sum(1 for p, m in previous_owner.items() if m in owners.get(p, ()))
    size_values = np.sort(np.array([sizes[m.id] for m in problem.members], dtype=np.int64))
    n = len(size_values)
    # Sum over pairs |a - b| of a sorted vector: each value counts +1 for those below, -1 above.
    balance_score = int(np.dot(size_values, 2 * np.arange(n) - n + 1))

    cross_rack = 0
    traffic = _CrossRackBytes()
    member_bytes = dict.fromkeys(members, 0)
    for partition, holders in owners.items():
        replicas = problem.replica_racks_of(partition)
        leader = problem.leader_rack_of(partition)
        serving = serving_racks(replicas, leader, problem.config.follower_fetching)
        rate = problem.rate_of(partition)
        for member_id in holders:
            cross_rack += reads_across_racks(members[member_id].rack, serving)
            traffic.read("active", members[member_id].rack, rate, serving, replicas, leader)
            member_bytes[member_id] += rate
    ordered = sorted(members)
    capacity = np.array([milli(members[m].capacity) / MILLI for m in ordered])
    max_load, load_skew = _per_capacity(np.array([sizes[m] for m in ordered], dtype=float), capacity)
    max_bytes, bytes_skew = _per_capacity(np.array([member_bytes[m] for m in ordered], dtype=float), capacity)
    rates = problem.has_rates

    leaders_missing = (
        problem.has_leaders
        and not problem.config.follower_fetching
        and any((leaders := topics[t].leader_racks) is None or None in leaders for t in subscribed)
    )
    rack_info_complete = (
        all(m.rack is not None for m in problem.members)
        and all((racks := topics[t].replica_racks) is not None and all(racks) for t in subscribed)
        and not leaders_missing
    )
    metrics = ConsumerMetrics(
        members=n,
        partitions=len(assignable),
        assigned_partitions=sum(1 for p in assignable if owners.get(p)),
        withheld_partitions=withheld,
        min_size=int(size_values.min()) if n else 0,
        max_size=int(size_values.max()) if n else 0,
        size_skew=int(size_values.max() - size_values.min()) if n else 0,
        balance_score=balance_score,
        owned_kept=kept,
        owned_moved=len(previous_owner) - kept,
        cross_rack_partitions=cross_rack,
        rack_info_complete=rack_info_complete,
        cross_rack_bytes=traffic.total["active"] if rates else None,
        cross_rack_bytes_by_racks=traffic.matrix() if rates else {},
        max_load_per_capacity=max_load,
        load_per_capacity_skew=load_skew,
        max_bytes_per_capacity=max_bytes if rates else None,
        bytes_per_capacity_skew=bytes_skew if rates else None,
    )
    return violations, metrics


def record_evaluation(
    solution: Solution, evaluation: Evaluation, problem: Problem, solver_warnings: tuple[Issue, ...] = ()
) -> Solution:
    """The solution with the evaluation's metrics, the problem's warnings and the solver's
    (`solver_warnings`) recorded in it."""
    return solution.model_copy(
        update={
            "problem": solution.problem or problem.name,
            "kind": problem.kind,
            "metrics": evaluation.metrics,
            "warnings": evaluation.warnings + tuple(solver_warnings),
        }
    )
