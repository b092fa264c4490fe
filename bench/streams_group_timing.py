"""Time against the real thing (issue 30, item 5), streams groups: Kafka 4.4.0's own streams-group
`StickyTaskAssignor` in a warm JVM, against the project's reproduction of it, `solve(--solver
kafka)` and the exact engine (`solve(problem)`), on a streams group of 1,000 tasks over 50 clients;
and whether Kafka and `--solver kafka` agree member by member.

Run: ./run python bench/streams_group_timing.py   (writes bench/results/streams_group_timing.json; not a test)

Kafka's time is the fastest of REPEAT runs of the group in one JVM (Kafka's inputs built and its
assignor called; JSON aside: `optimizer.oracle.batch`). Ours: the reproduction alone (the
group spec built from the problem and `sticky_assign_4_4`), fastest of 3; `solve(problem,
solver="kafka")`, fastest of 3 (normalising, the evaluator's checks); the exact engine once.

The groups: `random_streams_problem` (seed 1) with 1,000 tasks over 4 subtopologies, 50
clients of 1 to 4 threads, 1 standby, previous actives and standbys after 20 % churn, lags, racks
and two tag keys; `group.protocol: streams`, `streams.assignor.name: sticky`, the default
`kafka.version` (4.4). A fresh group (no history) as well.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

from streams_timing import fastest  # bench/ is the script's folder

from optimizer.assignors.streams.group.spec import group_spec
from optimizer.assignors.streams.group.sticky import sticky_assign_4_4
from optimizer.generate import random_streams_problem
from optimizer.kafka.jvm import KAFKA_VERSION
from optimizer.model.problem import problem_from_data, problem_to_data
from optimizer.model.streams import StreamsProblem
from optimizer.oracle.streams_group import solution_members, streams_group_case, timed_answers
from optimizer.solve import solve

RESULTS = Path(__file__).parent / "results" / "streams_group_timing.json"
REPEAT = 20
TASKS, CLIENTS = 1000, 50


def group(previous: bool, seed: int = 1) -> StreamsProblem:
    problem = random_streams_problem(
        seed, tasks=TASKS, clients=CLIENTS, subtopologies=4, threads=(1, 4), standby_replicas=1, tags=("zone", "cluster"),
        previous=previous, churn=0.2, name=f"streams-group-{TASKS}x{CLIENTS}" + ("" if previous else "-fresh"),
    )  # fmt: skip
    data = problem_to_data(problem)
    data["config"] = {**data["config"], "group.protocol": "streams", "streams.assignor.name": "sticky"}
    result = problem_from_data(data)
    assert isinstance(result, StreamsProblem)
    return result


def measure(problem: StreamsProblem) -> dict[str, Any]:
    ((kafka, micros),) = timed_answers([streams_group_case(problem)], REPEAT)
    _, reproduction = fastest(lambda: sticky_assign_4_4(group_spec(problem)), 3)
    kafka_solution, solver_kafka = fastest(lambda: solve(problem, solver="kafka"), 3)
    started = time.perf_counter()
    exact = solve(problem)
    exact_seconds = time.perf_counter() - started
    members = sum(c.threads for c in problem.clients)
    figures = {
        "group": problem.name,
        "tasks": len(problem.tasks),
        "stateful": sum(1 for t in problem.tasks if t.stateful),
        "clients": len(problem.clients),
        "members": members,
        "kafka_class_ms": None if micros is None else round(micros / 1000, 2),
        "reproduction_ms": round(reproduction * 1000, 2),
        "solver_kafka_ms": round(solver_kafka * 1000, 2),
        "exact_ms": round(exact_seconds * 1000, 1),
        "exact_notes": list(exact.solver.options.get("notes", [])),
        "agree_per_member": not isinstance(kafka, str) and solution_members(kafka_solution) == kafka,
    }
    print(figures, flush=True)
    return figures


def main() -> None:
    rows = [measure(group(previous=True)), measure(group(previous=False))]
    document = {
        "date": date.today().isoformat(),
        "kafka": KAFKA_VERSION,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
        "repeat": REPEAT,
        "what": "Kafka's streams-group StickyTaskAssignor (warm JVM, fastest of repeat) vs the reproduction, --solver kafka and the exact engine",
        "groups": rows,
    }
    RESULTS.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
