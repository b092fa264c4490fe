"""A live Kafka cluster as a source of problems (issue 31): one consumer group, classic or KIP-848,
read by `optimizer.kafka.describe` and mapped to a consumer problem document (problem format v1,
`kind: consumer`; docs/import.md says what is read from where, and what is not imported yet).

`import_consumer_group(bootstrap, group)` gives the document as plain data; it validates with
`problem_from_data`. What a cluster cannot tell, the document takes from Kafka's defaults:
`kafka.version` is the project's default line, and a classic group's generation is one value common
to every member (the group's real generation is in no response; the sticky assignors compare
generations only between members; docs/import-design.md, section 1).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from optimizer.errors import InvalidInputError
from optimizer.kafka.describe import describe_group
from optimizer.model.ids import partition_id
from optimizer.model.issues import Issue, Severity

KAFKA_VERSION = "4.4"
"""The `kafka.version` an imported problem names: a cluster does not say its clients' release."""

_CLASSIC_STRATEGIES = {"range", "roundrobin", "sticky", "cooperative-sticky"}


def import_consumer_group(bootstrap: str, group: str, command_config: Path | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """The consumer group `group` of the cluster at `bootstrap` as a problem document."""
    return consumer_problem(describe_group(bootstrap, group, command_config, timeout), bootstrap)


def consumer_problem(described: dict[str, Any], bootstrap: str) -> dict[str, Any]:
    """`kao.jvm.Describe`'s JSON for a consumer group as a consumer problem document."""
    group = described["group_id"]
    source = f"kafka://{bootstrap}"
    racks = {broker["id"]: broker["rack"] for broker in described["brokers"]}
    config: dict[str, Any]
    kind = str(described["type"]).upper()
    if kind == "CONSUMER":
        config = {"group.protocol": "consumer", "group.remote.assignor": described["assignor"], "kafka.version": KAFKA_VERSION}
    elif kind == "CLASSIC":
        strategy = described["assignor"]
        if strategy not in _CLASSIC_STRATEGIES:
            known = ", ".join(sorted(_CLASSIC_STRATEGIES))
            raise _refused(source, f"group {group!r} uses the assignor {strategy!r}: only Kafka's own consumer assignors ({known}) can be imported")
        config = {"partition.assignment.strategy": strategy, "kafka.version": KAFKA_VERSION}
    else:
        raise _refused(source, f"group {group!r} is a {described['type']} group: only consumer groups (classic and KIP-848) can be imported yet")
    topics = []
    for name, topic in sorted(described["topics"].items()):
        partitions = topic["partitions"]
        entry: dict[str, Any] = {"name": name, "partitions": len(partitions)}
        replica_racks = [[racks.get(replica) for replica in p["replicas"]] for p in partitions]
        if all(rack for racks_of in replica_racks for rack in racks_of):
            entry["replica_racks"] = replica_racks
        topics.append(entry)
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
    return {
        "format": "kafka-assignment-problem/v1",
        "kind": "consumer",
        "name": group,
        "description": f"consumer group {group} imported from {source} at {when} (state {described['state']}, assignor {described['assignor']})",
        "config": config,
        "topics": topics,
        "members": members,
    }


def _refused(source: str, message: str) -> InvalidInputError:
    return InvalidInputError(source, [Issue(severity=Severity.ERROR, message=message)])
