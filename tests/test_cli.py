"""The command line: exit codes (0 ok, 1 invalid input, 2 usage), JSON output, help."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from optimizer.cli import cli
from optimizer.sources.problem_file import load_solution
from tests.conftest import EXAMPLES, REPO

PROBLEM = str(EXAMPLES / "kip54" / "example2-c0-removed-after-sticky.problem.yaml")
SOLUTION = str(EXAMPLES / "kip54" / "example2-c0-removed-after-sticky.sticky.solution.json")


def run(*args):
    result = CliRunner().invoke(cli, list(args))
    # Every outcome ends through sys.exit (or click's usage handling), never an exception.
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def test_help_lists_commands():
    result = run("--help")
    assert result.exit_code == 0
    for command in ("validate", "evaluate", "examples"):
        assert command in result.output
    assert "Exit codes" in result.output


def test_validate_ok_and_json():
    assert run("validate", PROBLEM).exit_code == 0
    result = run("validate", "--json", PROBLEM)
    assert result.exit_code == 0
    assert json.loads(result.output) == [{"source": PROBLEM, "valid": True, "kind": "consumer", "issues": []}]


def test_validate_several_files_fails_if_one_is_bad(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "kafka-assignment-problem/v1", "kind": "consumer", "topics": [], "members": []}')
    result = run("validate", "--json", PROBLEM, str(bad))
    assert result.exit_code == 1
    verdicts = json.loads(result.output)
    assert [v["valid"] for v in verdicts] == [True, False]
    assert verdicts[1]["issues"][0]["location"] == "members"


def test_usage_errors_exit_2():
    assert run("validate").exit_code == 2  # no file
    assert run("validate", "/no/such/file.json").exit_code == 2
    assert run("evaluate", PROBLEM).exit_code == 2  # missing SOLUTION
    assert run("frobnicate").exit_code == 2
    assert run("validate", "--colour", PROBLEM).exit_code == 2


def test_evaluate_valid_table_and_json():
    result = run("evaluate", PROBLEM, SOLUTION)
    assert result.exit_code == 0
    assert "valid" in result.output and "owned_kept" in result.output
    result = run("evaluate", "--json", PROBLEM, SOLUTION)
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["valid"] is True and data["metrics"]["owned_kept"] == 5


def test_evaluate_invalid_assignment_exits_1(tmp_path):
    solution = tmp_path / "s.json"
    solution.write_text(json.dumps({"assignment": {"C1": {"active": ["t0-0", "t1-0"]}, "C2": {"active": ["t1-0"]}}}))
    result = run("evaluate", PROBLEM, str(solution))
    assert result.exit_code == 1
    assert "PARTITION_ASSIGNED_MULTIPLE_TIMES" in result.output
    assert "PARTITION_UNASSIGNED" in result.output


def test_evaluate_bad_solution_file_exits_1(tmp_path):
    solution = tmp_path / "s.json"
    solution.write_text(json.dumps({"assignment": {"C1": {"active": "t0-0"}}, "score": 3}))
    result = run("evaluate", PROBLEM, str(solution))
    assert result.exit_code == 1
    assert "assignment.C1.active" in result.output and "unknown field 'score'" in result.output


def test_evaluate_kind_mismatch_exits_1():
    streams_solution = str(EXAMPLES / "kip441" / "scaling-out-1.expected.solution.json")
    result = run("evaluate", PROBLEM, streams_solution)
    assert result.exit_code == 1
    assert "solution is for a streams problem" in result.output


def test_evaluate_records_metrics_and_warnings(tmp_path):
    problem = tmp_path / "p.yaml"
    problem.write_text(
        "format: kafka-assignment-problem/v1\nkind: consumer\nname: g\ntopics: [{name: t, partitions: 2}]\n"
        "members:\n  - {id: m1, subscriptions: [t, gone]}\n  - {id: m2, subscriptions: [t]}\n"
    )
    solution = tmp_path / "s.json"
    solution.write_text(json.dumps({"assignment": {"m1": {"active": ["t-0"]}, "m2": {"active": ["t-1"]}}}))
    out = tmp_path / "out.json"
    result = run("evaluate", str(problem), str(solution), "-o", str(out))
    assert result.exit_code == 0
    recorded = load_solution(out)
    assert recorded.problem == "g" and recorded.kind == "consumer"
    assert recorded.metrics.size_skew == 0
    assert [w.location for w in recorded.warnings] == ["members[0] (id 'm1').subscriptions"]


def test_evaluate_output_to_a_missing_directory_is_a_usage_error(tmp_path):
    result = run("evaluate", PROBLEM, SOLUTION, "-o", str(tmp_path / "no" / "such" / "out.json"))
    assert result.exit_code == 2
    assert "cannot write" in result.output


def test_examples_command_checks_every_example():
    result = run("examples", str(EXAMPLES))
    assert result.exit_code == 0
    assert "16 problems, 0 failures" in result.output


def test_examples_command_fails_on_a_bad_solution(tmp_path):
    (tmp_path / "g.problem.yaml").write_text("kind: consumer\nmembers: [{id: m, subscriptions: [t]}]\ntopics: [{name: t, partitions: 1}]\n")
    (tmp_path / "g.empty.solution.json").write_text('{"assignment": {"m": {}}}')
    result = run("examples", str(tmp_path))
    assert result.exit_code == 1
    assert "PARTITION_UNASSIGNED" in result.output


def test_python_dash_m_runs_the_cli():
    result = subprocess.run(
        [sys.executable, "-m", "optimizer", "validate", PROBLEM], capture_output=True, text=True, cwd=REPO
    )
    assert result.returncode == 0, result.stderr
    assert "consumer group" in result.stdout


def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path):
    """`kafka-assign solve P | head -1`: the rest of the table (135 KB, twice what a pipe holds) has
    nowhere to go; the command ends with 141 (what a shell reports for SIGPIPE) and no message,
    not as an internal error."""
    from optimizer.generate import random_consumer_problem
    from optimizer.sources.problem_file import save_problem

    path = tmp_path / "group.json"
    save_problem(random_consumer_problem(1, members=10, topics=5, partitions=(2000, 2000)), path)
    process = subprocess.Popen(
        [sys.executable, "-m", "optimizer", "solve", str(path), "--solver", "kafka"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
    )  # fmt: skip
    assert process.stdout is not None and process.stdout.readline()
    process.stdout.close()
    _, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr.decode()) == (141, "")


def test_a_reader_that_stops_reading_during_clicks_teardown_ends_the_command_quietly_too(tmp_path):
    """Output flushed after the command's own code (a close callback, click's teardown) reaches the
    closed pipe where click, not the command, sees it: click exits 1; the command ends with 141
    all the same. (On a loaded CI machine `solve | head -1` once ended so.)"""
    script = tmp_path / "spill.py"
    script.write_text(
        "import sys\n"
        "import click\n"
        "from optimizer import cli as module\n"
        "@module.cli.command('spill')\n"
        "def spill():\n"
        "    click.get_current_context().find_root().call_on_close(lambda: (sys.stdout.write('x' * 300_000), sys.stdout.flush()))\n"
        "    print('first line', flush=True)\n"
        "sys.argv = ['kafka-assign', 'spill']\n"
        "module.main()\n"
    )
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    assert process.stdout is not None and process.stdout.readline() == b"first line\n"
    process.stdout.close()
    _, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr.decode()) == (141, "")
