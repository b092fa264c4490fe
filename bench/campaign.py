"""Random differential campaigns against Kafka's own assignor classes (issue 50): COUNT groups per
assignor family and release line, Kafka's answer (that release's jars, through `jvm/`) against
`--solver kafka` with `kafka.version` set to that release.

Run: ./run python bench/campaign.py [COUNT [RELEASE ...]]   (default 10,000 at 4.4.0; writes
bench/results/campaign.json, merging releases already there; not a test)

The groups, per family (seeds past those the tests and the per-release benches use):

* classic `range`, `roundrobin`: `oracle_classic_groups` (racks, owned partitions, contested
  claims, generations); classic `sticky`, `cooperative-sticky`: seven in ten those, three in ten
  with the members' join order (`oracle_joined_groups`);
* KIP-848 `uniform`: seven in ten `oracle_kip848_groups`, two static-member groups, one with large
  previous targets (presized sets); KIP-848 `range`: seven in ten, three static-member groups;
* Streams HA with each `rack.aware.assignment.strategy`, legacy sticky and KIP-924 sticky:
  `oracle.streams.application` (up to 30 tasks over 7 clients), one in four with zombies (a task
  reported active by two clients), one in four with stores that log nothing, one in twenty a
  larger application (40-150 tasks in up to 8 subtopologies over 5-20 clients);
* streams-group sticky: `random_streams_group`, one in four with zombies (two members, of two
  processes or of one, reporting one task active).

A group agrees when every member's (client's) assignment is Kafka's (`optimizer.oracle`'s
comparisons: Streams actives and standbys with warm-ups, the follow-up rebalance, KIP-924's
standbys in the order Kafka's JVM placed them), or when both refuse (Kafka raises, `--solver
kafka` refuses quoting it).
"""

from __future__ import annotations

import json
import platform
import sys
import time
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from consumer_releases import outcome  # bench/ is the script's folder

from optimizer.errors import SolverUnavailableError
from optimizer.generate import (
    oracle_classic_groups,
    oracle_joined_groups,
    oracle_kip848_groups,
    oracle_large_target_groups,
    oracle_static_kip848_groups,
)
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.streams import StreamsProblem
from optimizer.oracle.batch import at_release
from optimizer.oracle.consumer import classic_consumer_answers, kip848_answers
from optimizer.oracle.streams import STRATEGIES, application, disagreements, larger_application, task_assignor_answers
from optimizer.oracle.streams_group import random_streams_group, solution_members, streams_group_answers
from optimizer.solve import solve

RESULTS = Path(__file__).parent / "results" / "campaign.json"
FIRST = 100_000  # seeds from here: past every test's and bench's
CHUNK = 500  # groups per JVM batch
EXAMPLES = 3

Judge = Callable[[list[Any], list[Any], str], list[tuple[str, str]]]


def _consumer_judge(problems: list[ConsumerProblem], answers: list[Any], release: str) -> list[tuple[str, str]]:
    return [outcome(at_release(p, release), kafka) for p, kafka in zip(problems, answers, strict=True)]


def _streams_judge(problems: list[StreamsProblem], answers: list[Any], release: str) -> list[tuple[str, str]]:
    found: dict[str, str] = {}
    for line in disagreements(problems, answers):
        found.setdefault(line.split()[0].rstrip(":"), line)
    return [("differ", found[p.name][:600]) if p.name in found else ("agree", "") for p in problems]


def _streams_group_judge(problems: list[StreamsProblem], answers: list[Any], release: str) -> list[tuple[str, str]]:
    judged = []
    for problem, kafka in zip(problems, answers, strict=True):
        try:
            ours = solution_members(solve(problem, solver="kafka"))
        except SolverUnavailableError as error:
            judged.append(("ours refused", f"{problem.name}: {error}"))
            continue
        if isinstance(kafka, str):
            judged.append(("kafka raised", f"{problem.name}: {kafka[:300]}"))
        else:
            judged.append(("agree", "") if ours == kafka else ("differ", f"{problem.name}: ours {ours}, Kafka's {kafka}"[:600]))
    return judged


def _mixed(parts: Sequence[tuple[float, Callable[[int, int], list[Any]]]]) -> Callable[[int, int], list[Any]]:
    """A family made of generators in the given shares: a chunk (first, n) takes the next
    `share x n` groups of each (chunks of equal size: the shares' ranges follow one another)."""

    def make(first: int, n: int) -> list[Any]:
        made: list[Any] = []
        for share, generate in parts:
            made += generate(round(first * share), round(n * share))
        return made

    return make


def _classic(strategy: str) -> Callable[[int, int], list[Any]]:
    return lambda first, n: oracle_classic_groups(strategy, n, FIRST + first)


def _tail(generate: Callable[[int], list[Any]]) -> Callable[[int, int], list[Any]]:
    """Generators that take only a count give groups 0..count-1: a chunk takes its slice of them."""
    return lambda first, n: generate(first + n)[first:]


def _kip848(assignor: str) -> Callable[[int, int], list[Any]]:
    return lambda first, n: oracle_kip848_groups(assignor, n, FIRST + first)


def _streams(assignor: str, strategies: Sequence[str]) -> Callable[[int, int, str], list[StreamsProblem]]:
    def make(first: int, n: int, release: str) -> list[StreamsProblem]:
        made = []
        for seed in range(FIRST + first, FIRST + first + n):
            strategy = strategies[seed % len(strategies)]
            if seed % 20 == 19:
                made.append(at_release(larger_application(seed, assignor, strategy), release))
            else:
                made.append(
                    application(seed, assignor, strategy, release, unlogged=0.5 if seed % 4 == 1 else 0.0, zombies=0.3 if seed % 4 == 2 else 0.0)
                )
        return made

    return make


def families() -> dict[str, tuple[Callable[..., list[Any]], Callable[..., list[Any]], Judge, bool]]:
    """name -> (generator (first, n[, release]), Kafka's oracle, judge, generator takes the release)."""
    consumer: dict[str, tuple[Callable[..., list[Any]], Callable[..., list[Any]], Judge, bool]] = {
        "classic range": (_classic("range"), classic_consumer_answers, _consumer_judge, False),
        "classic roundrobin": (_classic("roundrobin"), classic_consumer_answers, _consumer_judge, False),
    }
    for strategy in ("sticky", "cooperative-sticky"):
        joined = _tail(lambda count, s=strategy: oracle_joined_groups(s, count))
        consumer[f"classic {strategy}"] = (_mixed([(0.7, _classic(strategy)), (0.3, joined)]), classic_consumer_answers, _consumer_judge, False)
    static_uniform = _tail(lambda count: oracle_static_kip848_groups("uniform", count))
    large = _tail(oracle_large_target_groups)
    consumer["kip848 uniform"] = (_mixed([(0.7, _kip848("uniform")), (0.2, static_uniform), (0.1, large)]), kip848_answers, _consumer_judge, False)
    static_range = _tail(lambda count: oracle_static_kip848_groups("range", count))
    consumer["kip848 range"] = (_mixed([(0.7, _kip848("range")), (0.3, static_range)]), kip848_answers, _consumer_judge, False)
    streams: dict[str, tuple[Callable[..., list[Any]], Callable[..., list[Any]], Judge, bool]] = {
        f"streams high_availability {s}": (_streams("high_availability", (s,)), task_assignor_answers, _streams_judge, True) for s in STRATEGIES
    }
    streams["streams sticky"] = (_streams("sticky", STRATEGIES), task_assignor_answers, _streams_judge, True)
    streams["streams kip924_sticky"] = (_streams("kip924_sticky", STRATEGIES), task_assignor_answers, _streams_judge, True)

    def groups(first: int, n: int, release: str) -> list[StreamsProblem]:
        return [random_streams_group(seed, release, zombies=0.3 if seed % 4 == 2 else 0.0) for seed in range(FIRST + first, FIRST + first + n)]

    streams["streams-group sticky"] = (groups, streams_group_answers, _streams_group_judge, True)
    return consumer | streams


def run(release: str, count: int, only: str | None = None) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for name, (generate, oracle, judge, with_release) in families().items():
        if only and only not in name:
            continue
        if name == "streams-group sticky" and release < "4.1":
            continue
        started = time.perf_counter()
        counts: dict[str, int] = {}
        examples: list[str] = []
        for first in range(0, count, CHUNK):
            n = min(CHUNK, count - first)
            problems = generate(first, n, release) if with_release else [at_release(p, release) for p in generate(first, n)]
            answers = oracle(problems, release=None if release == "4.4.0" else release)
            for kind, detail in judge(problems, answers, release):
                counts[kind] = counts.get(kind, 0) + 1
                if detail and len(examples) < EXAMPLES:
                    examples.append(detail)
        seconds = round(time.perf_counter() - started)
        figures[name] = {"groups": sum(counts.values()), **dict(sorted(counts.items())), "seconds": seconds} | ({"examples": examples} if examples else {})
        print(f"{release:>6} {name:<40} {counts} ({seconds} s)", flush=True)
    return figures


def main(argv: list[str]) -> None:
    count = int(argv[0]) if argv else 10_000
    releases = argv[1:] or ["4.4.0"]
    previous = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    results = previous.get("releases", {})
    for release in releases:  # written after each release, so that a long run keeps what it did
        results[release] = run(release, count) | {"groups_per_family": count, "date": date.today().isoformat()}
        document = {
            "machine": platform.platform(),
            "what": "groups where Kafka's own assignor (that release's jars) and --solver kafka (kafka.version = that release) agree",
            "releases": {r: results[r] for r in sorted(results, key=lambda r: tuple(map(int, r.split("."))))},
        }
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(document, indent=1) + "\n")
        print(f"wrote {RESULTS}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
