"""Kafka's own test fixtures, rebuilt as problems: AssignmentTestUtils' racks and partitions.

Process ids are UUID(0, n) as in Kafka's tests; clients 1..7 sit in racks r0, r1, r2, r3, r4, r0,
r1; task s_p reads topic<s> partition p and writes store-<s>-changelog partition p.
"""

from __future__ import annotations

from optimizer.model import problem_from_data

MAX_LONG = 2**63 - 1
CLIENT_RACK = {1: "r0", 2: "r1", 3: "r2", 4: "r3", 5: "r4", 6: "r0", 7: "r1"}
SOURCE_RACKS = {
    "0_0": "r0,r1", "0_1": "r1,r2", "0_2": "r1,r2", "0_3": "r0,r2", "0_4": "r1,r3", "0_5": "r3,r4", "0_6": "r0,r2",
    "1_0": "r0,r2", "1_1": "r1,r3", "1_2": "r0,r1", "1_3": "r1,r2",
    "2_0": "r3,r4", "2_1": "r1,r3", "2_2": "r3,r4", "2_3": "r0,r1",
    "3_0": "r0,r2", "3_1": "r1,r3", "3_2": "r3,r4",
}  # fmt: skip
CHANGELOG_RACKS = {
    "0_0": "r0,r1", "0_1": "r1,r2", "0_2": "r1,r2", "0_3": "r0,r2", "0_4": "r1,r3", "0_5": "r3,r4", "0_6": "r0,r1",
    "1_0": "r0,r2", "1_1": "r1,r3", "1_2": "r0,r1", "1_3": "r3,r4",
    "2_0": "r1,r2", "2_1": "r0,r2", "2_2": "r3,r4", "2_3": "r1,r3",
    "3_0": "r3,r4", "3_1": "r1,r3", "3_2": "r1,r2",
}  # fmt: skip


def uid(n: int) -> str:
    return f"00000000-0000-0000-0000-{n:012x}"


def rack_problem(clients: dict[int, dict], tasks: list[str], stateful: set[str], config: dict):
    """Fixture F: `clients` maps n -> {previous_active, previous_standby, threads}."""

    def task(t: str) -> dict:
        s, p = t.split("_")
        doc = {
            "id": t,
            "stateful": t in stateful,
            "source_partitions": [{"topic": f"topic{s}", "partition": int(p), "replica_racks": SOURCE_RACKS[t].split(",")}],
        }
        if t in stateful:
            doc["changelog_partitions"] = [
                {"topic": f"store-{s}-changelog", "partition": int(p), "replica_racks": CHANGELOG_RACKS[t].split(",")}
            ]
        return doc

    docs = []
    for n, spec in clients.items():
        doc = {"id": uid(n), "rack": CLIENT_RACK[n], "threads": spec.get("threads", 1)}
        for key in ("previous_active", "previous_standby"):
            if spec.get(key):
                doc[key] = spec[key]
        docs.append(doc)
    return problem_from_data({"kind": "streams", "clients": docs, "tasks": [task(t) for t in tasks], "config": config})


def ids(keys) -> list[str]:
    return sorted(f"{s}_{p}" for s, p in keys)


def lag_problem(clients: dict[str, dict], stateful: list[str], stateless: tuple[str, ...] = (), **config):
    """A problem in the shape of HighAvailabilityTaskAssignorTest: client -> {previous_active,
    previous_standby, lags, threads, tags}; config keys by Python name."""
    tasks = [
        {
            "id": t,
            "stateful": True,
            "source_partitions": [{"topic": "input", "partition": i}],
            "changelog_partitions": [{"topic": "store-changelog", "partition": i}],
            "changelog_end_offset": 10**12,
        }
        for i, t in enumerate(stateful)
    ]
    tasks += [{"id": t, "source_partitions": [{"topic": "input-2", "partition": i}]} for i, t in enumerate(stateless)]
    docs = [{"id": cid, **spec} for cid, spec in clients.items()]
    keys = {
        "acceptable_recovery_lag": "acceptable.recovery.lag",
        "max_warmup_replicas": "max.warmup.replicas",
        "num_standby_replicas": "num.standby.replicas",
        "tags": "rack.aware.assignment.tags",
    }
    return problem_from_data(
        {"kind": "streams", "clients": docs, "tasks": tasks, "config": {keys[k]: v for k, v in config.items()}}
    )


def mock(previous_active: list[str], stateful: list[str]) -> dict:
    """Kafka's mockClientSupplier: lag 0 for its previous actives, Long.MAX_VALUE for the rest."""
    return {
        "previous_active": previous_active,
        "lags": {t: (0 if t in previous_active else MAX_LONG) for t in stateful},
    }
