"""What the plug points do not tell the service, read from the cluster: leaders, the brokers'
`replica.selector.class` and, with `--sample-seconds`, each partition's bytes per second
(`kafka-assign serve --bootstrap-server`).

A plug-in sends what its plug point gives: replica racks (KIP-848, KIP-924) or leaders without the
brokers' replica selector (classic consumers). Cross-rack reads depend on who serves them: the
leader, unless the brokers run `RackAwareReplicaSelector` (KIP-392; docs/file-formats.md, "Leaders
and follower fetching"). Without them the exact assignment counts only the reads that are certainly
cross-rack (no replica in the reader's rack). With a cluster to ask, the service reads every topic's
leaders and replicas and the brokers' selector in the background (`ClusterMetadata`, every
`refresh_seconds`, through `kao.jvm.Describe --topics`), and `enrich` adds them to each request's
problem: a KIP-848 topic by its id, others by name; a topic whose partition count or replicas
changed since is left as the plug-in sent it. Streams groups' plug point names neither the group
nor its topics: the view also holds every streams group's topology and members (ids and process
ids), and a request is given its group's real topics when exactly one group has one of its members
or processes and the request's topology (`streams_group_of`); the leaders and racks follow as for
other requests. A request from members the view has not seen yet (a new group, before the next
refresh) goes as the plug-in sent it, and asks for an early refresh.

No plug point carries throughputs either. With `sample_seconds`, each refresh also measures every
topic's partitions over that window (`optimizer.kafka.sample`, the importer's method), and `enrich`
adds the rates where every partition of a topic was measured: the default goals then count
cross-rack reads in bytes (`cross_rack_bytes`), so that a busy partition weighs what it carries.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from optimizer.errors import KafkaAssignmentError
from optimizer.kafka.describe import cluster_topics, replica_selector
from optimizer.kafka.sample import sample_rates
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.problem import Problem, problem_from_data, problem_to_data
from optimizer.model.streams import StreamsProblem

SELECTOR_KEY = "replica.selector.class"
EARLY_REFRESH_SECONDS = 5.0
"""The shortest time between two reads of the cluster that requests asked for (`refresh_soon`)."""


@dataclass(frozen=True)
class TopicView:
    """One topic as the cluster has it: per partition, its leader's rack and its replicas' racks."""

    name: str
    topic_id: str
    leader_racks: tuple[str | None, ...]
    replica_racks: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class StreamsGroupView:
    """A streams group as the cluster describes it: per subtopology id, the topics its tasks read
    (sources and repartition sources) and its state changelogs; its members' and processes' ids."""

    group: str
    inputs: dict[str, tuple[str, ...]]
    changelogs: dict[str, tuple[str, ...]]
    member_ids: frozenset[str]
    process_ids: frozenset[str]


@dataclass(frozen=True)
class ClusterView:
    """The cluster's topics (by name and by id) and its brokers' replica selector, when read."""

    topics: dict[str, TopicView]
    by_id: dict[str, TopicView]
    selector: str | None
    """`replica.selector.class` when every broker has the same (None: unset, the leader serves)."""
    selector_known: bool
    read_at: float
    rates: dict[tuple[str, int], float] = field(default_factory=dict)
    """(topic, partition) -> bytes per second, when sampled."""
    streams_groups: dict[str, StreamsGroupView] = field(default_factory=dict)
    """Every streams group's topology and members, by group id."""

    @classmethod
    def of(cls, described: dict[str, Any]) -> ClusterView:
        brokers = described.get("brokers", [])
        racks = {int(b["id"]): b.get("rack") for b in brokers}
        selector, differs = replica_selector(brokers)
        topics = {}
        for name, topic in described.get("topics", {}).items():
            partitions = sorted(topic["partitions"], key=lambda p: p["partition"])
            topics[name] = TopicView(
                name=name,
                topic_id=topic["id"],
                leader_racks=tuple(None if p["leader"] is None else racks.get(int(p["leader"])) for p in partitions),
                replica_racks=tuple(tuple(sorted({racks[r] for r in p["replicas"] if racks.get(r)})) for p in partitions),
            )
        groups = {}
        for group, entry in described.get("streams_groups", {}).items():
            subtopologies = entry.get("subtopologies", [])
            groups[group] = StreamsGroupView(
                group=group,
                inputs={str(s["id"]): tuple(sorted({*s.get("source_topics", []), *s.get("repartition_source_topics", {})})) for s in subtopologies},
                changelogs={str(s["id"]): tuple(sorted(s.get("state_changelog_topics", {}))) for s in subtopologies},
                member_ids=frozenset(m["member_id"] for m in entry.get("members", [])),
                process_ids=frozenset(m["process_id"] for m in entry.get("members", [])),
            )
        return cls(topics, {t.topic_id: t for t in topics.values()}, selector, differs is None, time.monotonic(), streams_groups=groups)


class ClusterMetadata:
    """The cluster's view, read at `start()` and every `refresh_seconds` after, in a thread of its
    own; `current()` is the last view read (None before the first read succeeds). Failures are
    logged when they change, and the last good view is kept."""

    def __init__(
        self, bootstrap: str, command_config: Path | None = None, refresh_seconds: float = 60.0, log: Callable[[str], None] | None = None,
        timeout: float = 30.0, sample_seconds: float | None = None,
    ):  # fmt: skip
        self.bootstrap = bootstrap
        self.command_config = command_config
        self.refresh_seconds = refresh_seconds
        self.sample_seconds = sample_seconds
        self.timeout = timeout
        self._log = log or (lambda line: None)
        self._view: ClusterView | None = None
        self._stopped = threading.Event()
        self._wake = threading.Event()
        self._read_at = -math.inf
        self._thread: threading.Thread | None = None
        self._last_error: str | None = None

    def set_log(self, log: Callable[[str], None]) -> None:
        self._log = log

    def current(self) -> ClusterView | None:
        return self._view

    def refresh(self) -> None:
        """Read the cluster once now."""
        try:
            view = ClusterView.of(cluster_topics(self.bootstrap, self.command_config, self.timeout))
        except KafkaAssignmentError as error:
            if str(error) != self._last_error:
                kept = "keeping the view read before" if self._view is not None else "requests go without leaders until it answers"
                self._log(f"cluster metadata: cannot read kafka://{self.bootstrap}: {error} ({kept})")
            self._last_error = str(error)
            return
        if self._view is None or self._last_error is not None:
            self._log(f"cluster metadata: {len(view.topics)} topics from kafka://{self.bootstrap}, replica.selector.class {view.selector or 'unset'}")
        self._last_error = None
        self._view = view

    def sample(self) -> None:
        """Measure every known topic's rates over `sample_seconds` (nothing without a view)."""
        view = self._view
        if view is None or not self.sample_seconds or not view.topics:
            return
        unmeasured: list[str] = []
        try:
            rates = sample_rates(self.bootstrap, sorted(view.topics), self.sample_seconds, self.command_config, self.timeout, unmeasured)
        except KafkaAssignmentError as error:  # a topic deleted meanwhile, the cluster gone: the next round tries again
            self._log(f"cluster metadata: sampling rates on kafka://{self.bootstrap} failed: {error}")
            return
        if unmeasured:
            self._log(f"cluster metadata: {len(unmeasured)} partitions without a rate ({unmeasured[0]}{' ...' if len(unmeasured) > 1 else ''})")
        current = self._view
        if current is not None:
            self._view = replace(current, rates={key: rate.bytes_per_second for key, rate in rates.items()})

    def start(self) -> ClusterMetadata:
        """Read in a thread of its own, the first time at once: the service serves meanwhile
        (requests go without the cluster's view until it is read)."""
        self._thread = threading.Thread(target=self._run, name="kao-cluster-metadata", daemon=True)
        self._thread.start()
        return self

    def wait_ready(self, seconds: float) -> bool:
        """Whether a view was read within `seconds` (for callers that want one before they start)."""
        deadline = time.monotonic() + seconds
        while self._view is None and time.monotonic() < deadline and not self._stopped.is_set():
            time.sleep(0.1)
        return self._view is not None

    def refresh_soon(self) -> None:
        """Read again now rather than at the next period (a request found the view out of date), at
        most once every EARLY_REFRESH_SECONDS."""
        if time.monotonic() - self._read_at >= EARLY_REFRESH_SECONDS:
            self._wake.set()

    def _run(self) -> None:
        while True:
            self._read_at = time.monotonic()
            self._wake.clear()
            try:
                rates = self._view.rates if self._view is not None else {}
                self.refresh()
                if self._view is not None and rates and not self._view.rates:  # the last rates stand until measured again
                    self._view = replace(self._view, rates=rates)
                self.sample()
            except Exception as error:  # noqa: BLE001 - the reading thread must outlive a bad answer; said, retried next round
                self._log(f"cluster metadata: reading kafka://{self.bootstrap} failed: {type(error).__name__}: {error}")
            self._wake.wait(self.refresh_seconds)
            if self._stopped.is_set():
                return

    def stop(self) -> None:
        self._stopped.set()
        self._wake.set()


def enrich(problem: Problem, view: ClusterView, streams_group: StreamsGroupView | None = None) -> tuple[Problem, int]:
    """`problem` with the leaders, replica racks and replica selector `view` knows, and how many
    topics it added them to (0: the problem as it was). `streams_group`: the group a streams group's
    request comes from (`streams_group_of`), whose real topics replace the request's made-up ones
    (`STREAMS_GROUP_TOPICS`) first."""
    data = problem_to_data(problem)
    if streams_group is not None:
        _real_topics(data, streams_group)
    if isinstance(problem, ConsumerProblem):
        added = sum(_consumer_topic(topic, view) for topic in data["topics"])
    elif isinstance(problem, StreamsProblem):
        done: set[str] = set()
        for task in data["tasks"]:
            for key in ("source_partitions", "changelog_partitions"):
                done |= _streams_partitions(task.get(key, []), view)
        added = len(done)
    else:  # pragma: no cover - every kind is above
        return problem, 0
    if added == 0:
        return problem, 0
    config = data.setdefault("config", {})
    if view.selector_known and view.selector is not None and SELECTOR_KEY not in config:
        config[SELECTOR_KEY] = view.selector
    return problem_from_data(data, f"{problem.name} with the cluster's leaders"), added


def streams_group_of(problem: Problem, view: ClusterView) -> StreamsGroupView | None:
    """The streams group a streams-group request's problem comes from (its plug point gives no group
    id): the one group that has one of its members or processes and the same topology (subtopology
    ids, each one's partition count as the cluster has its input topics, and which are stateful).
    None when no group, or more than one, is such."""
    if not isinstance(problem, StreamsProblem):
        return None
    members = {m.id for c in problem.clients for m in c.members}
    processes = {c.kafka_process_id for c in problem.clients}
    partitions: dict[str, int] = {}
    stateful: dict[str, bool] = {}
    for task in problem.tasks:
        subtopology = task.id.split("_", 1)[0]
        partitions[subtopology] = partitions.get(subtopology, 0) + 1
        stateful[subtopology] = stateful.get(subtopology, False) or task.stateful
    found = []
    for group in view.streams_groups.values():
        if not (group.member_ids & members or group.process_ids & processes) or set(group.inputs) != set(partitions):
            continue
        counts_match = all(
            group.inputs[s] and all(t in view.topics and len(view.topics[t].leader_racks) == count for t in group.inputs[s])
            and bool(group.changelogs[s]) == stateful[s]
            for s, count in partitions.items()
        )  # fmt: skip
        if counts_match:
            found.append(group)
    return found[0] if len(found) == 1 else None


def _real_topics(data: dict[str, Any], group: StreamsGroupView) -> None:
    """A streams-group problem's made-up topics replaced by the group's: task s_p reads partition p
    of each of subtopology s's input topics and writes partition p of each of its changelogs."""
    for task in data["tasks"]:
        subtopology, partition = task["id"].split("_", 1)
        task["source_partitions"] = [{"topic": topic, "partition": int(partition)} for topic in group.inputs[subtopology]]
        changelogs = [{"topic": topic, "partition": int(partition)} for topic in group.changelogs[subtopology]]
        if changelogs:
            task["changelog_partitions"] = changelogs
        else:
            task.pop("changelog_partitions", None)


def _consumer_topic(topic: dict[str, Any], view: ClusterView) -> bool:
    known = view.by_id.get(topic["topic_id"]) if topic.get("topic_id") else view.topics.get(topic["name"])
    if known is None or len(known.leader_racks) != topic["partitions"]:
        return False
    given = topic.get("replica_racks")
    if given is not None and [sorted(r) for r in given] != [list(r) for r in known.replica_racks]:
        return False  # reassigned since the view was read: the plug-in's racks are newer
    if given is None and any(known.replica_racks):
        topic["replica_racks"] = [list(r) for r in known.replica_racks]
    if topic.get("leader_racks") is None and any(r is not None for r in known.leader_racks):
        topic["leader_racks"] = list(known.leader_racks)
    rates = [view.rates.get((known.name, p)) for p in range(topic["partitions"])]
    if "partition_bytes_per_second" not in topic and "bytes_per_second" not in topic and all(r is not None for r in rates):
        topic["partition_bytes_per_second"] = rates
    return True


def _streams_partitions(partitions: list[dict[str, Any]], view: ClusterView) -> set[str]:
    """Adds leaders (and missing replica racks) to a task's partitions; the topics it did."""
    done = set()
    for partition in partitions:
        known = view.topics.get(partition["topic"])
        number = partition["partition"]
        if known is None or number >= len(known.leader_racks):
            continue
        racks = list(known.replica_racks[number])
        given = partition.get("replica_racks")
        if given and sorted(given) != racks:
            continue
        if not given and racks:
            partition["replica_racks"] = racks
        leader = known.leader_racks[number]
        if leader is not None and partition.get("leader_rack") is None and (not racks or leader in racks):
            partition["leader_rack"] = leader
        rate = view.rates.get((partition["topic"], number))
        if rate is not None and partition.get("bytes_per_second") is None:
            partition["bytes_per_second"] = rate
        done.add(partition["topic"])
    return done
