"""`kafka-assign solve`: every example and generated problems, both solvers, exit codes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from optimizer.cli import cli
from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.sources.problem_file import load_solution, save_problem
from tests.conftest import EXAMPLES, example_problems


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


@pytest.mark.parametrize("path", example_problems(), ids=lambda p: p.name)
def test_solve_every_example_with_kafka(path, tmp_path):
    out = tmp_path / "s.json"
    result = run("solve", path, "--solver", "kafka", "-o", out)
    assert result.exit_code == 0, result.output
    solution = load_solution(out)
    assert solution.solver.name == "kafka" and solution.metrics is not None
    assert run("evaluate", path, out).exit_code == 0


@pytest.mark.parametrize("path", [p for p in example_problems() if "kip" in p.parent.name and "54" not in p.parent.name], ids=lambda p: p.name)
def test_solve_streams_examples_with_kip925(path):
    result = run("solve", path, "--solver", "kip925", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["solver"]["name"] == "kip925"


@pytest.mark.parametrize("seed", range(4))
def test_solve_generated_problems(seed, tmp_path):
    streams = tmp_path / "app.yaml"
    save_problem(random_streams_problem(seed, tasks=30, clients=5, tags=("zone",)), streams)
    group = tmp_path / "group.json"
    save_problem(random_consumer_problem(seed, members=6, equal_subscriptions=seed % 2 == 0), group)
    for path, solver in ((streams, "kafka"), (streams, "kip925"), (group, "kafka")):
        result = run("solve", path, "--solver", solver)
        assert result.exit_code == 0, result.output
        # Labelled figures: of the assignment, or of the assignment applied now and of the target.
        labels = [line.split(":")[0] for line in result.output.splitlines() if line.startswith(("figures:", "applied now:", "target:"))]
        assert labels in (["figures"], ["applied now", "target"]), result.output
        assert "plan:" in result.output


def test_solve_usage_and_input_errors(tmp_path):
    consumer = EXAMPLES / "kip54" / "example3-fresh.problem.yaml"
    result = run("solve", consumer, "--solver", "kip925")
    assert result.exit_code == 2 and "Kafka Streams problems only" in result.output
    assert run("solve", consumer, "--solver", "simplex").exit_code == 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "streams", "clients": []}')
    assert run("solve", bad).exit_code == 1
    assert run("solve", consumer, "-o", tmp_path / "missing" / "x.json").exit_code == 2


def test_solve_records_warnings_in_the_solution(tmp_path):
    problem = tmp_path / "app.yaml"
    problem.write_text(
        "format: kafka-assignment-problem/v1\nkind: streams\nconfig: {num.standby.replicas: 3}\n"
        "clients: [{id: a, previous_active: ['9_9']}, {id: b}]\n"
        "tasks: [{id: '0_0', stateful: true, source_partitions: [{topic: t, partition: 0}], changelog_partitions: [{topic: c, partition: 0}]}]\n"
    )
    out = tmp_path / "s.json"
    result = run("solve", problem, "-o", out)
    assert result.exit_code == 0
    assert "warning" in result.output
    locations = [w.location for w in load_solution(out).warnings]
    assert locations == ["clients[0] (id 'a').previous_active", "config.num.standby.replicas"]


def test_a_problem_read_just_after_the_limit_is_answered_and_one_read_far_after_is_refused(tmp_path, monkeypatch):
    """Reading counts against --time-limit, but a problem read within READ_GRACE past it still
    gets an answer (the engine's first point, labelled), never nothing; one slower than that is
    refused, saying so."""
    import time as clock

    import optimizer.cli as cli_module
    from optimizer.sources.problem_file import load_problem

    path = tmp_path / "p.json"
    save_problem(random_streams_problem(2, tasks=30, clients=4, standby_replicas=1), path)

    def slow(seconds):
        def read(where):
            clock.sleep(seconds)
            return load_problem(where)

        return read

    monkeypatch.setattr(cli_module, "load_problem", slow(0.3))
    answered = run("solve", path, "--time-limit", "0.1", "--json")
    assert answered.exit_code == 0, answered.output
    notes = json.loads(answered.output)["solver"]["options"]["notes"]
    assert any("first point" in n or "stopped" in n or "time limit" in n for n in notes), notes
    monkeypatch.setattr(cli_module, "load_problem", slow(cli_module.READ_GRACE + 1.0))
    refused = run("solve", path, "--time-limit", "0.1")
    assert refused.exit_code != 0 and "took longer than the time limit" in refused.output
