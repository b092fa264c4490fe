"""Solve one problem document with every requested solver: the rows of the output tables.

This is all a Spark executor runs (through `staged_batches` or `arrow_batches`) and all the
local runner runs, so both give the same rows, written by the same `write_parts`. Nothing here
raises for a bad problem or a failing solver: each becomes a row whose `status` and `error` say
what happened.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from optimizer.catalogue import PROTOCOL_SOLVERS, default_goals
from optimizer.errors import InvalidInputError, KafkaAssignmentError, NoSolutionError
from optimizer.evaluate import cross_rack_reads, headline
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.group_protocol import with_protocol
from optimizer.model.metrics import StreamsMetrics
from optimizer.model.problem import problem_from_data, problem_from_document, problem_to_data
from optimizer.model.racks import reads_across_racks
from optimizer.model.solution import ClientAssignment, GoalStatus, Solution
from optimizer.model.streams import RackAwareStrategy, StreamsProblem
from optimizer.pipeline.markers import MarkWriter
from optimizer.pipeline.schema import ASSIGNMENTS_SCHEMA, INPUT_SCHEMA, PROBLEMS_SCHEMA, RECEIPT_SCHEMA, SUMMARY_SCHEMA, WORKER_SCHEMA
from optimizer.pipeline.status import RowStatus, UnsolvedStatus, worst_goal_status
from optimizer.solve import solve
from optimizer.sources.documents import parse_document
from optimizer.sources.records import Record
from plugins.manager import plugins

STRATEGY_KEY = "rack.aware.assignment.strategy"


def plugin_signature() -> str:
    """The plugins this process loads, as `name==version` joined by commas."""
    return ",".join(f"{p.name}=={p.version}" for p in plugins().loaded)


def solve_document(
    name: str,
    document: str,
    solvers: Sequence[str],
    goals: Sequence[str] | None = None,
    time_limit: float | None = None,
    input_error: str | None = None,
) -> list[dict[str, Any]]:
    """One row per solver for the problem document `document` (JSON text) named `name`.

    `input_error`: the reader already found the record unusable (a duplicate name, a line that
    is not JSON, ...); every solver gets an `invalid` row saying so."""
    signature = plugin_signature()
    if input_error is None:
        try:
            problem = problem_from_document(parse_document(document, name), name)
        except InvalidInputError as error:
            input_error = str(error)
        except Exception as error:  # noqa: BLE001 - a bug must not stop the fleet: this document's rows say it
            input_error = f"internal error while validating: {type(error).__name__}: {str(error)[:500]}"
    if input_error is not None:
        kind = _kind_of(document)
        return [_empty_row(name, kind, solver, UnsolvedStatus.INVALID, input_error, signature) for solver in solvers]
    rows = [_solve_row(name, problem, solver, goals, time_limit, signature) for solver in solvers]
    if rows:
        rows[0]["document"] = document  # the problems table: once per valid problem, as read
    return rows


def _flat(table: pa.Table, column: str) -> pa.Table:
    """A nested list of copies (`assignment`, `target`) as rows of (problem, solver, client, task, role)."""
    copies = table.column(column)
    lengths = pc.list_value_length(copies).fill_null(0).to_numpy()
    owner = pa.array(np.repeat(np.arange(table.num_rows), lengths))
    flat = pc.list_flatten(copies)
    return pa.table(
        {
            "problem": pc.take(table.column("problem"), owner),
            "solver": pc.take(table.column("solver"), owner),
            "client": pc.struct_field(flat, "client"),
            "task": pc.struct_field(flat, "task"),
            "role": pc.struct_field(flat, "role"),
        },
        schema=ASSIGNMENTS_SCHEMA,
    )


def write_parts(rows: list[dict[str, Any]], stage: str | Path, part: str) -> None:
    """Write worker rows as one part file of each output table: the summary, the assignments
    applied now, the targets the plans reach (`TABLES`) and the valid problems' documents.

    Written to a temporary name and renamed, under a name that depends only on the batch's
    content, so a retried or speculative Spark task replaces its own part rather than adding one.
    """
    stage = Path(stage)
    table = pa.Table.from_pylist(rows, schema=WORKER_SCHEMA)
    documents = table.filter(pc.is_valid(table.column("document")))
    problems = pa.table({"problem": documents.column("problem"), "document": documents.column("document")}, schema=PROBLEMS_SCHEMA)
    tables = {
        "summary": table.drop_columns(["assignment", "target", "document"]),
        "assignments": _flat(table, "assignment"),
        "targets": _flat(table, "target"),
        "problems": problems,
    }
    for name, data in tables.items():
        directory = stage / name
        directory.mkdir(exist_ok=True)  # not the stage itself: a failed run's stage is gone for good
        temporary = directory / f".{part}.{os.getpid()}.tmp"
        pq.write_table(data, temporary)
        os.replace(temporary, directory / f"part-{part}.parquet")


def arrow_batches(
    batches: Iterator[pa.RecordBatch],
    stage: str,
    solvers: Sequence[str],
    goals: Sequence[str] | None,
    time_limit: float | None,
) -> Iterator[pa.RecordBatch]:
    """The `mapInArrow` function: solves each input batch of (name, document, input_error),
    writes its rows under `stage` (`write_parts`), and yields one receipt row per summary row.

    Writing here, rather than handing the rows back to Spark, spares the JVM a conversion of
    every nested row and a second pass to split the two tables."""
    for batch in batches:
        names = batch.column("name").to_pylist()
        documents = batch.column("document").to_pylist()
        errors = batch.column("input_error").to_pylist()
        part = hashlib.sha1("\n".join(names).encode()).hexdigest()[:16]
        rows = []
        with MarkWriter(stage, part) as marks:  # the driver counts problems by these marks
            for name, document, error in zip(names, documents, errors, strict=True):
                started = time.perf_counter()
                rows += solve_document(name, document, solvers, goals, time_limit, error)
                marks.mark(name, time.perf_counter() - started)
        write_parts(rows, stage, part)
        yield pa.RecordBatch.from_pylist(
            [{"problem": r["problem"], "solver": r["solver"], "part": part} for r in rows], schema=RECEIPT_SCHEMA
        )


STAGED_INPUT = "input"
"""Where in the staging directory the driver leaves the batches (removed once solved)."""


def staged_batch_name(number: int) -> str:
    return f"batch-{number:05d}.arrow"


def stage_batches(records: Sequence[Record], batches: list[list[int]], stage: Path) -> int:
    """Write each batch (indexes into `records`) as an Arrow file of (name, document,
    input_error) rows under `stage`, for `staged_batches` on the executors: the batch count."""
    directory = stage / STAGED_INPUT
    directory.mkdir()
    for number, batch in enumerate(batches):
        rows = pa.RecordBatch.from_pydict(
            {
                "name": [records[i].name for i in batch],
                "document": [records[i].document for i in batch],
                "input_error": [records[i].input_error for i in batch],
            },
            schema=INPUT_SCHEMA,
        )
        with pa.OSFile(str(directory / staged_batch_name(number)), "wb") as sink:
            with pa.ipc.new_file(sink, INPUT_SCHEMA) as writer:
                writer.write_batch(rows)
    return len(batches)


def staged_batches(
    numbers: Iterator[pa.RecordBatch],
    stage: str,
    solvers: Sequence[str],
    goals: Sequence[str] | None,
    time_limit: float | None,
) -> Iterator[pa.RecordBatch]:
    """The `mapInArrow` function for a fleet the driver staged: each input row's `id` numbers a
    batch file the driver wrote under `stage` (`stage_batches`), solved as `arrow_batches`
    solves rows.

    The documents go through the shared filesystem the output parts go to, not through Spark:
    the JVM neither holds the fleet (a 1.2 GB fleet overflows a driver's default 1 GB heap) nor
    converts every document to rows and back to Arrow."""
    for batch in numbers:
        for number in batch.column("id").to_pylist():
            with pa.OSFile(str(Path(stage) / STAGED_INPUT / staged_batch_name(number))) as source:
                rows = pa.ipc.open_file(source).read_all()
            yield from arrow_batches(rows.to_batches(), stage, solvers, goals, time_limit)


def _kind_of(document: str) -> str | None:
    try:
        kind = json.loads(document).get("kind")
    except (ValueError, AttributeError, RecursionError):
        return None
    return kind if kind in ("streams", "consumer") else None


def _empty_row(name: str, kind: str | None, solver: str, status: RowStatus, error: str, signature: str) -> dict[str, Any]:
    row: dict[str, Any] = {column: None for column in SUMMARY_SCHEMA.names}
    row.update(problem=name, kind=kind, solver=solver, status=status, error=error, plugins=signature, assignment=[], target=[])
    return row


def _copies(assignment: Mapping[str, ClientAssignment]) -> list[dict[str, str]]:
    """An assignment as the rows of the assignments (or targets) table, clients in name order."""
    return [
        {"client": client, "task": task, "role": role}
        for client, held in sorted(assignment.items())
        for role, tasks in (("active", held.active), ("standby", held.standby), ("warmup", held.warmup))
        for task in tasks
    ]


def _solve_row(name, problem, solver, goals, time_limit, signature) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        # Kafka's assignment is scored on the same goals as the exact one, to compare them.
        if solver in PROTOCOL_SOLVERS:  # Kafka's assignor with group.protocol set to that protocol
            solution = solve(
                with_protocol(problem, PROTOCOL_SOLVERS[solver]), solver="kafka", goals=goals or default_goals(problem), time_limit=time_limit
            )
        else:
            solution = solve(problem, solver=solver, goals=goals or default_goals(problem), time_limit=time_limit)
    except NoSolutionError as error:
        row = _empty_row(name, problem.kind, solver, GoalStatus.TIME_LIMIT, str(error), signature)
        return _sized(row, problem) | {"seconds": time.perf_counter() - started}
    except KafkaAssignmentError as error:
        row = _empty_row(name, problem.kind, solver, UnsolvedStatus.ERROR, str(error), signature)
        return _sized(row, problem) | {"seconds": time.perf_counter() - started}
    except Exception as error:  # noqa: BLE001 - a bug must not stop the fleet: it becomes this problem's error row
        row = _empty_row(name, problem.kind, solver, UnsolvedStatus.ERROR, f"internal error: {type(error).__name__}: {str(error)[:500]}", signature)
        return _sized(row, problem) | {"seconds": time.perf_counter() - started}
    seconds = time.perf_counter() - started
    metrics = solution.metrics
    assert metrics is not None  # solve() evaluated the solution
    row = {
        "problem": name,
        "kind": problem.kind,
        "solver": solver,
        "status": worst_goal_status(g.status for g in solution.goals),
        "error": None,
        "seconds": seconds,
        "followup_rebalance": solution.followup_rebalance,
        "goals": json.dumps([g.model_dump(mode="json") for g in solution.goals]),
        "metrics": json.dumps(metrics.model_dump(mode="json"), sort_keys=True),
        "rack_traffic": json.dumps(rack_traffic(problem, solution), sort_keys=True),
        "warnings": json.dumps([w.model_dump(mode="json") for w in solution.warnings]),
        "plugins": signature,
        "assignment": _copies(solution.assignment),
        "target": _copies(solution.target if solution.target is not None else solution.assignment),
    }
    now, target = headline(metrics), headline(solution.target_metrics or metrics)
    plan = solution.plan
    streams = isinstance(metrics, StreamsMetrics)
    row.update(
        cross_rack_partitions=now["cross_rack_partitions"],
        moves=now["moves"],
        load_skew=now["load_skew"],
        kip925_cost=metrics.kip925_cost if isinstance(metrics, StreamsMetrics) else None,
        warmups=metrics.warmup_tasks if isinstance(metrics, StreamsMetrics) else None,
        target_cross_rack_partitions=target["cross_rack_partitions"],
        target_moves=target["moves"],
        target_load_skew=target["load_skew"],
        followup_rebalances=plan.followup_rebalances if plan else 0,
        plan_warmups=plan.warmups if plan and streams else None,
        restore_offsets=plan.restore_offsets if plan and streams else None,
        seconds_to_target=plan.seconds_to_target if plan else 0.0,
        plan=json.dumps(plan.model_dump(mode="json"), sort_keys=True) if plan else None,
        cross_rack_bytes=now["cross_rack_bytes"],
        target_cross_rack_bytes=target["cross_rack_bytes"],
        zone_bytes=json.dumps((solution.target_metrics or metrics).cross_rack_bytes_by_racks, sort_keys=True),
        price_per_gb=problem.price_per_gb,
        currency=problem.currency,
    )
    if solver == "kafka":
        row.update(_config_change(problem, goals, time_limit))
    return _sized(row, problem)


def _config_change(problem: StreamsProblem | ConsumerProblem, goals, time_limit) -> dict[str, Any]:
    """What Kafka's assignor reaches with `rack.aware.assignment.strategy: min_traffic` (KIP-925)
    where a Streams application whose clients all have racks uses another strategy: the part of
    the saving a configuration change alone gets. Nothing for consumer groups (Kafka's assignors
    are rack-aware whenever members set `client.rack`) or when that run fails."""
    if not isinstance(problem, StreamsProblem) or problem.config.rack_aware_assignment_strategy == RackAwareStrategy.MIN_TRAFFIC:
        return {}
    if any(client.rack is None for client in problem.clients):
        return {}
    change = f"{STRATEGY_KEY}=min_traffic"
    data = problem_to_data(problem)
    data.setdefault("config", {})[STRATEGY_KEY] = RackAwareStrategy.MIN_TRAFFIC.value
    try:
        changed = problem_from_data(data, problem.name or "<problem>")
        solution = solve(changed, solver="kafka", goals=goals or default_goals(problem), time_limit=time_limit)
    except KafkaAssignmentError:
        return {}
    target = headline(solution.target_metrics or solution.metrics)
    plan = solution.plan
    return {
        "config_change": change,
        "config_target_cross_rack_partitions": target["cross_rack_partitions"],
        "config_target_cross_rack_bytes": target["cross_rack_bytes"],
        # what the change costs to reach, as the row's own plan columns count it
        "config_moves": headline(solution.metrics)["moves"],
        "config_followup_rebalances": plan.followup_rebalances if plan else 0,
        "config_restore_offsets": plan.restore_offsets if plan else None,
        "config_seconds_to_target": plan.seconds_to_target if plan else 0.0,
    }


def _sized(row: dict[str, Any], problem: StreamsProblem | ConsumerProblem) -> dict[str, Any]:
    if isinstance(problem, StreamsProblem):
        racks = {c.rack for c in problem.clients if c.rack}
        return row | {"tasks": len(problem.tasks), "clients": len(problem.clients), "racks": len(racks)}
    racks = {m.rack for m in problem.members if m.rack}
    return row | {"tasks": sum(t.partitions for t in problem.topics), "clients": len(problem.members), "racks": len(racks)}


def rack_traffic(problem: StreamsProblem | ConsumerProblem, solution: Solution) -> dict[str, int]:
    """Per rack: partitions its clients read from replicas in other racks (the replicas that serve
    the reads: `serving_racks`), counted as the evaluator counts `cross_rack_partitions` (only
    where both racks are known), so the racks add up to it."""
    traffic: dict[str, int] = {}
    if isinstance(problem, StreamsProblem):
        tasks = problem.task_by_id
        for client in problem.clients:
            held = solution.assignment.get(client.id)
            if client.rack is None or held is None:
                continue
            reads = [p for t in held.active for p in tasks[t].source_partitions]
            reads += [p for t in (*held.standby, *held.warmup) for p in tasks[t].changelog_partitions]
            traffic[client.rack] = traffic.get(client.rack, 0) + cross_rack_reads(problem, tuple(reads), client.rack)
        return traffic
    for member in problem.members:
        held = solution.assignment.get(member.id)
        if member.rack is None or held is None:
            continue
        count = sum(reads_across_racks(member.rack, problem.serving_racks_of(p)) for p in held.active)
        traffic[member.rack] = traffic.get(member.rack, 0) + count
    return traffic
