"""The fleet job: read the fleet, solve every problem with every solver, write the tables.

Two runners produce the same rows (`optimizer.pipeline.worker` is all either runs per problem):

* `spark` (the default): the driver stages the problems in batches (Arrow files of JSON text,
  `plan_batches`) next to the output, and the executors solve one batch per task with
  `mapInArrow`; locally (`local[*]`) or on a cluster (`master`). A fleet read from normalised
  tables is joined by Spark and handed to `mapInArrow` as Spark's rows. The executors mark each
  problem solved (`optimizer.pipeline.markers`), so progress counts problems, not tasks; a JVM
  the run starts writes its output to OUTPUT/spark.log, not to the terminal.
* `local`: the same worker in this process, without Spark; the tests compare the two.

Both solve the problems in `solving_order`, whose every stretch is a fair sample of the fleet,
and report the share of the estimated work done (`problem_weight`): the ETA of the first minute
is that of the run.

The output directory is replaced only once everything is written (into a staging directory next
to it), so a failed run leaves the previous output intact. Rows in = rows out is checked: one
summary row per (problem, solver), whatever happened to the problem.
"""

from __future__ import annotations

import fcntl
import math
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from optimizer.catalogue import DEFAULT_PIPELINE_SOLVERS, PIPELINE_SOLVERS
from optimizer.errors import PipelineError
from optimizer.pipeline.markers import PROGRESS, MarkReader
from optimizer.pipeline.schema import PLUGINS_SCHEMA, RECEIPT_SCHEMA, SUMMARY_SCHEMA, TABLES
from optimizer.pipeline.ship import executor_archive
from optimizer.pipeline.spark import SparkStartError, log_tail, moved_log, requested_master, ships_environment, spark_log, spark_session
from optimizer.pipeline.tables import spark_table_records
from optimizer.pipeline.worker import (
    STAGED_INPUT,
    arrow_batches,
    plugin_signature,
    solve_document,
    stage_batches,
    staged_batches,
    write_parts,
)
from optimizer.sources import TABLE_DIRECTORY, form_of, read_records, shown_location
from optimizer.sources.records import Record
from optimizer.text import plural
from plugins.manager import plugins

RUNNERS = ("spark", "local")
LOCAL_PART = 1000
"""Problems per part file written by the local runner."""


@dataclass(frozen=True)
class PipelineResult:
    """What a run wrote, and how long it took."""

    output: Path
    problems: int
    rows: int
    """Summary rows written: problems x solvers."""
    seconds: float
    """End to end: reading, solving, writing."""
    solve_seconds: float
    """Sum of the per-row solve times (what the runner spent beyond this is its overhead)."""
    summary: pa.Table
    """The summary table, sorted by (problem, solver)."""
    runner: str
    master: str | None = None


Progress = Callable[[int, int, float | None], None]
"""progress(done, total, work): called as problems are solved, on either runner: `done` of
`total`, holding the share `work` (0 to 1) of the estimated work (`problem_weight`; None when the
problems' sizes are unknown to the driver: a fleet of normalised tables joined on Spark)."""
Phase = Callable[[str], None]
"""phase(text): called as the run enters a phase, with a line saying what it does now:
`starting Spark (local[*])`, `Spark started in 6.2 s`, `reading fleet.jsonl`,
`solving 302 problems in 40 batches (Spark tasks)`, `writing the output`
(`optimizer.pipeline.progress` shows them). Progress calls come during the solving phase."""


def _quiet(text: str) -> None:
    """The phase callback when none is given."""


def run_pipeline(
    input_path: str | Path,
    output: str | Path,
    *,
    solvers: Sequence[str] = DEFAULT_PIPELINE_SOLVERS,
    goals: Sequence[str] | None = None,
    time_limit: float | None = None,
    runner: str = "spark",
    master: str | None = None,
    spark=None,
    batch_size: int | None = None,
    progress: Progress | None = None,
    phase: Phase | None = None,
) -> PipelineResult:
    """Run the fleet job on `input_path`, writing `output` (replaced atomically).

    `progress(done, total, work)` is called as problems are solved (on Spark, as the executors
    mark them); `phase(text)` as the run starts Spark, reads the input, solves and writes. A
    Spark the run starts itself writes its JVM's output to OUTPUT/spark.log (next to the output,
    as OUTPUT.spark.log, when the run fails; the error quotes its end)."""
    started = time.perf_counter()
    phase = phase or _quiet
    solvers = _check_options(solvers, runner)
    goals = list(goals) if goals else None
    output = Path(output)
    _check_replaceable(output)  # before any work: refusing only at the end would waste it all
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        removed_stale_stages(output)
        stage, lock = _new_stage(output)
    except OSError as error:
        raise PipelineError(f"cannot write next to {output}: {_reason(error)}") from None
    spark_used = False  # whether Spark's log may say why the run failed
    try:
        if runner == "local":
            phase(f"reading {shown_location(input_path)}")
            records = _read(input_path, phase)
            problems = len(records)
            names = [r.name for r in records]
            phase(f"solving {plural(problems, 'problem')}")
            _run_local(records, solvers, goals, time_limit, stage, progress)
        else:
            spark_used = True
            session = spark or _started_spark(master, phase, stage / SPARK_LOG)
            master = session.sparkContext.master
            names = _run_spark(session, input_path, solvers, goals, time_limit, stage, batch_size, progress, phase)
            problems = len(names)
        phase("writing the output")
        if not (stage / "summary").exists():  # an empty fleet: empty tables
            write_parts([], stage, "00000")
        (stage / "plugins").mkdir()
        pq.write_table(_plugins_table(), stage / "plugins" / "part-00000.parquet")
        summary = pq.read_table(stage / "summary", schema=SUMMARY_SCHEMA).sort_by([("problem", "ascending"), ("solver", "ascending")])
        _check_rows(summary, names, solvers)
        # One summary file in (problem, solver) order: a fleet's summary is small.
        for part in (stage / "summary").glob("*"):
            part.unlink()
        pq.write_table(summary, stage / "summary" / "part-00000.parquet")
        _replace(output, stage)
        if spark_log() == stage / SPARK_LOG:
            moved_log(output / SPARK_LOG)  # the JVM writes on into it, where the output now is
        (output / LOCK).unlink(missing_ok=True)  # held until the output is in place, so never stale before
    except OSError as error:  # a full or read-only disk, while writing the tables
        _kept_log(stage, output)
        shutil.rmtree(stage, ignore_errors=True)
        raise PipelineError(f"cannot write {output}: {_reason(error)}") from None
    except PipelineError as error:
        kept = _kept_log(stage, output)
        shutil.rmtree(stage, ignore_errors=True)
        if isinstance(error, SparkStartError):
            raise SparkStartError(error.reason, kept or error.log) from None
        if kept is None or not spark_used:
            raise
        raise PipelineError(f"{error}{log_tail(kept)}") from None
    except BaseException:
        _kept_log(stage, output)
        shutil.rmtree(stage, ignore_errors=True)
        raise
    finally:
        lock.close()
    solve_seconds = sum(s or 0.0 for s in summary.column("seconds").to_pylist())
    return PipelineResult(
        output=output,
        problems=problems,
        rows=summary.num_rows,
        seconds=time.perf_counter() - started,
        solve_seconds=solve_seconds,
        summary=summary,
        runner=runner,
        master=master,
    )


def _check_options(solvers: Sequence[str], runner: str) -> list[str]:
    solvers = [s.strip() for s in solvers if s.strip()]
    unknown = [s for s in solvers if s not in PIPELINE_SOLVERS]
    if unknown or not solvers:
        raise PipelineError(
            f"unknown solver(s) {', '.join(map(repr, unknown)) or '(none given)'}: expected some of {', '.join(PIPELINE_SOLVERS)}"
        )
    if len(set(solvers)) != len(solvers):
        raise PipelineError(f"a solver is listed twice: {', '.join(solvers)}")
    if runner not in RUNNERS:
        raise PipelineError(f"unknown runner {runner!r}: expected {' or '.join(RUNNERS)}")
    return solvers


SHOWN_NOT_READ = 5
"""Entries of an input directory that are not problem documents, named in the reading phase's line."""
DOCUMENT_NAMES = "those end in .json, .yaml, .yml, .jsonl or .ndjson, .gz too"


def _read(input_path, phase: Phase) -> list[Record]:
    """The input's records, saying which entries of a directory are not problem documents."""
    not_read: list[str] = []
    records = read_records(input_path, not_read)
    if not_read:
        shown = ", ".join(not_read[:SHOWN_NOT_READ]) + (", ..." if len(not_read) > SHOWN_NOT_READ else "")
        phase(f"{plural(len(not_read), 'entry', 'entries')} not read (not problem documents: {DOCUMENT_NAMES}): {shown}")
    return records


SPARK_LOG = "spark.log"
"""In the output: what the JVM a run started wrote (its warnings, task failures)."""


def _started_spark(master: str | None, phase: Phase, log: Path):
    """A SparkSession for `master`, saying so while it starts (a new one takes seconds); a JVM it
    starts writes to `log`. On a cluster, the executors get this environment packed
    (`optimizer.pipeline.ship`) unless PYSPARK_PYTHON names theirs."""
    archive = None
    if ships_environment(requested_master(master)):
        phase("packing this environment for the executors (once per change of it)")
        packing = time.perf_counter()
        archive = executor_archive()
        phase(f"the executors' environment: {archive} ({archive.stat().st_size / 1e6:,.0f} MB, {time.perf_counter() - packing:.1f} s)")
    phase(f"starting Spark ({requested_master(master) or 'the master of spark-submit'})")
    starting = time.perf_counter()
    session = spark_session(master, log=log, archive=archive)
    phase(f"Spark started in {time.perf_counter() - starting:.1f} s")
    return session


def _kept_log(stage: Path, output: Path) -> Path | None:
    """After a failed run: the JVM's log, moved out of the staging directory (which goes) to
    OUTPUT.spark.log beside the output; the log of a JVM started earlier stays where it is."""
    log = spark_log()
    if log is None:
        return None
    if log.parent != stage:
        return log
    kept = output.parent / f"{output.name}.{SPARK_LOG}"
    try:
        os.replace(log, kept)
    except OSError:
        return None
    moved_log(kept)
    return kept


def _run_local(records: list[Record], solvers, goals, time_limit, stage: Path, progress: Progress | None) -> None:
    # Written in parts of LOCAL_PART problems, so that memory does not grow with the fleet.
    order = solving_order(records)
    weights = [problem_weight(record) for record in records]
    total, work = math.fsum(weights), 0.0
    for start in range(0, len(order), LOCAL_PART):
        rows = []
        for done, index in enumerate(order[start : start + LOCAL_PART], start + 1):
            record = records[index]
            rows += solve_document(record.name, record.document, solvers, goals, time_limit, record.input_error)
            work += weights[index]
            if progress:
                progress(done, len(records), min(1.0, work / total))
        write_parts(rows, stage, f"{start // LOCAL_PART:05d}")


def _run_spark(spark, input_path, solvers, goals, time_limit, stage: Path, batch_size, progress, phase: Phase) -> list[str]:
    from pyspark.sql.pandas.types import from_arrow_schema

    options = dict(stage=str(stage), solvers=list(solvers), goals=goals, time_limit=time_limit)
    joined = None
    if form_of(input_path) is TABLE_DIRECTORY:
        # Kept once joined: the names are collected first, then the same rows are solved.
        phase(f"reading {shown_location(input_path)} (joining the tables on Spark)")
        joined = spark_table_records(spark, Path(input_path)).select("name", "document", "input_error").persist()
        names = [row["name"] for row in joined.select("name").collect()]
        weights = None  # the documents stay on Spark: each problem counts the same
        count = _slices(spark, len(names), batch_size)
        frame = joined.repartition(count)
        solved = frame.mapInArrow(partial(arrow_batches, **options), from_arrow_schema(RECEIPT_SCHEMA))
    else:
        phase(f"reading {shown_location(input_path)}")
        records = _read(input_path, phase)
        names = [r.name for r in records]
        weights = {r.name: problem_weight(r) for r in records}
        count = stage_batches(records, plan_batches(records, spark.sparkContext.defaultParallelism, batch_size), stage)
        # One partition, so one task, per batch, started in batch order.
        numbers = spark.range(0, count, 1, max(1, count))
        solved = numbers.mapInArrow(partial(staged_batches, **options), from_arrow_schema(RECEIPT_SCHEMA))
    phase(f"solving {plural(len(names), 'problem')} in {plural(count, 'batch', 'batches')} (Spark tasks)")
    tag = f"kafka-assignment-optimizer-{stage.name}"  # this run's jobs, not others in the session
    spark.sparkContext.addJobTag(tag)
    try:
        with _SparkProgress(stage, names, weights, progress):
            receipts = solved.toArrow()
    except Exception as error:  # noqa: BLE001 - Spark wraps what failed in its own exceptions
        spark.sparkContext.cancelJobsWithTag(tag)  # no task of this run may write into the stage any more
        raise PipelineError(f"the Spark job failed: {_spark_reason(error)}") from None
    finally:
        spark.sparkContext.removeJobTag(tag)
        if joined is not None:
            joined.unpersist()
    shutil.rmtree(stage / STAGED_INPUT, ignore_errors=True)
    shutil.rmtree(stage / PROGRESS, ignore_errors=True)
    # Keep only the parts some task reported (a failed attempt may have left another behind).
    reported = set(receipts.column("part").to_pylist())
    for table in TABLES:
        for path in (stage / table).glob("*"):
            if path.name.removeprefix("part-").removesuffix(".parquet") not in reported:
                path.unlink()
    return names


def _slices(spark, count: int, batch_size: int | None) -> int:
    """Partitions for input Spark made itself (the tables): batch_size each, or four per core."""
    if batch_size:
        return max(1, -(-count // batch_size))
    return max(1, min(count, 4 * spark.sparkContext.defaultParallelism))


SHORTEST_BATCH = 32
"""By default no batch is shorter than 1/(32 x cores) of the fleet (by estimated work)."""

OVERHEAD_BYTES = 1000
"""What a problem costs beyond its solvers' time (reading, validating, writing its rows), in
document bytes: about 3.5 ms a problem on the generated fleet (docs/benchmarks.md)."""

WEIGHT_EXPONENT = 1.2
"""Solve times grow a little faster than documents: about size^1.2 on the generated fleet
(4,000 problems: 2.6 ms per KB below 2 KB, 7.7 ms per KB above 34 KB; docs/benchmarks.md)."""

GOLDEN = (math.sqrt(5) - 1) / 2


def problem_weight(record: Record) -> float:
    """An estimate of the time `record` takes to solve, in the units of a document byte: (its
    document's length + `OVERHEAD_BYTES`) ^ `WEIGHT_EXPONENT`; a record already known invalid
    costs the overhead only. Only ratios matter (the ETA's shares, the batches' sizes)."""
    return ((0 if record.input_error is not None else len(record.document)) + OVERHEAD_BYTES) ** WEIGHT_EXPONENT


def solving_order(records: Sequence[Record]) -> list[int]:
    """The records (indexes) in the order they are solved: the largest first, then every stretch
    of the order a fair sample of the fleet's sizes, so that the rate of the first minute is that
    of the run (the ETA's premise) and no core is left with the large ones at the end.

    The records sorted by size are dealt by the golden ratio (the one at rank r goes to position
    `frac(r x 0.618...)`): any m consecutive ones hold about m/n of every size class."""
    by_size = sorted(range(len(records)), key=lambda i: (-problem_weight(records[i]), records[i].name))
    keys = (np.arange(len(by_size)) * GOLDEN) % 1.0
    return [by_size[k] for k in np.argsort(keys, kind="stable")]


def plan_batches(records: Sequence[Record], cores: int, batch_size: int | None = None) -> list[list[int]]:
    """The records (indexes) of each batch, in the order Spark starts them.

    In `solving_order`: every batch a fair sample of the fleet, the largest problem in the first.
    By default batch sizes fall as the work runs out (guided self-scheduling): each batch takes
    1/(2 x cores) of the estimated work left (`problem_weight`), down to 1/(SHORTEST_BATCH x
    cores) of the fleet, so the first batches are long (few tasks: each costs Spark about 0.1 s)
    and the last are short (the cores finish close together). With `batch_size`, batches of
    that many problems."""
    order = solving_order(records)
    if batch_size:
        return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    cores = max(1, cores)
    sizes = np.array([problem_weight(records[i]) for i in order], dtype=float)
    total = float(sizes.sum())
    shortest = total / (SHORTEST_BATCH * cores)
    bounds, done = [], 0.0
    while total - done > shortest:
        done += max((total - done) / (2 * cores), shortest)
        bounds.append(done)
    # A problem goes to the batch its first byte falls in: batches stay contiguous in `order`.
    batch_of = np.searchsorted(np.array(bounds), np.cumsum(sizes) - sizes, side="right")
    cuts = np.flatnonzero(np.diff(batch_of)) + 1
    return [part.tolist() for part in np.split(np.array(order, dtype=np.int64), cuts) if len(part)]


POLL_SECONDS = 0.5
"""How often the driver reads the executors' marks while a Spark job runs."""


class _SparkProgress:
    """Reports problems solved while a Spark job runs, from the marks the executors write under
    the staging directory (`optimizer.pipeline.markers`): Spark's status tracker counts tasks,
    and a task solves a batch."""

    def __init__(self, stage: Path, names: Sequence[str], weights: dict[str, float] | None, progress: Progress | None):
        self._marks = MarkReader(stage)
        self._names = set(names)
        self._weights = weights
        self._total_work = math.fsum(weights.values()) if weights else 0.0
        self._done = 0
        self._work = 0.0
        self._progress = progress
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self):
        if self._progress:
            self._thread.start()
        return self

    def __exit__(self, exc_type, *exc):
        self._stop.set()
        if self._progress:
            self._thread.join()
            if exc_type is None and self._names:  # every problem is solved: report it whole
                self._progress(len(self._names), len(self._names), 1.0)

    def _poll(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            self._report()

    def _report(self) -> None:
        new = self._marks.poll() & self._names
        if not new:
            return
        self._done += len(new)
        if self._weights:
            self._work += math.fsum(self._weights[name] for name in new)
        assert self._progress is not None  # the polling thread is started only with a callback (__enter__)
        work = min(1.0, self._work / self._total_work) if self._weights else None
        if self._done < len(self._names):  # the last line waits for the tables (__exit__)
            self._progress(self._done, len(self._names), work)


def _plugins_table() -> pa.Table:
    loaded = plugins().loaded
    return pa.Table.from_pylist([{"name": p.name, "version": p.version} for p in loaded], schema=PLUGINS_SCHEMA)


def _check_rows(summary: pa.Table, names: list[str], solvers: Sequence[str]) -> None:
    expected = {(name, solver) for name in names for solver in solvers}
    got = list(zip(summary.column("problem").to_pylist(), summary.column("solver").to_pylist(), strict=True))
    missing = sorted(expected - set(got))
    extra = sorted(set(got) - expected)
    repeated = len(got) - len(set(got))
    if missing or extra or repeated:
        raise PipelineError(
            f"rows in != rows out: {len(expected)} (problem, solver) pairs expected, {len(got)} written; "
            f"missing {missing[:5]}, unexpected {extra[:5]}, repeated {repeated}"
        )
    signature = plugin_signature()
    differing = sorted({p for p in summary.column("plugins").to_pylist() if p != signature})
    if differing:
        raise PipelineError(
            f"the workers loaded other plugins than the driver ({signature or 'none'}): {differing[:3]}; "
            "install the same plugin set on every executor (docs/pipeline.md)"
        )


LOCK = ".lock"
"""In a staging directory: held (flock) by the run writing it from before the directory gets
its `.partial-*` name until it is the output, so that a later run can tell a stale directory
(its run was killed) from one in use."""

STALE_WITHOUT_LOCK = 3600.0
"""Seconds after which a staging directory without a lock file (written by an older version)
or one still being created (`.starting-*`) counts as stale."""


def _new_stage(output: Path):
    """A new staging directory next to `output`, and the open file that holds its lock: the
    lock is taken under a temporary name, so no `.partial-*` directory is ever unlocked while
    its run lives."""
    name = uuid.uuid4().hex[:8]
    starting = output.parent / f".{output.name}.starting-{name}"
    starting.mkdir()
    handle = open(starting / LOCK, "w")  # held for the whole run: closed when the run ends
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    stage = output.parent / f".{output.name}.partial-{name}"
    starting.rename(stage)  # the lock is on the file, which moves with the directory
    return stage, handle


@contextmanager
def _swap_lock(output: Path):
    """Swaps of `output` and the clean-up next to it, one at a time: a lock on the directory
    holding `output` (no lock file is left behind)."""
    descriptor = os.open(output.parent, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def removed_stale_stages(output: Path) -> list[Path]:
    """Clean up after killed runs next to `output`: staging directories (`.NAME.partial-*`)
    whose run no longer holds their lock are removed; a replaced output (`.NAME.old-*`) is
    removed when `output` exists, and put back when a swap was cut off between its two renames."""
    removed: list[Path] = []
    parent = output.parent
    if not parent.is_dir():
        return removed
    with _swap_lock(output):
        olds = sorted(parent.glob(f".{output.name}.old-*"), key=lambda p: p.stat().st_mtime)
        if olds and not output.exists():
            olds.pop().rename(output)  # the previous output, as it was
        stale = [p for p in parent.glob(f".{output.name}.partial-*") if p.is_dir() and _stale(p)]
        stale += [p for p in parent.glob(f".{output.name}.starting-*") if p.is_dir() and _older(p)]
        for candidate in sorted(olds + stale):
            shutil.rmtree(candidate, ignore_errors=True)
            removed.append(candidate)
    return removed


def _older(directory: Path) -> bool:
    return time.time() - directory.stat().st_mtime > STALE_WITHOUT_LOCK


def _stale(directory: Path) -> bool:
    lock = directory / LOCK
    if not lock.exists():
        return _older(directory)
    try:
        with open(lock) as handle:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False  # its run is still under way
    except OSError:
        return False
    return True


def _check_replaceable(output: Path) -> None:
    if output.exists() and (not output.is_dir() or (any(output.iterdir()) and not (output / "summary").is_dir())):
        raise PipelineError(f"{output} exists and is not an output of this pipeline: not replacing it")


def _reason(error: OSError) -> str:
    return f"{error.strerror} ({error.filename})" if error.strerror and error.filename else str(error)


def _spark_reason(error: Exception) -> str:
    """The Python error at the bottom of what Spark reports (its last line), else its first."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    python = [line for line in lines if re.match(r"^[A-Za-z_.]*(Error|Exception)\b.*:", line)]
    return (python[-1] if python else lines[0] if lines else type(error).__name__)[:500]


def _replace(output: Path, stage: Path) -> None:
    """Move the finished staging directory to `output`, replacing what was there (put back if
    the second rename fails; a run killed between the two is put right by the next run)."""
    old = None
    with _swap_lock(output):
        if output.exists():
            _check_replaceable(output)
            old = output.parent / f".{output.name}.old-{uuid.uuid4().hex[:8]}"
            output.rename(old)
        try:
            stage.rename(output)
        except OSError:
            if old is not None:
                old.rename(output)
            raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
