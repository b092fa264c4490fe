"""Reproduction speed beside Kafka's own classes, per assignor, at 1,000 x 50 and 10,000 x 200
(issue 50): Kafka 4.4.0's class in a warm JVM, the project's reproduction alone and `solve
--solver kafka`, on the same group, and whether they agree.

Run: ./run python bench/reproduction_speed.py [repeat]   (writes bench/results/reproduction_speed.json;
not a test; about an hour on 2 cores, most of it Kafka's rack-aware min-cost flows at 1,000 x 50)

Streams: 1,000 tasks over 50 clients, and 10,000 over 200, one standby, 3 racks, 20 % churn
(`streams_timing.application`); consumer groups: 1,000 partitions over 50 members and 10,000 over
200 (`kafka_classes.group`). Kafka's KIP-925 min-cost flow takes minutes at 1,000 x 50 and did not
finish one run in 15 minutes at 5,000 x 100 (kafka_large.json), so at 10,000 x 200 the
rack-aware strategies are left out: there is no Kafka answer to time or compare.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from kafka_classes import group
from kafka_classes import measure as measure_consumer
from streams_timing import reproduction_seconds, write_results

from optimizer.generate import random_streams_problem
from optimizer.model.problem import problem_from_data, problem_to_data
from optimizer.model.streams import StreamsProblem
from optimizer.oracle.streams import disagreements, task_assignor_answers, with_process_ids
from optimizer.solve import solve

RESULTS = Path(__file__).parent / "results" / "reproduction_speed.json"
SIZES = ((1000, 50), (10_000, 200))
STREAMS = (
    ("high_availability", "none", False),
    ("high_availability", "min_traffic", False),
    ("high_availability", "balance_subtopology", False),
    ("sticky", "none", False),
    ("sticky", "min_traffic", False),
    ("kip924_sticky", "none", False),
    ("kip924_sticky", "min_traffic", True),
)
CONSUMERS = (
    ("range", "classic", True),
    ("roundrobin", "classic", False),
    ("sticky", "classic", False),
    ("cooperative-sticky", "classic", False),
    ("uniform", "consumer", False),
    ("range", "consumer", False),
)


def application(assignor: str, strategy: str, costs: bool, tasks: int, clients: int) -> StreamsProblem:
    name = f"{assignor}-{strategy}-{tasks}x{clients}" + ("-costs" if costs else "")
    problem = random_streams_problem(
        1, tasks=tasks, clients=clients, racks=3, standby_replicas=1, strategy=strategy, subtopologies=5, name=name
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


def measure_streams(problem: StreamsProblem, repeat: int) -> dict[str, object]:
    (kafka,) = task_assignor_answers([problem], repeat=repeat, timeout=3600.0)
    reproduction = reproduction_seconds(problem, 2)
    started = time.perf_counter()
    solve(problem, solver="kafka")
    solve_kafka = time.perf_counter() - started
    kafka_seconds = None if isinstance(kafka, str) or kafka.micros is None else kafka.micros / 1e6
    return {
        "application": problem.name,
        "kafka_seconds_warm": None if kafka_seconds is None else round(kafka_seconds, 4),
        "kafka_error": kafka[:300] if isinstance(kafka, str) else None,
        "reproduction_seconds": round(reproduction, 4),
        "solve_kafka_seconds": round(solve_kafka, 3),
        "kafka_over_reproduction": None if kafka_seconds is None else round(kafka_seconds / reproduction, 1),
        "agree": not disagreements([problem], [kafka]),
    }


def main(repeat: int) -> None:
    rows = []
    for tasks, clients in SIZES:
        for assignor, strategy, costs in STREAMS:
            if tasks > 1000 and (strategy != "none" or costs):
                continue
            slow = strategy != "none" or costs  # Kafka's min-cost flow: minutes a run, its JIT warm-up negligible
            row = measure_streams(application(assignor, strategy, costs, tasks, clients), 1 if slow or tasks > 1000 else repeat)
            print(row, flush=True)
            rows.append(row)
    for members, partitions in ((50, 1000), (200, 10_000)):
        for strategy, protocol, racks in CONSUMERS:
            row = measure_consumer(group(strategy, protocol, members, partitions, racks)) | {"assignor": f"{protocol} {strategy}"}
            print(row, flush=True)
            rows.append(row)
    write_results(RESULTS, repeat, rows)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
