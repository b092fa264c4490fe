"""What the report's drill-downs read from a run (issue 34, item 2): the `targets` table holds
where each answer's plan ends, the `problems` table each valid problem's document as read."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from optimizer.generate import random_streams_problem
from optimizer.model.problem import problem_from_data, problem_to_data
from optimizer.pipeline.run import run_pipeline
from optimizer.solve import solve


def test_a_run_writes_each_target_and_each_valid_problem_for_the_report(tmp_path):
    problem = random_streams_problem(7, tasks=40, clients=6, racks=3, standby_replicas=1, churn=0.3, name="app")
    fleet = tmp_path / "fleet.jsonl"
    fleet.write_text(json.dumps(problem_to_data(problem)) + "\n" + json.dumps({"kind": "streams", "name": "broken"}) + "\n")
    run_pipeline(fleet, tmp_path / "out", solvers=["kafka"], runner="local")

    kafka = solve(problem, solver="kafka")
    assert kafka.target is not None and kafka.target != kafka.assignment  # warm-ups pending: two different tables
    rows = pq.read_table(tmp_path / "out" / "targets").to_pylist()
    written = {(r["client"], r["task"], r["role"]) for r in rows if r["problem"] == "app" and r["solver"] == "kafka"}
    assert written == {(c, t, role) for c, held in kafka.target.items() for role in ("active", "standby") for t in getattr(held, role)}

    documents = pq.read_table(tmp_path / "out" / "problems").to_pylist()
    assert [d["problem"] for d in documents] == ["app"]  # once, and not the invalid one
    assert problem_from_data(json.loads(documents[0]["document"])) == problem
