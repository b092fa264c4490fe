"""Kafka's assignment on the largest Streams applications issue 33 names (5,000 tasks over 100
clients, two standbys, two client-tag dimensions), which every valid problem falls back to: Kafka
4.4.0's own high-availability assignor in a warm JVM against the project's reproduction
(`--solver kafka`), and whether they agree.

Run: ./run python bench/kafka_large.py [repeat [tasks clients [strategy]]]   (writes
bench/results/kafka_large.json, or kafka_large_<strategy>.json for another strategy than
min_traffic; not a test; default 3 repeats of 5,000 x 100, min_traffic)

Kafka's time is the fastest of `repeat` runs in one JVM (inputs built and the assignor called);
ours the reproduction alone on the normalised problem (fastest of 2) and `solve(--solver kafka)`
once (normalising and the evaluator's checks included).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from streams_timing import reproduction_seconds, write_results  # bench/ is the script's folder

from optimizer.generate import random_streams_problem
from optimizer.model.streams import StreamsProblem
from optimizer.oracle.streams import disagreements, task_assignor_answers, with_process_ids
from optimizer.solve import solve

RESULTS = Path(__file__).parent / "results" / "kafka_large.json"


def application(tasks: int, clients: int, tags: tuple[str, ...], strategy: str = "min_traffic") -> StreamsProblem:
    name = f"high-availability-{strategy}-{tasks}x{clients}-2-standbys-{len(tags)}-tags"
    problem = random_streams_problem(
        5, tasks=tasks, clients=clients, racks=3, replication=2, standby_replicas=2, tags=tags, strategy=strategy,
        subtopologies=5 if strategy == "balance_subtopology" else 1, name=name,
    )  # fmt: skip
    return with_process_ids(problem)


def measure(problem: StreamsProblem, repeat: int) -> dict[str, object]:
    (kafka,) = task_assignor_answers([problem], repeat=repeat, timeout=3600.0)
    fastest = reproduction_seconds(problem, 2)
    started = time.perf_counter()
    solve(problem, solver="kafka")
    solve_kafka = time.perf_counter() - started
    differing = disagreements([problem], [kafka])
    return {
        "application": problem.name,
        "kafka_seconds_warm": None if isinstance(kafka, str) or kafka.micros is None else round(kafka.micros / 1e6, 3),
        "kafka_error": kafka if isinstance(kafka, str) else None,
        "reproduction_seconds": round(fastest, 2),
        "solve_kafka_seconds": round(solve_kafka, 2),
        "agree": not differing,
        "differences": differing[:3],
    }


def main(repeat: int, tasks: int, clients: int, strategy: str = "min_traffic") -> None:
    rows = []
    for tags in ((), ("zone", "cluster")):
        row = measure(application(tasks, clients, tags, strategy), repeat)
        print(row, flush=True)
        rows.append(row)
    write_results(RESULTS if strategy == "min_traffic" else RESULTS.with_name(f"kafka_large_{strategy}.json"), repeat, rows)


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:4]]
    main(*(numbers + [3, 5000, 100][len(numbers):]), *sys.argv[4:5])  # type: ignore[arg-type]
