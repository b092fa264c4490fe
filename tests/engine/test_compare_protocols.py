"""`compare --protocols`: one group under the classic protocol, the new one and the exact optimum."""

from __future__ import annotations

import json

from click.testing import CliRunner

from optimizer import compare_protocols, problem_from_data, save_problem, solve, with_protocol
from optimizer.cli import cli


def app() -> dict:
    # Partitions 0-2 have their replicas in rack a, 3-5 in rack b; the history reads almost all
    # of them across racks. KIP-925 (classic, min_traffic) and the exact engine fix that; the
    # broker's sticky assignor (KIP-1071) does not read racks and keeps the history.
    return {
        "kind": "streams",
        "name": "orders",
        "tasks": [
            {"id": f"0_{p}", "source_partitions": [{"topic": "in", "partition": p, "replica_racks": ["a" if p < 3 else "b"]}]}
            for p in range(6)
        ],
        "clients": [
            {"id": "c1", "rack": "a", "previous_active": ["0_3", "0_4"]},
            {"id": "c2", "rack": "b", "previous_active": ["0_0", "0_1"]},
            {"id": "c3", "rack": "a", "previous_active": ["0_2", "0_5"]},
        ],
        "config": {"rack.aware.assignment.strategy": "min_traffic", "rack.aware.assignment.traffic_cost": 10},
    }


def test_each_column_is_that_protocols_assignor():
    problem = problem_from_data(app())
    result = compare_protocols(problem)
    assert result.columns == ["classic", "new", "exact"]
    assert result.assignors["classic"] == "classic high_availability"
    assert result.assignors["new"] == "KIP-1071 sticky"
    for column, protocol in (("classic", "classic"), ("new", "new")):
        alone = solve(with_protocol(problem, protocol), "kafka")
        assert result.solutions[column].assignment == alone.assignment
        figure = result.metrics["cross_rack_active_partitions"][column]
        assert figure == alone.metrics.cross_rack_active_partitions
    cross = result.metrics["cross_rack_active_partitions"]
    assert cross == {"classic": 1, "new": 5, "exact": 1}
    assert result.metrics["active_moves"]["new"] == 0 and result.metrics["active_moves"]["exact"] > 0
    assert result.goals["cross_rack_traffic"]["new"] > result.goals["cross_rack_traffic"]["exact"]


def test_the_new_protocol_warns_about_the_keys_it_does_not_read():
    solution = solve(with_protocol(problem_from_data(app()), "new"), "kafka")
    ignored = {w.location for w in solution.warnings if "not read under group.protocol=streams" in w.message}
    assert ignored == {"config.rack.aware.assignment.strategy", "config.rack.aware.assignment.traffic_cost"}
    assert solution.solver.options["assignor"] == "streams-group sticky"
    data = app() | {"config": {"streams.assignor.name": "balanced"}}
    classic = solve(problem_from_data(data), "kafka")
    assert [w.location for w in classic.warnings] == ["config.streams.assignor.name"]


def test_a_consumer_group_under_kip848_says_which_assignor_ran_and_what_it_ignored():
    group = {
        "kind": "consumer",
        "topics": [{"name": "t", "partitions": 3}],
        "members": [{"id": "a", "subscriptions": ["t"]}, {"id": "b", "subscriptions": ["t"]}],
        "config": {"partition.assignment.strategy": "cooperative-sticky", "group.protocol": "consumer", "group.remote.assignor": "range"},
    }
    solution = solve(problem_from_data(group), "kafka")
    assert solution.solver.options["assignor"] == "range" and solution.solver.options["protocol"] == "consumer"
    assert [w.location for w in solution.warnings] == ["config.partition.assignment.strategy"]
    assert {m: held.active for m, held in solution.assignment.items()} == {"a": ("t-0", "t-1"), "b": ("t-2",)}
    assert not solution.followup_rebalance


def test_cli_prints_the_three_columns(tmp_path):
    path = tmp_path / "app.json"
    save_problem(problem_from_data(app()), path)
    shown = CliRunner().invoke(cli, ["compare", str(path), "--protocols"], env={"COLUMNS": "160"})
    assert shown.exit_code == 0, shown.output
    assert "KIP-1071 sticky" in shown.output and "classic high_availability" in shown.output
    as_json = CliRunner().invoke(cli, ["compare", str(path), "--protocols", "--json"])
    data = json.loads(as_json.output)
    assert data["assignors"]["new"] == "KIP-1071 sticky"
    assert set(data["metrics"]["active_moves"]) == {"classic", "new", "exact"}


def test_every_metric_compared_has_its_label():
    """The metrics `compare --protocols` lists and the labels the console prints them with."""
    from optimizer.compare import PROTOCOL_METRICS
    from optimizer.console import PROTOCOL_METRIC_LABELS

    assert {metric for metrics in PROTOCOL_METRICS.values() for metric in metrics} == set(PROTOCOL_METRIC_LABELS)
