"""The fleet pipeline's Spark reader of normalised tables (`spark_table_records`).

The layout, the reader without Spark and the writer are a source like any other, in
`optimizer.sources.tables`; joining the tables on Spark is a Spark job, so it is here, and
assembles every application's document with the same function as the reader without Spark.

The other names this package exported before the tables became a source (`write_tables`,
`read_table_records`, ...) are exported from here still, for scripts that import them from here.
"""

from __future__ import annotations

from optimizer.pipeline.tables.spark_reader import spark_table_records
from optimizer.sources.tables.directory import is_table_directory
from optimizer.sources.tables.layout import CONSUMER_CONFIG, STREAMS_CONFIG, TABLES
from optimizer.sources.tables.reader import read_table_records
from optimizer.sources.tables.writer import problem_table_rows, write_tables

__all__ = [
    "CONSUMER_CONFIG",
    "STREAMS_CONFIG",
    "TABLES",
    "is_table_directory",
    "problem_table_rows",
    "read_table_records",
    "spark_table_records",
    "write_tables",
]
