"""The reader without Spark: a table directory to Records with pyarrow and the standard library.

`read_table_records(path)` is what `TableDirectory`, the table directory as a source, reads (the
local runner's input, through `optimizer.sources.read_records`); it gives the same Records as
`optimizer.pipeline.tables.spark_table_records`.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from optimizer.errors import InvalidInputError
from optimizer.model.issues import Issue
from optimizer.sources.records import Record
from optimizer.sources.tables.assembly import application_record
from optimizer.sources.tables.directory import (
    PANDAS_INDEX,
    Located,
    application_reference_issues,
    is_blank,
    layout_issues,
    locate,
    pure_bad_rows,
    usable_application_column,
    valid_kinds,
)
from optimizer.sources.tables.layout import error_issue


def _arrow_class(type_: pa.DataType) -> str:
    if pa.types.is_dictionary(type_):
        type_ = type_.value_type
    if pa.types.is_integer(type_):
        return "int"
    if pa.types.is_floating(type_):
        return "float"
    if pa.types.is_decimal(type_):
        return "decimal"
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


def _read_parquet(located: Located) -> tuple[_Loaded | None, list[Issue]]:
    tables = []
    for file in located.files:
        try:
            tables.append(pq.read_table(file))
        except (OSError, pa.ArrowException, ValueError) as error:
            return None, [error_issue(located.shown, f"cannot read {file.name} as Parquet: {error}")]
    try:
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowException, ValueError) as error:
        return None, [error_issue(located.shown, f"the part files have different columns or types: {error}")]
    table = table.drop_columns([n for n in table.schema.names if PANDAS_INDEX.fullmatch(n)])
    names = table.schema.names
    if len(set(names)) != len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        return None, [
            error_issue(located.shown, f"column {', '.join(map(repr, repeated))} appears more than once")
        ]
    columns = {f.name: (_arrow_class(f.type), str(f.type)) for f in table.schema}
    return _Loaded(columns, table.to_pylist()), []


def _read_csv(located: Located) -> tuple[_Loaded | None, list[Issue]]:
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
                            error_issue(
                                located.shown,
                                f"column {', '.join(map(repr, repeated))} appears more than once",
                            )
                        )
                elif first != header:
                    issues.append(
                        error_issue(located.shown, f"{file.name} has other columns than the part files before it")
                    )
                    continue
                for cells in reader:
                    if not cells:
                        continue  # a blank line
                    if len(cells) != len(header):
                        issues.append(
                            error_issue(
                                located.shown,
                                f"{file.name} line {reader.line_num}: {len(cells)} fields, "
                                f"the header has {len(header)}",
                            )
                        )
                        continue
                    rows.append({name: (cell if cell != "" else None) for name, cell in zip(header, cells, strict=False)})
        except UnicodeDecodeError:
            issues.append(error_issue(located.shown, f"{file.name} is not UTF-8 text"))
        except (OSError, csv.Error) as error:
            issues.append(error_issue(located.shown, f"cannot read {file.name} as CSV: {error}"))
    if header is None and not issues:
        issues.append(
            error_issue(located.shown, "no header line: a CSV table starts with one (it may have no rows)")
        )
    if issues or header is None:
        return None, issues
    # Every CSV cell is text; the columns' types are checked cell by cell.
    return _Loaded({name: ("string", "text") for name in header}, rows), []


def read_table_records(path: str | Path) -> list[Record]:
    """One Record per application of the table directory `path`, sorted by application name.

    Uses pyarrow and the standard library only. Raises InvalidInputError naming every problem
    with the tables themselves; the problems of one application are in its Record's
    `input_error`.
    """
    root = Path(path)
    if not root.is_dir():
        raise InvalidInputError(str(root), [error_issue("", "not a directory of tables")])
    located, issues, unusable = locate(root)
    loaded: dict[str, _Loaded] = {}
    for name, where in located.items():
        table, problems = (_read_csv if where.format == "csv" else _read_parquet)(where)
        issues += problems
        if table is not None:
            loaded[name] = table
    kinds = None
    applications = loaded.get("applications")
    if applications is not None and applications.columns.get("kind", ("",))[0] == "string":
        kinds = valid_kinds(row.get("kind") for row in applications.rows)
    issues += layout_issues(
        located, {name: table.columns for name, table in loaded.items()}, kinds, unusable
    )

    names: set[str] = set()
    if applications is not None and usable_application_column(applications.columns):
        issues += application_reference_issues(
            located["applications"].shown, True, pure_bad_rows(applications.rows, None)
        )
        names = {row["application"] for row in applications.rows if not is_blank(row["application"])}
    for name, table in loaded.items():
        if name != "applications" and usable_application_column(table.columns):
            issues += application_reference_issues(
                located[name].shown, False, pure_bad_rows(table.rows, names)
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
        application_record(row, {name: rows.get(row["application"], []) for name, rows in grouped.items()}, str(root))
        for row in sorted(applications.rows, key=lambda row: row["application"])
    ]


@dataclass(frozen=True)
class TableDirectory:
    """A directory of normalised tables given as the pipeline's input."""

    path: Path

    def records(self) -> list[Record]:
        return read_table_records(self.path)
