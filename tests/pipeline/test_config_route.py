"""The configuration-change route's cost (issue 34, item 2): a `kafka` row records, beside what
Kafka's assignor saves with `rack.aware.assignment.strategy: min_traffic`, what that run costs to
reach, as the row's own plan columns count it."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from optimizer.evaluate import headline
from optimizer.generate import random_streams_problem
from optimizer.model.problem import problem_from_data, problem_to_data
from optimizer.pipeline.run import run_pipeline
from optimizer.solve import solve


def test_a_kafka_row_records_the_cost_of_its_configuration_change(tmp_path):
    problem = random_streams_problem(5, tasks=40, clients=6, racks=3, standby_replicas=1, churn=0.4, name="app")
    data = problem_to_data(problem)
    data["config"].pop("rack.aware.assignment.strategy", None)
    fleet = tmp_path / "fleet.jsonl"
    fleet.write_text(json.dumps(data) + "\n")
    run_pipeline(fleet, tmp_path / "out", solvers=["kafka"], runner="local")
    row = pq.read_table(tmp_path / "out" / "summary").to_pylist()[0]
    assert row["config_change"] == "rack.aware.assignment.strategy=min_traffic"

    data["config"]["rack.aware.assignment.strategy"] = "min_traffic"
    changed = solve(problem_from_data(data), solver="kafka")
    assert changed.plan is not None and changed.plan.followup_rebalances > 0  # a route with a cost to show
    assert (row["config_followup_rebalances"], row["config_restore_offsets"], row["config_seconds_to_target"], row["config_moves"]) == (
        changed.plan.followup_rebalances,
        changed.plan.restore_offsets,
        changed.plan.seconds_to_target,
        headline(changed.metrics)["moves"],
    )
