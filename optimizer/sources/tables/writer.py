"""Writing problems as a table directory: the inverse of the readers.

`problem_table_rows(problems)` gives every table's rows; `write_tables(problems, directory)`
writes them as Parquet or CSV.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import parse_partition_id
from optimizer.model.streams import StreamsProblem
from optimizer.sources.tables.directory import candidates
from optimizer.sources.tables.layout import BOOL, CONFIG_KIND, INT, LIST, STRING, TABLES, Column, TableSpec

if TYPE_CHECKING:
    Problem = StreamsProblem | ConsumerProblem

PARQUET_TYPES = {STRING: pa.string(), INT: pa.int64(), BOOL: pa.bool_(), LIST: pa.list_(pa.string())}
"""How each column type is stored in the Parquet files written."""


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
            if key not in CONFIG_KIND:
                raise ValueError(f"config key {key!r} has no column in applications")  # the layout is stale
            row[key] = value
        tables["applications"].append(row)
        if problem.weighted:  # no columns for them yet: refuse rather than lose them
            raise ValueError(f"problem {name!r} gives weights (throughputs, task weights or capacities), which the tables cannot hold yet")
        if isinstance(problem, StreamsProblem):
            _streams_rows(name, problem, tables)
        else:
            _consumer_rows(name, problem, tables)
    return tables


def _streams_rows(name: str, problem: StreamsProblem, tables: dict[str, list[dict[str, Any]]]) -> None:
    for client in problem.clients:
        if client.members:  # the tables hold a client-level history only: refuse rather than lose it
            raise ValueError(f"problem {name!r}: client {client.id!r} lists its members, which the tables cannot hold")
        tables["clients"].append(
            {"application": name, "client": client.id, "rack": client.rack, "threads": client.threads}
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
                earlier = racks.setdefault(ident, (topic_partition.replica_racks, task.id))
                if earlier[0] != topic_partition.replica_racks:
                    raise ValueError(
                        f"{name}: partition {topic_partition.id} has replica racks {list(earlier[0])} in task "
                        f"{earlier[1]} and {list(topic_partition.replica_racks)} in task {task.id}; the "
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


def _write_csv(spec: TableSpec, rows: list[dict[str, Any]], target: Path) -> None:
    with target.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(spec.column_names)
        for row in rows:
            writer.writerow([_csv_cell(spec, column, row.get(column.name), row) for column in spec.columns])
