"""Kafka Streams' classic task assignors, release by release (issue 30, item 4): Kafka's own classes
from each release's jars (Maven Central) against `--solver kafka` with `kafka.version` set to that
release, on the same seeded applications as the live-oracle test, more of them.

Run: ./run python bench/streams_releases.py [per-assignor count | larger [count] | unlogged [count]]   (writes
bench/results/streams_releases.json, where docs/assignors/releases.md looks; not a test)

Per release and assignor: how many applications agree (`optimizer.oracle.streams.
disagreements`: actives, standbys with warm-ups, the follow-up rebalance; KIP-924's standbys in the
order that release's JVM placed them). The legacy sticky assignor twice: its task HashSets filled
as StreamsPartitionAssignor fills them (what `--solver kafka` reproduces) and in task order (as the
frozen parity sets' harness fed them), the latter against the reproduction run in that order
(`TASK_ORDER`, decision 73). KIP-924 also against the other release's room rule (`cross`), which shows the variant
row matters: the 3.8-4.3 rule on 4.4.0's jars and the 4.4.0 rule on the older jars. Then larger
applications (40-150 tasks over 5-20 clients) on 4.4.0's jars (`larger`).
"""

from __future__ import annotations

import json
import platform
import sys
import time
from datetime import date
from pathlib import Path

from optimizer.assignors.answers import kip924_view
from optimizer.assignors.streams.kip924_sticky import kip924_sticky_assign, kip924_sticky_assign_4_4
from optimizer.assignors.streams.sticky_task import TASK_ORDER, sticky_task_assign
from optimizer.model.ids import task_id
from optimizer.model.normalize import normalize
from optimizer.model.streams import StreamsProblem
from optimizer.oracle.streams import STRATEGIES, StreamsAnswer, application, disagreements, larger_application, task_assignor_answers
from optimizer.solve import solve

RESULTS = Path(__file__).parent / "results" / "streams_releases.json"
RELEASES = ("3.9.1", "4.0.0", "4.2.2", "4.3.1", "4.4.0")
ASSIGNORS = (
    ("high_availability/none", "high_availability", ("none",), "grouper"),
    ("high_availability/min_traffic", "high_availability", ("min_traffic",), "grouper"),
    ("high_availability/balance_subtopology", "high_availability", ("balance_subtopology",), "grouper"),
    ("sticky", "sticky", STRATEGIES, "grouper"),
    ("sticky (task sets in task order, against TASK_ORDER)", "sticky", STRATEGIES, "sorted"),
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
        result = other(kip924_view(normalize(problem).problem, problem), list(kafka.standby_order))
        active = {c.id: frozenset(task_id(*t) for t in c.active) for c in result.clients}
        standby = {c.id: frozenset(task_id(*t) for t in c.standby) for c in result.clients}
        if all(active[c] == kafka.active.get(c, frozenset()) and standby[c] == kafka.standby.get(c, frozenset()) for c in active):
            agree += 1
    return agree


def _in_task_order(problems: list[StreamsProblem], answers: list[StreamsAnswer | str], standbys: bool = True) -> list[str]:
    """`disagreements` for Kafka's legacy sticky assignor fed its task sets in task order, against
    the reproduction run in that order: one line per application that differs."""
    found = []
    for problem, kafka in zip(problems, answers, strict=True):
        if isinstance(kafka, str):
            found.append(f"{problem.name}: Kafka raised {kafka}")
            continue
        result = sticky_task_assign(normalize(problem).problem, TASK_ORDER)
        for client in result.clients:
            if {task_id(*t) for t in client.active} != kafka.active.get(client.id, frozenset()) or (
                standbys and {task_id(*t) for t in client.standby} != kafka.standby.get(client.id, frozenset())
            ):
                found.append(f"{problem.name}: {client.id}")
                break
    return found


def _notes(problem: StreamsProblem) -> list[str]:
    """What `--solver kafka` notes about how it solved `problem` (KIP-925 graphs among them)."""
    info = solve(problem, solver="kafka").solver
    return [str(note) for note in (info.options.get("notes", ()) if info is not None else ())]


def larger(count: int) -> dict[str, object]:
    """Kafka 4.4.0 on larger applications: how many agree, and whether each one that does not is
    one where the reproduction says it solved a KIP-925 graph by contracted cycle canceling (Kafka's
    cost, but possibly another of the equally cheap placements: docs/assignors/rack-aware.md)."""
    per: dict[str, object] = {}
    for label, assignor, strategies, task_sets in ASSIGNORS:
        if task_sets == "sorted":
            continue
        problems = [larger_application(seed, assignor, strategies[seed % len(strategies)]) for seed in range(count)]
        answers = task_assignor_answers(problems, task_sets=task_sets)
        differing = {line.split()[0].rstrip(":") for line in disagreements(problems, answers)}
        noted = {p.name for p in problems if p.name in differing and any("contracted" in n for n in _notes(p))}
        per[label] = {
            "checked": count,
            "agree": count - len(differing),
            "differ_where_contracted_canceling_noted": len(noted),
            "differ_otherwise": sorted(differing - noted),
        }
        print(f"larger {label}: {count - len(differing)} of {count} agree; {len(noted)} of the rest by contracted canceling", flush=True)
    return per


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
            compare = _in_task_order if task_sets == "sorted" else disagreements
            found = compare(problems, answers)
            differing = sorted({line.split()[0].rstrip(":") for line in found})
            raised = sum(1 for a in answers if isinstance(a, str))
            entry: dict[str, object] = {
                "checked": len(problems),
                "agree": len(problems) - len(differing),
                "kafka_raised": raised,
                "differing": differing[:20],
                "actives_agree": len(problems) - len({line.split()[0].rstrip(":") for line in compare(problems, answers, standbys=False)}),
                "seconds": round(time.perf_counter() - started, 1),
            }
            if assignor == "kip924_sticky":
                entry["cross_rule_agree"] = _cross(problems, answers, release)
            per[label] = entry
            print(f"{release} {label}: {entry['agree']} of {len(problems)} agree", flush=True)
        results["releases"][release] = per  # type: ignore[index]
    results["larger_at_4.4.0"] = larger(max(30, count // 5))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


def unlogged(count: int) -> dict[str, object]:
    """Issue 50: applications where half the stateful subtopologies' stores log nothing (no
    changelog partitions), fed to Kafka's classes as StreamsPartitionAssignor feeds them, at
    every release: agreements per assignor."""
    per_release: dict[str, object] = {}
    for release in RELEASES:
        per: dict[str, object] = {}
        for assignor in ("high_availability", "sticky", "kip924_sticky"):
            problems = [application(2000 + seed, assignor, STRATEGIES[seed % 3], release, unlogged=0.5) for seed in range(count)]
            answers = task_assignor_answers(problems, release=None if release == "4.4.0" else release)
            differing = sorted({line.split()[0].rstrip(":") for line in disagreements(problems, answers)})
            per[assignor] = {"checked": count, "agree": count - len(differing), "differing": differing[:20]}
            print(f"{release} {assignor}, stores that log nothing: {count - len(differing)} of {count} agree", flush=True)
        per_release[release] = per
    return per_release


if __name__ == "__main__":
    if sys.argv[1:2] == ["unlogged"]:  # only the applications with stores that log nothing, into the existing results
        results = json.loads(RESULTS.read_text(encoding="utf-8"))
        results["stores_that_log_nothing"] = unlogged(int(sys.argv[2]) if len(sys.argv) > 2 else 100)
        RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    elif sys.argv[1:2] == ["larger"]:  # only the larger applications, into the existing results
        results = json.loads(RESULTS.read_text(encoding="utf-8"))
        results["larger_at_4.4.0"] = larger(int(sys.argv[2]) if len(sys.argv) > 2 else 60)
        RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
