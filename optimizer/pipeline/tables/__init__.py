"""The fleet pipeline's Spark reader of normalised tables (`spark_table_records`).

The layout, the reader without Spark and the writer are a source like any other, in
`optimizer.sources.tables`; joining the tables on Spark is a Spark job, so it is here, and
assembles every application's document with the same function as the reader without Spark.
"""

from __future__ import annotations

from optimizer.pipeline.tables.spark_reader import spark_table_records

__all__ = ["spark_table_records"]
