from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def shuffled(problem, seed: int):
    """The same problem with every list in another order."""
    from optimizer.model import problem_from_data, problem_to_data

    rng = random.Random(seed)
    data = problem_to_data(problem)
    for key in ("clients", "tasks", "members", "topics"):
        if key in data:
            rng.shuffle(data[key])
    for entry in (*data.get("clients", ()), *data.get("members", ())):
        for key in ("previous_active", "previous_standby", "owned_partitions", "subscriptions"):
            if key in entry:
                rng.shuffle(entry[key])
    return problem_from_data(data)


def example_problems() -> list[Path]:
    return sorted(p for p in EXAMPLES.rglob("*.problem.*") if p.suffix in (".json", ".yaml"))


def example_solutions() -> list[tuple[Path, Path]]:
    """(problem, solution) pairs by the NAME.problem.* / NAME.LABEL.solution.json convention."""
    pairs = []
    for problem in example_problems():
        name = problem.name.split(".problem.")[0]
        pairs += [(problem, s) for s in sorted(problem.parent.glob(f"{name}.*.solution.json"))]
    return pairs


STREAMS = {
    "kind": "streams",
    "name": "orders-app",
    "config": {
        "num.standby.replicas": 1,
        "rack.aware.assignment.strategy": "min_traffic",
        "rack.aware.assignment.tags": ["zone"],
    },
    "clients": [
        {"id": "a", "rack": "r1", "threads": 2, "tags": {"zone": "z1"}, "previous_active": ["0_0"], "lags": {"0_0": 0}},
        {"id": "b", "rack": "r2", "tags": {"zone": "z2"}, "previous_standby": ["0_0"]},
    ],
    "tasks": [
        {
            "id": "0_0",
            "stateful": True,
            "source_partitions": [{"topic": "orders", "partition": 0, "replica_racks": ["r1"]}],
            "changelog_partitions": [{"topic": "app-store-changelog", "partition": 0, "replica_racks": ["r2"]}],
            "changelog_end_offset": 5000,
        },
        {"id": "1_0", "source_partitions": [{"topic": "clicks", "partition": 0, "replica_racks": ["r2"]}]},
    ],
}

CONSUMER = {
    "kind": "consumer",
    "name": "billing",
    "config": {"partition.assignment.strategy": "sticky"},
    "topics": [{"name": "orders-eu", "partitions": 2, "replica_racks": [["r1"], ["r2"]]}],
    "members": [
        {"id": "m1", "rack": "r1", "subscriptions": ["orders-eu"], "owned_partitions": ["orders-eu-0"], "generation": 2},
        {"id": "m2", "rack": "r2", "subscriptions": ["orders-eu"]},
    ],
}


@pytest.fixture
def streams_data() -> dict:
    return copy.deepcopy(STREAMS)


@pytest.fixture
def consumer_data() -> dict:
    return copy.deepcopy(CONSUMER)


@pytest.fixture
def forks(monkeypatch) -> list[int]:
    """The process ids of the children forked from here on (`optimizer.deadline.Forked`), in order."""
    import os

    pids: list[int] = []
    fork = os.fork

    def recorded() -> int:
        pid = fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", recorded)
    return pids


def reaped(pid: int) -> bool:
    """Whether the child `pid` is gone and reaped (no zombie, nothing running)."""
    import os

    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False
