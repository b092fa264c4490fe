"""How long the kip925 reference goal takes (issue 3): (tasks x clients) 500x20 ... 5000x100.

Run: ./run python bench/kip925.py   (writes bench/results/kip925.json; not a test)

Each size is a generated application of stateful tasks (3 racks, replication 2, 1-4 source
partitions per task, a previous assignment covering every task) solved with
`solve(problem, solver="kip925")` (cycle canceling on KIP-925's own residual graph), without
standbys and again with one standby (placed and swapped as Kafka does). For comparison: the same
optimisation by cycle canceling on the contracted graph (no task nodes), and, at small sizes,
the step-for-step port of Kafka's Graph (one full Bellman-Ford per canceled cycle, as Kafka runs
it). All three reach the same optimum. And Kafka's search replayed in numpy
(`optimizer.assignors.streams.kip925.kafka_graph`, what `--solver kafka` runs on the min_traffic graph since issue
11): the port's very assignment where the port runs, Kafka's cost beyond.
"""

from __future__ import annotations

import json
import platform
import time
from datetime import date
from pathlib import Path

import numpy as np

from optimizer.assignors.streams.kip925.cycle_canceling import cancel_negative_cycles
from optimizer.assignors.streams.kip925.graph import kafka_assignment
from optimizer.assignors.streams.kip925.kafka_graph import cancel_cycles_as_kafka
from optimizer.costs import StreamsIndex, active_cost_matrix
from optimizer.generate import random_streams_problem
from optimizer.solve import solve

SIZES = [(500, 20), (1000, 50), (2000, 100), (5000, 100)]
KAFKA_GRAPH_SIZES = [(50, 5), (100, 10), (200, 20)]
NUMPY_SEARCH_SIZES = [(50, 5), (100, 10), (200, 20), (500, 20), (1000, 50), (2000, 50), (3000, 100)]


def problem_of(tasks: int, clients: int, seed: int = 7, standbys: int = 0):
    return random_streams_problem(
        seed, tasks=tasks, clients=clients, subtopologies=4, churn=0.0, standby_replicas=standbys, threads=(1, 1),
        stateful_fraction=1.0,
    )


def active_inputs(problem):
    index = StreamsIndex.of(problem)
    rows = np.arange(len(index.tasks))
    current = index.previous_active()
    return index, rows, current


def main() -> None:
    results = {"machine": f"{platform.node()} ({platform.machine()}, {platform.processor() or 'cpu'})",
               "python": platform.python_version(), "date": date.today().isoformat(), "sizes": []}
    for tasks, clients in SIZES:
        problem = problem_of(tasks, clients)
        started = time.perf_counter()
        solution = solve(problem, solver="kip925")
        total = time.perf_counter() - started
        index, rows, current = active_inputs(problem)
        started = time.perf_counter()
        cost = active_cost_matrix(index, rows, 10, 1, current)
        canceling = cancel_negative_cycles(cost, current)
        core = time.perf_counter() - started
        assert canceling.cost == solution.metrics.kip925_cost
        with_standby = problem_of(tasks, clients, standbys=1)
        started = time.perf_counter()
        solve(with_standby, solver="kip925")
        standby_total = time.perf_counter() - started
        row = {
            "tasks": tasks, "clients": clients, "solve_seconds": round(total, 3), "contracted_seconds": round(core, 3),
            "solve_seconds_one_standby": round(standby_total, 3),
            "cost_before": canceling.initial_cost, "cost_after": canceling.cost, "cycles": canceling.cycles,
            "bellman_ford_passes": canceling.passes, "kip925_cost": solution.metrics.kip925_cost,
        }
        results["sizes"].append(row)
        print(row)
    results["kafka_graph"] = []
    for tasks, clients in KAFKA_GRAPH_SIZES:
        index, rows, current = active_inputs(problem_of(tasks, clients))
        cost = active_cost_matrix(index, rows, 10, 1, current)
        started = time.perf_counter()
        port = kafka_assignment(cost, current)
        seconds = time.perf_counter() - started
        started = time.perf_counter()
        contracted = cancel_negative_cycles(cost, current)
        fast = time.perf_counter() - started
        assert int(cost[rows, port].sum()) == contracted.cost
        assert cancel_cycles_as_kafka(cost, current).tolist() == port  # Kafka's very choice
        row = {"tasks": tasks, "clients": clients, "kafka_graph_seconds": round(seconds, 3),
               "contracted_seconds": round(fast, 4), "cost": contracted.cost}
        results["kafka_graph"].append(row)
        print(row)
    results["kafka_search_numpy"] = []
    for tasks, clients in NUMPY_SEARCH_SIZES:
        index, rows, current = active_inputs(problem_of(tasks, clients))
        cost = active_cost_matrix(index, rows, 10, 1, current)
        started = time.perf_counter()
        replayed = cancel_cycles_as_kafka(cost, current)
        seconds = time.perf_counter() - started
        contracted = cancel_negative_cycles(cost, current)
        assert int(cost[rows, replayed].sum()) == contracted.cost
        row = {"tasks": tasks, "clients": clients, "numpy_search_seconds": round(seconds, 3),
               "cost": contracted.cost, "same_placement_as_contracted": bool((replayed == contracted.assignment).all())}
        results["kafka_search_numpy"].append(row)
        print(row)
    out = Path(__file__).parent / "results" / "kip925.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written {out}")


if __name__ == "__main__":
    main()
