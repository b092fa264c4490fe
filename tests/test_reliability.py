"""Inputs found by fault injection (issue 10): each ends in a clear answer, never a traceback."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from optimizer import problem_from_data, solve
from optimizer.cli import cli
from optimizer.errors import InvalidInputError
from optimizer.solve import SOLVERS

RACKLESS_STATELESS = {
    "kind": "streams",
    "name": "rackless",
    "clients": [{"id": "a"}],
    "tasks": [{"id": "0_0", "source_partitions": [{"topic": "t", "partition": 0}]}],
}


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def write(tmp_path, data, name="problem.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("solver", [s for s in SOLVERS])
def test_no_rack_anywhere_and_no_standbys(solver):
    """No client and no partition has a rack: the flow's tasks x racks arrays had one column too
    many (a padding column), and `solve` crashed on the default solver."""
    problem = problem_from_data(
        {
            **RACKLESS_STATELESS,
            "clients": [{"id": "a"}, {"id": "b", "threads": 2}],
            "tasks": [
                {"id": f"0_{p}", "source_partitions": [{"topic": "t", "partition": p}]} for p in range(5)
            ],
        }
    )
    solution = solve(problem, solver=solver)
    assert sorted(t for held in solution.assignment.values() for t in held.active) == [f"0_{p}" for p in range(5)]
    assert solution.metrics["cross_rack_active_partitions"] == 0
    if solver not in ("kafka", "kip925"):
        assert {g.name: g.value for g in solution.goals}["balance"] == 0


def test_one_client_one_stateless_task_from_the_command_line(tmp_path):
    result = run("solve", write(tmp_path, RACKLESS_STATELESS), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["assignment"] == {"a": {"active": ["0_0"]}}


@pytest.mark.parametrize("solver", SOLVERS)
def test_an_application_without_tasks_gets_an_empty_valid_assignment(solver):
    """Kafka assigns nothing when there are no tasks: every client gets an empty assignment."""
    problem = problem_from_data({**RACKLESS_STATELESS, "clients": [{"id": "a", "rack": "r1"}, {"id": "b"}], "tasks": []})
    solution = solve(problem, solver=solver)
    assert set(solution.assignment) == {"a", "b"}
    assert all(not held.active and not held.standby and not held.warmup for held in solution.assignment.values())
    assert all(g.value == 0 for g in solution.goals)


@pytest.mark.parametrize(
    ("strategy", "words"),
    [
        ([{}], "entry [0] is a mapping"),
        (["range", ["sticky"]], "entry [1] is a list"),
        ([None], "entry [0] is null"),
        ([3], "entry [0] is a number"),
    ],
)
def test_strategy_list_entries_that_are_not_names(strategy, words, tmp_path):
    data = {
        "kind": "consumer",
        "topics": [{"name": "t", "partitions": 2}],
        "members": [{"id": "m", "subscriptions": ["t"]}],
        "config": {"partition.assignment.strategy": strategy},
    }
    with pytest.raises(InvalidInputError) as raised:
        problem_from_data(data)
    [issue] = raised.value.issues
    assert issue.location == "config.partition.assignment.strategy" and words in issue.message
    result = run("validate", write(tmp_path, data))
    assert result.exit_code == 1 and words in result.output


@pytest.mark.parametrize("character", ["\x1b", "\x07", "\x00", "\u202e", "\x9b"])
def test_control_characters_in_ids_are_refused_and_never_printed_raw(character, tmp_path):
    client = f"app{character}[31m-1"
    data = {**RACKLESS_STATELESS, "clients": [{"id": client, "rack": f"r{character}"}]}
    result = run("validate", write(tmp_path, data))
    assert result.exit_code == 1
    assert character not in result.output
    assert f"U+{ord(character):04X}" in result.output
    assert "clients[0]" in result.output and ".id" in result.output and ".rack" in result.output


def test_a_five_million_character_id_is_shortened_in_messages(tmp_path):
    huge = "c" * 5_000_000
    data = {**RACKLESS_STATELESS, "clients": [{"id": huge}, {"id": huge}]}
    result = run("validate", write(tmp_path, data))
    assert result.exit_code == 1
    assert "5,000,000 characters long: at most 1,000" in result.output
    assert len(result.output) < 2000


def test_solution_entries_with_control_characters_are_refused(tmp_path):
    problem = write(tmp_path, RACKLESS_STATELESS)
    solution = tmp_path / "s.json"
    solution.write_text(json.dumps({"assignment": {"a": {"active": ["0_0\x1b[2J"]}}}))
    result = run("evaluate", problem, solution)
    assert result.exit_code == 1 and "\x1b" not in result.output and "U+001B" in result.output
