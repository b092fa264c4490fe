"""The consumer-group assignors across Kafka releases (issue 30, item 4): Kafka's own classes from
each release's jars (Maven Central) against `--solver kafka` with `kafka.version` set to that
release, on the same seeded groups.

Run: ./run python bench/consumer_releases.py [RELEASE ...]   (writes bench/results/consumer_releases.json;
not a test; about a minute per release once the jars are cached)

Per release and assignor, the groups (`optimizer.generate`'s oracle groups, with racks, owned
partitions, contested claims and generations):

* classic `range`, `roundrobin`, `sticky`, `cooperative-sticky` (the client's assignors, run by
  `kao.jvm.ConsumerAssignors`): PER_ASSIGNOR random groups each, and VARIED small groups of
  every strategy with contested claims and generations (`classic varied`);
* `sticky (stale claims)`: sticky and cooperative-sticky groups where a member claims partitions
  beyond a topic's current count. Agreement there means: the same assignment where Kafka's is a
  valid one, and `--solver kafka` refusing (SolverUnavailableError) exactly where Kafka raises or
  returns an invalid assignment;
* KIP-848 `uniform` and `range` (the group coordinator's, run by `kao.jvm.GroupAssignors`):
  PER_ASSIGNOR groups each, half the members on a rack; and PER_ASSIGNOR larger `uniform` groups
  whose subscriptions differ (up to 30 members, 8 topics, 40 partitions a topic).

Every adapter runs on every release's jars unchanged (the APIs it calls are the same from 3.9.1 to
4.4.0), so nothing is left unchecked for want of an adapter.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from optimizer.errors import SolverUnavailableError
from optimizer.generate import (
    CLASSIC_STRATEGIES,
    oracle_classic_groups,
    oracle_joined_groups,
    oracle_kip848_groups,
    oracle_large_target_groups,
    oracle_stale_claim_groups,
    oracle_static_kip848_groups,
    oracle_varied_classic_groups,
    random_consumer_problem,
)
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.problem import problem_from_data, problem_to_data
from optimizer.oracle.batch import Answer, at_release
from optimizer.oracle.consumer import classic_consumer_answers, kip848_answers
from optimizer.solve import solve

RESULTS = Path(__file__).parent / "results" / "consumer_releases.json"
RELEASES = ("3.9.1", "4.0.0", "4.0.1", "4.0.2", "4.1.2", "4.2.2", "4.3.1", "4.4.0")
PER_ASSIGNOR = 300
VARIED = 300
STALE = 300
EXAMPLES = 3


def ours(problem: ConsumerProblem) -> dict[str, tuple[str, ...]] | SolverUnavailableError:
    """`--solver kafka`'s assignment, each member's partitions sorted, or its refusal."""
    try:
        solution = solve(problem, solver="kafka")
    except SolverUnavailableError as error:
        return error
    return {member: tuple(sorted(held.active)) for member, held in solution.assignment.items()}


def kafka_valid(problem: ConsumerProblem, kafka: Answer) -> bool:
    """Kafka answered with an assignment of existing partitions, each at most once."""
    if isinstance(kafka, str):
        return False
    existing = {f"{t.name}-{p}" for t in problem.topics for p in range(t.partitions)}
    given = [p for parts in kafka.values() for p in parts]
    return not (set(given) - existing) and len(given) == len(set(given))


def outcome(problem: ConsumerProblem, kafka: Answer) -> tuple[str, str]:
    """(`agree`, `both refuse`, `differ`, `kafka raised`, `kafka invalid`, `ours refused`), and a
    detail. `both refuse`, an agreement: Kafka raises and `--solver kafka` refuses
    (SolverUnavailableError) quoting Kafka's message, or Kafka answers with no valid assignment
    and `--solver kafka` refuses saying so."""
    answer = ours(problem)
    if isinstance(answer, SolverUnavailableError):
        if isinstance(kafka, str) and kafka.split(": ", 1)[-1].rstrip(".") in str(answer):
            return "both refuse", ""
        if not isinstance(kafka, str) and not kafka_valid(problem, kafka) and "returns an invalid assignment" in str(answer):
            return "both refuse", ""
        return "ours refused", f"{problem.name}: {answer}"
    if isinstance(kafka, str):
        return "kafka raised", f"{problem.name}: Kafka raised {kafka[:300]}"
    if not kafka_valid(problem, kafka):
        return "kafka invalid", f"{problem.name}: Kafka's {dict(kafka)}"
    theirs = {member: tuple(sorted(kafka.get(member, ()))) for member in answer}
    if theirs != answer or set(kafka) - set(answer):
        return "differ", f"{problem.name}: ours {answer}, Kafka's {dict(kafka)}"
    return "agree", ""


def groups() -> dict[str, tuple[list[ConsumerProblem], Callable[..., list[Answer]]]]:
    sets: dict[str, tuple[list[ConsumerProblem], Callable[..., list[Answer]]]] = {}
    for strategy in CLASSIC_STRATEGIES:
        sets[strategy] = (oracle_classic_groups(strategy, PER_ASSIGNOR), classic_consumer_answers)
    sets["classic varied"] = (oracle_varied_classic_groups(VARIED), classic_consumer_answers)
    for strategy in ("sticky", "cooperative-sticky"):  # issue 50: the leader's HashMap filled in join order
        sets[f"{strategy}, join order"] = (oracle_joined_groups(strategy, PER_ASSIGNOR), classic_consumer_answers)
    sets["sticky (stale claims)"] = (oracle_stale_claim_groups(STALE), classic_consumer_answers)
    for assignor in ("uniform", "range"):
        sets[f"kip848 {assignor}"] = (oracle_kip848_groups(assignor, PER_ASSIGNOR), kip848_answers)
    sets["kip848 uniform, larger heterogeneous"] = (larger_heterogeneous(PER_ASSIGNOR), kip848_answers)
    for assignor in ("range", "uniform"):  # issue 50: sortMemberIds' static members first
        sets[f"kip848 {assignor}, static members"] = (oracle_static_kip848_groups(assignor, PER_ASSIGNOR), kip848_answers)
    # issue 50: previous targets as the coordinator holds them (Assignment.fromRecord's presized sets)
    sets["kip848 uniform, large previous targets"] = (oracle_large_target_groups(PER_ASSIGNOR // 3), kip848_answers)
    return sets


def larger_heterogeneous(count: int) -> list[ConsumerProblem]:
    """`uniform` groups of 5-30 members over 2-8 topics of 1-40 partitions, subscriptions differing:
    enough for the heterogeneous builders' balancing passes to move partitions."""
    groups = []
    for seed in range(count):
        rng = random.Random(f"larger-{seed}")
        problem = random_consumer_problem(
            seed, members=rng.randint(5, 30), topics=rng.randint(2, 8), partitions=(1, 40), racks=0,
            equal_subscriptions=False, owned=rng.random() < 0.8, churn=rng.random() * 0.5, name=f"larger-{seed}",
        )  # fmt: skip
        data = problem_to_data(problem)
        data["config"] = {"group.protocol": "consumer", "group.remote.assignor": "uniform"}
        groups.append(problem_from_data(data))
    return [g for g in groups if isinstance(g, ConsumerProblem)]


def run(release: str, sets: dict[str, tuple[list[ConsumerProblem], Callable[..., list[Answer]]]]) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for name, (problems, oracle) in sets.items():
        started = time.perf_counter()
        answers = oracle(problems, release=release)
        counts: dict[str, int] = {}
        examples: list[str] = []
        for problem, kafka in zip(problems, answers, strict=True):
            kind, detail = outcome(at_release(problem, release), kafka)
            counts[kind] = counts.get(kind, 0) + 1
            if detail and len(examples) < EXAMPLES:
                examples.append(detail[:600])
        figures[name] = {"groups": len(problems), **dict(sorted(counts.items()))} | ({"examples": examples} if examples else {})
        print(f"{release:>6} {name:<22} {counts} ({time.perf_counter() - started:.0f} s)", flush=True)
    return figures


def main(argv: list[str]) -> None:
    releases = tuple(argv) or RELEASES
    sets = groups()
    previous = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    results = previous.get("releases", {}) if argv else {}
    for release in releases:
        results[release] = run(release, sets)
    document = {
        "date": date.today().isoformat(),
        "what": "groups where Kafka's own assignor (that release's jars) and --solver kafka (kafka.version = that release) agree",
        "groups": {name: len(problems) for name, (problems, _) in sets.items()},
        "releases": {release: results[release] for release in sorted(results, key=lambda r: tuple(map(int, r.split("."))))},
    }
    RESULTS.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main(sys.argv[1:])
