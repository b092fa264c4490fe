"""A live Kafka cluster as a source of problems (issue 31): one consumer group, classic or KIP-848,
read by `optimizer.kafka.describe` and mapped to a consumer problem document (problem format v1,
`kind: consumer`; docs/import.md says what is read from where, and what is not imported yet).

`import_consumer_group(bootstrap, group)` gives the document as plain data; it validates with
`problem_from_data`. `import_consumer_groups(bootstrap)` imports every consumer group of the cluster
(Admin listGroups), one `Imported` each: a document, why the group was skipped (Kafka Streams
applications and streams groups, not imported yet; empty groups; other kinds of groups), or the
error reading it. `KafkaCluster` is the sources form `kafka://HOST:PORT[,HOST:PORT]`: the same
groups as the pipeline's Records, as a directory of problem files gives them. What a cluster cannot tell, the document takes from Kafka's defaults:
`kafka.version` is the project's default line, and a classic group's generation is one value common
to every member (the group's real generation is in no response; the sticky assignors compare
generations only between members; docs/import-design.md, section 1).
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
from optimizer.kafka.describe import describe_group, list_groups
from optimizer.model.consumer import AssignmentStrategy
from optimizer.model.ids import partition_id
from optimizer.model.issues import Issue, Severity
from optimizer.model.releases import DEFAULT_KAFKA_VERSION
from optimizer.sources.records import Record, name_problem, unique_names

KAFKA_VERSION = DEFAULT_KAFKA_VERSION
"""The `kafka.version` an imported problem names: a cluster does not say its clients' release."""

_CLASSIC_STRATEGIES = {str(strategy) for strategy in AssignmentStrategy}


def import_consumer_group(bootstrap: str, group: str, command_config: Path | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """The consumer group `group` of the cluster at `bootstrap` as a problem document."""
    return consumer_problem(describe_group(bootstrap, group, command_config, timeout), bootstrap)


STREAMS_ASSIGNOR = "stream"
"""The protocol name a classic Kafka Streams application's members join with."""

SCHEME = "kafka://"


@dataclass(frozen=True)
class Imported:
    """One group of `import_consumer_groups`: exactly one of its document, why it was skipped, or
    the error reading it."""

    group: str
    document: dict[str, Any] | None = None
    skipped: str | None = None
    error: KafkaAssignmentError | None = None


def import_consumer_groups(bootstrap: str, command_config: Path | None = None, timeout: float = 30.0) -> Iterator[Imported]:
    """Every group of the cluster at `bootstrap`, in group id order, imported or skipped (saying
    why) or failed (the error, the others still read). Listing the groups raises what
    `describe_group` raises for the cluster as a whole (unreachable brokers, refused credentials)."""
    for listed in list_groups(bootstrap, command_config, timeout):
        group = str(listed["group_id"])
        skipped = _not_importable(listed)
        if skipped is not None:
            yield Imported(group, skipped=skipped)
            continue
        try:
            described = describe_group(bootstrap, group, command_config, timeout)
            if described.get("assignor") == STREAMS_ASSIGNOR:
                yield Imported(group, skipped="a Kafka Streams application (classic protocol): not imported yet")
                continue
            yield Imported(group, document=consumer_problem(described, bootstrap))
        except KafkaAssignmentError as error:
            yield Imported(group, error=error)


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
    if kind == "STREAMS":
        return "a streams group (KIP-1071): not imported yet"
    if kind == "SHARE":
        return "a share group: not imported (not a consumer group)"
    if kind == "CLASSIC" and protocol and protocol != "consumer":
        return f"a classic group of protocol type {protocol!r}: not a consumer group"
    if kind not in ("CLASSIC", "CONSUMER"):
        return f"a group of type {listed.get('type')!r}: not a consumer group"
    if state.lower() == "empty" or (not protocol and kind == "CLASSIC"):
        return f"empty (state {state or 'unknown'}): no members, nothing to import"
    return None


RACK_AWARE_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


def replica_selector(brokers: list[dict[str, Any]]) -> tuple[str | None, str | None]:
    """The cluster's `replica.selector.class` from its brokers' (Describe's `replica_selector`,
    "unknown" when a broker's configuration could not be read) and a warning, or None: the value
    when every broker has the same one (None when none sets it: Kafka's default, the leader serves);
    when they differ or one is unknown, None with a warning saying reads are counted from the
    leaders."""
    selectors = {broker.get("replica_selector") or None for broker in brokers}
    if len(selectors) == 1 and "unknown" not in selectors:
        return selectors.pop(), None
    shown = ", ".join(f"broker {b['id']}: {b.get('replica_selector') or 'unset'}" for b in brokers)
    return None, f"the brokers' replica.selector.class differ or cannot be read ({shown}): reads are counted from the leaders"


def topic_entries(names: list[str], described_topics: dict[str, Any], racks: dict[int, str | None]) -> list[dict[str, Any]]:
    """Consumer topics with their partition count, `replica_racks` and `leader_racks` (each only
    when every rack in it is known)."""
    topics = []
    for name in sorted(names):
        partitions = described_topics[name]["partitions"]
        entry: dict[str, Any] = {"name": name, "partitions": len(partitions)}
        replica_racks = [[racks.get(replica) for replica in p["replicas"]] for p in partitions]
        if all(rack for racks_of in replica_racks for rack in racks_of):
            entry["replica_racks"] = replica_racks
        leader_racks = [racks.get(p["leader"]) if p.get("leader") is not None else None for p in partitions]
        if any(leader_racks):
            entry["leader_racks"] = leader_racks
        topics.append(entry)
    return topics


def consumer_problem(described: dict[str, Any], bootstrap: str, rates: Mapping[tuple[str, int], float] | None = None) -> dict[str, Any]:
    """`kao.jvm.Describe`'s JSON for a consumer group as a consumer problem document; `rates`, bytes
    per second by (topic, partition), become each fully measured topic's `partition_bytes_per_second`."""
    group = described["group_id"]
    source = f"kafka://{bootstrap}"
    racks = {broker["id"]: broker["rack"] for broker in described["brokers"]}
    config: dict[str, Any]
    kind = str(described["type"]).upper()
    if kind == "CONSUMER":
        config = {"group.protocol": "consumer", "group.remote.assignor": described["assignor"], "kafka.version": KAFKA_VERSION}
    elif kind == "CLASSIC":
        strategy = described["assignor"]
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
        entry["subscriptions"] = sorted(member["subscriptions"])
        entry["owned_partitions"] = [partition_id(topic, partition) for topic, partition in member["assignment"]]
        if kind == "CLASSIC":
            entry["generation"] = common_generation
        members.append(entry)
    when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    description = f"consumer group {group} imported from {source} at {when} (state {described['state']}, assignor {described['assignor']})"
    if selector_warning is not None:
        description += f"; {selector_warning}"
    return {
        "format": "kafka-assignment-problem/v1",
        "kind": "consumer",
        "name": group,
        "description": description,
        "config": config,
        "topics": topics,
        "members": members,
    }


def _refused(source: str, message: str) -> InvalidInputError:
    return InvalidInputError(source, [Issue(severity=Severity.ERROR, message=message)])


@dataclass(frozen=True)
class ImportOptions:
    """How a cluster is read: the client properties file (`--command-config`; only its path goes to
    the JVM), how long to wait for the brokers and for a rebalancing group (`--timeout`)."""

    command_config: Path | None = None
    timeout: float = 30.0


_QUERY_KEYS = ("command-config", "timeout")


@dataclass(frozen=True)
class KafkaCluster:
    """The input `kafka://HOST:PORT[,HOST:PORT][?command-config=FILE&timeout=SECONDS]`: every
    consumer group of the cluster as one Record (named by its group id); a group that cannot be read
    is a Record with its `input_error`, a skipped one (a Kafka Streams application, an empty group) no
    Record. InvalidInputError when the location is malformed, the cluster cannot be read at all or
    has no consumer group to import. The Records name the cluster as `kafka://HOST:PORT#GROUP`,
    never the query (the command config's path stays out of the outputs)."""

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
        if "timeout" in found:
            try:
                timeout = float(found["timeout"])
            except ValueError:
                timeout = float("nan")
            if not 1 <= timeout <= 3600:
                problems.append(f"timeout: {found['timeout']!r} is not a number of seconds from 1 to 3600")
            else:
                options = replace(options, timeout=timeout)
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
            imported = list(import_consumer_groups(bootstrap, options.command_config, options.timeout))
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
            raise InvalidInputError(f"{SCHEME}{bootstrap}", [input_issue(f"no consumer group to import ({skipped})")])
        return unique_names(records)
