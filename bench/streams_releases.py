"""Kafka Streams' classic task assignors, release by release (issue 30, item 4): Kafka's own classes
from each release's jars (Maven Central) against `--solver kafka` with `kafka.version` set to that
release, on the same seeded applications as the live-oracle test, more of them.

Run: ./run python bench/streams_releases.py [per-assignor count]   (writes
bench/streams_releases.json, where docs/assignors/releases.md looks; not a test)

Per release and assignor: how many applications agree (`optimizer.kafka.oracle.streams.
disagreements`: actives, standbys with warm-ups, the follow-up rebalance; KIP-924's standbys in the
order that release's JVM placed them). The legacy sticky assignor twice: its task HashSets filled
in task order (as the reproduction and the frozen parity sets assume) and as StreamsPartitionAssignor
fills them. KIP-924 also against the other release's room rule (`cross`), which shows the variant
row matters: the 3.8-4.3 rule on 4.4.0's jars and the 4.4.0 rule on the older jars.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from datetime import date
from pathlib import Path

from optimizer.assignors.streams.kip924_sticky import kip924_sticky_assign, kip924_sticky_assign_4_4
from optimizer.kafka.oracle.streams import STRATEGIES, StreamsAnswer, application, disagreements, task_assignor_answers
from optimizer.model.ids import task_id
from optimizer.model.normalize import normalize
from optimizer.model.streams import StreamsProblem

RESULTS = Path(__file__).parent / "streams_releases.json"
RELEASES = ("3.9.1", "4.0.0", "4.2.2", "4.3.1", "4.4.0")
ASSIGNORS = (
    ("high_availability/none", "high_availability", ("none",), "grouper"),
    ("high_availability/min_traffic", "high_availability", ("min_traffic",), "grouper"),
    ("high_availability/balance_subtopology", "high_availability", ("balance_subtopology",), "grouper"),
    ("sticky (task sets in task order)", "sticky", STRATEGIES, "sorted"),
    ("sticky (StreamsPartitionAssignor's order)", "sticky", STRATEGIES, "grouper"),
    ("kip924_sticky", "kip924_sticky", STRATEGIES, "grouper"),
)


def _applications(assignor: str, strategies: tuple[str, ...], release: str, count: int) -> list[StreamsProblem]:
    return [application(1000 + seed, assignor, strategies[seed % len(strategies)], release) for seed in range(count)]


def _cross(problems: list[StreamsProblem], answers: list[StreamsAnswer | str], release: str) -> int:
    """KIP-924 applications on which the other room rule (3.8-4.3's on 4.4.0's jars, 4.4.0's on
    older ones), run in Kafka's standby order, still gives Kafka's whole answer."""
    other = kip924_sticky_assign if release == "4.4.0" else kip924_sticky_assign_4_4
    agree = 0
    for problem, kafka in zip(problems, answers, strict=True):
        if isinstance(kafka, str) or kafka.standby_order is None:
            continue
        result = other(normalize(problem).problem, list(kafka.standby_order))
        active = {c.id: frozenset(task_id(*t) for t in c.active) for c in result.clients}
        standby = {c.id: frozenset(task_id(*t) for t in c.standby) for c in result.clients}
        if all(active[c] == kafka.active.get(c, frozenset()) and standby[c] == kafka.standby.get(c, frozenset()) for c in active):
            agree += 1
    return agree


def main(count: int) -> None:
    results: dict[str, object] = {
        "date": date.today().isoformat(),
        "machine": platform.platform(),
        "python": platform.python_version(),
        "applications_per_assignor": count,
        "releases": {},
    }
    for release in RELEASES:
        per: dict[str, object] = {}
        for label, assignor, strategies, task_sets in ASSIGNORS:
            problems = _applications(assignor, strategies, release, count)
            started = time.perf_counter()
            try:
                answers = task_assignor_answers(problems, release=None if release == "4.4.0" else release, task_sets=task_sets)
            except Exception as error:  # noqa: BLE001 - a release whose API the adapter cannot run is a result
                per[label] = {"checked": 0, "could_not_run": f"{type(error).__name__}: {str(error)[-400:]}"}
                print(f"{release} {label}: could not run: {error}", flush=True)
                continue
            found = disagreements(problems, answers)
            differing = sorted({line.split()[0].rstrip(":") for line in found})
            raised = sum(1 for a in answers if isinstance(a, str))
            entry: dict[str, object] = {
                "checked": len(problems),
                "agree": len(problems) - len(differing),
                "kafka_raised": raised,
                "differing": differing[:20],
                "actives_agree": len(problems) - len({line.split()[0].rstrip(":") for line in disagreements(problems, answers, standbys=False)}),
                "seconds": round(time.perf_counter() - started, 1),
            }
            if assignor == "kip924_sticky":
                entry["cross_rule_agree"] = _cross(problems, answers, release)
            per[label] = entry
            print(f"{release} {label}: {entry['agree']} of {len(problems)} agree", flush=True)
        results["releases"][release] = per  # type: ignore[index]
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
