"""The pipeline under bad input and failures (issue 10): one bad line or document costs its own
rows, never the fleet; failed and killed runs leave nothing behind; disks that refuse writes
give a message."""

from __future__ import annotations

import fcntl
import gzip
import importlib
import json
import os
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from optimizer.cli import cli
from optimizer.errors import PipelineError
from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model.problem import problem_to_data
from optimizer.pipeline import run as run_module
from optimizer.pipeline import worker as worker_module
from optimizer.pipeline.run import run_pipeline
from optimizer.sources import json_lines, read_records

solve_module = importlib.import_module("optimizer.solve")

GOOD = [
    problem_to_data(random_streams_problem(1, tasks=6, clients=3, name="app")),
    problem_to_data(random_streams_problem(2, tasks=4, clients=2, racks=0, standby_replicas=0, name="rackless")),
    problem_to_data(random_consumer_problem(3, members=3, topics=2, partitions=(1, 4), name="group")),
]
BAD_STRATEGY = {
    "kind": "consumer",
    "name": "bad-strategy",
    "topics": [{"name": "t", "partitions": 2}],
    "members": [{"id": "m", "subscriptions": ["t"]}],
    "config": {"partition.assignment.strategy": [{}]},
}


def _fleet(path: Path) -> Path:
    lines = [json.dumps(d).encode() for d in GOOD]
    lines.insert(1, b'{"kind": "streams", "name": "latin-1 \xe9t\xe9"}')  # not UTF-8
    lines.insert(3, json.dumps(BAD_STRATEGY).encode())
    lines.append(json.dumps({**GOOD[0], "name": "esc\x1b[31m"}).encode())
    lines.append(json.dumps({**GOOD[0], "name": "n" * 5000}).encode())
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _summary(output: Path) -> dict[tuple[str, str], dict]:
    return {(r["problem"], r["solver"]): r for r in pq.read_table(output / "summary").to_pylist()}


def _expect_one_row_per_bad_line(rows: dict, name: str = "fleet.jsonl") -> None:
    assert len(rows) == 7 * 2
    for solver in ("kafka", "exact"):
        assert rows[f"{name}:2", solver]["status"] == "invalid"
        assert "not UTF-8 text (byte 0xe9 at position 37)" in rows[f"{name}:2", solver]["error"]
        assert rows["bad-strategy", solver]["status"] == "invalid"
        assert "entry [0] is a mapping" in rows["bad-strategy", solver]["error"]
        assert "control character U+001B" in rows[f"{name}:6", solver]["error"]
        assert "5,000 characters long" in rows[f"{name}:7", solver]["error"]
        for good in ("app", "rackless", "group"):
            assert rows[good, solver]["error"] is None, rows[good, solver]["error"]


def test_bad_lines_and_documents_cost_their_own_rows_locally_and_on_spark(tmp_path, spark):
    fleet = _fleet(tmp_path / "fleet.jsonl")
    local = run_pipeline(fleet, tmp_path / "local", solvers=["kafka", "exact"], runner="local", time_limit=30)
    _expect_one_row_per_bad_line(_summary(local.output))
    on_spark = run_pipeline(fleet, tmp_path / "spark", solvers=["kafka", "exact"], spark=spark, time_limit=30)
    _expect_one_row_per_bad_line(_summary(on_spark.output))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fleet.jsonl", "local", "spark"]


def test_a_cut_off_compressed_fleet_keeps_its_lines_and_reports_the_rest(tmp_path):
    whole = gzip.compress(b"".join(json.dumps(d).encode() + b"\n" for d in GOOD * 40))
    fleet = tmp_path / "cut.jsonl.gz"
    fleet.write_bytes(whole[: len(whole) * 2 // 3])
    records = read_records(fleet)
    assert records[-1].input_error is not None and "cannot be read from here on" in records[-1].input_error
    assert all(r.input_error is None or "duplicate" in r.input_error for r in records[:-1])
    assert len(records) > 2


def test_a_line_over_the_size_limit_costs_one_row(tmp_path, monkeypatch):
    monkeypatch.setattr(json_lines, "MAX_DOCUMENT_BYTES", 2000)
    fleet = tmp_path / "fleet.jsonl"
    huge = json.dumps({**GOOD[0], "description": "x" * 5000})
    fleet.write_text(f"{json.dumps(GOOD[2])}\n{huge}\n{json.dumps(GOOD[1])}\n")
    records = read_records(fleet)
    assert [r.name for r in records] == ["group", "fleet.jsonl:2", "rackless"]
    assert "the line is longer than" in records[1].input_error


def test_a_failed_spark_job_leaves_no_staging_directory(tmp_path, spark, monkeypatch):
    """A worker that cannot write its part fails the job: a clear error, and nothing of the
    failed run remains (tasks still running may not recreate the staging directory)."""
    fleet = _fleet(tmp_path / "fleet.jsonl")
    staged = run_module.stage_batches

    def stage_then_block_the_summary(records, batches, stage):
        (stage / "summary").write_text("a file where the workers make a directory")
        return staged(records, batches, stage)

    monkeypatch.setattr(run_module, "stage_batches", stage_then_block_the_summary)
    with pytest.raises(PipelineError, match=r"the Spark job failed: .*FileExistsError"):
        run_pipeline(fleet, tmp_path / "out", solvers=["kafka"], spark=spark, batch_size=2)
    time.sleep(1)  # give a straggling task the chance to write
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fleet.jsonl"]


def test_stale_staging_directories_of_killed_runs_are_removed(tmp_path):
    fleet = _fleet(tmp_path / "fleet.jsonl")
    output = tmp_path / "out"
    dead = tmp_path / ".out.partial-dead0000"  # its run was killed: the lock is free
    dead.mkdir()
    (dead / run_module.LOCK).write_text("")
    old_unlocked = tmp_path / ".out.partial-old00000"  # an older version's, hours ago
    old_unlocked.mkdir()
    os.utime(old_unlocked, (time.time() - 2 * run_module.STALE_WITHOUT_LOCK,) * 2)
    replaced = tmp_path / ".out.old-12345678"
    replaced.mkdir()
    live = tmp_path / ".out.partial-live0000"  # a run under way holds its lock
    live.mkdir()
    fresh = tmp_path / ".out.partial-new00000"  # just created, lock not taken yet
    fresh.mkdir()
    with open(live / run_module.LOCK, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        run_pipeline(fleet, output, solvers=["kafka"], runner="local")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [".out.partial-live0000", ".out.partial-new00000", "fleet.jsonl", "out"]
    assert sorted(p.name for p in output.iterdir()) == ["assignments", "plugins", "problems", "summary", "targets"]


def test_an_output_that_is_not_a_pipeline_output_is_refused_before_any_work(tmp_path, monkeypatch):
    fleet = _fleet(tmp_path / "fleet.jsonl")
    output = tmp_path / "precious"
    output.mkdir()
    (output / "notes.txt").write_text("keep me")

    def never(*args, **kwargs):
        raise AssertionError("solving started")

    monkeypatch.setattr(run_module, "read_records", never)
    with pytest.raises(PipelineError, match="not an output of this pipeline"):
        run_pipeline(fleet, output, solvers=["kafka"], runner="local")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fleet.jsonl", "precious"]


def test_a_full_disk_is_a_message_not_a_traceback(tmp_path, monkeypatch):
    fleet = _fleet(tmp_path / "fleet.jsonl")

    def full(rows, stage, part):
        raise OSError(28, "No space left on device", str(stage))

    monkeypatch.setattr(run_module, "write_parts", full)
    result = CliRunner().invoke(cli, ["pipeline", "--input", str(fleet), "--output", str(tmp_path / "out"), "--local"])
    assert result.exit_code == 2, result.output
    assert "cannot write" in result.output and "No space left on device" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fleet.jsonl"]


def test_an_output_next_to_a_file_is_a_message(tmp_path):
    fleet = _fleet(tmp_path / "fleet.jsonl")
    (tmp_path / "blocker").write_text("a file, not a directory")
    result = CliRunner().invoke(cli, ["pipeline", "--input", str(fleet), "--output", str(tmp_path / "blocker" / "out"), "--local"])
    assert result.exit_code == 2 and "cannot write next to" in result.output


def test_a_problem_with_no_assignment_in_time_is_a_time_limit_row(tmp_path, monkeypatch):
    fleet = _fleet(tmp_path / "fleet.jsonl")

    def slow(problem, solver, raw):
        while True:
            pass

    monkeypatch.setattr(solve_module, "_heuristic", slow)
    result = run_pipeline(fleet, tmp_path / "out", solvers=["kafka"], runner="local", time_limit=0.2)
    rows = _summary(result.output)
    for name in ("app", "rackless", "group"):
        assert rows[name, "kafka"]["status"] == "time_limit"
        assert "did not finish within the time limit" in rows[name, "kafka"]["error"]
        assert rows[name, "kafka"]["seconds"] < 1
    from optimizer.report import fleet_totals

    assert fleet_totals(result.summary)["per_solver"]["kafka"]["errors"] == 3


def test_a_worker_bug_while_validating_is_that_documents_row(monkeypatch):
    def broken(document, name):
        raise TypeError("unhashable type: 'dict'")

    monkeypatch.setattr(worker_module, "parse_document", broken)
    rows = worker_module.solve_document("x", "{}", ["kafka", "exact"])
    assert [r["status"] for r in rows] == ["invalid", "invalid"]
    assert all("internal error while validating: TypeError" in r["error"] for r in rows)


def test_a_swap_cut_off_between_its_renames_is_put_right(tmp_path, monkeypatch):
    """Killed after moving the previous output aside but before moving the new one in: the next
    run puts the previous output back rather than deleting it; a second rename that fails is
    rolled back at once."""
    output = tmp_path / "out"
    aside = tmp_path / ".out.old-0000abcd"
    (aside / "summary").mkdir(parents=True)
    (aside / "summary" / "marker").write_text("previous output")
    assert run_module.removed_stale_stages(output) == []
    assert (output / "summary" / "marker").read_text() == "previous output"
    (tmp_path / ".out.old-1111abcd").mkdir()  # with the output in place, a leftover goes
    assert [p.name for p in run_module.removed_stale_stages(output)] == [".out.old-1111abcd"]

    stage = tmp_path / ".out.partial-2222abcd"
    stage.mkdir()
    real_rename = Path.rename

    def failing(self, target):
        if self == stage:
            raise OSError(28, "No space left on device")
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", failing)
    with pytest.raises(OSError):
        run_module._replace(output, stage)
    assert (output / "summary" / "marker").read_text() == "previous output"
    assert not list(tmp_path.glob(".out.old-*"))


def test_a_deeply_nested_line_costs_one_row(tmp_path):
    fleet = tmp_path / "fleet.jsonl"
    fleet.write_text(json.dumps(GOOD[2]) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    result = run_pipeline(fleet, tmp_path / "out", solvers=["kafka"], runner="local")
    rows = _summary(result.output)
    assert rows["fleet.jsonl:2", "kafka"]["status"] == "invalid"
    assert "nested too deeply" in rows["fleet.jsonl:2", "kafka"]["error"]
    assert rows["group", "kafka"]["error"] is None
