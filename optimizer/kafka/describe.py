"""One consumer group of a live cluster, read by the adapter `kao.jvm.Describe` (Kafka's Admin
client and the raw DescribeGroups / ConsumerGroupDescribe requests, decoded with Kafka's own
ConsumerProtocol; docs/import-design.md, sections 1 and 2), returned as plain data.

`describe_group` runs the adapter and gives its JSON as it is; it raises:

* `InvalidInputError` for a group the cluster does not know (naming it), an empty group, or a topic
  that disappeared while it was read;
* `KafkaUnavailableError` when the brokers cannot be reached (or refuse the credentials) within
  `timeout`, or when the group is still rebalancing at `timeout` (saying so: retry later).

The optional `command_config` is a properties file as Kafka's CLI tools take it (`--command-config`):
only its path is passed to the JVM, never its contents, and nothing of it is printed.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from optimizer.errors import InvalidInputError, KafkaUnavailableError
from optimizer.kafka.jvm import java
from optimizer.model.issues import Issue, Severity

ADAPTER = "kao.jvm.Describe"
SETTLED = ("stable",)
"""Group states whose members' metadata and assignments are complete."""

_JVM_START_SECONDS = 30.0
"""Allowed on top of `timeout` for the JVM to start and end."""


def _invalid(source: str, message: str) -> InvalidInputError:
    return InvalidInputError(source, [Issue(severity=Severity.ERROR, message=message)])


def describe_group(bootstrap: str, group: str, command_config: Path | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """The group `group` of the cluster at `bootstrap` (`HOST:PORT[,HOST:PORT]`): its type
    (`CLASSIC` or `CONSUMER`), state, assignor, members (subscriptions, rack, current assignment,
    generation or member epoch), the brokers' racks and every involved topic's partitions with
    their replicas and leader. Waits up to `timeout` seconds for the group to be stable."""
    arguments = [bootstrap, "--group", group, "--timeout-ms", str(max(1, int(timeout * 1000)))]
    if command_config is not None:
        arguments += ["--command-config", str(command_config)]
    source = f"kafka://{bootstrap}"
    data = run_adapter(ADAPTER, arguments, timeout, bootstrap, group, f"reading group {group!r} from {bootstrap}")
    state = str(data.get("state", "")).lower()
    if state == "empty" or not data.get("members"):
        raise _invalid(source, f"group {group!r} has no members (state {data.get('state')}): there is nothing to import")
    if state not in SETTLED:
        raise KafkaUnavailableError(f"group {group!r} is rebalancing (state {data.get('state')} after {timeout:g} s): retry later, or with a longer --timeout")
    if str(data.get("type")).upper() == "CLASSIC" and not all(m.get("has_metadata") for m in data["members"]):
        raise KafkaUnavailableError(f"group {group!r} is rebalancing (members without metadata): retry later, or with a longer --timeout")
    return data


def list_groups(bootstrap: str, command_config: Path | None = None, timeout: float = 30.0) -> list[dict[str, Any]]:
    """Every group of the cluster (Admin listGroups), in group id order: `group_id`, `type`
    (`CLASSIC`, `CONSUMER`, `STREAMS`, `SHARE`, or None from an old broker), `protocol` (a classic
    group's protocol type: `consumer` for consumers and classic Kafka Streams applications) and
    `state`."""
    arguments = [bootstrap, "--list", "--timeout-ms", str(max(1, int(timeout * 1000)))]
    if command_config is not None:
        arguments += ["--command-config", str(command_config)]
    groups: list[dict[str, Any]] = run_adapter(ADAPTER, arguments, timeout, bootstrap, "", f"listing the groups of {bootstrap}")["groups"]
    return groups


def broker_configs(bootstrap: str, command_config: Path | None = None, timeout: float = 30.0) -> dict[int, dict[str, str | None]]:
    """Every broker's configuration as it reports it (Admin describeConfigs), by broker id;
    sensitive values are None."""
    arguments = [bootstrap, "--broker-configs", "--timeout-ms", str(max(1, int(timeout * 1000)))]
    if command_config is not None:
        arguments += ["--command-config", str(command_config)]
    brokers = run_adapter(ADAPTER, arguments, timeout, bootstrap, "", f"reading the broker configs of {bootstrap}")["brokers"]
    return {int(broker): entries for broker, entries in brokers.items()}


def cluster_topics(bootstrap: str, command_config: Path | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """The brokers (`id`, `rack`, `replica_selector`) and every topic that is not internal, by name:
    `{"id": Kafka's Uuid, "partitions": [{"partition", "leader", "replicas"}]}` (broker ids)."""
    arguments = [bootstrap, "--topics", "--timeout-ms", str(max(1, int(timeout * 1000)))]
    if command_config is not None:
        arguments += ["--command-config", str(command_config)]
    return run_adapter(ADAPTER, arguments, timeout, bootstrap, "", f"reading the topics of {bootstrap}")


def run_adapter(adapter: str, arguments: list[str], timeout: float, bootstrap: str, group: str, doing: str) -> dict[str, Any]:
    """The JSON answer of the adapter class `adapter` (a `kao.jvm` class reporting failures as
    `kao.jvm.Describe` does: one JSON object `{kind, group, message}` on stderr), or its failure as
    the project's error. `doing` completes "... did not end within" and "Kafka answered an error ..."."""
    limit = timeout * 3 + _JVM_START_SECONDS
    try:
        done = subprocess.run(
            java(adapter, arguments, heap_mb=256), capture_output=True, text=True, timeout=limit, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise KafkaUnavailableError(f"{doing} did not end within {limit:g} s") from None
    if done.returncode != 0:
        raise _failure(adapter, done.returncode, done.stderr, bootstrap, group, f"kafka://{bootstrap}", doing)
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _failure(adapter: str, status: int, stderr: str, bootstrap: str, group: str, source: str, doing: str) -> Exception:
    """The adapter's error object (the last JSON line of its stderr) as the project's error."""
    reported: dict[str, Any] = {}
    for line in reversed(stderr.strip().splitlines()):
        if line.startswith("{"):
            try:
                reported = json.loads(line)
            except json.JSONDecodeError:
                continue
            break
    kind = reported.get("kind")
    message = reported.get("message", "")
    if kind == "unknown_group":
        return _invalid(source, f"group {group!r} does not exist on {bootstrap} (or is not a consumer group): {message}")
    if kind == "unknown_topic":
        return _invalid(source, f"a topic of group {group!r} does not exist (deleted while reading?): {message}")
    if kind == "unreachable":
        return KafkaUnavailableError(f"the Kafka cluster at {bootstrap} could not be reached: {message}")
    if kind == "authentication":
        return KafkaUnavailableError(f"the Kafka cluster at {bootstrap} refused the credentials: {message}")
    if kind == "kafka":
        return KafkaUnavailableError(f"Kafka answered an error {doing}: {message}")
    tail = "\n".join(stderr.strip().splitlines()[-15:])
    return KafkaUnavailableError(f"{adapter} failed (exit {status}):\n{tail}")


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
