"""The fleet pipeline's overhead beyond solving (issue 5).

Run: ./run python bench/pipeline.py [N]   (writes bench/results/pipeline.json; not a test)

N (default 10,000) small Streams problems (20 tasks x 5 clients, one standby) through:
* the local runner (one process, no Spark), and
* the pipeline on Spark with local[2], three times in one session started in this process: the
  first run starts the Python workers (cold), the others reuse them (warm). The session's
  start-up time is reported apart, and included in the first run's end-to-end time.

Solver: `kafka` (Kafka's assignor), so that what is measured is the pipeline, not the solver.
The solve time is what the rows record (`solve()` per problem: assignor plus evaluator check);
the overhead is everything else: reading the input, shipping, pydantic validation in the worker,
building rows, Arrow conversion, writing and checking the Parquet tables. With two cores solving
in parallel, the Spark overhead per problem is (wall - solve seconds / 2) / N.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from optimizer.generate import random_streams_problem
from optimizer.model.problem import problem_to_data
from optimizer.pipeline.run import run_pipeline
from optimizer.pipeline.spark import spark_session

RESULTS = Path(__file__).parent / "results" / "pipeline.json"


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    work = Path(tempfile.mkdtemp(prefix="kao-bench-"))
    fleet = work / "fleet.jsonl"
    started = time.perf_counter()
    with fleet.open("w") as out:
        for seed in range(count):
            problem = random_streams_problem(seed, tasks=20, clients=5, standby_replicas=1, name=f"app-{seed:05d}")
            out.write(json.dumps(problem_to_data(problem)) + "\n")
    generate = time.perf_counter() - started
    rows = []

    local = run_pipeline(fleet, work / "local", solvers=["kafka"], runner="local")
    rows.append(_row("local runner", count, local, parallelism=1))
    print(rows[-1], flush=True)

    started = time.perf_counter()
    spark = spark_session("local[2]")
    spark.range(1).count()
    startup = time.perf_counter() - started
    for attempt in range(3):  # the later runs have warm Python workers
        result = run_pipeline(fleet, work / "spark", solvers=["kafka"], spark=spark)
        rows.append(_row(f"spark local[2], run {attempt + 1}", count, result, parallelism=2, startup=startup if attempt == 0 else 0.0))
        print(rows[-1], flush=True)
    spark.stop()
    shutil.rmtree(work)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({
        "machine": f"{platform.node()} ({platform.machine()}, {os.cpu_count()} cores)", "python": platform.python_version(),
        "date": date.today().isoformat(), "problems": count, "problem": "streams, 20 tasks x 5 clients, one standby",
        "solver": "kafka", "generate_seconds": round(generate, 1), "runs": rows,
    }, indent=2) + "\n")  # fmt: skip
    print(f"written {RESULTS}")


def _row(runner: str, count: int, result, parallelism: int, startup: float = 0.0) -> dict:
    solving = result.solve_seconds / parallelism
    return {
        "runner": runner,
        "end_to_end_seconds": round(result.seconds + startup, 2),
        "spark_startup_seconds": round(startup, 2),
        "solve_seconds_sum": round(result.solve_seconds, 2),
        "overhead_ms_per_problem": round(1000 * (result.seconds - solving) / count, 3),
        "overhead_ms_per_problem_with_startup": round(1000 * (result.seconds + startup - solving) / count, 3),
        "rows": result.rows,
    }


if __name__ == "__main__":
    main()
