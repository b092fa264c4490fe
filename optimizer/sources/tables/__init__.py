"""Normalised tables: one problem document per application.

Platform teams export their clusters as tables rather than as problem documents. A *table
directory* holds one table per entity, each stored as `NAME.parquet` (a file, or a directory of
part files as Spark writes it), a directory `NAME/` of Parquet (or CSV) part files, or
`NAME.csv`. Every table has an `application` column; the application becomes the document's
`name`. docs/pipeline-tables.md describes the layout.

Two readers build the same documents from the same tables:

* `reader.read_table_records(path)`: pyarrow and the standard library only (the `TableDirectory`
  source, as the local runner reads it);
* `optimizer.pipeline.tables.spark_table_records(spark, path)`: Spark joins the tables by
  application, and the same function then assembles each application's joined row into its
  document (a Spark job, so part of the pipeline).

Problems with the tables themselves raise `InvalidInputError` naming every one of them; problems
of one application make that application's `Record` carry `input_error`, and the other
applications run. `writer.write_tables(problems, directory)` writes problems in this layout: the
inverse of the readers.

One module per concern, each importing only those before it:

* `layout`: the tables, their columns, types and keys (and `error_issue`);
* `directory`: finding the tables in a directory, and the checks of the tables as a whole;
* `assembly`: one application's rows to its document (shared by both readers);
* `reader`: `read_table_records` and `TableDirectory`, with pyarrow;
* `writer`: `problem_table_rows` and `write_tables`, with pyarrow.

This module imports none of them: `optimizer.sources` recognises a table directory with
`directory` alone, and pyarrow is loaded only when tables are read or written.
"""
