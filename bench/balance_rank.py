"""Is the exact answer ever less balanced than Kafka's (issue 33, "Done when", first point)? On
random Streams applications with lags and standbys (40 x 4 up to 600 x 24) and random consumer
groups, `compare` on the default goals: the first goal's value and the skew `compare` prints
(Streams: active tasks per thread, max - min; consumers: partitions per member, max - min), on
the assignment applied now and on the target, Kafka's against the exact one's.

Run: ./run python bench/balance_rank.py [apps [groups]]   (writes bench/results/balance_rank.json;
not a test; default 100 and 100)

A row is "worse" where an exact figure is above Kafka's in the same column; the summary counts
them per figure, and lists every such row. Each problem runs with the default time limit.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from streams_timing import write_results  # bench/ is the script's folder

from optimizer.compare import compare
from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model.problem import Problem

RESULTS = Path(__file__).parent / "results" / "balance_rank.json"
TIME_LIMIT = 60.0
EPSILON = 1e-9


def streams_applications(count: int) -> list[Problem]:
    """`count` applications from 40 x 4 to 600 x 24: 1 or 2 standbys, threads 1-4, lags, churn."""
    rng = random.Random(33)
    problems = []
    for seed in range(count):
        clients = rng.randint(4, 24)
        tasks = rng.randint(max(40, clients * 2), 600)
        problems.append(
            random_streams_problem(
                seed,
                tasks=tasks,
                clients=clients,
                standby_replicas=rng.choice((1, 1, 2)),
                threads=rng.choice(((1, 1), (2, 2), (1, 4), (1, 8))),
                churn=rng.choice((0.1, 0.3, 0.6)),
                name=f"streams-{seed}-{tasks}x{clients}",
            )
        )
    return problems


def consumer_groups(count: int) -> list[Problem]:
    """`count` groups of 3 to 50 members: equal or differing subscriptions, every strategy."""
    rng = random.Random(34)
    problems = []
    for seed in range(count):
        members = rng.randint(3, 50)
        problems.append(
            random_consumer_problem(
                seed,
                members=members,
                topics=rng.randint(1, 8),
                partitions=(1, rng.choice((12, 48, 200))),
                equal_subscriptions=rng.random() < 0.6,
                strategy=rng.choice(("sticky", "cooperative-sticky", "range", "roundrobin")),
                churn=rng.choice((0.1, 0.3, 0.6)),
                name=f"consumer-{seed}-{members}-members",
            )
        )
    return problems


def measure(problem: Problem) -> dict[str, object]:
    started = time.perf_counter()
    comparison = compare(problem, time_limit=TIME_LIMIT)
    seconds = time.perf_counter() - started
    first = comparison.goals[0]
    skew = comparison.figures()["load_skew"]
    row: dict[str, object] = {
        "problem": problem.name,
        "first_goal": first.name,
        "first_goal_kafka_now": first.kafka_now,
        "first_goal_exact_now": first.exact_now,
        "first_goal_kafka": first.kafka,
        "first_goal_exact": first.exact,
        "skew_kafka_now": round(skew["kafka_now"], 4),
        "skew_exact_now": round(skew["exact_now"], 4),
        "skew_kafka": round(skew["kafka"], 4),
        "skew_exact": round(skew["exact"], 4),
        "exact_statuses": sorted({str(g.status) for g in comparison.goals}),
        "seconds": round(seconds, 2),
    }
    worse = [
        figure
        for figure, kafka, exact in (
            ("first_goal_now", first.kafka_now, first.exact_now),
            ("first_goal_target", first.kafka, first.exact),
            ("skew_now", skew["kafka_now"], skew["exact_now"]),
            ("skew_target", skew["kafka"], skew["exact"]),
        )
        if exact is not None and exact > kafka + EPSILON
    ]
    row["worse"] = worse
    return row


def main(apps: int, groups: int) -> None:
    rows = []
    for problem in [*streams_applications(apps), *consumer_groups(groups)]:
        row = measure(problem)
        print(row["problem"], row["seconds"], "s", "worse on " + ", ".join(row["worse"]) if row["worse"] else "", flush=True)  # type: ignore[arg-type]
        rows.append(row)
    figures = ("first_goal_now", "first_goal_target", "skew_now", "skew_target")
    summary = {
        "streams_applications": apps,
        "consumer_groups": groups,
        "worse": {figure: sum(figure in row["worse"] for row in rows) for figure in figures},  # type: ignore[operator]
        "total_seconds": round(sum(row["seconds"] for row in rows), 1),  # type: ignore[misc]
    }
    print(summary)
    write_results(RESULTS, 1, [summary, *rows])


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100, int(sys.argv[2]) if len(sys.argv) > 2 else 100)
