"""`solve` and `compare` are bounded by default and say what they do when they take long (issue 33):
a default time limit (`--time-limit none` for none) and progress lines on stderr past 2 s."""

from __future__ import annotations

import io
import time
from pathlib import Path

from click.testing import CliRunner

from optimizer import activity
from optimizer.activity import Heartbeat, doing
from optimizer.cli import DEFAULT_TIME_LIMIT, cli
from optimizer.generate import random_streams_problem
from optimizer.sources.problem_file import save_problem


def test_a_heartbeat_says_the_time_left_and_the_step_under_way_then_stops() -> None:
    stream = io.StringIO()
    with Heartbeat("solve", 60.0, stream, first=0.05, every=0.05):
        doing("goal 'stickiness', 3 of 5 (highs)")
        time.sleep(0.3)
    time.sleep(0.2)
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 2
    assert all(line.startswith("solve: ") and " s left of 60 s: goal 'stickiness', 3 of 5 (highs)" in line for line in lines), lines
    assert stream.getvalue().count("\n") == len(lines)  # nothing after the block
    assert Heartbeat("compare", None).line().startswith("compare: 0 s, no time limit: ")


def test_the_time_limit_defaults_to_a_minute_and_none_lifts_it(tmp_path: Path, monkeypatch) -> None:
    problem = tmp_path / "p.json"
    save_problem(random_streams_problem(1, tasks=8, clients=2, name="small"), problem)
    runner = CliRunner()
    assert f"[default: {DEFAULT_TIME_LIMIT:g}" in runner.invoke(cli, ["solve", "--help"]).output.replace("\n", " ")
    seen: list[float | None] = []
    import optimizer.cli as cli_module

    real_solve = cli_module.solve

    def solve(problem, **options):  # type: ignore[no-untyped-def]
        seen.append(options["time_limit"])
        return real_solve(problem, **options)

    monkeypatch.setattr(cli_module, "solve", solve)
    assert runner.invoke(cli, ["solve", str(problem)]).exit_code == 0
    assert runner.invoke(cli, ["solve", str(problem), "--time-limit", "none"]).exit_code == 0
    assert runner.invoke(cli, ["solve", str(problem), "--time-limit", "NONE"]).exit_code == 0
    assert seen[0] is not None and DEFAULT_TIME_LIMIT - 5 < seen[0] <= DEFAULT_TIME_LIMIT and seen[1:] == [None, None]
    for bad in ("abc", "-1", "inf"):
        refused = runner.invoke(cli, ["compare", str(problem), "--time-limit", bad])
        assert refused.exit_code == 2 and "Invalid value for '--time-limit'" in refused.output, refused.output


def test_a_long_solve_prints_progress_on_stderr_only(tmp_path: Path, monkeypatch) -> None:
    problem = tmp_path / "p.json"
    save_problem(random_streams_problem(3, tasks=300, clients=20, racks=3, replication=2, standby_replicas=1, name="medium"), problem)
    monkeypatch.setattr(activity, "FIRST_SECONDS", 0.01)
    monkeypatch.setattr(activity, "EVERY_SECONDS", 0.05)
    result = CliRunner().invoke(cli, ["solve", str(problem)])
    assert result.exit_code == 0, result.output
    assert "solve: " in result.stderr and " s left of 60 s: " in result.stderr
    assert "s left of" not in result.stdout
