"""The streams-group `sticky` assignor across Kafka releases (issue 30, items 3 and 4): Kafka's own
`StickyTaskAssignor` from each release's jars (Maven Central) against `--solver kafka` with
`kafka.version` set to that release, member by member, on the same seeded streams groups.

Run: ./run python bench/streams_group_releases.py [RELEASE ...]   (writes
bench/results/streams_group_releases.json; not a test; a few seconds per release once the jars are cached)

The groups are `optimizer.oracle.streams_group.random_streams_group(seed)` for GROUPS seeds
(standbys, racks, client tags, lags and offsets, previous tasks held by clients that left,
restarted clients, members listed with their own tasks and warm-ups, shuffled client order).
4.4.0 runs through `kao.jvm.StreamsGroupAssignors` (the pinned API), 4.1 to 4.3 through
`kao.jvm.StreamsGroupAssignorsBefore44` (their API, by reflection).

4.1.x is not reproduced: `--solver kafka` refuses it (`refused` below). Its assignor keeps
previous standby members and candidates in `HashSet`s of a class without `hashCode` and picks the
first least-loaded one of a stream over them, so ties fall by identity hash codes, which depend on
everything the JVM hashed before: the same group answered differently by position in the batch
(`jvm state` counts the groups whose answer changed when the batch ran in reverse order).
"""

from __future__ import annotations

import json
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

from optimizer.errors import SolverUnavailableError
from optimizer.model.streams import StreamsProblem
from optimizer.oracle.batch import at_release
from optimizer.oracle.streams_group import MemberAnswer, random_streams_group, solution_members, streams_group_answers
from optimizer.solve import solve

RESULTS = Path(__file__).parent / "results" / "streams_group_releases.json"
RELEASES = ("4.1.0", "4.1.2", "4.2.0", "4.2.1", "4.2.2", "4.3.0", "4.3.1", "4.4.0")
GROUPS = 1000
EXAMPLES = 3


def ours(problem: StreamsProblem) -> MemberAnswer | SolverUnavailableError:
    """`--solver kafka`'s answer per member (members that got something), or its refusal."""
    try:
        return solution_members(solve(problem, solver="kafka"))
    except SolverUnavailableError as error:
        return error


def run(release: str, problems: list[StreamsProblem]) -> dict[str, Any]:
    started = time.perf_counter()
    answers = streams_group_answers(problems, release=release)
    counts: dict[str, int] = {}
    examples: list[str] = []
    for problem, kafka in zip(problems, answers, strict=True):
        answer = ours(at_release(problem, release))
        if isinstance(answer, SolverUnavailableError):
            kind, detail = "refused", f"{problem.name}: {answer}"
        elif isinstance(kafka, str):
            kind, detail = "kafka raised", f"{problem.name}: Kafka raised {kafka[:300]}"
        elif answer != kafka:
            kind, detail = "differ", f"{problem.name}: ours {answer}, Kafka's {kafka}"
        else:
            kind, detail = "agree", ""
        counts[kind] = counts.get(kind, 0) + 1
        if detail and len(examples) < EXAMPLES:
            examples.append(detail[:600])
    figures: dict[str, Any] = {"groups": len(problems), **dict(sorted(counts.items()))}
    if release.startswith("4.1."):
        reversed_answers = list(reversed(streams_group_answers(list(reversed(problems)), release=release)))
        figures["jvm state"] = sum(1 for a, b in zip(answers, reversed_answers, strict=True) if a != b)
    if examples:
        figures["examples"] = examples
    print(f"{release:>6} {figures | {'examples': len(examples)}} ({time.perf_counter() - started:.0f} s)", flush=True)
    return figures


def main(argv: list[str]) -> None:
    releases = tuple(argv) or RELEASES
    problems = [random_streams_group(seed) for seed in range(GROUPS)]
    previous = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    results = previous.get("releases", {}) if argv else {}
    for release in releases:
        results[release] = run(release, problems)
    document = {
        "date": date.today().isoformat(),
        "what": "streams groups where Kafka's own streams-group sticky assignor (that release's jars) and --solver kafka "
        "(kafka.version = that release) give every member the same active and standby tasks",
        "groups": GROUPS,
        "releases": {release: results[release] for release in sorted(results, key=lambda r: tuple(map(int, r.split("."))))},
    }
    RESULTS.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main(sys.argv[1:])
