"""Time against the real thing (issue 30, item 5): Kafka 4.4.0's own assignor classes, in a warm
JVM, against the project's reproduction of them and against `solve(--solver kafka)`, on the same
groups; and whether they agree.

Run: ./run python bench/kafka_classes.py   (writes bench/results/kafka_classes.json; not a test)

Kafka's time is the fastest of REPEAT runs of one group in one JVM (Kafka's inputs built and its
assignor called; JSON aside: `optimizer.oracle.batch`). Ours: the reproduction alone
(`kafka_consumer_assign`), fastest of 3, and `solve(problem, solver="kafka")` once (normalising,
the target of a cooperative group's follow-up rounds, the evaluator's checks). Consumer groups
only so far: the Streams assignors' oracle is still to come.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

from optimizer.assignors.consumer.strategy import kafka_consumer_assign
from optimizer.generate import random_consumer_problem
from optimizer.kafka.jvm import KAFKA_VERSION
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.problem import problem_from_data, problem_to_data
from optimizer.oracle.consumer import classic_case, kip848_case, timed_partitions
from optimizer.solve import solve

RESULTS = Path(__file__).parent / "results" / "kafka_classes.json"
REPEAT = 5


def group(strategy: str, protocol: str, members: int, partitions: int, racks: bool, seed: int = 1) -> ConsumerProblem:
    """`members` members over 10 equal topics of `partitions` partitions in all, each owning what
    it had before 20 % churn; every member subscribes to every topic."""
    name = f"{protocol}-{strategy}-{members}x{partitions}" + ("-racks" if racks else "")
    problem = random_consumer_problem(
        seed, members=members, topics=10, partitions=(partitions // 10, partitions // 10), racks=3 if racks else 0,
        strategy=strategy if protocol == "classic" else "range", owned=True, churn=0.2, name=name,
    )  # fmt: skip
    data = problem_to_data(problem)
    if protocol == "consumer":
        data["config"] = {"group.protocol": "consumer", "group.remote.assignor": strategy}
    if racks:
        for i, member in enumerate(data["members"]):
            member["rack"] = f"rack-{'abc'[i % 3]}"
    return problem_from_data(data)


def measure(problem: ConsumerProblem) -> dict[str, object]:
    classic = problem.config.group_protocol == "classic"
    main, case = ("kao.jvm.ConsumerAssignors", classic_case(problem)) if classic else ("kao.jvm.GroupAssignors", kip848_case(problem))
    (kafka, micros), = timed_partitions(main, [case], REPEAT)
    fastest = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        kafka_consumer_assign(problem)
        fastest = min(fastest, time.perf_counter() - started)
    started = time.perf_counter()
    solution = solve(problem, solver="kafka")
    solve_seconds = time.perf_counter() - started
    ours = {m: tuple(sorted(h.active)) for m, h in solution.assignment.items()}
    agree = not isinstance(kafka, str) and ours == {m: tuple(sorted(kafka.get(m, ()))) for m in ours}
    return {
        "group": problem.name,
        "members": len(problem.members),
        "partitions": sum(t.partitions for t in problem.topics),
        "kafka_seconds_warm": None if micros is None else round(micros / 1e6, 4),
        "reproduction_seconds": round(fastest, 4),
        "solve_kafka_seconds": round(solve_seconds, 3),
        "agree": agree,
    }


def main() -> None:
    shapes = [
        ("cooperative-sticky", "classic", 200, 5000, False),
        ("sticky", "classic", 200, 5000, False),
        ("range", "classic", 200, 5000, True),
        ("roundrobin", "classic", 200, 5000, False),
        ("uniform", "consumer", 200, 5000, False),
        ("uniform", "consumer", 200, 5000, True),
        ("range", "consumer", 200, 5000, False),
    ]
    rows = []
    for strategy, protocol, members, partitions, racks in shapes:
        row = measure(group(strategy, protocol, members, partitions, racks))
        row |= {"assignor": strategy, "protocol": protocol, "racks": racks}
        print(row, flush=True)
        rows.append(row)
    RESULTS.parent.mkdir(exist_ok=True)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}"
    summary = {"date": str(date.today()), "machine": machine, "kafka": KAFKA_VERSION, "repeat": REPEAT, "rows": rows}
    RESULTS.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"written {RESULTS}")


if __name__ == "__main__":
    main()
