"""What Kafka's own high-availability task assignor takes (issue 33, item 3), with and without rack
awareness: Kafka 4.4.0's HighAvailabilityTaskAssignor in a warm JVM against the project's
reproduction, `solve(--solver kafka)` and the exact engine (`solve(problem)`, default goals), on
1,000 tasks over 50 clients (seeds 1-3) and 10,000 tasks over 200 clients (seed 3), one standby;
and whether Kafka and `--solver kafka` agree.

Run: ./run python bench/java_ha_speed.py [repeat]   (writes bench/results/java_ha_speed.json; not a
test; default 2 repeats; up to an hour on two cores)

Each application twice: as generated (`rack.aware.assignment.strategy: min_traffic`) and the same
problem with `rack.aware.assignment.strategy: none` (only that config changed). Kafka's time is
the fastest of `repeat` runs in one JVM (inputs built and the assignor called), one JVM at a time,
within a timeout per application (JAVA_TIMEOUT per run; the rack-aware 10,000 x 200 one within
JAVA_TIMEOUT in all, whose rack-aware optimisation at 1,000 x 50 already takes minutes): past it
the JVM is killed and the row says so. Ours: the reproduction alone on the normalised problem
(fastest of 2), `solve(--solver kafka)` once, `solve(problem)` once within EXACT_TIME_LIMIT with
whether every goal is proven optimal.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from streams_timing import fastest, reproduction_seconds, write_results  # bench/ is the script's folder

from optimizer.errors import KafkaUnavailableError
from optimizer.generate import random_streams_problem
from optimizer.model.problem import problem_from_data, problem_to_data
from optimizer.model.solution import GoalStatus
from optimizer.model.streams import StreamsProblem
from optimizer.oracle.streams import StreamsAnswer, disagreements, task_assignor_answers, with_process_ids
from optimizer.solve import solve

RESULTS = Path(__file__).parent / "results" / "java_ha_speed.json"
APPLICATIONS = ((1, 1000, 50), (2, 1000, 50), (3, 1000, 50), (3, 10000, 200))
"""(seed, tasks, clients)."""
JAVA_TIMEOUT = 600.0
EXACT_TIME_LIMIT = 120.0


def variants(seed: int, tasks: int, clients: int) -> tuple[StreamsProblem, StreamsProblem]:
    """The generated application (min_traffic) and the same one without rack awareness."""
    name = f"high-availability-{tasks}x{clients}-seed-{seed}"
    problem = with_process_ids(random_streams_problem(seed, tasks=tasks, clients=clients, standby_replicas=1, name=name))
    data = problem_to_data(problem)
    data["config"]["rack.aware.assignment.strategy"] = "none"
    unaware = problem_from_data(data)
    assert isinstance(unaware, StreamsProblem)
    return problem, unaware


def kafka_answer(problem: StreamsProblem, repeat: int, timeout: float) -> StreamsAnswer | str:
    """Kafka's answer, the error it raised, or that its JVM did not end within `timeout` seconds
    (`run_java` kills it then)."""
    started = time.perf_counter()
    try:
        (answer,) = task_assignor_answers([problem], repeat=repeat, timeout=timeout)
    except KafkaUnavailableError as error:
        return f"did not finish within {timeout:g} s" if time.perf_counter() - started >= timeout else str(error)
    return answer


def measure(problem: StreamsProblem, repeat: int, timeout: float) -> dict[str, object]:
    kafka = kafka_answer(problem, repeat, timeout)
    reproduction = reproduction_seconds(problem, 2)
    _, solve_kafka = fastest(lambda: solve(problem, solver="kafka"))
    exact, exact_seconds = fastest(lambda: solve(problem, time_limit=EXACT_TIME_LIMIT))
    finished = isinstance(kafka, StreamsAnswer)
    differing = disagreements([problem], [kafka]) if finished else []
    return {
        "application": problem.name,
        "tasks": len(problem.tasks),
        "clients": len(problem.clients),
        "strategy": str(problem.config.rack_aware_assignment_strategy),
        "kafka_timeout_seconds": timeout,
        "kafka_seconds_warm": round(kafka.micros / 1e6, 3) if isinstance(kafka, StreamsAnswer) and kafka.micros is not None else None,
        "kafka_error": None if isinstance(kafka, StreamsAnswer) else kafka,
        "reproduction_seconds": round(reproduction, 3),
        "solve_kafka_seconds": round(solve_kafka, 2),
        "exact_seconds": round(exact_seconds, 2),
        "exact_all_optimal": all(g.status == GoalStatus.OPTIMAL for g in exact.goals),
        "exact_goals": [{"goal": g.name, "status": str(g.status), "value": g.value, "seconds": round(g.seconds, 2)} for g in exact.goals],
        "agree": not differing if finished else None,
        "differences": differing[:5],
    }


def main(repeat: int) -> None:
    rows = []
    for seed, tasks, clients in APPLICATIONS:
        aware, unaware = variants(seed, tasks, clients)
        for problem in (aware, unaware):
            bounded = tasks > 1000 and problem is aware
            row = measure(problem, repeat, JAVA_TIMEOUT if bounded else JAVA_TIMEOUT * repeat)
            print(row, flush=True)
            rows.append(row)
    write_results(RESULTS, repeat, rows)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
