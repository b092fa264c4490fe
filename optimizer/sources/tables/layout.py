"""The layout of a table directory: which tables there are, their columns, types and keys.

The lowest layer of `optimizer.sources.tables`: everything else in the package reads the layout
from here, and nothing here reads the rest. docs/pipeline-tables.md describes the layout in full
(a test holds the two together); in brief:

========================  ======================================================================
table                     columns (`?`: may be left empty; key within an application in bold)
========================  ======================================================================
`applications`            **application**, kind (`streams` or `consumer`), description?,
                          price_per_gb?, and one column per Kafka config key
                          (`num.standby.replicas`, ..., `partition.assignment.strategy`), all
                          optional, empty = Kafka's default
`partitions`              **topic, partition**, replica_racks? (list; CSV: `r1;r2`),
                          bytes_per_second?, leader_rack?
`clients`                 **client**, rack?, threads?, capacity?          (Streams)
`client_tags`             **client, tag**, value                          (Streams, KIP-708 tags)
`tasks`                   **task**, subtopology?, stateful?, changelog_end_offset?, weight?
                                                                          (Streams)
`task_partitions`         **task, role, topic, partition**; role source|changelog  (Streams)
`lags`                    **client, task**, lag                           (Streams)
`previous`                **client, task**, role; role active|standby     (Streams)
`topics`                  **topic**, partitions (consumer groups; ? for Streams),
                          bytes_per_second?
`members`                 **member**, rack?, generation?, capacity?       (consumer)
`subscriptions`           **member, topic**                               (consumer)
`owned`                   **member, topic, partition**                    (consumer)
========================  ======================================================================

Required tables: `applications`; with Streams applications also `clients`, `tasks`,
`task_partitions` and `partitions`; with consumer groups also `topics`, `members` and
`subscriptions`. `client_tags`, `lags`, `previous` and `owned` are optional, as are `partitions`
for consumer groups (`PARTITION_VALUES` says when a topic has replica racks, leaders and rates
there) and `topics` for Streams applications (where it gives topics' rates only). Columns marked
`?` may be absent.

The weights of docs/file-formats.md ("Weights") are `number` columns, each checked against the
model's own type (`Column.check`), so that a bad value is named by table, key and column in the
words of the problem validation.

`error_issue` is here too, as every layer of the package reports its problems with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from optimizer.model.ids import BytesPerSecond, Capacity, Currency, Price, TopicUuid, Weight
from optimizer.model.issues import Issue, Severity

STRING = "string"
INT = "int"
BOOL = "bool"
LIST = "list"
NUMBER = "number"

# What each logical type may be stored as. Whole numbers may arrive as floats (pandas turns an
# integer column with nulls into float64) or as text (CSV, properties exports); lists as
# `;`-separated text. Text columns must be text: an id stored as a number is a mistake. Numbers
# (rates, weights, prices) may be integers, floats, decimals or the text of a number.
ACCEPTED = {
    STRING: {"string", "null"},
    INT: {"int", "float", "string", "null"},
    BOOL: {"bool", "string", "null"},
    LIST: {"list", "string", "null"},
    NUMBER: {"int", "float", "decimal", "string", "null"},
}
EXPECTED = {
    STRING: "text",
    INT: "whole numbers",
    BOOL: "true/false",
    LIST: "lists of text (or text separated by ';')",
    NUMBER: "numbers",
}

STREAMS = "streams"
CONSUMER = "consumer"
KINDS = (STREAMS, CONSUMER)
KIND_PLURALS = {STREAMS: "Streams applications", CONSUMER: "consumer groups"}


@dataclass(frozen=True)
class Column:
    """One column of a table."""

    name: str
    type: str
    """`string`, `int`, `bool`, `list` (of text) or `number`."""
    optional: bool = False
    """Whether the column may be absent and its cells empty (empty means the field's default)."""
    doc: str = ""
    needed_by: tuple[str, ...] = ()
    """Kinds of application for which an optional column is required nonetheless: present when
    the directory has applications of such a kind, and filled in their rows."""
    check: Any = None
    """The model's type a value must satisfy (`BytesPerSecond`, ...): a value it refuses is an
    error of the cell, worded as the problem validation words it."""


@dataclass(frozen=True)
class TableSpec:
    """One table of the layout."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    """Columns (besides `application`) that are unique within an application."""
    kinds: tuple[str, ...]
    """Kinds of application the table describes."""
    doc: str = ""

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)


def _app() -> Column:
    return Column("application", STRING, doc="the application or group: the document's name")


STREAMS_CONFIG: tuple[tuple[str, str], ...] = (
    ("num.standby.replicas", INT),
    ("acceptable.recovery.lag", INT),
    ("max.warmup.replicas", INT),
    ("probing.rebalance.interval.ms", INT),
    ("rack.aware.assignment.strategy", STRING),
    ("rack.aware.assignment.traffic_cost", INT),
    ("rack.aware.assignment.non_overlap_cost", INT),
    ("rack.aware.assignment.tags", LIST),
    ("task.assignor.class", STRING),
    ("group.protocol", STRING),
    ("streams.assignor.name", STRING),
    ("kafka.version", STRING),
    ("replica.selector.class", STRING),
)
"""Streams config keys, one `applications` column each, as in docs/file-formats.md."""

CONSUMER_CONFIG: tuple[tuple[str, str], ...] = (
    ("partition.assignment.strategy", STRING),
    ("group.protocol", STRING),
    ("group.remote.assignor", STRING),
    ("kafka.version", STRING),
    ("replica.selector.class", STRING),
)
"""Consumer config keys, one `applications` column each (`group.protocol`, `kafka.version` and
`replica.selector.class` are both kinds' keys)."""

CONFIG_KIND: dict[str, tuple[str, ...]] = {
    key: tuple(kind for kind, keys in ((STREAMS, STREAMS_CONFIG), (CONSUMER, CONSUMER_CONFIG)) if key in dict(keys))
    for key, _ in STREAMS_CONFIG + CONSUMER_CONFIG
}
"""Config key -> the kinds of application that have it."""

TABLES: dict[str, TableSpec] = {
    spec.name: spec
    for spec in (
        TableSpec(
            "applications",
            (
                _app(),
                Column("kind", STRING, doc="streams or consumer"),
                Column("description", STRING, optional=True, doc="free text"),
                Column("price_per_gb", NUMBER, optional=True, doc="price of a GB of cross-zone traffic", check=Price),
                Column("currency", STRING, optional=True, doc="ISO 4217 code of price_per_gb's currency", check=Currency),
                *(
                    Column(key, type_, optional=True, doc="Kafka config; empty = Kafka's default")
                    for key, type_ in dict(STREAMS_CONFIG + CONSUMER_CONFIG).items()
                ),
            ),
            (),
            KINDS,
            "one row per Streams application or consumer group",
        ),
        TableSpec(
            "partitions",
            (
                _app(),
                Column("topic", STRING),
                Column("partition", INT),
                Column("replica_racks", LIST, optional=True, doc="racks of the brokers holding a replica"),
                Column("bytes_per_second", NUMBER, optional=True, doc="bytes per second into the partition", check=BytesPerSecond),
                Column("leader_rack", STRING, optional=True, doc="rack of the broker leading the partition"),
            ),
            ("topic", "partition"),
            KINDS,
            "topic partitions with the racks of their replicas and leader, and their rates",
        ),
        TableSpec(
            "clients",
            (
                _app(),
                Column("client", STRING),
                Column("rack", STRING, optional=True, doc="client.rack"),
                Column("threads", INT, optional=True, doc="num.stream.threads (default 1)"),
                Column("capacity", NUMBER, optional=True, doc="instance size (default 1)", check=Capacity),
            ),
            ("client",),
            (STREAMS,),
            "Streams clients (application instances)",
        ),
        TableSpec(
            "client_tags",
            (_app(), Column("client", STRING), Column("tag", STRING), Column("value", STRING)),
            ("client", "tag"),
            (STREAMS,),
            "client.tag.* values (KIP-708), one row per client and tag",
        ),
        TableSpec(
            "tasks",
            (
                _app(),
                Column("task", STRING, doc="<subtopology>_<partition>, for example 0_3"),
                Column("subtopology", INT, optional=True, doc="default: from the task id"),
                Column("stateful", BOOL, optional=True, doc="default false"),
                Column("changelog_end_offset", INT, optional=True),
                Column("weight", NUMBER, optional=True, doc="processing weight (default 1)", check=Weight),
            ),
            ("task",),
            (STREAMS,),
            "Streams tasks",
        ),
        TableSpec(
            "task_partitions",
            (
                _app(),
                Column("task", STRING),
                Column("role", STRING, doc="source or changelog"),
                Column("topic", STRING),
                Column("partition", INT),
            ),
            ("task", "role", "topic", "partition"),
            (STREAMS,),
            "the partitions each task reads; each must be in partitions",
        ),
        TableSpec(
            "lags",
            (_app(), Column("client", STRING), Column("task", STRING), Column("lag", INT)),
            ("client", "task"),
            (STREAMS,),
            "offsets behind, per client and task it has state for (KIP-441)",
        ),
        TableSpec(
            "previous",
            (
                _app(),
                Column("client", STRING),
                Column("task", STRING),
                Column("role", STRING, doc="active or standby"),
            ),
            ("client", "task"),
            (STREAMS,),
            "the previous assignment",
        ),
        TableSpec(
            "topics",
            (
                _app(),
                Column("topic", STRING),
                Column("partitions", INT, optional=True, doc="partition count (consumer groups)", needed_by=(CONSUMER,)),
                Column("bytes_per_second", NUMBER, optional=True, doc="bytes per second into each partition", check=BytesPerSecond),
                Column("topic_id", STRING, optional=True, doc="Kafka's topic id (consumer groups)", check=TopicUuid),
            ),
            ("topic",),
            KINDS,
            "topics with their partition counts (consumer groups) and rates",
        ),
        TableSpec(
            "members",
            (
                _app(),
                Column("member", STRING),
                Column("rack", STRING, optional=True, doc="client.rack"),
                Column("group_instance_id", STRING, optional=True, doc="group.instance.id of a static member"),
                Column("generation", INT, optional=True, doc="default -1"),
                Column("capacity", NUMBER, optional=True, doc="instance size (default 1)", check=Capacity),
            ),
            ("member",),
            (CONSUMER,),
            "consumer-group members",
        ),
        TableSpec(
            "subscriptions",
            (_app(), Column("member", STRING), Column("topic", STRING)),
            ("member", "topic"),
            (CONSUMER,),
            "the topics each member subscribes to",
        ),
        TableSpec(
            "owned",
            (_app(), Column("member", STRING), Column("topic", STRING), Column("partition", INT)),
            ("member", "topic", "partition"),
            (CONSUMER,),
            "the partitions each member owned before the rebalance",
        ),
    )
}
"""Every table of the layout, in the order the documentation lists them."""

PARTITION_VALUES = ("bytes_per_second", "leader_rack")
"""The columns of `partitions` besides its key and `replica_racks`. A consumer group's topic has
replica racks when one of its rows gives a list of racks (in Parquet an empty one too) or nothing
else, as bare rows always have; rows that give only such values, their racks empty, say nothing of
the topic's racks."""

REQUIRED_TABLES: dict[str, tuple[str, ...]] = {
    STREAMS: ("clients", "tasks", "task_partitions", "partitions"),
    CONSUMER: ("topics", "members", "subscriptions"),
}
"""Tables a directory must have when it holds applications of the kind (besides applications)."""

CHILD_TABLES = tuple(name for name in TABLES if name != "applications")


def error_issue(location: str, message: str) -> Issue:
    """Everything wrong with tables is an error: a table directory has no tolerated quirks."""
    return Issue(severity=Severity.ERROR, location=location, message=message)
