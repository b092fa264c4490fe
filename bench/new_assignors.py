"""How long Kafka 4.x's assignors take as reproduced here (issue 13), beside the classic ones.

Run: ./run python bench/new_assignors.py   (writes bench/results/new_assignors.json; not a test)

Streams: generated applications (4 subtopologies, 3 racks, one standby, min_traffic with both
KIP-925 costs set, 1-4 threads per client) under `--solver kafka` with the classic
high-availability assignor, KIP-924's StickyTaskAssignor, and KIP-1071's sticky and balanced
assignors. Consumer groups: generated groups (3 racks, equal subscriptions, owned partitions)
under classic cooperative-sticky and KIP-848's uniform and range. Each figure is one solve's
wall time, the evaluator's check included.
"""

from __future__ import annotations

import json
import platform
import time
from datetime import date
from pathlib import Path

from optimizer import problem_from_data, solve
from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model.problem import problem_to_data

STREAMS_SIZES = [(200, 20), (1000, 50), (5000, 100)]
CONSUMER_SIZES = [(20, 200), (100, 2000), (500, 10000)]  # members, partitions
STREAMS_CONFIGS = {
    "classic high_availability": {},
    "classic kip924_sticky": {"task.assignor.class": "kip924_sticky"},
    "KIP-1071 sticky": {"group.protocol": "streams"},
    "KIP-1071 balanced": {"group.protocol": "streams", "streams.assignor.name": "balanced"},
}
CONSUMER_CONFIGS = {
    "classic cooperative-sticky": {"partition.assignment.strategy": "cooperative-sticky"},
    "KIP-848 uniform": {"group.protocol": "consumer"},
    "KIP-848 range": {"group.protocol": "consumer", "group.remote.assignor": "range"},
}


def timed(data: dict, config: dict) -> float:
    problem = problem_from_data({**data, "config": {**data.get("config", {}), **config}})
    started = time.perf_counter()
    solve(problem, "kafka")
    return round(time.perf_counter() - started, 3)


def main() -> None:
    results: dict = {"machine": f"{platform.node()} ({platform.machine()})", "python": platform.python_version(), "date": date.today().isoformat()}
    streams = []
    for tasks, clients in STREAMS_SIZES:
        generated = random_streams_problem(7, tasks=tasks, clients=clients, subtopologies=4, standby_replicas=1)
        data = problem_to_data(generated)
        data["config"] = {**data.get("config", {}), "rack.aware.assignment.strategy": "min_traffic",
                          "rack.aware.assignment.traffic_cost": 10, "rack.aware.assignment.non_overlap_cost": 1}  # fmt: skip
        row = {"tasks": len(generated.tasks), "clients": clients, "seconds": {name: timed(data, c) for name, c in STREAMS_CONFIGS.items()}}
        print(row, flush=True)
        streams.append(row)
    consumer = []
    for members, partitions in CONSUMER_SIZES:
        generated = random_consumer_problem(7, members=members, topics=4, partitions=(partitions // 4, partitions // 4))
        data = problem_to_data(generated)
        row = {"members": members, "partitions": partitions, "seconds": {name: timed(data, c) for name, c in CONSUMER_CONFIGS.items()}}
        print(row, flush=True)
        consumer.append(row)
    results["streams"] = streams
    results["consumer"] = consumer
    out = Path(__file__).parent / "results" / "new_assignors.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written {out}")


if __name__ == "__main__":
    main()
