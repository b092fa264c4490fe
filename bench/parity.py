"""Kafka parity figures (issues 11 and 13): `--solver kafka` against Kafka's own Java answers.

Run: ./run python bench/parity.py   (writes bench/results/parity.json; record it in docs/validation.md)

Every case of `../shared/kafka-parity/` for the assignors this project reproduces (`tests/parity/kafka_parity.py` says which and how they are
compared), counted per assignor by outcome; the cases that fail are listed with the reason. The
test suite asserts the same cases one by one; this gives the figures.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.parity.kafka_parity import (
    PARITY_DIR,
    check,
    check_kip924,
    consumer_cases,
    kip848_cases,
    kip924_cases,
    streams_cases,
    streams_group_cases,
)


def main() -> None:
    results = {
        "machine": f"{platform.node()} ({platform.machine()}, {platform.processor() or 'cpu'})",
        "python": platform.python_version(),
        "date": date.today().isoformat(),
        "cases_from": str(PARITY_DIR),
        "folders": {},
    }
    sets = (
        ("streams", streams_cases(), check),
        ("streams/kip924", kip924_cases(), check_kip924),
        ("consumer", consumer_cases(), check),
        ("kip848 (consumer-group-current, consumer/__server-range)", kip848_cases(), check),
        ("streams-group", streams_group_cases(), check),
    )
    for folder, cases, checker in sets:
        counts: dict[str, Counter] = defaultdict(Counter)
        failures = []
        started = time.perf_counter()
        for path in cases:
            outcome = checker(path)
            counts[outcome.assignor][outcome.status] += 1
            if not outcome.passed and outcome.status != "standby-order":
                failures.append({"case": outcome.case, "status": outcome.status, "detail": outcome.detail})
        results["folders"][folder] = {
            "cases": len(cases),
            "passed": sum(n for c in counts.values() for s, n in c.items() if s in ("exact", "metrics", "documented", "standby-order")),
            "by_assignor": {a: dict(sorted(c.items())) for a, c in sorted(counts.items())},
            "failures": failures,
            "seconds": round(time.perf_counter() - started, 1),
        }
        print(folder, json.dumps(results["folders"][folder]["by_assignor"]))
    out = Path(__file__).parent / "results" / "parity.json"
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(f"written {out}")


if __name__ == "__main__":
    main()
