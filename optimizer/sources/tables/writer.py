"""Writing problems as a table directory: the inverse of the readers.

`problem_table_rows(problems)` gives every table's rows; `write_tables(problems, directory)`
writes them as Parquet or CSV.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import parse_partition_id, shown
from optimizer.model.streams import StreamsProblem
from optimizer.sources.tables.directory import candidates
from optimizer.sources.tables.layout import (
    BOOL,
    CONFIG_KIND,
    CONSUMER,
    INT,
    LIST,
    NUMBER,
    PARTITION_VALUES,
    STRING,
    TABLES,
    Column,
    TableSpec,
)

if TYPE_CHECKING:
    Problem = StreamsProblem | ConsumerProblem

PARQUET_TYPES = {STRING: pa.string(), INT: pa.int64(), BOOL: pa.bool_(), LIST: pa.list_(pa.string()), NUMBER: pa.float64()}
"""How each column type is stored in the Parquet files written."""


def problem_table_rows(problems: Iterable[Problem]) -> dict[str, list[dict[str, Any]]]:
    """The rows of every table for `problems` (each with a unique name), in the layout's order.

    Raises ValueError for what the layout cannot hold: a problem without a name, a name used
    twice, a Streams client that lists its members, a Streams partition listed with different
    replica racks, rates or leaders in two places (the `partitions` table holds one row per
    partition), or a consumer topic whose `leader_racks` are all null (read back as none).
    Weights are written where they are given and left empty at their defaults (a task's weight
    and an instance's capacity of 1), which is what an empty cell reads as.
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
            "price_per_gb": problem.price_per_gb,
            "currency": problem.currency,
        }
        for key, value in problem.config.model_dump(
            mode="json", by_alias=True, exclude_defaults=True
        ).items():
            if key not in CONFIG_KIND:
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
        if client.members:  # the tables hold a client-level history only: refuse rather than lose it
            raise ValueError(f"problem {name!r}: client {client.id!r} lists its members, which the tables cannot hold")
        if client.process_id is not None:  # likewise a streams-group client's own process id
            raise ValueError(f"problem {name!r}: client {client.id!r} gives its process_id, which the tables cannot hold")
        tables["clients"].append(
            {
                "application": name,
                "client": client.id,
                "rack": client.rack,
                "threads": client.threads,
                "capacity": _unless_default(client.capacity),
            }
        )
        for tag, value in client.tags.items():
            tables["client_tags"].append(
                {"application": name, "client": client.id, "tag": tag, "value": value}
            )
        for role, task_ids in (("active", client.previous_active), ("standby", client.previous_standby)):
            for task_id in task_ids:
                tables["previous"].append(
                    {"application": name, "client": client.id, "task": task_id, "role": role}
                )
        for task_id, lag in client.lags.items():
            tables["lags"].append({"application": name, "client": client.id, "task": task_id, "lag": lag})
    # (topic, partition) -> its row of partitions and the task it was first seen in.
    partition_rows: dict[tuple[str, int], tuple[dict[str, Any], str]] = {}
    for task in problem.tasks:
        tables["tasks"].append(
            {
                "application": name,
                "task": task.id,
                "subtopology": task.subtopology,
                "stateful": task.stateful,
                "changelog_end_offset": task.changelog_end_offset,
                "weight": _unless_default(task.weight),
            }
        )
        for role, partitions in (
            ("source", task.source_partitions),
            ("changelog", task.changelog_partitions),
        ):
            for topic_partition in partitions:
                tables["task_partitions"].append(
                    {
                        "application": name,
                        "task": task.id,
                        "role": role,
                        "topic": topic_partition.topic,
                        "partition": topic_partition.partition,
                    }
                )
                ident = (topic_partition.topic, topic_partition.partition)
                values = {
                    "application": name,
                    "topic": topic_partition.topic,
                    "partition": topic_partition.partition,
                    "replica_racks": list(topic_partition.replica_racks),
                    "bytes_per_second": topic_partition.bytes_per_second,
                    "leader_rack": topic_partition.leader_rack,
                }
                earlier, first_task = partition_rows.setdefault(ident, (values, task.id))
                for column, noun in (("replica_racks", "replica racks"), ("bytes_per_second", "bytes_per_second"), ("leader_rack", "leader rack")):
                    if earlier[column] != values[column]:
                        raise ValueError(
                            f"{name}: partition {topic_partition.id} has {noun} {_shown(earlier[column])} in task "
                            f"{first_task} and {_shown(values[column])} in task {task.id}; the partitions table "
                            "holds one row per partition"
                        )
    tables["partitions"] += [row for row, _ in partition_rows.values()]
    for topic, rate in problem.topic_bytes_per_second.items():
        tables["topics"].append({"application": name, "topic": topic, "partitions": None, "bytes_per_second": rate})


def _unless_default(weight: float) -> float | None:
    """A task's weight or an instance's capacity, None at the default 1 (an empty cell)."""
    return None if weight == 1.0 else weight


def _shown(value: Any) -> str:
    return "none" if value is None else str(value) if isinstance(value, list) else shown(value)


def _consumer_rows(name: str, problem: ConsumerProblem, tables: dict[str, list[dict[str, Any]]]) -> None:
    for topic in problem.topics:
        tables["topics"].append(
            {"application": name, "topic": topic.name, "partitions": topic.partitions, "bytes_per_second": topic.bytes_per_second, "topic_id": topic.topic_id}
        )
        racks, rates, leaders = topic.replica_racks, topic.partition_bytes_per_second, topic.leader_racks
        if leaders is not None and all(leader is None for leader in leaders):
            raise ValueError(
                f"problem {name!r}: topic {topic.name!r} lists leader_racks, every one unknown (null), which the tables "
                "cannot tell from no leader_racks; leave them out"
            )
        # A row per partition: with the topic's racks (a list, empty when unknown) or none (the
        # topic has no racks), its rate and its leader's rack. A topic without racks has no row
        # that gives nothing: such a row would say the topic has racks, all unknown.
        for partition in range(topic.partitions):
            row = {
                "application": name,
                "topic": topic.name,
                "partition": partition,
                "replica_racks": None if racks is None else list(racks[partition]),
                "bytes_per_second": None if rates is None else rates[partition],
                "leader_rack": None if leaders is None else leaders[partition],
            }
            if racks is not None or any(row[column] is not None for column in PARTITION_VALUES):
                tables["partitions"].append(row)
    for member in problem.members:
        tables["members"].append(
            {
                "application": name,
                "member": member.id,
                "rack": member.rack,
                "group_instance_id": member.group_instance_id,
                "generation": member.generation,
                "capacity": _unless_default(member.capacity),
            }
        )
        for topic_name in member.subscriptions:
            tables["subscriptions"].append({"application": name, "member": member.id, "topic": topic_name})
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
    existing = [p.name for name in TABLES for p in candidates(directory, name)]
    if existing:
        raise FileExistsError(
            f"{directory} already holds tables ({', '.join(existing)}); write to a new directory"
        )
    tables = problem_table_rows(problems)
    if format == "csv":
        _csv_can_hold(tables)
    written = []
    for name, rows in tables.items():
        spec = TABLES[name]
        target = directory / f"{name}.{format}"
        if format == "parquet":
            schema = pa.schema([(column.name, PARQUET_TYPES[column.type]) for column in spec.columns])
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


def _csv_can_hold(tables: dict[str, list[dict[str, Any]]]) -> None:
    """Refuse (ValueError) a consumer topic whose racks CSV would lose. CSV writes an empty list as
    an empty cell, and a row with an empty cell that gives a rate or a leader says nothing of its
    topic's racks: a topic that lists replica racks, every one empty, and a rate or leader for every
    partition would read back as a topic without racks."""
    consumer = {row["application"] for row in tables["applications"] if row["kind"] == CONSUMER}
    listed: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in tables["partitions"]:
        if row["application"] in consumer and row["replica_racks"] is not None:
            listed[row["application"], row["topic"]].append(row)
    for (application, topic), rows in listed.items():
        if not any(row["replica_racks"] or all(row[c] is None for c in PARTITION_VALUES) for row in rows):
            raise ValueError(
                f"partitions of application {application!r}, topic {topic!r}: the topic lists replica racks, every "
                "one empty, and a rate or leader for every partition; CSV cannot tell those empty lists from no racks: write Parquet"
            )


def _write_csv(spec: TableSpec, rows: list[dict[str, Any]], target: Path) -> None:
    with target.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(spec.column_names)
        for row in rows:
            writer.writerow([_csv_cell(spec, column, row.get(column.name), row) for column in spec.columns])
