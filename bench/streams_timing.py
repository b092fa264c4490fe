"""Time against the real thing, Kafka Streams (issue 30, item 5): Kafka 4.4.0's own classic task
assignors in a warm JVM against the project's reproduction, `solve(--solver kafka)` and the exact
engine (`solve(problem)`, default goals), on the same applications of 1,000 tasks over 50 clients;
and whether Kafka and `--solver kafka` agree.

Run: ./run python bench/streams_timing.py [repeat]   (writes bench/results/streams_timing.json; not a test)

Kafka's time is the fastest of `repeat` runs of the application in one JVM (its inputs built and
the assignor called; JSON aside: `optimizer.oracle.batch`), the first run's included in the
total. Ours: the reproduction alone (the TASK_ASSIGNORS row, on the normalised problem), fastest of
3; `solve(problem, solver="kafka")` once (normalising, the evaluator's checks); `solve(problem)`
once with a time limit, each goal's status.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TypeVar, cast

from optimizer.assignors.streams.task_assignors import TASK_ASSIGNORS
from optimizer.generate import random_streams_problem
from optimizer.kafka.jvm import KAFKA_VERSION
from optimizer.model.normalize import normalize
from optimizer.model.problem import problem_from_data, problem_to_data
from optimizer.model.streams import StreamsProblem
from optimizer.oracle.streams import disagreements, task_assignor_answers, with_process_ids
from optimizer.solve import solve

RESULTS = Path(__file__).parent / "results" / "streams_timing.json"
EXACT_TIME_LIMIT = 120.0
T = TypeVar("T")


def application(
    assignor: str, strategy: str, costs: bool, seed: int = 1, tasks: int = 1000, clients: int = 50, subtopologies: int | None = None
) -> StreamsProblem:
    """`tasks` tasks (1-4 input partitions each, 70 % stateful) over `clients` clients of 1-4
    threads in 3 racks, one standby, a previous generation with 20 % churn and lags."""
    name = f"{assignor}-{strategy}-{tasks}x{clients}" + ("-costs" if costs else "")
    problem = random_streams_problem(
        seed, tasks=tasks, clients=clients, racks=3, standby_replicas=1, strategy=strategy, subtopologies=subtopologies, name=name
    )
    data = problem_to_data(problem)
    config = data.setdefault("config", {})
    config["task.assignor.class"] = assignor
    if costs:  # KIP-924's rack-aware optimisation runs only with both costs configured
        config["rack.aware.assignment.traffic_cost"] = 10
        config["rack.aware.assignment.non_overlap_cost"] = 1
    made = problem_from_data(data)
    assert isinstance(made, StreamsProblem)
    return with_process_ids(made)


def fastest(run: Callable[[], T], times: int = 1) -> tuple[T, float]:
    """The last answer of `times` calls of `run()`, and the fastest call's seconds."""
    best, result = float("inf"), None
    for _ in range(times):
        started = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - started)
    return cast(T, result), best


def reproduction_seconds(problem: StreamsProblem, runs: int) -> float:
    """The fastest of `runs` runs of the project's reproduction of the problem's task assignor, on
    the normalised problem (`solve(--solver kafka)` without normalising and checking)."""
    normalized = normalize(problem).problem
    run = TASK_ASSIGNORS.select(problem.config.task_assignor_class, problem.config.release)
    return fastest(lambda: run(normalized), runs)[1]


def measure(problem: StreamsProblem, repeat: int) -> dict[str, object]:
    started = time.perf_counter()
    (kafka,) = task_assignor_answers([problem], repeat=repeat, timeout=3600.0)
    jvm_seconds = time.perf_counter() - started
    reproduction = reproduction_seconds(problem, 3)
    _, solve_kafka = fastest(lambda: solve(problem, solver="kafka"))
    exact, exact_seconds = fastest(lambda: solve(problem, time_limit=EXACT_TIME_LIMIT))
    differing = disagreements([problem], [kafka])
    return {
        "application": problem.name,
        "tasks": len(problem.tasks),
        "clients": len(problem.clients),
        "kafka_seconds_warm": None if isinstance(kafka, str) or kafka.micros is None else round(kafka.micros / 1e6, 4),
        "kafka_jvm_seconds_total": round(jvm_seconds, 1),
        "kafka_error": kafka if isinstance(kafka, str) else None,
        "reproduction_seconds": round(reproduction, 4),
        "solve_kafka_seconds": round(solve_kafka, 3),
        "exact_seconds": round(exact_seconds, 2),
        "exact_goals": [{"goal": g.name, "status": str(g.status), "value": g.value, "seconds": round(g.seconds, 2)} for g in exact.goals],
        "agree": not differing,
        "differences": differing[:5],
    }


def main(repeat: int) -> None:
    shapes = [
        ("high_availability", "min_traffic", False),
        ("kip924_sticky", "min_traffic", False),
        ("kip924_sticky", "min_traffic", True),
    ]
    rows = []
    for assignor, strategy, costs in shapes:
        row = measure(application(assignor, strategy, costs), repeat) | {"assignor": assignor, "strategy": strategy, "costs_configured": costs}
        print(row, flush=True)
        rows.append(row)
    write_results(RESULTS, repeat, rows)


def write_results(path: Path, repeat: int, rows: list[dict[str, object]]) -> None:
    """The rows as a result file, with the date, the machine, Kafka's release and the repeat count."""
    path.parent.mkdir(exist_ok=True)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}"
    summary = {"date": str(date.today()), "machine": machine, "kafka": KAFKA_VERSION, "repeat": repeat, "rows": rows}
    path.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"written {path}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
