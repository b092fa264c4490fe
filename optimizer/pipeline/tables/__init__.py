"""The fleet pipeline's normalised-table input: one problem document per application.

Platform teams export their clusters as tables rather than as problem documents. A *table
directory* holds one table per entity, each stored as `NAME.parquet` (a file, or a directory of
part files as Spark writes it), a directory `NAME/` of Parquet (or CSV) part files, or
`NAME.csv`. Every table has an `application` column; the application becomes the document's
`name`. docs/pipeline-tables.md describes the layout.

Two readers build the same documents from the same tables:

* `read_table_records(path)`: pyarrow and the standard library only, for the local runner;
* `spark_table_records(spark, path)`: Spark joins the tables by application, and one Python
  function then assembles each application's joined row into its document.

Problems with the tables themselves raise `InvalidInputError` naming every one of them; problems
of one application make that application's `Record` carry `input_error`, and the other
applications run. `write_tables(problems, directory)` writes problems in this layout: the inverse
of the readers.

One module per concern, each importing only those before it:

* `layout`: the tables, their columns, types and keys (and `error_issue`);
* `directory`: finding the tables in a directory, and the checks of the tables as a whole;
* `assembly`: one application's rows to its document (shared by both readers);
* `local_reader`: `read_table_records`, with pyarrow;
* `spark_reader`: `spark_table_records`, with Spark;
* `writer`: `problem_table_rows` and `write_tables`.

This module only names what the rest of the project uses.
"""

from __future__ import annotations

from optimizer.pipeline.tables.directory import is_table_directory
from optimizer.pipeline.tables.layout import CONSUMER_CONFIG, STREAMS_CONFIG, TABLES
from optimizer.pipeline.tables.local_reader import read_table_records
from optimizer.pipeline.tables.spark_reader import spark_table_records
from optimizer.pipeline.tables.writer import problem_table_rows, write_tables

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
