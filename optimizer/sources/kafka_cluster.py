"""A live Kafka cluster as a source of problems (issue 31): its consumer groups, classic or KIP-848
(read by `optimizer.kafka.describe`, mapped here to `kind: consumer` documents), and its Kafka
Streams applications, classic or KIP-1071 streams groups (read by `optimizer.kafka.streams_describe`,
mapped by `optimizer.sources.kafka_streams`), with each partition's rate measured over a window when
asked (`optimizer.kafka.sample`). docs/import.md says what is read from where.

`import_group(bootstrap, group, options, streams=...)` imports one group as an `Imported`: its
document (plain data; it validates with `problem_from_data`) and the warnings saying what the cluster
could not tell. `import_cluster(bootstrap, options)` imports every group of the cluster (Admin
listGroups), one `Imported` each: a document, why the group was skipped (share groups, Connect,
empty groups), or the error reading it; one sampling window serves them all. `KafkaCluster` is the
sources form `kafka://HOST:PORT[,HOST:PORT][?command-config=FILE&timeout=S&sample-seconds=S]`: the
same groups as the pipeline's Records. What a cluster cannot tell, the document takes from Kafka's
defaults: `kafka.version` is the project's default line, and a classic group's generation is one
value common to every member (the group's real generation is in no response; the sticky assignors
compare generations only between members; docs/import-design.md, section 1).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from optimizer.errors import InvalidInputError, KafkaAssignmentError
from optimizer.kafka.describe import describe_group, list_groups, replica_selector
from optimizer.kafka.sample import MAX_SAMPLE_SECONDS, Rate, sample_rates
from optimizer.model.consumer import AssignmentStrategy
from optimizer.model.ids import partition_id
from optimizer.model.issues import Issue, Severity
from optimizer.model.releases import DEFAULT_KAFKA_VERSION
from optimizer.sources.records import Record, name_problem, unique_names
from optimizer.text import plural

KAFKA_VERSION = DEFAULT_KAFKA_VERSION
"""The `kafka.version` an imported problem names: a cluster does not say its clients' release."""

_CLASSIC_STRATEGIES = {str(strategy) for strategy in AssignmentStrategy}


STREAMS_ASSIGNOR = "stream"
"""The protocol name a classic Kafka Streams application's members join with."""

SCHEME = "kafka://"


@dataclass(frozen=True)
class ImportOptions:
    """How a cluster is read: the client properties file (`--command-config`; only its path goes to
    the JVM), how long to wait for the brokers and for a rebalancing group (`--timeout`), the
    window over which partition rates are measured (`--sample-seconds`; None: no rates), and a
    classic Streams application's `num.standby.replicas` when the one inferred from its standbys is
    not wanted (`--num-standby-replicas`)."""

    command_config: Path | None = None
    timeout: float = 30.0
    sample_seconds: float | None = None
    num_standby_replicas: int | None = None


@dataclass(frozen=True)
class Imported:
    """One group of an import: exactly one of its document, why it was skipped, or the error reading
    it; and what the cluster could not tell about it (defaults taken, values inferred or estimated),
    one sentence each."""

    group: str
    document: dict[str, Any] | None = None
    skipped: str | None = None
    error: KafkaAssignmentError | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Described:
    """A group as its adapter described it, before the mapping: `streams` for a Kafka Streams
    application (`kao.jvm.DescribeStreams`), else a consumer group (`kao.jvm.Describe`)."""

    group: str
    data: dict[str, Any]
    streams: bool


def import_group(bootstrap: str, group: str, options: ImportOptions = ImportOptions(), streams: bool = False) -> Imported:
    """The consumer group (or, with `streams`, the Kafka Streams application) `group` of the
    cluster at `bootstrap`, imported; raises what reading it raises (InvalidInputError for an
    unknown, empty or wrong kind of group, KafkaUnavailableError for an unreachable cluster or a
    group still rebalancing at the timeout)."""
    described = _describe(bootstrap, group, options, streams)
    return _mapped(described, bootstrap, options, *_sample(bootstrap, [described], options))


def import_consumer_group(bootstrap: str, group: str, command_config: Path | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """The consumer group `group` of the cluster at `bootstrap` as a problem document."""
    document = import_group(bootstrap, group, ImportOptions(command_config, timeout)).document
    assert document is not None
    return document


def import_cluster(bootstrap: str, options: ImportOptions = ImportOptions()) -> Iterator[Imported]:
    """Every group of the cluster at `bootstrap`, in group id order: consumer groups and Kafka
    Streams applications imported, other groups skipped (saying why), and a group that cannot be
    read failed (its error; the others are still read). With `options.sample_seconds`, one window
    measures every imported group's topics at once. Listing the groups, and the sampling, raise what
    `describe_group` raises for the cluster as a whole (unreachable brokers, refused credentials)."""
    outcomes: list[Imported | _Described] = []
    for listed in list_groups(bootstrap, options.command_config, options.timeout):
        group = str(listed["group_id"])
        skipped = _not_importable(listed)
        if skipped is not None:
            outcomes.append(Imported(group, skipped=skipped))
            continue
        try:
            outcomes.append(_describe(bootstrap, group, options, str(listed.get("type") or "").upper() == "STREAMS", listed=True))
        except KafkaAssignmentError as error:
            outcomes.append(Imported(group, error=error))
    described = [one for one in outcomes if isinstance(one, _Described)]
    rates, unmeasured = _sample(bootstrap, described, options)
    for one in outcomes:
        if isinstance(one, Imported):
            yield one
            continue
        try:
            yield _mapped(one, bootstrap, options, rates, unmeasured)
        except KafkaAssignmentError as error:
            yield Imported(one.group, error=error)


def _describe(bootstrap: str, group: str, options: ImportOptions, streams: bool, listed: bool = False) -> _Described:
    """The group as its adapter describes it. A `listed` classic group whose members chose Kafka
    Streams' `stream` assignor is described again as a Streams application (`import --all` lists
    classic Streams applications as classic groups); asked for by name as a consumer group, it is
    refused, saying to import it as an application."""
    from optimizer.kafka.streams_describe import describe_streams_application

    if streams:
        return _Described(group, describe_streams_application(bootstrap, group, options.command_config, options.timeout), True)
    data = describe_group(bootstrap, group, options.command_config, options.timeout)
    if data.get("assignor") == STREAMS_ASSIGNOR:
        if not listed:
            raise _refused(f"{SCHEME}{bootstrap}", f"group {group!r} is a Kafka Streams application: import it with --application-id {group}")
        return _Described(group, describe_streams_application(bootstrap, group, options.command_config, options.timeout), True)
    return _Described(group, data, False)


def _sample(bootstrap: str, described: list[_Described], options: ImportOptions) -> tuple[dict[tuple[str, int], Rate], list[str]]:
    """The rates of every topic the groups involve, measured over one window of
    `options.sample_seconds` (none without it), and the partitions that could not be measured (no
    leader at an end of the window: their groups get no rate for them, and a warning)."""
    topics = sorted({topic for one in described for topic in one.data.get("topics", {})})
    if options.sample_seconds is None or not topics:
        return {}, []
    unmeasured: list[str] = []
    return sample_rates(bootstrap, topics, options.sample_seconds, options.command_config, options.timeout, unmeasured), unmeasured


def _mapped(
    described: _Described, bootstrap: str, options: ImportOptions, rates: dict[tuple[str, int], Rate], unmeasured: list[str] | None = None,
) -> Imported:  # fmt: skip
    """The described group as a problem document, with its warnings: what the cluster could not
    tell, which of its partitions' rates rest on more than their leaders' log growth, and which could
    not be measured."""
    from optimizer.sources.kafka_streams import map_streams_application

    topics = set(described.data.get("topics", {}))
    mine = {key: rate for key, rate in rates.items() if key[0] in topics}
    measured = {key: rate.bytes_per_second for key, rate in mine.items()}
    estimated = [f"{topic}-{partition} ({rate.why})" for (topic, partition), rate in mine.items() if rate.estimated]
    warnings: tuple[str, ...] = ()
    if estimated:
        shown = "; ".join(estimated[:5]) + (f"; and {len(estimated) - 5} more" if len(estimated) > 5 else "")
        warnings = (f"the rates of {plural(len(estimated), 'partition')} rest on more than their leaders' log growth: {shown}",)
    missing = [entry for entry in unmeasured or () if entry.rsplit(" (", 1)[0].rpartition("-")[0] in topics]
    if missing:
        warnings += (f"the rates of {plural(len(missing), 'partition')} could not be measured (no rate written for them): {'; '.join(missing)}",)
    if described.streams:
        imported = map_streams_application(described.data, bootstrap, num_standby_replicas=options.num_standby_replicas, rates=measured)
        document, said = imported.document, imported.warnings
    else:
        document = consumer_problem(described.data, bootstrap, measured)
        said = tuple(w for w in (replica_selector(described.data["brokers"])[1], _rackless(described.data), plugin_warning(described.data)) if w)
    for warning in warnings:  # the document says what it rests on, also where the warnings are not printed (the pipeline)
        document["description"] += f"; {warning}"
    return Imported(described.group, document=document, warnings=said + warnings)


def _rackless(described: dict[str, Any]) -> str | None:
    """A warning naming the brokers without `broker.rack` that hold replicas of the group's topics,
    or None: their replicas are left out of `replica_racks` (as Kafka's rack-aware assignors leave
    racks they do not know) and a leader among them is unknown."""
    racks = {broker["id"]: broker["rack"] for broker in described["brokers"]}
    rackless = sorted({replica for topic in described["topics"].values() for p in topic["partitions"] for replica in p["replicas"] if not racks.get(replica)})
    if not rackless:
        return None
    return f"brokers {', '.join(map(str, rackless))} have no broker.rack: their replicas count as in no rack (left out of replica_racks)"


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def group_file_names(groups: list[str], suffix: str = ".yaml") -> dict[str, str]:
    """A file name per group id, safe on every file system (letters, digits, `.`, `_`, `-`; no
    leading dot; at most 100 characters before the suffix) and unique also where case does not
    count: a group id that had to change, or that would collide, gets a hash of itself appended."""
    names: dict[str, str] = {}
    used: set[str] = set()
    for group in groups:
        safe = _UNSAFE.sub("_", group)[:100]
        if safe.startswith(".") or not safe:
            safe = "_" + safe
        if safe != group or safe.lower() in used or ".solution." in safe:
            safe = f"{safe.replace('.solution.', '_solution_')}-{hashlib.sha256(group.encode()).hexdigest()[:10]}"
        used.add(safe.lower())
        names[group] = safe + suffix
    return names


def _not_importable(listed: dict[str, Any]) -> str | None:
    """Why a listed group is not imported, or None."""
    kind = str(listed.get("type") or "").upper()
    protocol = listed.get("protocol") or ""
    state = str(listed.get("state") or "")
    if kind == "SHARE":
        return "a share group: not imported (not a consumer group)"
    if kind == "CLASSIC" and protocol and protocol != "consumer":
        return f"a classic group of protocol type {protocol!r}: not a consumer group"
    if kind not in ("CLASSIC", "CONSUMER", "STREAMS"):
        return f"a group of type {listed.get('type')!r}: not a consumer group or Kafka Streams application"
    if state.lower() == "empty" or (not protocol and kind == "CLASSIC"):
        return f"empty (state {state or 'unknown'}): no members, nothing to import"
    return None


def topic_entries(names: list[str], described_topics: dict[str, Any], racks: dict[int, str | None]) -> list[dict[str, Any]]:
    """Consumer topics with their partition count, Kafka's `topic_id` (the KIP-848 assignors break
    ties by it), `replica_racks` (the known racks of each partition's replicas; none when no rack is
    known) and `leader_racks` (none when no leader's rack is known)."""
    topics = []
    for name in sorted(names):
        partitions = described_topics[name]["partitions"]
        entry: dict[str, Any] = {"name": name, "partitions": len(partitions)}
        if described_topics[name].get("id"):
            entry["topic_id"] = described_topics[name]["id"]
        replica_racks = [[rack for replica in p["replicas"] if (rack := racks.get(replica))] for p in partitions]
        if any(replica_racks):  # a broker without broker.rack: its replica is left out, as Kafka's rack-aware assignors do
            entry["replica_racks"] = replica_racks
        leader_racks = [racks.get(p["leader"]) if p.get("leader") is not None else None for p in partitions]
        if any(leader_racks):
            entry["leader_racks"] = leader_racks
        topics.append(entry)
    return topics


PLUGIN_ASSIGNOR = "optimizer"
"""The name the project's plug-ins register (`group.remote.assignor`, a classic group's protocol)."""
PLUGIN_FALLBACKS = {"consumer": "uniform", "classic": "cooperative-sticky"}
"""What the plug-ins fall back to, per protocol: what `--solver kafka` reproduces for a group using them."""


def plugin_warning(described: dict[str, Any]) -> str | None:
    """The warning for a group that runs the project's plug-in, or None."""
    if described.get("assignor") != PLUGIN_ASSIGNOR:
        return None
    fallback = PLUGIN_FALLBACKS["consumer" if str(described["type"]).upper() == "CONSUMER" else "classic"]
    return f"the group runs the project's plug-in ({PLUGIN_ASSIGNOR}): --solver kafka reproduces its fallback, Kafka's {fallback}"


def consumer_problem(described: dict[str, Any], bootstrap: str, rates: Mapping[tuple[str, int], float] | None = None) -> dict[str, Any]:
    """`kao.jvm.Describe`'s JSON for a consumer group as a consumer problem document; `rates`, bytes
    per second by (topic, partition), become each fully measured topic's `partition_bytes_per_second`."""
    group = described["group_id"]
    source = f"kafka://{bootstrap}"
    racks = {broker["id"]: broker["rack"] for broker in described["brokers"]}
    config: dict[str, Any]
    kind = str(described["type"]).upper()
    if kind == "CONSUMER":
        # the project's plug-in (docs/apply.md): --solver kafka reproduces its fallback, Kafka's default
        assignor = PLUGIN_FALLBACKS["consumer"] if described["assignor"] == PLUGIN_ASSIGNOR else described["assignor"]
        config = {"group.protocol": "consumer", "group.remote.assignor": assignor, "kafka.version": KAFKA_VERSION}
    elif kind == "CLASSIC":
        strategy = PLUGIN_FALLBACKS["classic"] if described["assignor"] == PLUGIN_ASSIGNOR else described["assignor"]
        if strategy == STREAMS_ASSIGNOR:
            raise _refused(source, f"group {group!r} is a Kafka Streams application: import it with --application-id {group}")
        if strategy not in _CLASSIC_STRATEGIES:
            known = ", ".join(sorted(_CLASSIC_STRATEGIES))
            raise _refused(source, f"group {group!r} uses the assignor {strategy!r}: only Kafka's own consumer assignors ({known}) can be imported")
        config = {"partition.assignment.strategy": strategy, "kafka.version": KAFKA_VERSION}
    else:
        raise _refused(source, f"group {group!r} is a {described['type']} group: only consumer groups (classic and KIP-848) can be imported here")
    selector, selector_warning = replica_selector(described["brokers"])
    if selector is not None:
        config["replica.selector.class"] = selector
    topics = topic_entries(list(described["topics"]), described["topics"], racks)
    if rates:
        for entry in topics:
            measured = [rates.get((entry["name"], partition)) for partition in range(entry["partitions"])]
            if all(rate is not None for rate in measured):
                entry["partition_bytes_per_second"] = measured
    generations = [m["generation"] for m in described["members"] if m.get("generation") is not None]
    common_generation = max([1, *generations])
    members = []
    for member in sorted(described["members"], key=lambda m: m["member_id"]):
        if not member["subscriptions"]:
            raise _refused(source, f"member {member['member_id']} of group {group!r} reports no subscribed topics")
        entry = {"id": member["member_id"]}
        if member.get("rack"):
            entry["rack"] = member["rack"]
        if member.get("instance_id"):  # a static member: first in the classic range and round-robin assignors
            entry["group_instance_id"] = member["instance_id"]
        entry["subscriptions"] = sorted(member["subscriptions"])
        entry["owned_partitions"] = [partition_id(topic, partition) for topic, partition in member["assignment"]]
        if kind == "CLASSIC":
            entry["generation"] = common_generation
        members.append(entry)
    when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    description = f"consumer group {group} imported from {source} at {when} (state {described['state']}, assignor {described['assignor']})"
    if selector_warning is not None:
        description += f"; {selector_warning}"
    imported: dict[str, Any] = {
        "format": "kafka-assignment-problem/v1",
        "kind": "consumer",
        "name": group,
        "description": description,
        "config": config,
        "topics": topics,
        "members": members,
    }
    # The coordinator lists members in the order it hands them to the assignor: to the classic
    # leader at a join, into the KIP-848 assignor's member map (TargetAssignmentBuilder).
    imported["join_order"] = [member["member_id"] for member in described["members"]]
    return imported


def _refused(source: str, message: str) -> InvalidInputError:
    return InvalidInputError(source, [Issue(severity=Severity.ERROR, message=message)])


_QUERY_KEYS = ("command-config", "timeout", "sample-seconds")


@dataclass(frozen=True)
class KafkaCluster:
    """The input `kafka://HOST:PORT[,HOST:PORT][?command-config=FILE&timeout=S&sample-seconds=S]`:
    every consumer group and Kafka Streams application of the cluster as one Record (named by its
    group id); a group that cannot be read is a Record with its `input_error`, a skipped one (a share
    group, an empty group) no Record. InvalidInputError when the location is malformed, the cluster
    cannot be read at all or has nothing to import. The Records name the cluster as
    `kafka://HOST:PORT#GROUP`, never the query (the command config's path stays out of the outputs)."""

    location: str

    @property
    def bootstrap(self) -> str:
        return self.location[len(SCHEME):].partition("?")[0].rstrip("/")

    def options(self) -> ImportOptions:
        """The location's query as import options; InvalidInputError naming every bad parameter."""
        from optimizer.sources import input_issue

        query = self.location.partition("?")[2]
        problems: list[str] = []
        found: dict[str, str] = {}
        for item in filter(None, query.split("&")):
            key, equals, value = item.partition("=")
            key, value = unquote(key), unquote(value)
            if key not in _QUERY_KEYS:
                problems.append(f"unknown parameter {key!r} (known: {', '.join(_QUERY_KEYS)})")
            elif not equals or not value:
                problems.append(f"parameter {key!r} needs a value ({key}=...)")
            elif key in found:
                problems.append(f"parameter {key!r} is given twice")
            else:
                found[key] = value
        options = ImportOptions()
        if "command-config" in found:
            path = Path(found["command-config"]).expanduser()
            if not path.is_file():
                problems.append(f"command-config: {found['command-config']!r} is not a readable file")
            options = replace(options, command_config=path)
        durations: dict[str, float] = {}
        for key, lowest, above, highest in (("timeout", 1.0, False, 3600.0), ("sample-seconds", 0.0, True, MAX_SAMPLE_SECONDS)):
            if key not in found:
                continue
            try:
                seconds = float(found[key])
            except ValueError:
                seconds = float("nan")
            if (lowest < seconds if above else lowest <= seconds) and seconds <= highest:
                durations[key] = seconds
            else:
                bound = f"above {lowest:g}" if above else f"from {lowest:g}"
                problems.append(f"{key}: {found[key]!r} is not a number of seconds {bound} and at most {highest:g}")
        options = replace(options, timeout=durations.get("timeout", options.timeout), sample_seconds=durations.get("sample-seconds"))
        if problems:
            raise InvalidInputError(self.location.partition("?")[0], [input_issue(problem) for problem in problems])
        return options

    def records(self) -> list[Record]:
        from optimizer.sources import input_issue

        bootstrap = self.bootstrap
        if not bootstrap:
            raise InvalidInputError(self.location.partition("?")[0], [input_issue("expected kafka://HOST:PORT[,HOST:PORT]")])
        options = self.options()
        try:
            imported = list(import_cluster(bootstrap, options))
        except KafkaAssignmentError as error:
            raise InvalidInputError(f"{SCHEME}{bootstrap}", [input_issue(str(error))]) from None
        records = []
        for one in imported:
            where = f"{SCHEME}{bootstrap}#{one.group}"
            if one.document is not None:
                records.append(Record(one.group, json.dumps(one.document, ensure_ascii=False), where, name_problem(one.group)))
            elif one.error is not None:
                records.append(Record(one.group, "{}", where, input_error=str(one.error)))
        if not records:
            skipped = "; ".join(f"{one.group}: {one.skipped}" for one in imported) or "the cluster has no groups"
            raise InvalidInputError(f"{SCHEME}{bootstrap}", [input_issue(f"no consumer group or Kafka Streams application to import ({skipped})")])
        return unique_names(records)
