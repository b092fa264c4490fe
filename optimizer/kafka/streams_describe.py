"""One Kafka Streams application of a live cluster, read by the adapter `kao.jvm.DescribeStreams`
(Kafka's Admin client; for a classic application the raw DescribeGroups request and Streams' own
SubscriptionInfo and AssignmentInfo; docs/import-design.md, sections 3 and 4), returned as plain data.

`describe_streams_application` runs the adapter and gives its JSON as it is, once it describes a
stable application; it raises:

* `InvalidInputError` for an application id the cluster does not know, a group that is not a Kafka
  Streams application (a consumer group, naming its assignor), an application without members, or a
  topic that disappeared while it was read;
* `KafkaUnavailableError` when the brokers cannot be reached (or refuse the credentials) within
  `timeout`, or when the application is still rebalancing at `timeout` (saying so: retry later).

The optional `command_config` is a properties file as Kafka's CLI tools take it (`--command-config`):
only its path is passed to the JVM, never its contents.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from optimizer.errors import InvalidInputError, KafkaUnavailableError
from optimizer.kafka.describe import run_adapter
from optimizer.model.issues import Issue, Severity

ADAPTER = "kao.jvm.DescribeStreams"

ASSIGNOR_ERRORS = {
    1: "INCOMPLETE_SOURCE_TOPIC_METADATA: missing metadata for source topics",
    2: "VERSION_PROBING: an unknown encoding version (a rolling upgrade?)",
    3: "ASSIGNMENT_ERROR: Streams' assignor failed (see the group leader's log)",
    4: "SHUTDOWN_REQUESTED: an instance asked the whole application to shut down",
}
"""Streams' `AssignorError` codes an assignment can carry (0 is none)."""


def _invalid(source: str, message: str) -> InvalidInputError:
    return InvalidInputError(source, [Issue(severity=Severity.ERROR, message=message)])


def describe_streams_application(bootstrap: str, application_id: str, command_config: Path | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """The Kafka Streams application `application_id` (its group) of the cluster at `bootstrap`
    (`HOST:PORT[,HOST:PORT]`): `protocol` (`classic` or `streams`), state, members (classic: the
    decoded Streams subscription and assignment of each stream thread; streams: each member's process,
    rack, tags, assignment and reported task offsets), the tasks (classic) or subtopologies (streams),
    the changelog topics and their end offsets, the group configs (streams), the brokers' racks and
    every involved topic's partitions. Waits up to `timeout` seconds for the group to be stable."""
    arguments = [bootstrap, "--application-id", application_id, "--timeout-ms", str(max(1, int(timeout * 1000)))]
    if command_config is not None:
        arguments += ["--command-config", str(command_config)]
    source = f"kafka://{bootstrap}"
    named = f"Kafka Streams application {application_id!r}"
    try:
        data = run_adapter(ADAPTER, arguments, timeout, bootstrap, application_id, f"reading the {named} from {bootstrap}")
    except InvalidInputError as error:
        # run_adapter words an unknown group for consumer groups: say it for an application id
        message = error.issues[0].message if error.issues else str(error)
        if message.startswith(f"group {application_id!r} does not exist"):
            reason = message.split(": ", 1)[1] if ": " in message else message
            raise _invalid(source, f"no {named} on {bootstrap}: no streams group or classic group has that id ({reason})") from None
        if message.startswith("a topic of group"):
            reason = message.split(": ", 1)[1] if ": " in message else message
            raise _invalid(source, f"a topic of the {named} does not exist (deleted while reading?): {reason}") from None
        raise
    return checked(data, bootstrap, application_id, timeout)


def checked(data: dict[str, Any], bootstrap: str, application_id: str, timeout: float) -> dict[str, Any]:
    """The adapter's JSON for `application_id` if it describes a stable Kafka Streams application
    with members; else the error saying what it is (not a Streams application, empty, rebalancing
    after `timeout` seconds, assigned with a Streams error code)."""
    source = f"kafka://{bootstrap}"
    named = f"Kafka Streams application {application_id!r}"
    state = str(data.get("state", ""))
    if state.lower() == "empty":
        what = named if data.get("protocol") else f"group {application_id!r}"
        raise _invalid(source, f"the {what} has no members (state {state}): there is nothing to import")
    if data.get("protocol") is None and (state.lower() == "stable" or str(data.get("type")).upper() != "CLASSIC"):
        assignor = data.get("assignor") or "none"
        kind = "KIP-848 consumer group" if str(data.get("type")).upper() == "CONSUMER" else f"{str(data.get('type')).lower()} group"
        raise _invalid(
            source,
            f"group {application_id!r} on {bootstrap} is not a Kafka Streams application: a {kind} with the assignor {assignor!r} "
            "(import it as a consumer group, with --group)",
        )
    if state.lower() != "stable":
        named = named if data.get("protocol") else f"group {application_id!r}"  # a rebalancing classic group may not name its assignor yet
        raise KafkaUnavailableError(f"the {named} is rebalancing (state {state} after {timeout:g} s): retry later, or with a longer --timeout")
    if not data.get("members"):
        raise _invalid(source, f"the {named} has no members (state {state}): there is nothing to import")
    if data["protocol"] == "classic":
        if not all(m.get("has_metadata") and m.get("has_assignment") for m in data["members"]):
            raise KafkaUnavailableError(f"the {named} is rebalancing (members without metadata or assignment): retry later, or with a longer --timeout")
        for member in data["members"]:
            code = member.get("assignment_error_code") or 0
            if code:
                why = ASSIGNOR_ERRORS.get(code, f"error code {code}")
                raise _invalid(source, f"the {named} has no usable assignment: member {member['member_id']} was assigned with Streams' {why}")
    return data
