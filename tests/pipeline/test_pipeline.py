"""The fleet pipeline: every input becomes rows, Spark and the local runner agree, output is
replaced only by a finished run."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from optimizer.catalogue import DEFAULT_PIPELINE_SOLVERS
from optimizer.cli import cli
from optimizer.errors import InvalidInputError, PipelineError
from optimizer.pipeline import run as run_module
from optimizer.pipeline.fleet import sample_fleet
from optimizer.pipeline.run import run_pipeline
from optimizer.sources import read_records
from optimizer.sources.records import Record
from tests.conftest import EXAMPLES

SOLVERS = ["kafka", "exact", "kip925"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Path:
    """Nine small problems of both kinds, two invalid documents, and three unusable lines."""
    documents = list(sample_fleet(seed=7, applications=5, groups=4, broken=2))
    for document in documents:  # keep the problems small: the test is about the pipeline
        if document["kind"] == "streams":
            document["tasks"] = [t for t in document["tasks"] if int(t["id"].split("_")[1]) < 6]
            kept = {t["id"] for t in document["tasks"]}
            for client in document["clients"]:
                for key in ("previous_active", "previous_standby"):
                    if key in client:
                        client[key] = [t for t in client[key] if t in kept]
    lines = [json.dumps(d) for d in documents]
    lines.insert(3, "{not json")
    lines.insert(5, json.dumps({"kind": "consumer", "topics": [], "members": []}))  # no name
    lines.append(json.dumps(documents[0]))  # the first name again
    path = tmp_path_factory.mktemp("fleet") / "fleet.jsonl"
    path.write_text("\n".join(lines) + "\n\n")
    return path


@pytest.fixture(scope="module")
def local_run(fleet, tmp_path_factory):
    output = tmp_path_factory.mktemp("out") / "local"
    return run_pipeline(fleet, output, solvers=SOLVERS, runner="local", time_limit=30)


def _rows(output: Path, table: str) -> list[dict]:
    return pq.read_table(output / table).to_pylist()


def test_every_input_gets_a_row_per_solver_with_the_reason(local_run, fleet):
    records = read_records(fleet)
    assert len(records) == 9 + 2 + 3
    summary = _rows(local_run.output, "summary")
    assert local_run.rows == len(summary) == len(records) * len(SOLVERS)
    assert {(r["problem"], r["solver"]) for r in summary} == {(rec.name, s) for rec in records for s in SOLVERS}
    by_key = {(r["problem"], r["solver"]): r for r in summary}
    # broken documents: invalid, with the field named
    broken = by_key["broken-app-0", "exact"]
    assert broken["status"] == "invalid" and "previous_standby" in broken["error"] and "also in previous_active" in broken["error"]
    assert "partition.assignment.strategy" in by_key["broken-group-1", "kafka"]["error"]
    assert "not a JSON document" in by_key["fleet.jsonl:4", "kafka"]["error"]
    assert "no 'name'" in by_key["fleet.jsonl:6", "exact"]["error"]
    duplicate = [r for r in summary if r["problem"].endswith("[fleet.jsonl:14]")]
    assert len(duplicate) == 3 and all("duplicate problem name" in r["error"] for r in duplicate)
    # a solver that cannot run on a problem: an error row, and the job went on
    groups = [r for r in summary if r["kind"] == "consumer" and r["solver"] == "kip925" and r["status"] != "invalid"]
    assert len(groups) == 4 and all(r["status"] == "error" and "Streams" in r["error"] for r in groups)
    solved = [r for r in summary if r["error"] is None]
    assert len(solved) == 9 * 3 - 4
    assert all(r["status"] in ("optimal", "heuristic") for r in solved)


def test_assignment_rows_are_every_copy_of_every_solved_row(local_run):
    summary = _rows(local_run.output, "summary")
    copies = _rows(local_run.output, "assignments")
    for row in summary:
        mine = [c for c in copies if (c["problem"], c["solver"]) == (row["problem"], row["solver"])]
        if row["error"] is not None:
            assert mine == []
            continue
        metrics = json.loads(row["metrics"])
        if row["kind"] == "streams":
            expected = metrics["active_tasks"] + metrics["standby_tasks"] + metrics["warmup_tasks"]
            assert sum(c["role"] == "warmup" for c in mine) == row["warmups"] == metrics["warmup_tasks"]
        else:
            expected = metrics["assigned_partitions"]
        assert len(mine) == expected
        assert len({(c["client"], c["task"], c["role"]) for c in mine}) == len(mine)
        # The per-rack traffic splits the evaluator's cross-rack count by rack.
        assert sum(json.loads(row["rack_traffic"]).values()) == row["cross_rack_partitions"]
    assert _rows(local_run.output, "plugins") == [{"name": "builtin", "version": _version()}]


def _version() -> str:
    from optimizer import __version__

    return __version__


def _comparable(output: Path) -> tuple[list[dict], list[tuple]]:
    summary = []
    for row in _rows(output, "summary"):
        row = dict(row, seconds=None)
        if row["goals"]:
            row["goals"] = [dict(g, seconds=None) for g in json.loads(row["goals"])]
        summary.append(row)
    copies = sorted((c["problem"], c["solver"], c["client"], c["task"], c["role"]) for c in _rows(output, "assignments"))
    return summary, copies


def test_spark_gives_the_local_runners_rows(spark, fleet, local_run, tmp_path):
    progress = []
    result = run_pipeline(
        fleet, tmp_path / "spark", solvers=SOLVERS, spark=spark, time_limit=30, batch_size=3,
        progress=lambda done, total, work: progress.append((done, total, work)),
    )  # fmt: skip
    assert result.runner == "spark" and result.rows == local_run.rows
    assert _comparable(result.output) == _comparable(local_run.output)
    # Progress counts problems (the executors' marks), not the batches (Spark tasks).
    assert progress and progress[-1] == (result.problems, result.problems, 1.0)
    assert all(total == result.problems for _, total, _ in progress)
    assert [done for done, _, _ in progress] == sorted({done for done, _, _ in progress})
    # One Spark task per batch of 3 (each writes its part); the staged input and the marks are gone.
    batches = -(-result.problems // 3)
    assert len(list((result.output / "assignments").glob("part-*.parquet"))) == batches
    assert sorted(p.name for p in result.output.iterdir()) == ["assignments", "plugins", "problems", "summary", "targets"]


def test_batches_start_with_the_largest_document_are_fair_samples_and_shrink_towards_the_end():
    def records(sizes):
        return [Record(f"p{i:03d}", "x" * size, "test") for i, size in enumerate(sizes)]

    # Equal documents, 2 cores: each batch a quarter of what is left, down to 1/64 of the fleet.
    batches = run_module.plan_batches(records([99] * 640), cores=2)
    ideal = [160, 120, 90, 68, 51, 38, 28, 21, 16, 12, 10, 10, 10, 6]  # within one (a weight's rounding)
    assert len(batches) == len(ideal) and all(abs(len(b) - n) <= 1 for b, n in zip(batches, ideal, strict=True)), [len(b) for b in batches]
    assert sorted(i for b in batches for i in b) == list(range(640))
    # Sizes 1 to 400 bytes: the largest is solved first, and every batch, the first ones as the
    # last, holds small and large documents alike (its median near the fleet's), so the share
    # of the work done early is that of the problems done.
    fleet = records(range(1, 401))
    batches = run_module.plan_batches(fleet, cores=2)
    assert batches[0][0] == 399 and sorted(i for b in batches for i in b) == list(range(400))
    order = [i for batch in batches for i in batch]
    for solved in range(20, 401, 10):  # every stretch from the start: mean size 200.5 within 10 %
        assert abs(sum(len(fleet[i].document) for i in order[:solved]) / solved / 200.5 - 1) < 0.1, solved
    for batch in batches[:8]:  # the long batches: small and large alike
        sizes = sorted(len(fleet[i].document) for i in batch)
        assert 150 <= sizes[len(sizes) // 2] <= 250 and sizes[0] <= 40 and sizes[-1] >= 360, sizes
    # Sorted by size, the records are dealt by the golden ratio: ranks 0, 5, 2, 7 of 8 open the order.
    assert run_module.solving_order(records([8, 7, 6, 5, 4, 3, 2, 1]))[:4] == [0, 5, 2, 7]
    assert run_module.plan_batches(records([5, 7, 6]), cores=2, batch_size=2) == [[1, 0], [2]]
    assert run_module.plan_batches([], cores=2) == []


def test_a_failed_run_leaves_the_previous_output(local_run, fleet, tmp_path, monkeypatch):
    output = tmp_path / "out"
    run_pipeline(fleet, output, solvers=["kafka"], runner="local")
    before = _rows(output, "summary")

    def lose_rows(summary, names, solvers):
        raise PipelineError("rows in != rows out (simulated)")

    monkeypatch.setattr(run_module, "_check_rows", lose_rows)
    with pytest.raises(PipelineError, match="simulated"):
        run_pipeline(fleet, output, solvers=["kafka", "exact"], runner="local")
    assert _rows(output, "summary") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging left behind
    monkeypatch.undo()
    run_pipeline(fleet, output, solvers=["kafka", "exact"], runner="local")
    assert len(_rows(output, "summary")) == 2 * len(before)


def test_lost_rows_and_other_plugins_on_workers_fail_the_job(fleet, tmp_path, monkeypatch):
    import pyarrow as pa

    from optimizer.pipeline.schema import SUMMARY_SCHEMA

    row = {name: None for name in SUMMARY_SCHEMA.names} | {"problem": "a", "solver": "kafka", "plugins": "builtin==0"}
    table = pa.Table.from_pylist([row], schema=SUMMARY_SCHEMA)
    with pytest.raises(PipelineError, match=r"rows in != rows out.*missing \[\('b', 'kafka'\)\]"):
        run_module._check_rows(table, ["a", "b"], ["kafka"])
    monkeypatch.setattr(run_module, "plugin_signature", lambda: "builtin==1,drain==0.1")
    with pytest.raises(PipelineError, match="other plugins than the driver"):
        run_module._check_rows(table, ["a"], ["kafka"])


def test_an_output_directory_of_something_else_is_not_replaced(fleet, tmp_path):
    output = tmp_path / "precious"
    output.mkdir()
    (output / "notes.txt").write_text("keep me")
    with pytest.raises(PipelineError, match="not an output of this pipeline"):
        run_pipeline(fleet, output, solvers=["kafka"], runner="local")
    assert (output / "notes.txt").read_text() == "keep me"


def test_directory_input_reads_problem_files_and_skips_solutions():
    records = read_records(EXAMPLES)
    problems = sorted(p for p in EXAMPLES.rglob("*.problem.*"))
    files = [r for r in records if not r.source.startswith("fleet/")]
    assert len(files) == len(problems) and all(r.input_error is None for r in files)
    assert len(records) - len(files) == 302  # examples/fleet/fleet.jsonl.gz, line by line
    assert all(r.input_error is None for r in records)  # its broken documents fail in the worker
    assert len({r.name for r in records}) == len(records)
    assert {r.name for r in files} >= {"kip925-three-clients-1-2-3-threads"}


def test_bad_inputs_and_options_are_clear_errors(tmp_path, fleet):
    with pytest.raises(InvalidInputError, match="no such file"):
        read_records(tmp_path / "missing.jsonl")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInputError, match="no problem or JSON Lines files"):
        read_records(tmp_path / "empty")
    with pytest.raises(PipelineError, match="unknown solver"):
        run_pipeline(fleet, tmp_path / "o", solvers=["fast"], runner="local")
    with pytest.raises(PipelineError, match="unknown runner"):
        run_pipeline(fleet, tmp_path / "o", runner="dask")


def test_cli_runs_the_local_pipeline_and_writes_the_report(fleet, tmp_path):
    runner = CliRunner()
    report = tmp_path / "report.html"
    result = runner.invoke(
        cli, ["pipeline", "--input", str(fleet), "--output", str(tmp_path / "out"), "--local", "--solvers", "kafka,exact", "--report", str(report)]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Fleet: 14 problems, 28 rows" in result.output
    assert "exact vs kafka on 9 problems" in result.output
    assert report.exists() and 'id="totals"' in report.read_text()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(cli, ["pipeline", "--input", str(empty), "--output", str(tmp_path / "o2"), "--local"])
    assert result.exit_code == 1 and "no problem or JSON Lines files" in result.output
    result = runner.invoke(cli, ["pipeline", "--input", str(fleet), "--output", str(tmp_path / "o3"), "--local", "--solvers", "fast"])
    assert result.exit_code == 2 and "unknown solver" in result.output


def test_normalised_tables_give_the_rows_of_the_same_problems_as_json_lines(fleet, local_run, tmp_path, spark):
    """The fleet's valid problems as normalised tables: the local runner and Spark give, for `kafka` and `exact`, the
    rows the JSON Lines gave those problems (the module's local run of the whole fleet, its other rows left out)."""
    from optimizer.model.problem import problem_from_data
    from optimizer.sources.tables.writer import write_tables

    problems = []
    for record in read_records(fleet):
        try:
            problem = problem_from_data(json.loads(record.document))
        except (InvalidInputError, ValueError):
            continue
        if record.input_error is None:
            problems.append(problem)
    assert len(problems) == 9
    assert sum(problem.weighted for problem in problems) >= 3  # the tables carry the fleet's weights
    write_tables(problems, tmp_path / "tables")
    solvers = ["kafka", "exact"]
    summary, copies = _comparable(local_run.output)
    names = {problem.name for problem in problems}
    from_lines = (
        [row for row in summary if row["problem"] in names and row["solver"] in solvers],
        [copy for copy in copies if copy[0] in names and copy[1] in solvers],
    )  # fmt: skip
    from_tables = run_pipeline(tmp_path / "tables", tmp_path / "b", solvers=solvers, runner="local")
    on_spark = run_pipeline(tmp_path / "tables", tmp_path / "c", solvers=solvers, spark=spark)
    assert len(from_lines[0]) == from_tables.rows == on_spark.rows == 18
    assert _comparable(from_tables.output) == from_lines == _comparable(on_spark.output)


def test_an_empty_fleet_gives_empty_tables(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    result = run_pipeline(empty, tmp_path / "out", runner="local")
    assert result.rows == 0 and result.problems == 0
    assert pq.read_table(tmp_path / "out" / "summary").num_rows == 0
    assert pq.read_table(tmp_path / "out" / "assignments").num_rows == 0


def test_protocol_columns_are_kafkas_assignor_under_each_protocol(fleet, tmp_path):
    """`kafka:classic` and `kafka:new`: the same problem with group.protocol switched, per row."""
    from optimizer import problem_from_data, solve, with_protocol

    result = run_pipeline(fleet, tmp_path / "out", solvers=["kafka:classic", "kafka:new"], runner="local")
    assignments = _rows(result.output, "assignments")
    documents = {}
    for line in fleet.read_text().splitlines():
        try:
            document = json.loads(line)
        except ValueError:
            continue
        documents.setdefault(document.get("name"), document)
    checked = set()
    for row in _rows(result.output, "summary"):
        if row["error"] is not None:
            continue
        protocol = row["solver"].split(":")[1]
        expected = solve(with_protocol(problem_from_data(documents[row["problem"]]), protocol), "kafka")
        got = {(a["client"], a["task"], a["role"]) for a in assignments if a["problem"] == row["problem"] and a["solver"] == row["solver"]}
        assert got == {(c, t, role) for c, held in expected.assignment.items() for role in ("active", "standby", "warmup") for t in getattr(held, role)}
        checked.add((row["kind"], protocol))
    assert checked == {(kind, p) for kind in ("streams", "consumer") for p in ("classic", "new")}


def test_the_default_solvers_include_the_new_protocol():
    assert DEFAULT_PIPELINE_SOLVERS == ("kafka", "kafka:new", "exact")
    assert inspect.signature(run_module.run_pipeline).parameters["solvers"].default == DEFAULT_PIPELINE_SOLVERS
    option = next(p for p in cli.commands["pipeline"].params if p.name == "solvers")
    assert option.default == "kafka,kafka:new,exact"  # the command line's default too
    with pytest.raises(PipelineError, match="kafka:classic, kafka:new"):
        run_module._check_options(["kafka:old"], "local")
