"""A live Kafka cluster as a source of Streams problems (issue 31): one Kafka Streams application, a
classic one (`group.protocol: classic`, its members chose the `stream` assignor) or a KIP-1071
streams group (`group.protocol: streams`), read by `optimizer.kafka.streams_describe` and mapped to
a Streams problem document (problem format v1, `kind: streams`; docs/import-design.md, sections 3,
4 and 10, say what comes from where).

`read_streams_application(bootstrap, application_id)` gives a `StreamsImport`: the document, and
the warnings that say what the cluster could not tell and was defaulted, inferred or guessed (the
same sentences end the document's `description`); `import_streams_application` gives the document
alone. `map_streams_application` / `streams_problem` do the mapping on the adapter's JSON.

What the document holds:

* `clients`: one per process id, with its threads (the members), rack, client tags, the tasks it
  runs now as `previous_active` / `previous_standby` (a streams group's clients list their
  `members`, each thread with its own tasks), and `lags`: the changelog end offsets
  (listOffsets) minus the offsets the process reported (classic: the task offset sums of its
  Streams subscription, sent at its last join; streams: the task offsets its members last sent),
  computed as Kafka's `ClientState.computeTaskLags` does. A process's running actives have none.
* `tasks`: classic, every task the assignments run with its source partitions (Streams'
  AssignmentInfo aligned with the sorted assigned partitions), stateful when a standby or an offset
  sum names its subtopology, its changelog partitions from the `<application id>-<store>-changelog`
  topics; streams, the subtopologies the group describes. Every partition with its `replica_racks`
  and `leader_rack` (the brokers' `broker.rack`).
* `config`: `num.standby.replicas` (classic: inferred from the standbys that run, or given; streams:
  the group's `streams.num.standby.replicas`), `rack.aware.assignment.tags` (classic: guessed from
  the client tag keys; streams: the group's config), `group.protocol`, `streams.assignor.name`, and
  `kafka.version` (the project's default: a cluster does not say its clients' release). A classic
  application's other assignor settings are its own StreamsConfig, not on the cluster: Kafka's
  defaults apply.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from optimizer.errors import InvalidInputError
from optimizer.kafka.describe import replica_selector
from optimizer.kafka.streams_describe import describe_streams_application
from optimizer.model.ids import task_key
from optimizer.model.issues import Issue, Severity
from optimizer.model.releases import DEFAULT_KAFKA_VERSION

LATEST_OFFSET = -2
"""The offset sum of a running active task (Streams' `Task.LATEST_OFFSET`)."""
UNKNOWN_OFFSET_SUM = -3
"""An offset sum Streams could not compute (`SubscriptionInfo.UNKNOWN_OFFSET_SUM`)."""

STREAMS_ASSIGNORS = ("sticky", "balanced")
"""The streams-group assignors a problem can name (`streams.assignor.name`)."""

_CLASSIC_DEFAULTS = (
    "acceptable.recovery.lag 10000, max.warmup.replicas 2, probing.rebalance.interval.ms 600000, "
    "task.assignor.class high_availability, rack.aware.assignment.strategy none (and its costs unset)"
)
_THREAD = re.compile(r"StreamThread-(\d+)")
_PROCESS_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
"""A process id as Kafka Streams writes it: a streams-group client keeps it as its `process_id`."""

Rates = Mapping[tuple[str, int], float]
"""Bytes per second per partition, `{(topic, partition): rate}`."""


@dataclass(frozen=True)
class StreamsImport:
    """An imported Kafka Streams application: the problem document (plain data, valid for
    `problem_from_data`) and what the cluster could not tell, one sentence each (also at the end
    of the document's `description`)."""

    document: dict[str, Any]
    warnings: tuple[str, ...]


def read_streams_application(
    bootstrap: str, application_id: str, command_config: Path | None = None, timeout: float = 30.0,
    num_standby_replicas: int | None = None, rates: Rates | None = None,
) -> StreamsImport:  # fmt: skip
    """The Kafka Streams application `application_id` of the cluster at `bootstrap`, imported."""
    described = describe_streams_application(bootstrap, application_id, command_config, timeout)
    return map_streams_application(described, bootstrap, num_standby_replicas=num_standby_replicas, rates=rates)


def import_streams_application(
    bootstrap: str, application_id: str, command_config: Path | None = None, timeout: float = 30.0,
    num_standby_replicas: int | None = None, rates: Rates | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The Kafka Streams application `application_id` of the cluster at `bootstrap` as a problem
    document (its warnings in its `description`; `read_streams_application` returns them too)."""
    return read_streams_application(bootstrap, application_id, command_config, timeout, num_standby_replicas, rates).document


def streams_problem(described: dict[str, Any], bootstrap: str, *, num_standby_replicas: int | None = None, rates: Rates | None = None) -> dict[str, Any]:
    """`kao.jvm.DescribeStreams`'s JSON as a Streams problem document."""
    return map_streams_application(described, bootstrap, num_standby_replicas=num_standby_replicas, rates=rates).document


def map_streams_application(
    described: dict[str, Any], bootstrap: str, *, num_standby_replicas: int | None = None, rates: Rates | None = None,
) -> StreamsImport:  # fmt: skip
    """`kao.jvm.DescribeStreams`'s JSON as a Streams problem document, with its warnings.
    `num_standby_replicas` overrides what the cluster says or what is inferred; `rates` gives
    `bytes_per_second` to the source and changelog partitions it covers."""
    if num_standby_replicas is not None and (isinstance(num_standby_replicas, bool) or not 0 <= num_standby_replicas <= 2**31 - 1):
        raise _refused(f"kafka://{bootstrap}", f"num.standby.replicas must be a whole number from 0, got {num_standby_replicas!r}")
    mapping = _Mapping(described, bootstrap, rates or {})
    return mapping.run(num_standby_replicas)


def _refused(source: str, message: str) -> InvalidInputError:
    return InvalidInputError(source, [Issue(severity=Severity.ERROR, message=message)])


def _task_order(task: str) -> tuple[int, int]:
    return task_key(task)


def _sorted_tasks(tasks: Iterable[str]) -> list[str]:
    return sorted(set(tasks), key=_task_order)


_TASK_ID = re.compile(r"(0|[1-9][0-9]*)_(0|[1-9][0-9]*)")


class _Mapping:
    """One application's JSON being mapped: the pieces the two protocols share."""

    def __init__(self, described: dict[str, Any], bootstrap: str, rates: Rates):
        self.described = described
        self.application = str(described["application_id"])
        self.protocol = described.get("protocol")
        self.source = f"kafka://{bootstrap}"
        self.bootstrap = bootstrap
        self.rates = rates
        self.warnings: list[str] = []
        self.racks = {int(broker["id"]): broker.get("rack") for broker in described.get("brokers", [])}
        self.topics: dict[str, list[dict[str, Any]]] = {name: topic["partitions"] for name, topic in described.get("topics", {}).items()}
        self.end_offsets: dict[str, list[int]] = described.get("end_offsets", {})
        self.unracked: set[str] = set()

    def refuse(self, message: str) -> InvalidInputError:
        return _refused(self.source, f"Kafka Streams application {self.application!r}: {message}")

    # ---- partitions ----

    def partition(self, topic: str, number: int) -> dict[str, Any]:
        partitions = self.topics.get(topic)
        if partitions is None or number >= len(partitions):
            raise self.refuse(f"partition {topic}-{number} is not among the topics the cluster described (deleted while reading?)")
        entry: dict[str, Any] = {"topic": topic, "partition": number}
        racks = [self.racks.get(replica) for replica in partitions[number]["replicas"]]
        if racks and all(racks):
            entry["replica_racks"] = racks
        else:
            self.unracked.add(topic)
        leader = partitions[number].get("leader")
        if leader is not None and self.racks.get(leader):
            entry["leader_rack"] = self.racks[leader]
        rate = self.rates.get((topic, number))
        if rate is not None:
            entry["bytes_per_second"] = rate
        return entry

    def end_offset(self, topic: str, number: int) -> int | None:
        offsets = self.end_offsets.get(topic)
        return None if offsets is None or number >= len(offsets) else int(offsets[number])

    # ---- the whole document ----

    def run(self, num_standby_replicas: int | None) -> StreamsImport:
        if self.protocol == "classic":
            clients, tasks, config, notes = self.classic(num_standby_replicas)
        elif self.protocol == "streams":
            clients, tasks, config, notes = self.streams(num_standby_replicas)
        else:
            raise self.refuse(f"not a Kafka Streams application (a {self.described.get('type')} group, assignor {self.described.get('assignor')!r})")
        if self.unracked:
            self.warnings.append(
                f"replica_racks left out for the partitions of {', '.join(sorted(self.unracked))}: a broker holding a replica has no broker.rack"
            )
        selector, differ = replica_selector(self.described.get("brokers", []))
        if selector is not None:
            config["replica.selector.class"] = selector
        if differ is not None:
            self.warnings.append(differ)
        self.warnings.append(f"kafka.version {DEFAULT_KAFKA_VERSION}: the project's default (a cluster does not say its clients' Kafka release)")
        config["kafka.version"] = DEFAULT_KAFKA_VERSION
        when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        description = (
            f"Kafka Streams application {self.application} imported from {self.source} at {when} ({notes}). "
            f"Warnings (what the cluster does not tell, defaulted, inferred or guessed): {'; '.join(self.warnings)}."
        )
        document = {
            "format": "kafka-assignment-problem/v1",
            "kind": "streams",
            "name": self.application,
            "description": description,
            "config": config,
            "clients": clients,
            "tasks": tasks,
        }
        return StreamsImport(document, tuple(self.warnings))

    @staticmethod
    def member_lags(reported: Mapping[str, Any], tasks: Mapping[str, dict[str, Any]]) -> dict[str, int]:
        """A streams-group member's own lags: every task offset it reported, as the coordinator holds
        it (Kafka 4.4 takes each member reporting a task as a standby candidate), behind its
        changelog's end offset (the end offset when the offset is past it); none for a task the
        problem does not have or that has no changelog."""
        lags: dict[str, int] = {}
        for task, offset in sorted(reported.items(), key=lambda item: _task_order(item[0])):
            known = tasks.get(task)
            if known is None or "changelog_end_offset" not in known:
                continue
            end = int(known["changelog_end_offset"])
            lags[task] = end if end < int(offset) else end - int(offset)
        return lags

    def lags(self, reported: Mapping[str, int], running: set[str], tasks: Mapping[str, dict[str, Any]]) -> dict[str, int]:
        """A client's lags from the offset sums it reported, as `ClientState.computeTaskLags`:
        end offset sum minus offset sum, the end offset sum when it is the smaller (a corrupted
        task), 0 for a running active (`LATEST_OFFSET`) and for an unknown sum (`UNKNOWN_OFFSET_SUM`,
        which Kafka keeps as the lag, caught up); none for a task the problem does not have or that has
        no changelog, and for the client's own running actives."""
        lags: dict[str, int] = {}
        for task, offset in sorted(reported.items(), key=lambda item: _task_order(item[0])):
            known = tasks.get(task)
            if known is None or task in running or "changelog_end_offset" not in known:
                continue
            end = int(known["changelog_end_offset"])
            if offset in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM):  # Kafka keeps -3 as the lag: below any acceptable lag, caught up
                lags[task] = 0
            elif end < offset:
                lags[task] = end
            else:
                lags[task] = end - offset
        return lags

    def changelog_fields(self, task: dict[str, Any], changelogs: Iterable[str], partition: int) -> None:
        parts = [self.partition(topic, partition) for topic in sorted(changelogs)]
        if parts:
            task["changelog_partitions"] = parts
            ends = [self.end_offset(topic, partition) for topic in sorted(changelogs)]
            if all(end is not None for end in ends):
                task["changelog_end_offset"] = sum(int(end) for end in ends if end is not None)

    # ---- classic Kafka Streams applications ----

    def classic(self, num_standby_replicas: int | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any], str]:
        members = self.described["members"]
        for member in members:
            if not member.get("process_id"):
                raise self.refuse(f"member {member.get('member_id')} sent no Streams subscription (is it a Kafka Streams client?)")
        # the tasks: every active task with its source partitions
        sources: dict[str, list[tuple[str, int]]] = {}
        for task in self.described.get("tasks", []):
            if not _TASK_ID.fullmatch(str(task["id"])):
                raise self.refuse(f"task {task['id']!r} is not '<subtopology>_<partition>' (named topologies cannot be imported)")
            sources[task["id"]] = [(str(t), int(p)) for t, p in task["source_partitions"]]
        if not sources:
            raise self.refuse("its members run no active task: there is no task to import")
        by_process: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for member in members:
            by_process[str(member["process_id"])].append(member)
        standby_holders: dict[str, set[str]] = defaultdict(set)
        stateful_seen: set[int] = set()
        for process, threads in by_process.items():
            for member in threads:
                for task in member.get("standby_tasks", {}):
                    standby_holders[task].add(process)
                for task in (*member.get("standby_tasks", {}), *member.get("task_offset_sums", {}), *member.get("prev_standby_tasks", [])):
                    if _TASK_ID.fullmatch(task):
                        stateful_seen.add(task_key(task)[0])
        counts: dict[int, int] = defaultdict(int)
        for task in sources:
            subtopology, partition = task_key(task)
            counts[subtopology] = max(counts[subtopology], partition + 1)
        changelogs_of = self.attribute_changelogs(counts, stateful_seen)
        stateful = {s for s in counts if s in stateful_seen or changelogs_of.get(s)}
        tasks: dict[str, dict[str, Any]] = {}
        for task in _sorted_tasks(sources):
            subtopology, partition = task_key(task)
            entry: dict[str, Any] = {"id": task, "stateful": subtopology in stateful}
            entry["source_partitions"] = [self.partition(topic, number) for topic, number in sorted(sources[task])]
            self.changelog_fields(entry, changelogs_of.get(subtopology, ()), partition)
            tasks[task] = entry
        for subtopology in sorted(stateful):
            if not changelogs_of.get(subtopology):
                self.warnings.append(
                    f"subtopology {subtopology} is stateful but no {self.application}-*-changelog topic belongs to it "
                    "(a source-topic changelog?): its tasks have no changelog_end_offset, and lags cannot be computed for them"
                )
        # the standby count: the most processes any stateful task has as standby
        inferred = max((len(standby_holders.get(task, ())) for task, entry in tasks.items() if entry["stateful"]), default=0)
        if num_standby_replicas is None:
            standbys = inferred
            self.warnings.append(
                f"num.standby.replicas {inferred}: inferred from the standbys the application runs (the most any task has; "
                "a lower bound, as Kafka places fewer when clients are lacking); --num-standby-replicas sets it"
            )
        else:
            standbys = num_standby_replicas
            if num_standby_replicas < inferred:
                self.warnings.append(f"num.standby.replicas {num_standby_replicas} as given, but a task runs {inferred} standbys")
        config: dict[str, Any] = {"group.protocol": "classic", "num.standby.replicas": standbys}
        clients = []
        tag_keys: list[set[str]] = []
        generations = set()
        for process in sorted(by_process):
            threads = sorted(by_process[process], key=_thread_order)
            active = _sorted_tasks(task for member in threads for task, _ in member.get("active_tasks", []))
            standby = _sorted_tasks(task for member in threads for task in member.get("standby_tasks", {}))
            reported: dict[str, int] = {}
            for member in threads:
                for task, offset in member.get("task_offset_sums", {}).items():
                    if task not in reported or offset == LATEST_OFFSET or (reported[task] != LATEST_OFFSET and offset > reported[task]):
                        reported[task] = int(offset)
                if member.get("generation") is not None:
                    generations.add(int(member["generation"]))
            client: dict[str, Any] = {"id": process}
            rack = self.common(process, threads, "rack")
            if rack:
                client["rack"] = rack
            client["threads"] = len(threads)
            tags = self.common(process, threads, "client_tags") or {}
            if tags:
                client["tags"] = dict(sorted(tags.items()))
            tag_keys.append(set(tags))
            client["previous_active"] = active
            client["previous_standby"] = [task for task in standby if task not in set(active)]
            lags = self.lags(reported, set(active), tasks)
            if lags:
                client["lags"] = lags
            clients.append(client)
        common_keys = set.intersection(*tag_keys) if tag_keys else set()
        if common_keys:
            config["rack.aware.assignment.tags"] = sorted(common_keys)
            self.warnings.append(
                f"rack.aware.assignment.tags {sorted(common_keys)}: guessed from the client tag keys every client reports "
                "(client.tag.*); the application's own setting is not on the cluster"
            )
        elif any(tag_keys):
            self.warnings.append("rack.aware.assignment.tags left empty: the clients report tags, but no tag key is common to all of them")
        self.warnings.append(f"{_CLASSIC_DEFAULTS}: Kafka's defaults, as a classic application's own StreamsConfig is not on the cluster")
        probing = sorted({int(m["next_rebalance_ms"]) for m in members if m.get("next_rebalance_ms") is not None})
        if probing:
            at = datetime.fromtimestamp(probing[0] / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            self.warnings.append(
                f"a probing rebalance is scheduled for {at} (warm-ups are catching up): the application runs a step of Kafka's plan, "
                "and the next rebalance moves tasks"
            )
        generation = max(generations) if generations else None
        self.warnings.append(
            "the lags come from the task offset sums each process sent at its last join"
            + (f" (generation {generation})" if generation is not None else "")
            + ": they are as old as the last rebalance"
        )
        notes = f"classic protocol, state {self.described['state']}, {len(clients)} clients, {len(members)} stream threads"
        return clients, list(tasks.values()), config, notes

    def common(self, process: str, threads: list[dict[str, Any]], field: str) -> Any:
        """The value every thread of a process reports for `field` (rack, client tags); the first
        thread's, with a warning, when they differ."""
        values = [thread.get(field) for thread in threads]
        if any(value != values[0] for value in values[1:]):
            self.warnings.append(f"the stream threads of process {process} report different {field.replace('_', ' ')} values {values}: the first is taken")
        return values[0]

    def attribute_changelogs(self, counts: Mapping[int, int], stateful: set[int]) -> dict[int, list[str]]:
        """Each changelog topic `<application id>-*-changelog` given to the subtopology it belongs
        to: the one stateful subtopology; else the only one (stateful first) with as many tasks as
        the changelog has partitions. Refused when that does not decide it, naming the changelogs."""
        owned: dict[int, list[str]] = defaultdict(list)
        undecided: list[str] = []
        known = sorted(s for s in stateful if s in counts)
        for topic in self.described.get("changelog_topics", []):
            partitions = len(self.topics.get(topic, []))
            if len(known) == 1 and counts[known[0]] == partitions:
                owned[known[0]].append(topic)
                continue
            candidates = [s for s in known if counts[s] == partitions]
            by_count = False
            if not candidates:
                candidates = [s for s in sorted(counts) if s not in stateful and counts[s] == partitions]
                by_count = True
            if len(candidates) == 1:
                owned[candidates[0]].append(topic)
                if by_count or len(known) > 1:
                    self.warnings.append(
                        f"changelog {topic} given to subtopology {candidates[0]} by its partition count ({partitions}): "
                        "the only subtopology with that many tasks"
                    )
            elif not candidates:
                self.warnings.append(f"changelog {topic} ({partitions} partitions) matches no subtopology's task count: left out (a left-over?)")
            else:
                undecided.append(f"{topic} ({partitions} partitions: subtopologies {', '.join(map(str, candidates))})")
        if undecided:
            why = (
                "several stateful ones have that many tasks"
                if stateful
                else "none is known to be stateful yet (no standby or offset sum names one: retry after the next rebalance)"
            )
            raise self.refuse(
                f"the changelogs {'; '.join(undecided)} cannot be attributed to a subtopology: the cluster does not say which "
                f"subtopology owns which store, and {why}"
            )
        return owned

    # ---- KIP-1071 streams groups ----

    def streams(self, num_standby_replicas: int | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any], str]:
        assignor = self.described.get("assignor") or "sticky"
        if assignor not in STREAMS_ASSIGNORS:
            raise self.refuse(f"the group's assignor {assignor!r} is not one of Kafka's ({', '.join(STREAMS_ASSIGNORS)}): it cannot be reproduced")
        tasks: dict[str, dict[str, Any]] = {}
        for subtopology in self.described.get("subtopologies", []):
            ident = str(subtopology["id"])
            if not re.fullmatch(r"0|[1-9][0-9]*", ident):
                raise self.refuse(f"subtopology {ident!r} is not a number (named topologies cannot be imported)")
            inputs = sorted({*subtopology.get("source_topics", []), *subtopology.get("repartition_source_topics", {})})
            changelogs = sorted(subtopology.get("state_changelog_topics", {}))
            counts = {topic: len(self.topics.get(topic, [])) for topic in inputs}
            for topic, count in counts.items():
                if count == 0:
                    raise self.refuse(f"the source topic {topic} of subtopology {ident} was not described (deleted while reading?)")
            for partition in range(max(counts.values(), default=0)):
                task = f"{ident}_{partition}"
                entry: dict[str, Any] = {"id": task, "stateful": bool(changelogs)}
                entry["source_partitions"] = [self.partition(topic, partition) for topic in inputs if partition < counts[topic]]
                self.changelog_fields(entry, changelogs, partition)
                tasks[task] = entry
        if not tasks:
            raise self.refuse("the group describes no subtopology with partitions: there is no task to import")
        configs = self.described.get("group_configs", {})
        defaults = self.described.get("broker_group_configs", {})

        def group_config(key: str) -> str | None:
            entry = configs.get(f"streams.{key}") or defaults.get(f"group.streams.{key}")
            return None if entry is None else entry.get("value")

        configured = group_config("num.standby.replicas")
        standbys = int(configured) if configured not in (None, "") else 0
        if num_standby_replicas is not None and num_standby_replicas != standbys:  # the coordinator reads the group's
            self.warnings.append(
                f"num.standby.replicas {num_standby_replicas} given, but a streams group's is its config: the group's {standbys} is kept"
            )
        config: dict[str, Any] = {"group.protocol": "streams", "streams.assignor.name": assignor, "num.standby.replicas": standbys}
        tags = [tag.strip() for tag in (group_config("rack.aware.assignment.tags") or "").split(",") if tag.strip()]
        if tags:
            config["rack.aware.assignment.tags"] = tags
        by_process: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for member in self.described["members"]:
            by_process[str(member["process_id"])].append(member)
        clients = []
        missing: list[str] = []
        for process in sorted(by_process):
            threads = sorted(by_process[process], key=_thread_order)
            members = []
            active: set[str] = set()
            held: dict[str, dict[str, Any]] = {}
            for member in threads:
                assigned = member["assignment"]
                for field in ("active", "standby", "warmup"):
                    for task in assigned.get(field, []):
                        if not _TASK_ID.fullmatch(task):
                            raise self.refuse(f"member {member['member_id']} is assigned task {task!r}, not '<subtopology>_<partition>'")
                entry = {"id": member["member_id"]}
                for field, key in (("active", "previous_active"), ("standby", "previous_standby"), ("warmup", "previous_warmup")):
                    if assigned.get(field):
                        entry[key] = _sorted_tasks(assigned[field])
                entry["lags"] = self.member_lags(member.get("task_offsets", {}), tasks)
                active.update(assigned.get("active", []))
                for task in (*assigned.get("standby", []), *assigned.get("warmup", [])):
                    held[task] = member
                members.append(entry)
            # the offsets: a task's from the member holding it as standby or warm-up (its live position), else the
            # highest any member of the process sent (each thread also sends the state directory's sums)
            reported: dict[str, int] = {}
            for member in threads:
                for task, offset in member.get("task_offsets", {}).items():
                    if task not in reported or int(offset) > reported[task]:
                        reported[task] = int(offset)
            for task, holder in held.items():
                if task in holder.get("task_offsets", {}):
                    reported[task] = int(holder["task_offsets"][task])
                elif task not in reported and tasks.get(task, {}).get("stateful"):
                    missing.append(f"{task} ({process})")
            client: dict[str, Any] = {"id": process}
            if _PROCESS_ID.fullmatch(process):  # the coordinator's ties fall by it: kept as Kafka has it
                client["process_id"] = process
            rack = self.common(process, threads, "rack")
            if rack:
                client["rack"] = rack
            tags_of = self.common(process, threads, "client_tags") or {}
            if tags_of:
                client["tags"] = dict(sorted(tags_of.items()))
            client["members"] = members
            lags = self.lags(reported, active, tasks)
            if lags:
                client["lags"] = lags
            clients.append(client)
        if missing:
            interval = group_config("task.offset.interval.ms")
            self.warnings.append(
                f"no offsets reported yet for the standby or warm-up tasks {', '.join(sorted(missing))} by the members holding them "
                f"(members send them every streams.task.offset.interval.ms{f' = {interval} ms' if interval else ''}): taken as caught up"
            )
        reconciling = [m["member_id"] for m in self.described["members"] if m.get("target_assignment") not in (None, m.get("assignment"))]
        if reconciling:
            self.warnings.append(f"members {', '.join(sorted(reconciling))} have not reached their target assignment: their current one is imported")
        self.warnings.append(
            "the lags come from the task offsets the members last reported (on joining, on an assignment change, then every streams.task.offset.interval.ms)"
        )
        notes = (
            f"streams protocol, state {self.described['state']}, group epoch {self.described.get('group_epoch')}, "
            f"{len(clients)} clients, {len(self.described['members'])} members"
        )
        return clients, list(tasks.values()), config, notes


def _thread_order(member: dict[str, Any]) -> tuple[int, str, str]:
    """Stream threads in thread order: the number in `...-StreamThread-N-consumer`, then the ids."""
    found = _THREAD.search(str(member.get("client_id") or ""))
    return (int(found.group(1)) if found else 1 << 30, str(member.get("client_id")), str(member.get("member_id")))
