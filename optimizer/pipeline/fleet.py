"""The sample fleet: a few hundred Streams applications and consumer groups, seeded.

Sizes, racks, client tags, standbys, lags and previous assignments vary from one application to
the next the way they do in a real estate: most are small, a few are large; some run on one rack,
some lack rack information (Kafka then disables rack awareness, with a warning); nine in ten
report their throughputs, skewed as real topics are (a few hot topics and hot partitions), and a
price per GB of cross-zone traffic; a few documents are broken on purpose, so that the report's
"problems not solved" section has something to show.
`examples/fleet/fleet.jsonl.gz` is this generator's output (`kafka-assign fleet`).
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model.problem import problem_to_data

TEAMS = ("payments", "orders", "search", "fraud", "ledger", "shipping", "catalog", "pricing", "alerts", "identity")


def sample_fleet(seed: int = 2026, applications: int = 200, groups: int = 100, broken: int = 2) -> Iterator[dict[str, Any]]:
    """Problem documents: `applications` Streams applications, `groups` consumer groups and
    `broken` invalid documents, interleaved, each with a unique name."""
    rng = random.Random(seed)
    kinds = ["streams"] * applications + ["consumer"] * groups
    rng.shuffle(kinds)
    for number, kind in enumerate(kinds):
        team = TEAMS[number % len(TEAMS)]
        problem_seed = rng.randrange(2**31)
        if kind == "streams":
            yield _streams(rng, problem_seed, f"{team}-app-{number:03d}")
        else:
            yield _consumer(rng, problem_seed, f"{team}-group-{number:03d}")
    for number in range(broken):
        yield _broken(number)


def write_sample_fleet(path: str | Path, **options: Any) -> int:
    """Write `sample_fleet(**options)` as JSON Lines (gzip-compressed when the name ends in
    `.gz`); returns the number of documents."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("wb") as raw:
        # no name and mtime 0 in the gzip header: the same fleet gives the same bytes
        out = gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) if path.suffix == ".gz" else raw
        for document in sample_fleet(**options):
            out.write((json.dumps(document, separators=(",", ":")) + "\n").encode())
            count += 1
        if out is not raw:
            out.close()
    return count


def _size(rng: random.Random, low: int, high: int) -> int:
    """Log-uniform: many small, few large."""
    return round(low * (high / low) ** rng.random())


def _streams(rng: random.Random, seed: int, name: str) -> dict[str, Any]:
    clients = _size(rng, 2, 24)
    tasks = max(clients, _size(rng, 4, 160))
    racks = rng.choice([1, 2, 3, 3, 3, 4])
    tags = rng.choice([(), (), (), ("zone",), ("zone", "cluster")])
    problem = random_streams_problem(
        seed,
        tasks=tasks,
        clients=clients,
        racks=racks,
        replication=min(racks, rng.choice([2, 3])),
        standby_replicas=rng.choice([0, 1, 1, 2]),
        threads=rng.choice([(1, 1), (1, 2), (2, 4)]),
        tags=tags,
        strategy=rng.choice(["min_traffic", "min_traffic", "balance_subtopology", "none"]),
        churn=rng.choice([0.0, 0.1, 0.2, 0.4]),
        stateful_fraction=rng.choice([0.3, 0.7, 1.0]),
        rates=_throughputs(seed),
        name=name,
    )
    document = problem_to_data(problem)
    _price(seed, document)
    if rng.random() < 0.05:  # an application whose clients report no rack
        for client in document["clients"]:
            client.pop("rack", None)
    return document


def _consumer(rng: random.Random, seed: int, name: str) -> dict[str, Any]:
    members = _size(rng, 2, 40)
    problem = random_consumer_problem(
        seed,
        members=members,
        topics=rng.randint(1, 8),
        partitions=(1, rng.choice([6, 12, 32, 64])),
        racks=rng.choice([0, 2, 3, 3]),
        equal_subscriptions=rng.random() < 0.6,
        strategy=rng.choice(["sticky", "cooperative-sticky", "cooperative-sticky", "range", "roundrobin"]),
        churn=rng.choice([0.0, 0.1, 0.3]),
        rates=_throughputs(seed),
        name=name,
    )
    document = problem_to_data(problem)
    _price(seed, document)
    return document


def _throughputs(seed: int) -> bool:
    """Whether an application reports its throughputs: nine in ten do (the rest show what the
    report says without them). Drawn apart from the fleet's own sequence."""
    return random.Random(f"{seed}-throughputs").random() < 0.9


def _price(seed: int, document: dict[str, Any]) -> None:
    """Its cross-zone price per GB: 0.02 (a cent each way, as AWS and Azure bill between zones)
    for most, 0.01 for one in five."""
    if _throughputs(seed):
        document["price_per_gb"] = 0.01 if random.Random(f"{seed}-price").random() < 0.2 else 0.02


def _broken(number: int) -> dict[str, Any]:
    if number % 2 == 0:
        # a task both active and standby on one client: Kafka's ClientState could never hold that
        return {
            "kind": "streams",
            "name": f"broken-app-{number}",
            "clients": [
                {"id": "a", "rack": "rack-a", "previous_active": ["0_0"], "previous_standby": ["0_0"]},
                {"id": "b", "rack": "rack-b"},
            ],
            "tasks": [
                {
                    "id": "0_0",
                    "stateful": True,
                    "source_partitions": [{"topic": "in", "partition": 0}],
                    "changelog_partitions": [{"topic": "app-store-changelog", "partition": 0}],
                }
            ],
        }
    return {
        "kind": "consumer",
        "name": f"broken-group-{number}",
        "config": {"partition.assignment.strategy": "fastest"},
        "topics": [{"name": "orders", "partitions": -1}],
        "members": [{"id": "m1", "subscriptions": ["orders"]}],
    }
