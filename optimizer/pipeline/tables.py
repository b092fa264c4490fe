"""The fleet pipeline's normalised-table input: one problem document per application.

Platform teams export their clusters as tables rather than as problem documents. A *table
directory* holds one table per entity, each stored as `NAME.parquet` (a file, or a directory of
part files as Spark writes it), a directory `NAME/` of Parquet (or CSV) part files, or
`NAME.csv`. Every table has an `application` column; the application becomes the document's
`name`. docs/pipeline-tables.md describes the layout in full; in brief:

========================  ======================================================================
table                     columns (`?`: may be left empty; key within an application in bold)
========================  ======================================================================
`applications`            **application**, kind (`streams` or `consumer`), description?, and one
                          column per Kafka config key (`num.standby.replicas`, ...,
                          `partition.assignment.strategy`), all optional, empty = Kafka's default
`partitions`              **topic, partition**, replica_racks? (list; CSV: `r1;r2`)
`clients`                 **client**, rack?, threads?                     (Streams)
`client_tags`             **client, tag**, value                          (Streams, KIP-708 tags)
`tasks`                   **task**, subtopology?, stateful?, changelog_end_offset?  (Streams)
`task_partitions`         **task, role, topic, partition**; role source|changelog  (Streams)
`lags`                    **client, task**, lag                           (Streams)
`previous`                **client, task**, role; role active|standby     (Streams)
`topics`                  **topic**, partitions                           (consumer)
`members`                 **member**, rack?, generation?                  (consumer)
`subscriptions`           **member, topic**                               (consumer)
`owned`                   **member, topic, partition**                    (consumer)
========================  ======================================================================

Required tables: `applications`; with Streams applications also `clients`, `tasks`,
`task_partitions` and `partitions`; with consumer groups also `topics`, `members` and
`subscriptions`. `client_tags`, `lags`, `previous` and `owned` are optional, as is `partitions` for
consumer groups (a topic with rows there has replica racks for every partition, `[]` for the
partitions without a row; a topic without rows has none). Columns marked `?` may be absent.

Two readers build the same documents from the same tables:

* `read_table_records(path)`: pyarrow and the standard library only, for the local runner;
* `spark_table_records(spark, path)`: Spark joins the tables by application (one groupBy over
  the union of every table's rows as structs, a multi-way outer join in one shuffle); one Python
  function then assembles each application's joined row into its document.

Both assemble with `_assemble`, which sorts every list (natural order, see `natural_key`) and
serialises canonically (`json.dumps(..., sort_keys=True, separators=(",", ":"))`), so the
documents are byte-identical whatever the order of the rows or the reader.

Errors. Problems with the tables themselves (a missing table or column, an unknown column, a
column of the wrong type, rows without an application or naming one that is not in
`applications`, an application listed twice) raise `InvalidInputError` naming every one of them.
Problems of one application (an unknown kind, a task partition that is not in `partitions`, a
key listed twice, a cell that is not a number, ...) make that application's `Record` carry
`input_error`; the pipeline reports it as `invalid`, and the other applications run.

`write_tables(problems, directory)` writes problems in this layout: the inverse of the readers.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from optimizer.errors import InvalidInputError
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import parse_partition_id
from optimizer.model.ids import shown as _quoted
from optimizer.model.limits import MAX_PARTITIONS
from optimizer.model.issues import Issue, Severity
from optimizer.model.streams import PROBLEM_FORMAT, StreamsProblem
from optimizer.pipeline.records import Record

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    Problem = StreamsProblem | ConsumerProblem

# ---------------------------------------------------------------------------------------------
# The layout
# ---------------------------------------------------------------------------------------------

STRING = "string"
INT = "int"
BOOL = "bool"
LIST = "list"

# What each logical type may be stored as. Whole numbers may arrive as floats (pandas turns an
# integer column with nulls into float64) or as text (CSV, properties exports); lists as
# `;`-separated text. Text columns must be text: an id stored as a number is a mistake.
_ACCEPTED = {
    STRING: {"string", "null"},
    INT: {"int", "float", "string", "null"},
    BOOL: {"bool", "string", "null"},
    LIST: {"list", "string", "null"},
}
_EXPECTED = {
    STRING: "text",
    INT: "whole numbers",
    BOOL: "true/false",
    LIST: "lists of text (or text separated by ';')",
}
_PARQUET_TYPES = {STRING: pa.string(), INT: pa.int64(), BOOL: pa.bool_(), LIST: pa.list_(pa.string())}

STREAMS = "streams"
CONSUMER = "consumer"
KINDS = (STREAMS, CONSUMER)


@dataclass(frozen=True)
class Column:
    """One column of a table."""

    name: str
    type: str
    """`string`, `int`, `bool` or `list` (of text)."""
    optional: bool = False
    """Whether the column may be absent and its cells empty (empty means the field's default)."""
    doc: str = ""


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
)
"""Streams config keys, one `applications` column each, as in docs/file-formats.md."""

CONSUMER_CONFIG: tuple[tuple[str, str], ...] = (("partition.assignment.strategy", STRING),)
"""Consumer config keys, one `applications` column each."""

_CONFIG_KIND = {key: STREAMS for key, _ in STREAMS_CONFIG} | {key: CONSUMER for key, _ in CONSUMER_CONFIG}

TABLES: dict[str, TableSpec] = {
    spec.name: spec
    for spec in (
        TableSpec(
            "applications",
            (
                _app(),
                Column("kind", STRING, doc="streams or consumer"),
                Column("description", STRING, optional=True, doc="free text"),
                *(
                    Column(key, type_, optional=True, doc="Kafka config; empty = Kafka's default")
                    for key, type_ in STREAMS_CONFIG + CONSUMER_CONFIG
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
            ),
            ("topic", "partition"),
            KINDS,
            "topic partitions with the racks of their replicas",
        ),
        TableSpec(
            "clients",
            (
                _app(),
                Column("client", STRING),
                Column("rack", STRING, optional=True, doc="client.rack"),
                Column("threads", INT, optional=True, doc="num.stream.threads (default 1)"),
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
            (_app(), Column("topic", STRING), Column("partitions", INT)),
            ("topic",),
            (CONSUMER,),
            "topics of consumer groups with their partition counts",
        ),
        TableSpec(
            "members",
            (
                _app(),
                Column("member", STRING),
                Column("rack", STRING, optional=True, doc="client.rack"),
                Column("generation", INT, optional=True, doc="default -1"),
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

REQUIRED_TABLES: dict[str, tuple[str, ...]] = {
    STREAMS: ("clients", "tasks", "task_partitions", "partitions"),
    CONSUMER: ("topics", "members", "subscriptions"),
}
"""Tables a directory must have when it holds applications of the kind (besides applications)."""

CHILD_TABLES = tuple(name for name in TABLES if name != "applications")

OUTPUT_FIELDS = ("name", "document", "source", "input_error")
"""Columns of `spark_table_records`' DataFrame (the fields of `Record`)."""

_SOURCE_ROLES = {"source": "source_partitions", "changelog": "changelog_partitions"}
_PREVIOUS_ROLES = {"active": "previous_active", "standby": "previous_standby"}
_BLANK = re.compile(r"[ \t\n\x0b\f\r]*")  # Java's \s, so that Spark's check agrees
_WHOLE = re.compile(r"[+-]?[0-9]{1,30}(?:\.0*)?")
_DIGIT_RUNS = re.compile(r"([0-9]+)")
# pandas' DataFrame.to_parquet stores a non-default index as such columns: not data, skipped.
_PANDAS_INDEX = re.compile(r"__index_level_[0-9]+__")


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key that compares digit runs as numbers: `client-2` < `client-10`, `0_9` < `0_10`.

    Ties (`01` and `1`) are broken by the text itself, so the order is total.
    """
    parts = _DIGIT_RUNS.split(text)
    return tuple(int(part) if odd else part for odd, part in zip([0, 1] * len(parts), parts)), text


def _partition_key(topic: str, partition: int) -> tuple[Any, ...]:
    return natural_key(topic), partition


def canonical_json(document: Any) -> str:
    """The one JSON text both readers produce for a document."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _error(location: str, message: str) -> Issue:
    return Issue(severity=Severity.ERROR, location=location, message=message)


# ---------------------------------------------------------------------------------------------
# Finding the tables
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Located:
    name: str
    format: str  # "parquet" or "csv"
    files: tuple[Path, ...]
    shown: str  # the table as it is named in messages: tasks.csv, tasks/, ...


def _data_files(directory: Path) -> list[Path]:
    # Spark writes _SUCCESS and hidden .crc files beside its part files.
    return sorted(p for p in directory.iterdir() if p.is_file() and not p.name.startswith((".", "_")))


def _candidates(root: Path, name: str) -> list[Path]:
    found = [root / f"{name}.parquet", root / f"{name}.csv"]
    return [p for p in found if p.exists()] + ([root / name] if (root / name).is_dir() else [])


def is_table_directory(path: str | Path) -> bool:
    """Whether `path` is a directory holding an `applications` table (file or part files)."""
    path = Path(path)
    if not path.is_dir():
        return False
    for candidate in _candidates(path, "applications"):
        if candidate.is_file():
            return True
        # A subdirectory called applications in a directory of problem files is not a table.
        if any(p.suffix in (".parquet", ".csv") for p in _data_files(candidate)):
            return True
    return False


def _locate(root: Path) -> tuple[dict[str, _Located], list[Issue], set[str]]:
    """The tables found in `root`; issues for those found but unusable (given twice, an empty
    directory), and their names, so that they are not reported as missing too."""
    located: dict[str, _Located] = {}
    issues: list[Issue] = []
    unusable: set[str] = set()
    for name in TABLES:
        found = _candidates(root, name)
        if len(found) > 1:
            shown = ", ".join(p.name + ("/" if p.is_dir() else "") for p in found)
            issues.append(_error(name, f"the table is given more than once ({shown}); keep one"))
            unusable.add(name)
            continue
        if not found:
            continue
        where = found[0]
        if where.is_file():
            fmt = "csv" if where.suffix == ".csv" else "parquet"
            located[name] = _Located(name, fmt, (where,), where.name)
            continue
        files = _data_files(where)
        if not files:
            issues.append(_error(f"{where.name}/", "the directory holds no data files"))
            unusable.add(name)
            continue
        csv_parts = where.suffix == ".csv" or all(p.suffix == ".csv" for p in files)
        located[name] = _Located(name, "csv" if csv_parts else "parquet", tuple(files), f"{where.name}/")
    return located, issues, unusable


# ---------------------------------------------------------------------------------------------
# Checks shared by both readers
# ---------------------------------------------------------------------------------------------


def _layout_issues(
    located: dict[str, _Located],
    columns: dict[str, dict[str, tuple[str, str]]],
    kinds: set[str] | None,
    found_unusable: set[str],
) -> list[Issue]:
    """Missing tables and columns, unknown columns, wrong column types.

    `columns`: table -> column -> (storage class, type as the reader names it); `kinds`: the valid
    kinds in `applications` (None when they could not be read); `found_unusable`: tables that
    are there but cannot be used (reported already, not to be reported missing).
    """
    issues: list[Issue] = []
    if "applications" not in located and "applications" not in found_unusable:
        issues.append(
            _error(
                "applications",
                "missing table: the directory needs applications.parquet, applications/ or applications.csv",
            )
        )
    for kind in sorted(kinds or ()):
        for name in REQUIRED_TABLES[kind]:
            if name not in located and name not in found_unusable:
                issues.append(
                    _error(
                        name,
                        f"missing table: the directory has {kind} applications, which need "
                        f"{name}.parquet, {name}/ or {name}.csv (it may have no rows)",
                    )
                )
    for name, present in columns.items():
        spec = TABLES[name]
        shown = located[name].shown
        known = spec.column_names
        for column in present:
            if column not in known:
                issues.append(_error(f"{shown}.{column}", f"unknown column; {name} has {', '.join(known)}"))
        for column in spec.columns:
            if column.name not in present:
                if not column.optional:
                    issues.append(_error(f"{shown}.{column.name}", "missing required column"))
                continue
            storage, shown_type = present[column.name]
            if storage not in _ACCEPTED[column.type]:
                issues.append(
                    _error(
                        f"{shown}.{column.name}",
                        f"the column has type {shown_type}; expected {_EXPECTED[column.type]}",
                    )
                )
    return issues


def _usable_application_column(columns: dict[str, tuple[str, str]]) -> bool:
    return columns.get("application", ("",))[0] == "string"


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and _BLANK.fullmatch(value) is not None)


def _rows_text(rows: list[int] | None, count: int) -> str:
    """`rows 3, 8` when the reader knows row numbers (1-based), else `2 rows`."""
    if rows:
        listed = ", ".join(map(str, rows[:5])) + (f" and {len(rows) - 5} more" if len(rows) > 5 else "")
        return f"row{'s' if len(rows) > 1 else ''} {listed}"
    return f"{count} row{'s' if count != 1 else ''}"


def _application_reference_issues(
    shown: str,
    is_applications: bool,
    bad: Iterable[tuple[str | None, int, list[int] | None]],
) -> list[Issue]:
    """Issues for (application, row count, row numbers) that are blank, unknown or duplicated."""
    issues = []
    for application, count, rows in bad:
        where = f"{shown}.application"
        if _is_blank(application):
            issues.append(_error(where, f"{_rows_text(rows, count)}: no application"))
        elif is_applications:
            issues.append(
                _error(
                    where, f"application {_quoted(application)} is listed more than once ({_rows_text(rows, count)})"
                )
            )
        else:
            issues.append(
                _error(
                    where, f"application {_quoted(application)} is not in applications ({_rows_text(rows, count)})"
                )
            )
    return issues


# ---------------------------------------------------------------------------------------------
# Cells and rows of one application
# ---------------------------------------------------------------------------------------------


class _BadCell(ValueError):
    pass


def _convert(value: Any, type_: str) -> Any:
    """A stored cell as the document's value; None for an empty cell; _BadCell when unusable."""
    if value is None or (isinstance(value, str) and value == ""):
        return None  # CSV cannot tell empty text from no text: both are empty
    if isinstance(value, float) and math.isnan(value):
        return None  # pandas' null in a float column
    if type_ == STRING:
        if isinstance(value, str):
            return value
        raise _BadCell(f"{_quoted(value)} is not text")
    if type_ == INT:
        if isinstance(value, bool):
            raise _BadCell(f"{_quoted(value)} is not a whole number")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
            return int(value.strip().split(".")[0])
        raise _BadCell(f"{_quoted(value)} is not a whole number")
    if type_ == BOOL:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise _BadCell(f"{_quoted(value)} is not true or false")
    if isinstance(value, str):
        return [part.strip() for part in value.split(";") if part.strip()]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise _BadCell(f"{_quoted(value)} is not a list of text")


@dataclass
class _Application:
    """Converts and checks the rows of one application, collecting its issues."""

    issues: list[Issue] = field(default_factory=list)

    def where(self, table: str, row: dict[str, Any]) -> str:
        keys = TABLES[table].key or ("application",)
        return f"{table}[{', '.join(f'{key}={_quoted(row.get(key))}' for key in keys)}]"

    def add(self, location: str, message: str) -> None:
        self.issues.append(_error(location, message))

    def convert(self, table: str, raw: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """The row with its cells converted (unusable ones recorded as issues), and whether every
        required cell is usable."""
        spec = TABLES[table]
        values = dict(raw)
        failures: list[tuple[str, str]] = []
        for column in spec.columns:
            if column.name == "application" and table != "applications":
                continue
            try:
                values[column.name] = _convert(raw.get(column.name), column.type)
            except _BadCell as error:
                failures.append((column.name, str(error)))
                values[column.name] = None if column.optional else raw.get(column.name)
                continue
            if values[column.name] is None and not column.optional:
                failures.append((column.name, "missing value"))
        where = self.where(table, values)
        for column_name, message in failures:
            self.add(f"{where}.{column_name}", message)
        return values, all(self._optional(spec, name) for name, _ in failures)

    @staticmethod
    def _optional(spec: TableSpec, name: str) -> bool:
        return next(column.optional for column in spec.columns if column.name == name)

    def rows(self, table: str, raw_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The table's usable rows for this application, in a canonical order, keys unique."""
        # Sorting the raw rows first makes everything after it (which duplicate is kept, the
        # order of the issues) independent of the order the reader saw the rows in.
        ordered = sorted(raw_rows, key=lambda row: json.dumps(row, sort_keys=True, default=repr))
        converted = [values for values, usable in (self.convert(table, raw) for raw in ordered) if usable]
        key = TABLES[table].key
        seen: dict[tuple[Any, ...], int] = defaultdict(int)
        for row in converted:
            seen[tuple(row[column] for column in key)] += 1
        result = []
        reported = set()
        for row in converted:
            ident = tuple(row[column] for column in key)
            if seen[ident] > 1:
                if ident in reported:
                    continue
                reported.add(ident)
                self.add(
                    self.where(table, row),
                    f"{seen[ident]} rows have this key; each ({', '.join(key)}) is one row per application",
                )
            result.append(row)
        return result


def _assemble(app: dict[str, Any], children: dict[str, list[dict[str, Any]]], root: str) -> Record:
    """One application's Record from its `applications` row and its rows of the other tables.

    The shared heart of both readers: `children` maps a table to the application's rows (without
    the application column), in any order. The document lists everything in natural order:
    clients, tasks, topics and members by id, partitions by (topic, partition), previous tasks,
    subscriptions and owned partitions likewise; replica racks keep the order they are stored in.
    """
    name = app["application"]
    source = f"{root}#{name}"
    context = _Application()
    values, _ = context.convert("applications", app)
    kind = values.get("kind")
    document: dict[str, Any] = {"format": PROBLEM_FORMAT, "name": name}
    if kind is not None:
        document["kind"] = kind
    if values.get("description") is not None:
        document["description"] = values["description"]
    where = context.where("applications", {"application": name})
    config = {}
    for key, belongs in _CONFIG_KIND.items():
        if values.get(key) is None:
            continue
        if kind in KINDS and belongs != kind:
            context.add(
                f"{where}.{key}",
                f"is a {belongs} setting, but the application is of kind {kind}; leave it empty",
            )
            continue
        config[key] = values[key]
    if config:
        document["config"] = config
    if kind == STREAMS:
        _streams(document, children, context)
    elif kind == CONSUMER:
        _consumer(document, children, context)
    elif kind is not None:
        context.add(f"{where}.kind", f"unknown kind {_quoted(kind)}: expected 'streams' or 'consumer'")
    if kind in KINDS:
        for table, rows in sorted(children.items()):
            if rows and kind not in TABLES[table].kinds:
                other = " and ".join(TABLES[table].kinds)
                count = f"{len(rows)} row{'s' if len(rows) != 1 else ''}"
                context.add(
                    table, f"{count} for this {kind} application; {table} describes {other} applications"
                )
    error = str(InvalidInputError(source, context.issues)) if context.issues else None
    return Record(name, canonical_json(document), source, error)


def _streams(document: dict[str, Any], children: dict[str, list[dict[str, Any]]], app: _Application) -> None:
    clients: dict[str, dict[str, Any]] = {}
    for row in app.rows("clients", children.get("clients", [])):
        client = {"id": row["client"]}
        for column in ("rack", "threads"):
            if row.get(column) is not None:
                client[column] = row[column]
        clients[row["client"]] = client

    def client_of(table: str, row: dict[str, Any]) -> dict[str, Any] | None:
        if row["client"] not in clients:
            app.add(f"{app.where(table, row)}.client", f"client {_quoted(row['client'])} is not in clients")
            return None
        return clients[row["client"]]

    for row in app.rows("client_tags", children.get("client_tags", [])):
        if (client := client_of("client_tags", row)) is not None:
            client.setdefault("tags", {})[row["tag"]] = row["value"]
    for row in app.rows("previous", children.get("previous", [])):
        if row["role"] not in _PREVIOUS_ROLES:
            app.add(
                f"{app.where('previous', row)}.role",
                f"unknown role {_quoted(row['role'])}: expected active or standby",
            )
        elif (client := client_of("previous", row)) is not None:
            client.setdefault(_PREVIOUS_ROLES[row["role"]], []).append(row["task"])
    for row in app.rows("lags", children.get("lags", [])):
        if (client := client_of("lags", row)) is not None:
            client.setdefault("lags", {})[row["task"]] = row["lag"]

    tasks: dict[str, dict[str, Any]] = {}
    for row in app.rows("tasks", children.get("tasks", [])):
        task = {"id": row["task"]}
        for column in ("subtopology", "stateful", "changelog_end_offset"):
            if row.get(column) is not None:
                task[column] = row[column]
        tasks[row["task"]] = task
    racks = {
        (row["topic"], row["partition"]): row.get("replica_racks") or []
        for row in app.rows("partitions", children.get("partitions", []))
    }
    for row in app.rows("task_partitions", children.get("task_partitions", [])):
        where = app.where("task_partitions", row)
        if row["role"] not in _SOURCE_ROLES:
            app.add(f"{where}.role", f"unknown role {_quoted(row['role'])}: expected source or changelog")
            continue
        if row["task"] not in tasks:
            app.add(f"{where}.task", f"task {_quoted(row['task'])} is not in tasks")
            continue
        ident = (row["topic"], row["partition"])
        if ident not in racks:
            app.add(where, f"partition {row['topic']}-{row['partition']} is not in partitions")
            continue
        partition: dict[str, Any] = {"topic": row["topic"], "partition": row["partition"]}
        if racks[ident]:
            partition["replica_racks"] = racks[ident]
        tasks[row["task"]].setdefault(_SOURCE_ROLES[row["role"]], []).append(partition)

    for client in clients.values():
        for key in _PREVIOUS_ROLES.values():
            if key in client:
                client[key].sort(key=natural_key)
    for task in tasks.values():
        for key in _SOURCE_ROLES.values():
            if key in task:
                task[key].sort(key=lambda p: _partition_key(p["topic"], p["partition"]))
    document["clients"] = [clients[ident] for ident in sorted(clients, key=natural_key)]
    document["tasks"] = [tasks[ident] for ident in sorted(tasks, key=natural_key)]


def _consumer(document: dict[str, Any], children: dict[str, list[dict[str, Any]]], app: _Application) -> None:
    topics: dict[str, dict[str, Any]] = {}
    for row in app.rows("topics", children.get("topics", [])):
        topics[row["topic"]] = {"name": row["topic"], "partitions": row["partitions"]}
    racks: dict[str, dict[int, list[str]]] = defaultdict(dict)
    for row in app.rows("partitions", children.get("partitions", [])):
        topic = topics.get(row["topic"])
        if topic is None:
            continue  # a catalogue of partitions may list topics the group does not use
        if not 0 <= row["partition"] < topic["partitions"]:
            app.add(
                app.where("partitions", row),
                f"topic {_quoted(row['topic'])} has {topic['partitions']} partitions in topics; "
                f"there is no partition {row['partition']}",
            )
            continue
        racks[row["topic"]][row["partition"]] = row.get("replica_racks") or []
    for name, by_partition in racks.items():
        count = topics[name]["partitions"]
        if count <= MAX_PARTITIONS:  # beyond it the model rejects the count itself
            topics[name]["replica_racks"] = [by_partition.get(p, []) for p in range(count)]

    members: dict[str, dict[str, Any]] = {}
    for row in app.rows("members", children.get("members", [])):
        member = {"id": row["member"]}
        for column in ("rack", "generation"):
            if row.get(column) is not None:
                member[column] = row[column]
        members[row["member"]] = member

    def member_of(table: str, row: dict[str, Any]) -> dict[str, Any] | None:
        if row["member"] not in members:
            app.add(f"{app.where(table, row)}.member", f"member {_quoted(row['member'])} is not in members")
            return None
        return members[row["member"]]

    for row in app.rows("subscriptions", children.get("subscriptions", [])):
        if (member := member_of("subscriptions", row)) is not None:
            member.setdefault("subscriptions", []).append(row["topic"])
    owned: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for row in app.rows("owned", children.get("owned", [])):
        if member_of("owned", row) is not None:
            owned[row["member"]].append((row["topic"], row["partition"]))
    for ident, member in members.items():
        if "subscriptions" in member:
            member["subscriptions"].sort(key=natural_key)
        if owned.get(ident):
            member["owned_partitions"] = [
                f"{t}-{p}" for t, p in sorted(owned[ident], key=lambda tp: _partition_key(*tp))
            ]
    document["topics"] = [topics[name] for name in sorted(topics, key=natural_key)]
    document["members"] = [members[ident] for ident in sorted(members, key=natural_key)]


# ---------------------------------------------------------------------------------------------
# The pyarrow reader
# ---------------------------------------------------------------------------------------------


def _arrow_class(type_: pa.DataType) -> str:
    if pa.types.is_dictionary(type_):
        type_ = type_.value_type
    if pa.types.is_integer(type_):
        return "int"
    if pa.types.is_floating(type_):
        return "float"
    if pa.types.is_string(type_) or pa.types.is_large_string(type_) or pa.types.is_string_view(type_):
        return "string"
    if pa.types.is_boolean(type_):
        return "bool"
    if pa.types.is_null(type_):
        return "null"
    if pa.types.is_list(type_) or pa.types.is_large_list(type_) or pa.types.is_list_view(type_):
        value = type_.value_type
        if pa.types.is_string(value) or pa.types.is_large_string(value) or pa.types.is_null(value):
            return "list"
    return "other"


@dataclass
class _Loaded:
    columns: dict[str, tuple[str, str]]
    rows: list[dict[str, Any]]


def _read_parquet(located: _Located) -> tuple[_Loaded | None, list[Issue]]:
    tables = []
    for file in located.files:
        try:
            tables.append(pq.read_table(file))
        except (OSError, pa.ArrowException, ValueError) as error:
            return None, [_error(located.shown, f"cannot read {file.name} as Parquet: {error}")]
    try:
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowException, ValueError) as error:
        return None, [_error(located.shown, f"the part files have different columns or types: {error}")]
    table = table.drop_columns([n for n in table.schema.names if _PANDAS_INDEX.fullmatch(n)])
    names = table.schema.names
    if len(set(names)) != len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        return None, [
            _error(located.shown, f"column {', '.join(map(repr, repeated))} appears more than once")
        ]
    columns = {f.name: (_arrow_class(f.type), str(f.type)) for f in table.schema}
    return _Loaded(columns, table.to_pylist()), []


def _read_csv(located: _Located) -> tuple[_Loaded | None, list[Issue]]:
    header: list[str] | None = None
    rows: list[dict[str, Any]] = []
    issues: list[Issue] = []
    for file in located.files:
        try:
            with file.open(encoding="utf-8-sig", newline="") as handle:
                reader = csv.reader(handle)
                first = next(reader, None)
                if first is None:
                    continue  # Spark may write an empty part file for an empty partition
                if header is None:
                    header = first
                    repeated = sorted({n for n in header if header.count(n) > 1})
                    if repeated:
                        issues.append(
                            _error(
                                located.shown,
                                f"column {', '.join(map(repr, repeated))} appears more than once",
                            )
                        )
                elif first != header:
                    issues.append(
                        _error(located.shown, f"{file.name} has other columns than the part files before it")
                    )
                    continue
                for cells in reader:
                    if not cells:
                        continue  # a blank line
                    if len(cells) != len(header):
                        issues.append(
                            _error(
                                located.shown,
                                f"{file.name} line {reader.line_num}: {len(cells)} fields, "
                                f"the header has {len(header)}",
                            )
                        )
                        continue
                    rows.append({name: (cell if cell != "" else None) for name, cell in zip(header, cells)})
        except UnicodeDecodeError:
            issues.append(_error(located.shown, f"{file.name} is not UTF-8 text"))
        except (OSError, csv.Error) as error:
            issues.append(_error(located.shown, f"cannot read {file.name} as CSV: {error}"))
    if header is None and not issues:
        issues.append(
            _error(located.shown, "no header line: a CSV table starts with one (it may have no rows)")
        )
    if issues or header is None:
        return None, issues
    # Every CSV cell is text; the columns' types are checked cell by cell.
    return _Loaded({name: ("string", "text") for name in header}, rows), []


def _valid_kinds(values: Iterable[Any]) -> set[str]:
    return {value for value in values if value in KINDS}


def read_table_records(path: str | Path) -> list[Record]:
    """One Record per application of the table directory `path`, sorted by application name.

    Uses pyarrow and the standard library only. Raises InvalidInputError naming every problem
    with the tables themselves; the problems of one application are in its Record's
    `input_error`.
    """
    root = Path(path)
    if not root.is_dir():
        raise InvalidInputError(str(root), [_error("", "not a directory of tables")])
    located, issues, unusable = _locate(root)
    loaded: dict[str, _Loaded] = {}
    for name, where in located.items():
        table, problems = (_read_csv if where.format == "csv" else _read_parquet)(where)
        issues += problems
        if table is not None:
            loaded[name] = table
    kinds = None
    applications = loaded.get("applications")
    if applications is not None and applications.columns.get("kind", ("",))[0] == "string":
        kinds = _valid_kinds(row.get("kind") for row in applications.rows)
    issues += _layout_issues(
        located, {name: table.columns for name, table in loaded.items()}, kinds, unusable
    )

    names: set[str] = set()
    if applications is not None and _usable_application_column(applications.columns):
        issues += _application_reference_issues(
            located["applications"].shown, True, _pure_bad_rows(applications.rows, None)
        )
        names = {row["application"] for row in applications.rows if not _is_blank(row["application"])}
    for name, table in loaded.items():
        if name != "applications" and _usable_application_column(table.columns):
            issues += _application_reference_issues(
                located[name].shown, False, _pure_bad_rows(table.rows, names)
            )
    if issues:
        raise InvalidInputError(str(root), issues)
    assert applications is not None  # a missing applications table is an issue above

    grouped: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name, table in loaded.items():
        if name == "applications":
            continue
        by_application: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in table.rows:
            application = row.pop("application")
            by_application[application].append(row)
        grouped[name] = by_application
    return [
        _assemble(row, {name: rows.get(row["application"], []) for name, rows in grouped.items()}, str(root))
        for row in sorted(applications.rows, key=lambda row: row["application"])
    ]


def _pure_bad_rows(
    rows: list[dict[str, Any]], known: set[str] | None, numbered: bool = True
) -> list[tuple[str | None, int, list[int] | None]]:
    """(application, count, row numbers) of rows without an application, or naming one not in
    `known`; with `known` None (the applications table itself), of applications listed twice.
    Without `numbered` (Spark, whose rows have no reliable file order) no row numbers."""
    numbers: dict[str | None, list[int]] = defaultdict(list)
    for number, row in enumerate(rows, 1):
        application = row.get("application")
        numbers[None if _is_blank(application) else application].append(number)
    bad = []
    for application, where in numbers.items():
        if application is None or (len(where) > 1 if known is None else application not in known):
            bad.append((application, len(where), where if numbered else None))
    return sorted(bad, key=_bad_order)


# ---------------------------------------------------------------------------------------------
# The Spark reader
# ---------------------------------------------------------------------------------------------


def _spark_class(type_: Any) -> str:
    from pyspark.sql import types as T

    if isinstance(type_, T.ByteType | T.ShortType | T.IntegerType | T.LongType):
        return "int"
    if isinstance(type_, T.FloatType | T.DoubleType):
        return "float"
    if isinstance(type_, T.StringType | T.VarcharType | T.CharType):
        return "string"
    if isinstance(type_, T.BooleanType):
        return "bool"
    if isinstance(type_, T.NullType):
        return "null"
    if isinstance(type_, T.ArrayType) and isinstance(type_.elementType, T.StringType | T.NullType):
        return "list"
    return "other"


def _spark_read(spark: SparkSession, located: _Located) -> DataFrame:
    files = [str(file) for file in located.files]
    if located.format == "parquet":
        frame = spark.read.parquet(*files)
        return frame.drop(*[n for n in frame.columns if _PANDAS_INDEX.fullmatch(n)])
    from pyspark.sql.types import StringType, StructField, StructType

    # Every cell is text (converted cell by cell, as by the pyarrow reader). Reading the header
    # here spares Spark a job per table to find the column names.
    header = None
    for file in located.files:  # the first part file that is not empty
        with file.open(encoding="utf-8-sig", newline="") as handle:
            header = next(csv.reader(handle), None)
        if header is not None:
            break
    if header is None:
        raise ValueError("no header line: a CSV table starts with one (it may have no rows)")
    repeated = sorted({n for n in header if header.count(n) > 1})
    if repeated:
        raise ValueError(f"column {', '.join(map(repr, repeated))} appears more than once")
    schema = StructType([StructField(name, StringType()) for name in header])
    # RFC 4180 as Python's csv module writes it: "" inside quotes, newlines inside quoted cells.
    return (
        spark.read.schema(schema)
        .option("header", True)
        .option("multiLine", True)
        .option("quote", '"')
        .option("escape", '"')
        .option("encoding", "UTF-8")
        .csv(files)
    )


def spark_table_records(spark: SparkSession, path: str | Path) -> DataFrame:
    """The Records of the table directory `path` as a Spark DataFrame, sorted by name.

    Columns `name`, `document`, `source`, `input_error` (strings), with the same values as
    `read_table_records` gives. Spark joins the tables by application: each table's rows become
    structs, and one groupBy over the union of all tables collects every application's rows of
    every table next to its `applications` row (a multi-way outer join in a single shuffle).
    `mapInArrow` then assembles each application with the same Python function as the pyarrow
    reader. Problems with the tables themselves raise InvalidInputError here, on the driver.
    """
    from functools import reduce

    from pyspark.sql import functions as F

    root = Path(path)
    if not root.is_dir():
        raise InvalidInputError(str(root), [_error("", "not a directory of tables")])
    located, issues, unusable = _locate(root)
    frames: dict[str, DataFrame] = {}
    for name, where in located.items():
        try:
            frames[name] = _spark_read(spark, where)
        except UnicodeDecodeError:
            issues.append(_error(where.shown, "the header line is not UTF-8 text"))
        except Exception as error:  # noqa: BLE001 - Spark's AnalysisException and friends
            message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            issues.append(_error(where.shown, f"cannot read the table: {message}"))
    columns = {
        name: {f.name: (_spark_class(f.dataType), f.dataType.simpleString()) for f in frame.schema.fields}
        for name, frame in frames.items()
    }
    usable = {name for name in frames if _usable_application_column(columns[name])}
    # One row per application: small enough for the driver, which then checks kinds, blanks and
    # duplicates exactly as the pyarrow reader does.
    keys: list[dict[str, Any]] = []
    kinds = None
    if "applications" in usable:
        with_kind = columns["applications"].get("kind", ("",))[0] == "string"
        selected = frames["applications"].select("application", *(["kind"] if with_kind else []))
        keys = [row.asDict() for row in selected.collect()]
        kinds = _valid_kinds(row.get("kind") for row in keys) if with_kind else None
    issues += _layout_issues(located, columns, kinds, unusable)
    if "applications" in usable:
        issues += _application_reference_issues(
            located["applications"].shown, True, _pure_bad_rows(keys, None, numbered=False)
        )
    if "applications" in usable:
        names = {row["application"] for row in keys if not _is_blank(row["application"])}
        issues += _spark_unknown_applications(frames, usable, located, names)
    if issues or "applications" not in usable:
        raise InvalidInputError(str(root), issues)

    # Kafka's config keys contain dots, which Spark reads as struct fields in places: the other
    # applications columns travel under positional aliases.
    application_columns = [c for c in frames["applications"].columns if c != "application"]
    parts = [
        frames["applications"].select(
            "application",
            F.struct(*[F.col(f"`{c}`").alias(f"app_{i}") for i, c in enumerate(application_columns)]).alias(
                "rows_applications"
            ),
        )
    ]
    children = [name for name in CHILD_TABLES if name in frames]
    for name in children:
        fields = [F.col(f"`{column}`") for column in frames[name].columns if column != "application"]
        parts.append(frames[name].select("application", F.struct(*fields).alias(f"rows_{name}")))
    union = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), parts)
    # collect_list skips nulls: each application gets exactly its own rows of each table.
    joined = union.groupBy("application").agg(
        *[F.collect_list(f"rows_{name}").alias(f"rows_{name}") for name in ["applications", *children]]
    )
    schema = ", ".join(f"{column} string" for column in OUTPUT_FIELDS)
    assemble = _arrow_assembler(str(root), application_columns, children)
    # Sorted before the Python step (a record's name is its application): sorting its output
    # instead would run the assembler twice, once to sample the sort's ranges.
    return joined.orderBy("application").mapInArrow(assemble, schema)


def _spark_unknown_applications(
    frames: dict[str, DataFrame], usable: set[str], located: dict[str, _Located], names: set[str]
) -> list[Issue]:
    """Rows of the other tables without an application or naming one not in `names`."""
    from functools import reduce

    from pyspark.sql import functions as F

    children = [
        frames[name].select(F.lit(name).alias("table"), F.col("application"))
        for name in CHILD_TABLES
        if name in usable
    ]
    if not children:
        return []
    # `names` is on the driver already; Spark turns a long isin into a hash-set lookup, so this
    # is one scan with a partial aggregation rather than a join.
    application = F.col("application")
    known = application.isin(sorted(names)) if names else F.lit(False)
    unknown = (
        reduce(lambda a, b: a.unionByName(b), children)
        .filter(application.isNull() | ~known)
        .groupBy("table", "application")
        .count()
        .collect()
    )
    issues = []
    for name in CHILD_TABLES:
        rows = sorted(((row[1], row[2], None) for row in unknown if row[0] == name), key=_bad_order)
        issues += _application_reference_issues(located[name].shown, False, rows)
    return issues


def _bad_order(item: tuple[str | None, int, Any]) -> tuple[bool, str]:
    return (not _is_blank(item[0]), item[0] or "")


def _arrow_assembler(
    root: str, application_columns: list[str], children: list[str]
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The `mapInArrow` function: joined rows (an application and its rows per table) to Records."""

    def assemble(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            records = []
            for row in batch.to_pylist():
                # Duplicates were rejected on the driver: one applications row per group.
                aliased = row["rows_applications"][0]
                application = {column: aliased[f"app_{i}"] for i, column in enumerate(application_columns)}
                application["application"] = row["application"]
                rows = {name: row[f"rows_{name}"] or [] for name in children}
                records.append(_assemble(application, rows, root))
            yield pa.RecordBatch.from_pydict(
                {column: [getattr(record, column) for record in records] for column in OUTPUT_FIELDS},
                schema=pa.schema([(column, pa.string()) for column in OUTPUT_FIELDS]),
            )

    return assemble


# ---------------------------------------------------------------------------------------------
# Writing problems as tables
# ---------------------------------------------------------------------------------------------


def problem_table_rows(problems: Iterable[Problem]) -> dict[str, list[dict[str, Any]]]:
    """The rows of every table for `problems` (each with a unique name), in the layout's order.

    Raises ValueError for what the layout cannot hold: a problem without a name, a name used
    twice, or a Streams partition listed with different replica racks in two places (the
    `partitions` table holds one list per partition).
    """
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    seen: set[str] = set()
    for problem in problems:
        name = problem.name
        if not name:
            raise ValueError("every problem needs a name: it is the application column of the tables")
        if name in seen:
            raise ValueError(f"problem name {name!r} is used twice")
        seen.add(name)
        # An empty text is a missing value in the tables: an empty description is written as none.
        row: dict[str, Any] = {
            "application": name,
            "kind": problem.kind,
            "description": problem.description or None,
        }
        for key, value in problem.config.model_dump(
            mode="json", by_alias=True, exclude_defaults=True
        ).items():
            if key not in _CONFIG_KIND:
                raise ValueError(f"config key {key!r} has no column in applications")  # the layout is stale
            row[key] = value
        tables["applications"].append(row)
        if isinstance(problem, StreamsProblem):
            _streams_rows(name, problem, tables)
        else:
            _consumer_rows(name, problem, tables)
    return tables


def _streams_rows(name: str, problem: StreamsProblem, tables: dict[str, list[dict[str, Any]]]) -> None:
    for client in problem.clients:
        tables["clients"].append(
            {"application": name, "client": client.id, "rack": client.rack, "threads": client.threads}
        )
        for tag, value in client.tags.items():
            tables["client_tags"].append(
                {"application": name, "client": client.id, "tag": tag, "value": value}
            )
        for role, tasks in (("active", client.previous_active), ("standby", client.previous_standby)):
            for task in tasks:
                tables["previous"].append(
                    {"application": name, "client": client.id, "task": task, "role": role}
                )
        for task, lag in client.lags.items():
            tables["lags"].append({"application": name, "client": client.id, "task": task, "lag": lag})
    racks: dict[tuple[str, int], tuple[tuple[str, ...], str]] = {}
    for task in problem.tasks:
        tables["tasks"].append(
            {
                "application": name,
                "task": task.id,
                "subtopology": task.subtopology,
                "stateful": task.stateful,
                "changelog_end_offset": task.changelog_end_offset,
            }
        )
        for role, partitions in (
            ("source", task.source_partitions),
            ("changelog", task.changelog_partitions),
        ):
            for partition in partitions:
                tables["task_partitions"].append(
                    {
                        "application": name,
                        "task": task.id,
                        "role": role,
                        "topic": partition.topic,
                        "partition": partition.partition,
                    }
                )
                ident = (partition.topic, partition.partition)
                earlier = racks.setdefault(ident, (partition.replica_racks, task.id))
                if earlier[0] != partition.replica_racks:
                    raise ValueError(
                        f"{name}: partition {partition.id} has replica racks {list(earlier[0])} in task "
                        f"{earlier[1]} and {list(partition.replica_racks)} in task {task.id}; the "
                        "partitions table holds one list per partition"
                    )
    for (topic, partition), (replica_racks, _) in racks.items():
        tables["partitions"].append(
            {
                "application": name,
                "topic": topic,
                "partition": partition,
                "replica_racks": list(replica_racks),
            }
        )


def _consumer_rows(name: str, problem: ConsumerProblem, tables: dict[str, list[dict[str, Any]]]) -> None:
    for topic in problem.topics:
        tables["topics"].append({"application": name, "topic": topic.name, "partitions": topic.partitions})
        for partition, replica_racks in enumerate(topic.replica_racks or ()):
            tables["partitions"].append(
                {
                    "application": name,
                    "topic": topic.name,
                    "partition": partition,
                    "replica_racks": list(replica_racks),
                }
            )
    for member in problem.members:
        tables["members"].append(
            {"application": name, "member": member.id, "rack": member.rack, "generation": member.generation}
        )
        for topic in member.subscriptions:
            tables["subscriptions"].append({"application": name, "member": member.id, "topic": topic})
        for owned in member.owned_partitions:
            key = parse_partition_id(owned)
            tables["owned"].append(
                {"application": name, "member": member.id, "topic": key.topic, "partition": key.partition}
            )


def write_tables(problems: Iterable[Problem], directory: str | Path, format: str = "parquet") -> list[Path]:
    """Write `problems` as a table directory (`format` `parquet` or `csv`); the files written.

    Every table of the layout is written, empty ones too, so that the directory shows the whole
    layout. Existing tables are not overwritten (FileExistsError). Empty texts are missing values
    in the tables, so an empty description is written as none. CSV holds lists as `;`-separated
    text, so it refuses (ValueError) list items with `;` or surrounding spaces; Parquet holds
    them.
    """
    if format not in ("parquet", "csv"):
        raise ValueError(f"unknown format {format!r}: expected parquet or csv")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    existing = [p.name for name in TABLES for p in _candidates(directory, name)]
    if existing:
        raise FileExistsError(
            f"{directory} already holds tables ({', '.join(existing)}); write to a new directory"
        )
    tables = problem_table_rows(problems)
    written = []
    for name, rows in tables.items():
        spec = TABLES[name]
        target = directory / f"{name}.{format}"
        if format == "parquet":
            schema = pa.schema([(column.name, _PARQUET_TYPES[column.type]) for column in spec.columns])
            pq.write_table(pa.Table.from_pylist(rows, schema=schema), target)
        else:
            _write_csv(spec, rows, target)
        written.append(target)
    return written


def _csv_cell(spec: TableSpec, column: Column, value: Any, row: dict[str, Any]) -> str:
    where = f"{spec.name}.{column.name} of application {row['application']!r}"
    if value is None:
        return ""
    if column.type == LIST:
        for item in value:
            if not item or ";" in item or item != item.strip():
                raise ValueError(f"{where}: CSV cannot hold the list item {item!r}; write Parquet")
        return ";".join(value)
    if column.type == BOOL:
        return "true" if value else "false"
    if value == "":
        raise ValueError(f"{where}: CSV cannot tell an empty text from a missing one; write Parquet")
    return str(value)


def _write_csv(spec: TableSpec, rows: list[dict[str, Any]], target: Path) -> None:
    with target.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(spec.column_names)
        for row in rows:
            writer.writerow([_csv_cell(spec, column, row.get(column.name), row) for column in spec.columns])
