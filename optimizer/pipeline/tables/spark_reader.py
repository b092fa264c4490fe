"""The Spark reader: a table directory to Records as a Spark DataFrame, joined by Spark.

`spark_table_records(spark, path)` joins the tables by application (one groupBy over the union of
every table's rows as structs, a multi-way outer join in one shuffle); `mapInArrow` then
assembles each application's joined row into its document with `assembly`, as the local reader
does. pyspark is imported where it is used, so that the package imports without it.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from optimizer.errors import InvalidInputError
from optimizer.model.issues import Issue
from optimizer.sources.tables.assembly import application_record
from optimizer.sources.tables.directory import (
    PANDAS_INDEX,
    Located,
    application_reference_issues,
    bad_order,
    is_blank,
    layout_issues,
    locate,
    pure_bad_rows,
    usable_application_column,
    valid_kinds,
)
from optimizer.sources.tables.layout import CHILD_TABLES, error_issue

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


OUTPUT_FIELDS = ("name", "document", "source", "input_error")
"""Columns of `spark_table_records`' DataFrame (the fields of `Record`)."""


def _spark_class(type_: Any) -> str:
    from pyspark.sql import types as T

    if isinstance(type_, T.ByteType | T.ShortType | T.IntegerType | T.LongType):
        return "int"
    if isinstance(type_, T.FloatType | T.DoubleType):
        return "float"
    if isinstance(type_, T.DecimalType):
        return "decimal"
    if isinstance(type_, T.StringType | T.VarcharType | T.CharType):
        return "string"
    if isinstance(type_, T.BooleanType):
        return "bool"
    if isinstance(type_, T.NullType):
        return "null"
    if isinstance(type_, T.ArrayType) and isinstance(type_.elementType, T.StringType | T.NullType):
        return "list"
    return "other"


def _spark_read(spark: SparkSession, located: Located) -> DataFrame:
    files = [str(file) for file in located.files]
    if located.format == "parquet":
        frame = spark.read.parquet(*files)
        return frame.drop(*[n for n in frame.columns if PANDAS_INDEX.fullmatch(n)])
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
    from pyspark.sql import functions as F

    root = Path(path)
    if not root.is_dir():
        raise InvalidInputError(str(root), [error_issue("", "not a directory of tables")])
    located, issues, unusable = locate(root)
    frames: dict[str, DataFrame] = {}
    for name, where in located.items():
        try:
            frames[name] = _spark_read(spark, where)
        except UnicodeDecodeError:
            issues.append(error_issue(where.shown, "the header line is not UTF-8 text"))
        except Exception as error:  # noqa: BLE001 - Spark's AnalysisException and friends
            message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            issues.append(error_issue(where.shown, f"cannot read the table: {message}"))
    columns = {
        name: {f.name: (_spark_class(f.dataType), f.dataType.simpleString()) for f in frame.schema.fields}
        for name, frame in frames.items()
    }
    usable = {name for name in frames if usable_application_column(columns[name])}
    # One row per application: small enough for the driver, which then checks kinds, blanks and
    # duplicates exactly as the pyarrow reader does.
    keys: list[dict[str, Any]] = []
    kinds = None
    if "applications" in usable:
        with_kind = columns["applications"].get("kind", ("",))[0] == "string"
        selected = frames["applications"].select("application", *(["kind"] if with_kind else []))
        keys = [row.asDict() for row in selected.collect()]
        kinds = valid_kinds(row.get("kind") for row in keys) if with_kind else None
    issues += layout_issues(located, columns, kinds, unusable)
    if "applications" in usable:
        issues += application_reference_issues(
            located["applications"].shown, True, pure_bad_rows(keys, None, numbered=False)
        )
    if "applications" in usable:
        names = {row["application"] for row in keys if not is_blank(row["application"])}
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
    frames: dict[str, DataFrame], usable: set[str], located: dict[str, Located], names: set[str]
) -> list[Issue]:
    """Rows of the other tables without an application or naming one not in `names`."""
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
        rows = sorted(((row[1], row[2], None) for row in unknown if row[0] == name), key=bad_order)
        issues += application_reference_issues(located[name].shown, False, rows)
    return issues


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
                records.append(application_record(application, rows, root))
            yield pa.RecordBatch.from_pydict(
                {column: [getattr(record, column) for record in records] for column in OUTPUT_FIELDS},
                schema=pa.schema([(column, pa.string()) for column in OUTPUT_FIELDS]),
            )

    return assemble
