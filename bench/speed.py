"""Speed on the path the user and the service take (issue 33, item 3): `solve` with the default
goals and the default 60 s limit (the target, the assignment applied now, the plan, the
evaluator's checks) against `solve --solver kafka` (Kafka's reproduction, the same checks), in
one warm process, on the applications the issue names: 1,000 tasks over 50 clients with one
standby (sixteen seeds: issue 33's six, the first stateless, the others with lags, and ten more
for issue 49) and 10,000 over 200.

Run: ./run python bench/speed.py [repeat]   (writes bench/results/speed.json; not a test; the
fastest of `repeat` runs, default 3, once at 10,000 x 200)

Kafka's own Java assignor on the same applications: bench/java_ha_speed.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

from streams_timing import fastest, write_results  # bench/ is the script's folder

from optimizer.generate import random_streams_problem
from optimizer.solve import solve

RESULTS = Path(__file__).parent / "results" / "speed.json"
TIME_LIMIT = 60.0
APPLICATIONS = (*((seed, 1000, 50) for seed in range(1, 17)), (3, 10000, 200))
"""(seed, tasks, clients) of `random_streams_problem(seed, tasks=..., clients=..., standby_replicas=1)`:
issue 33's six seeds of 1,000 x 50 and ten more (issue 49), and 10,000 x 200."""


def main(repeat: int) -> None:
    solve(random_streams_problem(99, tasks=50, clients=5), time_limit=TIME_LIMIT)  # imports and solvers loaded
    rows = []
    for seed, tasks, clients in APPLICATIONS:
        problem = random_streams_problem(seed, tasks=tasks, clients=clients, standby_replicas=1)
        runs = repeat if tasks <= 1000 else 1
        _, kafka_seconds = fastest(lambda p=problem: solve(p, solver="kafka"), runs)
        exact, exact_seconds = fastest(lambda p=problem: solve(p, time_limit=TIME_LIMIT), runs)
        notes = exact.solver.options["notes"]
        row = {
            "application": f"{tasks} x {clients}, seed {seed}",
            "solve_kafka_seconds": round(kafka_seconds, 3),
            "solve_exact_seconds": round(exact_seconds, 3),
            "ratio": round(exact_seconds / kafka_seconds, 2),
            "statuses": sorted({str(g.status) for g in exact.goals}),
            "back_end": next((n.removeprefix("back-end: ") for n in notes if n.startswith("back-end: ")), "flow"),
            "applied_now": next((n for n in notes if "applied" in n), "the target"),
            "within_1s_and_2x": exact_seconds <= 1.0 and exact_seconds <= 2 * kafka_seconds,
        }
        print(row, flush=True)
        rows.append(row)
    write_results(RESULTS, repeat, rows)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
