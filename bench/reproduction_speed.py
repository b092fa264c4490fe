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
from pathlib import Path

from kafka_classes import group
from kafka_classes import measure as measure_consumer
from kafka_large import measure as measure_streams
from streams_timing import application, write_results

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


def main(repeat: int) -> None:
    rows = []
    for tasks, clients in SIZES:
        for assignor, strategy, costs in STREAMS:
            if tasks > 1000 and (strategy != "none" or costs):
                continue
            slow = strategy != "none" or costs  # Kafka's min-cost flow: minutes a run, its JIT warm-up negligible
            problem = application(assignor, strategy, costs, tasks=tasks, clients=clients, subtopologies=5)
            row = measure_streams(problem, 1 if slow or tasks > 1000 else repeat)
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
