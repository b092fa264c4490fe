"""What the pipeline shows while it runs: plain lines for logs when stderr is not a terminal (with
an ETA, under Spark too, its start-up included), the rich bar on a terminal."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from optimizer.cli import cli
from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model.problem import problem_to_data
from optimizer.pipeline import run as run_module
from optimizer.pipeline.progress import BarProgress, PlainProgress, duration, pipeline_progress
from optimizer.pipeline.run import run_pipeline
from optimizer.pipeline.spark import DEFAULT_MASTER, requested_master

ANSI = re.compile(r"\x1b\[|\r|[━╸╺]")
"""Escape sequences, carriage returns and bar characters: what a log must not get."""


class FakeClock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def fleet(tmp_path) -> Path:
    """Eight small problems, quick to solve with Kafka's assignor."""
    documents = [problem_to_data(random_streams_problem(seed, tasks=4, clients=2, name=f"app-{seed}")) for seed in range(4)]
    documents += [problem_to_data(random_consumer_problem(seed, members=2, topics=1, partitions=(1, 3), name=f"group-{seed}")) for seed in range(4)]
    path = tmp_path / "fleet.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in documents))
    return path


def _lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def test_plain_lines_say_how_far_and_when_it_ends_at_most_every_step_and_interval():
    clock, stream = FakeClock(100.0), io.StringIO()
    shown = PlainProgress("problems", stream, clock)
    clock.now = 105.0
    shown.phase("solving 302 problems")
    for now, done in [(106.0, 10), (106.5, 31), (117.3, 50), (125.0, 60), (126.0, 81), (127.0, 113), (187.0, 113), (195.0, 302), (195.5, 302)]:
        clock.now = now
        shown.progress(done, 302)
    clock.now = 195.6
    shown.finish(302)
    assert _lines(stream) == [
        "pipeline: solving 302 problems",
        # 31 is a step (a tenth) but comes within 2 s of the start: the next line waits for 50
        "pipeline: 50/302 problems (17 %), 12.3 s elapsed, ETA 62 s",
        "pipeline: 81/302 problems (27 %), 21.0 s elapsed, ETA 57 s",
        # 113 a second later is too soon; a minute without a line gives one (a heartbeat)
        "pipeline: 113/302 problems (37 %), 82.0 s elapsed, ETA 2 min 17 s",
        "pipeline: 302/302 problems (100 %), 90.0 s elapsed",  # the last one always, once
        "pipeline: done, 302 problems in 95.6 s",  # from the start of the run
    ]


def test_plain_lines_number_about_ten_per_run_and_count_again_for_another_stage():
    clock, stream = FakeClock(), io.StringIO()
    shown = PlainProgress("batches", stream, clock)
    shown.phase("solving 1000 problems in 40 batches (Spark tasks)")
    for done in range(41):
        clock.now = 3.0 * done
        shown.progress(done, 40)
    progress = _lines(stream)[1:]
    assert len(progress) == 10 and progress[0] == "pipeline: 4/40 batches (10 %), 12.0 s elapsed, ETA 1 min 48 s"
    assert progress[-1] == "pipeline: 40/40 batches (100 %), 2 min 0 s elapsed"
    shown.progress(0, 8)  # a later Spark stage: counted from its own start
    clock.now += 60
    shown.progress(1, 8)
    assert _lines(stream)[-1] == "pipeline: 1/8 batches (12 %), 3 min 0 s elapsed, ETA 21 min 0 s"
    assert not ANSI.search(stream.getvalue())


def test_durations_are_short_and_stay_readable_for_long_runs():
    assert [duration(s) for s in (0, 4.4, 99.4, 100, 3599, 5999, 6000, 36000)] == [
        "0 s", "4 s", "99 s", "1 min 40 s", "59 min 59 s", "99 min 59 s", "1 h 40 min", "10 h 0 min",
    ]  # fmt: skip
    assert duration(12.34, precise=True) == "12.3 s" and duration(-1) == "0 s"


def test_the_bar_is_for_terminals_and_plain_lines_for_everything_else():
    terminal = Console(file=io.StringIO(), force_terminal=True)
    assert isinstance(pipeline_progress(terminal, "batches"), BarProgress)
    log = io.StringIO()
    plain = pipeline_progress(Console(file=log), "problems")
    assert isinstance(plain, PlainProgress)
    with plain as shown:
        shown.phase("reading fleet.jsonl")
    assert log.getvalue() == "pipeline: reading fleet.jsonl\n"


def test_a_dumb_terminal_gets_plain_lines(monkeypatch):
    monkeypatch.setenv("TERM", "dumb")
    console = Console(file=io.StringIO(), force_terminal=True)
    assert isinstance(pipeline_progress(console, "problems"), PlainProgress)


def test_the_bar_shows_the_phase_while_spark_starts_then_the_solving():
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    with pipeline_progress(console, "batches") as shown:
        assert isinstance(shown, BarProgress)
        shown.phase("starting Spark (local[*])")
        assert shown._bar.tasks[0].description == "starting Spark (local[*])..."
        shown.phase("Spark started in 6.2 s")
        assert shown._bar.tasks[0].description == "Spark started in 6.2 s"
        shown.phase("solving 8 problems in 2 batches (Spark tasks)")
        shown.progress(1, 2)
        assert shown._bar.tasks[0].description == "solving 8 problems in 2 batches (Spark tasks)"
        assert (shown._bar.tasks[0].completed, shown._bar.tasks[0].total) == (1, 2)
    assert "solving 8 problems" in console.file.getvalue()


def test_the_local_runner_reports_its_phases_and_problems(fleet, tmp_path):
    stream = io.StringIO()
    shown = PlainProgress("problems", stream, FakeClock(), min_interval=0)
    calls: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        calls.append((done, total))
        shown.progress(done, total)

    result = run_pipeline(fleet, tmp_path / "out", solvers=["kafka"], runner="local", progress=progress, phase=shown.phase)
    shown.finish(result.problems)
    assert calls == [(done, 8) for done in range(1, 9)]
    each = [f"pipeline: {done}/8 problems ({round(100 * done / 8)} %), 0.0 s elapsed, ETA 0 s" for done in range(1, 8)]
    assert _lines(stream) == [
        f"pipeline: reading {fleet}",
        "pipeline: solving 8 problems",
        *each,
        "pipeline: 8/8 problems (100 %), 0.0 s elapsed",
        "pipeline: writing the output",
        "pipeline: done, 8 problems in 0.0 s",
    ]


def test_the_cli_prints_plain_lines_on_stderr_when_it_is_not_a_terminal(fleet, tmp_path):
    result = CliRunner().invoke(cli, ["pipeline", "--input", str(fleet), "--output", str(tmp_path / "out"), "--local", "--solvers", "kafka"])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[:2] == [f"pipeline: reading {fleet}", "pipeline: solving 8 problems"]
    assert "pipeline: writing the output" in lines
    assert any(re.fullmatch(r"pipeline: 8/8 problems \(100 %\), \d+\.\d s elapsed", line) for line in lines)
    assert re.fullmatch(r"pipeline: done, 8 problems in \d+\.\d s", lines[-1])
    assert all(line.startswith("pipeline: ") for line in lines)
    assert not ANSI.search(result.stderr)
    assert "Fleet: 8 problems" in result.stdout and "pipeline:" not in result.stdout


def test_spark_reports_its_start_up_and_batches(spark, fleet, tmp_path, monkeypatch):
    started: list[str | None] = []

    def session(master: str | None = None):
        started.append(master)
        return spark  # the session of the tests: never a second one

    monkeypatch.setattr(run_module, "spark_session", session)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    stream = io.StringIO()
    shown = PlainProgress("batches", stream, FakeClock(), min_interval=0)
    result = run_pipeline(fleet, tmp_path / "out", solvers=["kafka"], batch_size=4, progress=shown.progress, phase=shown.phase)
    shown.finish(result.problems)
    lines = _lines(stream)
    assert started == [None]
    assert lines[0] == f"pipeline: starting Spark ({DEFAULT_MASTER})"
    assert re.fullmatch(r"pipeline: Spark started in \d+\.\d s", lines[1])
    assert lines[2:4] == [f"pipeline: reading {fleet}", "pipeline: solving 8 problems in 2 batches (Spark tasks)"]
    assert lines[-3:] == ["pipeline: 2/2 batches (100 %), 0.0 s elapsed", "pipeline: writing the output", "pipeline: done, 8 problems in 0.0 s"]
    # A session given by the caller is not started: no start-up phase.
    phases: list[str] = []
    run_pipeline(fleet, tmp_path / "again", solvers=["kafka"], spark=spark, batch_size=4, phase=phases.append)
    assert started == [None] and phases[0] == f"reading {fleet}"


def test_the_master_asked_for_is_the_default_or_that_of_spark_submit(monkeypatch):
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert requested_master(None) == requested_master("") == DEFAULT_MASTER
    assert requested_master("spark://host:7077") == "spark://host:7077"
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "4242")
    assert requested_master(None) == "" and requested_master("local[2]") == "local[2]"
