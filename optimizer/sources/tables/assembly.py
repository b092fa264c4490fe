"""Building one application's problem document (as a `Record`) from its rows of every table.

The shared heart of both readers: `application_record` converts and checks the cells, joins the
rows by their keys, sorts every list (natural order, see `natural_key`) and serialises
canonically (`canonical_json`), so the documents are byte-identical whatever the order of the
rows or the reader. Problems of one application (an unknown kind, a task partition that is not in
`partitions`, a key listed twice, a cell that is not a number, ...) make that application's
`Record` carry `input_error`; the pipeline reports it as `invalid`, and the other applications
run.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

from optimizer.errors import InvalidInputError
from optimizer.model.ids import natural_key, partition_id
from optimizer.model.ids import shown as _quoted
from optimizer.model.issues import Issue, issues_from_validation_error
from optimizer.model.limits import MAX_PARTITIONS
from optimizer.model.streams import PROBLEM_FORMAT
from optimizer.sources.records import Record
from optimizer.sources.tables.layout import (
    BOOL,
    CONFIG_KIND,
    CONSUMER,
    INT,
    KINDS,
    NUMBER,
    PARTITION_VALUES,
    STREAMS,
    STRING,
    TABLES,
    Column,
    error_issue,
)

_SOURCE_ROLES = {"source": "source_partitions", "changelog": "changelog_partitions"}
_PREVIOUS_ROLES = {"active": "previous_active", "standby": "previous_standby"}
_WHOLE = re.compile(r"[+-]?[0-9]{1,30}(?:\.0*)?")
# A decimal number as CSV and properties exports write it (Python's float() would also take
# `1_000`, `nan` and `infinity`, which are not numbers in a table).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _partition_key(topic: str, partition: int) -> tuple[Any, ...]:
    return natural_key(topic), partition


def canonical_json(document: Any) -> str:
    """The one JSON text both readers produce for a document."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


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
    if type_ == NUMBER:
        # Always a float, as the model holds it: an integer column and a float column give the
        # same document.
        if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
            try:
                return float(value)
            except OverflowError:
                return math.inf if value > 0 else -math.inf  # the model's check says it is not finite
        if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
            return float(value.strip())
        raise _BadCell(f"{_quoted(value)} is not a number")
    if isinstance(value, str):
        # Text with no item (white space, `;`) is an empty cell: only Parquet's list type holds an
        # empty list, which a consumer topic's racks tell from none (`_gives_racks`).
        return [part.strip() for part in value.split(";") if part.strip()] or None
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise _BadCell(f"{_quoted(value)} is not a list of text")


@cache
def _adapter(check: Any) -> TypeAdapter[Any]:
    return TypeAdapter(check)


def _check_issues(column: Column, value: Any) -> list[str]:
    """What the model's type of `column` says of `value`, in the problem validation's words."""
    try:
        _adapter(column.check).validate_python(value)
    except ValidationError as error:
        return [issue.message for issue in issues_from_validation_error(error, value)]
    return []


@dataclass
class _Application:
    """Converts and checks the rows of one application, collecting its issues."""

    issues: list[Issue] = field(default_factory=list)
    kind: str | None = None
    """The application's kind, once known: columns `needed_by` it must be filled."""

    def where(self, table: str, row: dict[str, Any]) -> str:
        keys = TABLES[table].key or ("application",)
        return f"{table}[{', '.join(f'{key}={_quoted(row.get(key))}' for key in keys)}]"

    def add(self, location: str, message: str) -> None:
        self.issues.append(error_issue(location, message))

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
            if values[column.name] is None:
                if not self._optional(column):
                    failures.append((column.name, "missing value"))
            elif column.check is not None and (messages := _check_issues(column, values[column.name])):
                failures += [(column.name, message) for message in messages]
                values[column.name] = None  # checked columns are optional
        where = self.where(table, values)
        for column_name, message in failures:
            self.add(f"{where}.{column_name}", message)
        columns = {column.name: column for column in spec.columns}
        return values, all(self._optional(columns[name]) for name, _ in failures)

    def _optional(self, column: Column) -> bool:
        return column.optional and self.kind not in column.needed_by

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


def application_record(app: dict[str, Any], children: dict[str, list[dict[str, Any]]], root: str) -> Record:
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
    context.kind = kind if kind in KINDS else None
    document: dict[str, Any] = {"format": PROBLEM_FORMAT, "name": name}
    if kind is not None:
        document["kind"] = kind
    for column in ("description", "price_per_gb", "currency"):
        if values.get(column) is not None:
            document[column] = values[column]
    where = context.where("applications", {"application": name})
    config = {}
    for key, belongs in CONFIG_KIND.items():
        if values.get(key) is None:
            continue
        if kind in KINDS and kind not in belongs:
            context.add(
                f"{where}.{key}",
                f"is a {' and '.join(belongs)} setting, but the application is of kind {kind}; leave it empty",
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
        for column in ("rack", "threads", "capacity"):
            if row.get(column) is not None:
                client[column] = row[column]
        clients[row["client"]] = client

    def client_of(table: str, row: dict[str, Any]) -> dict[str, Any] | None:
        if row["client"] not in clients:
            app.add(f"{app.where(table, row)}.client", f"client {_quoted(row['client'])} is not in clients")
            return None
        return clients[row["client"]]

    for row in app.rows("client_tags", children.get("client_tags", [])):
        if (row_client := client_of("client_tags", row)) is not None:
            row_client.setdefault("tags", {})[row["tag"]] = row["value"]
    for row in app.rows("previous", children.get("previous", [])):
        if row["role"] not in _PREVIOUS_ROLES:
            app.add(
                f"{app.where('previous', row)}.role",
                f"unknown role {_quoted(row['role'])}: expected active or standby",
            )
        elif (row_client := client_of("previous", row)) is not None:
            row_client.setdefault(_PREVIOUS_ROLES[row["role"]], []).append(row["task"])
    for row in app.rows("lags", children.get("lags", [])):
        if (row_client := client_of("lags", row)) is not None:
            row_client.setdefault("lags", {})[row["task"]] = row["lag"]

    tasks: dict[str, dict[str, Any]] = {}
    for row in app.rows("tasks", children.get("tasks", [])):
        task = {"id": row["task"]}
        for column in ("subtopology", "stateful", "changelog_end_offset", "weight"):
            if row.get(column) is not None:
                task[column] = row[column]
        tasks[row["task"]] = task
    # A partition's racks, rate and leader, the same wherever a task reads it.
    partitions = {(row["topic"], row["partition"]): row for row in app.rows("partitions", children.get("partitions", []))}
    for row in app.rows("task_partitions", children.get("task_partitions", [])):
        where = app.where("task_partitions", row)
        if row["role"] not in _SOURCE_ROLES:
            app.add(f"{where}.role", f"unknown role {_quoted(row['role'])}: expected source or changelog")
            continue
        if row["task"] not in tasks:
            app.add(f"{where}.task", f"task {_quoted(row['task'])} is not in tasks")
            continue
        ident = (row["topic"], row["partition"])
        if ident not in partitions:
            app.add(where, f"partition {row['topic']}-{row['partition']} is not in partitions")
            continue
        partition: dict[str, Any] = {"topic": row["topic"], "partition": row["partition"]}
        if partitions[ident].get("replica_racks"):
            partition["replica_racks"] = partitions[ident]["replica_racks"]
        for column in ("bytes_per_second", "leader_rack"):
            if partitions[ident].get(column) is not None:
                partition[column] = partitions[ident][column]
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
    # Topic rates, for the topics the tasks read: the table may be a whole cluster's catalogue.
    read = {p["topic"] for task in tasks.values() for key in _SOURCE_ROLES.values() for p in task.get(key, ())}
    rates = {
        row["topic"]: row["bytes_per_second"]
        for row in app.rows("topics", children.get("topics", []))
        if row.get("bytes_per_second") is not None and row["topic"] in read
    }
    if rates:
        document["topic_bytes_per_second"] = {topic: rates[topic] for topic in sorted(rates, key=natural_key)}


def _consumer(document: dict[str, Any], children: dict[str, list[dict[str, Any]]], app: _Application) -> None:
    topics: dict[str, dict[str, Any]] = {}
    for row in app.rows("topics", children.get("topics", [])):
        topics[row["topic"]] = {"name": row["topic"], "partitions": row["partitions"]}
        for column in ("bytes_per_second", "topic_id"):
            if row.get(column) is not None:
                topics[row["topic"]][column] = row[column]
    by_topic: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
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
        by_topic[row["topic"]][row["partition"]] = row
    for name in sorted(by_topic, key=natural_key):
        if topics[name]["partitions"] <= MAX_PARTITIONS:  # beyond it the model rejects the count itself
            _partition_values(topics[name], by_topic[name], app)

    members: dict[str, dict[str, Any]] = {}
    for row in app.rows("members", children.get("members", [])):
        member = {"id": row["member"]}
        for column in ("rack", "group_instance_id", "generation", "capacity"):
            if row.get(column) is not None:
                member[column] = row[column]
        members[row["member"]] = member

    def member_of(table: str, row: dict[str, Any]) -> dict[str, Any] | None:
        if row["member"] not in members:
            app.add(f"{app.where(table, row)}.member", f"member {_quoted(row['member'])} is not in members")
            return None
        return members[row["member"]]

    for row in app.rows("subscriptions", children.get("subscriptions", [])):
        if (row_member := member_of("subscriptions", row)) is not None:
            row_member.setdefault("subscriptions", []).append(row["topic"])
    owned: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for row in app.rows("owned", children.get("owned", [])):
        if member_of("owned", row) is not None:
            owned[row["member"]].append((row["topic"], row["partition"]))
    for ident, member in members.items():
        if "subscriptions" in member:
            member["subscriptions"].sort(key=natural_key)
        if owned.get(ident):
            member["owned_partitions"] = [
                partition_id(t, p) for t, p in sorted(owned[ident], key=lambda tp: _partition_key(*tp))
            ]
    document["topics"] = [topics[name] for name in sorted(topics, key=natural_key)]
    document["members"] = [members[ident] for ident in sorted(members, key=natural_key)]


def _gives_racks(row: dict[str, Any]) -> bool:
    """Whether a consumer partitions row says its topic has replica racks: it gives a list (in
    Parquet an empty one too), or it gives nothing else (a partition whose racks are unknown, as
    rows have always said)."""
    return row.get("replica_racks") is not None or all(row.get(column) is None for column in PARTITION_VALUES)


def _partition_values(topic: dict[str, Any], rows: dict[int, dict[str, Any]], app: _Application) -> None:
    """A consumer topic's per-partition lists (`replica_racks`, `leader_racks`,
    `partition_bytes_per_second`) from its rows of `partitions`, by partition number."""
    count = topic["partitions"]
    if any(_gives_racks(row) for row in rows.values()):
        topic["replica_racks"] = [(rows[p].get("replica_racks") or []) if p in rows else [] for p in range(count)]
    if any(row.get("leader_rack") is not None for row in rows.values()):
        topic["leader_racks"] = [rows[p].get("leader_rack") if p in rows else None for p in range(count)]
    rated = {p: row["bytes_per_second"] for p, row in rows.items() if row.get("bytes_per_second") is not None}
    if not rated:
        return
    fallback = topic.get("bytes_per_second")
    missing = [p for p in range(count) if p not in rated]
    if missing and fallback is None:
        app.add(
            f"partitions[topic={_quoted(topic['name'])}].bytes_per_second",
            f"given for {len(rated)} of the topic's {count} partitions: give it for every partition, or the "
            f"topic's bytes_per_second in topics for the others ({_numbers(missing)} without one)",
        )
        return
    topic["partition_bytes_per_second"] = [rated.get(p, fallback) for p in range(count)]


def _numbers(values: list[int], limit: int = 8) -> str:
    """`partition 3` or `partitions 0, 2 and 5 more`."""
    shown = ", ".join(map(str, values[:limit]))
    return f"partition{'s' if len(values) > 1 else ''} " + shown + (f" and {len(values) - limit} more" if len(values) > limit else "")
