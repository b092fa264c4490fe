"""The streams groups' oracle: Kafka's own KIP-1071 streams-group `sticky` task assignor (the group
coordinator's `StickyTaskAssignor`) on the project's Streams problems under `group.protocol=streams`.

`streams_group_case(problem)` is the group Kafka's coordinator would hand the assignor, built by
the project's own mapping (`optimizer.assignors.streams.group.spec.group_spec`, the one the frozen
cases in `../shared/kafka-parity/streams-group/` were made with): one member per stream thread,
process and member ids from the client id, the client's previous tasks dealt round-robin over its
threads as each member's current assignment, offsets reported for the stateful tasks it has state
for; members enter Kafka's HashMap in the problem's client order, threads in order.
`streams_group_answers(problems)` runs them all through `kao.jvm.StreamsGroupAssignors` in one JVM
and gives each member's active and standby tasks.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from optimizer.assignors.streams.group.spec import StreamsGroupSpec, group_spec
from optimizer.model.releases import TRUNK, parse_kafka_version
from optimizer.model.solution import Solution
from optimizer.model.streams import StreamsGroupProtocol, StreamsProblem
from optimizer.oracle.batch import batch

MAIN = "kao.jvm.StreamsGroupAssignors"
"""The adapter on the 4.4 API (Kafka 4.4.0, the pinned jars)."""
MAIN_BEFORE_4_4 = "kao.jvm.StreamsGroupAssignorsBefore44"
"""The adapter for Kafka 4.1 to 4.3 (their API, by reflection, on their jars)."""


def adapter_for(release: str | None) -> str:
    """The adapter that runs Kafka `release`'s assignor (None: the pinned 4.4.0); ValueError for
    what has no jar (trunk)."""
    if release is None:
        return MAIN
    parsed = parse_kafka_version(release)
    if parsed == TRUNK:
        raise ValueError("trunk has no jar to run: its streams-group sticky is checked against the frozen cases only")
    return MAIN if parsed >= (4, 4, 0) else MAIN_BEFORE_4_4


def solution_members(solution: Solution) -> MemberAnswer:
    """A solution's answer per member (members that got something), as the adapters give Kafka's."""
    found: MemberAnswer = {}
    for client in solution.assignment.values():
        for member, tasks in (client.members or {}).items():
            if tasks.active or tasks.standby:
                found[member] = {"active": tuple(tasks.active), "standby": tuple(tasks.standby)}
    return found

MemberAnswer = dict[str, dict[str, tuple[str, ...]]]
"""Member id -> {"active": tasks, "standby": tasks} (members that got something)."""


def spec_case(spec: StreamsGroupSpec, assignor: str = "sticky") -> dict[str, Any]:
    """A group spec as `kao.jvm.StreamsGroupAssignors` reads it (the frozen cases' `streams_input`)."""
    return {
        "assignor": assignor,
        "num_standby_replicas": spec.num_standby_replicas,
        "rack_aware_assignment_tags": list(spec.rack_aware_assignment_tags),
        "subtopologies": [{"id": s.id, "partitions": s.partitions, "stateful": s.stateful} for s in spec.subtopologies],
        "members": [
            {
                "member_id": m.member_id,
                "process_id": m.process_id,
                "rack": m.rack,
                "client_tags": dict(m.client_tags),
                "active": list(m.active),
                "standby": list(m.standby),
                "warmup": list(m.warmup),
                "task_offsets": dict(m.task_offsets),
                "task_end_offsets": dict(m.task_end_offsets),
            }
            for m in spec.members
        ],
    }


def streams_group_case(problem: StreamsProblem) -> dict[str, Any]:
    """Kafka's streams-group assignor's inputs for `problem`."""
    if problem.config.group_protocol != StreamsGroupProtocol.STREAMS:
        raise ValueError(f"{problem.name}: the streams-group assignors run under group.protocol=streams only")
    return spec_case(group_spec(problem), str(problem.config.streams_assignor_name))


def timed_answers(
    cases: list[dict[str, Any]], repeat: int = 1, timeout: float = 300.0, release: str | None = None
) -> list[tuple[MemberAnswer | str, int | None]]:
    """Each case's answer (or Kafka's error as a string) with the microseconds of its fastest of
    `repeat` runs in one JVM; `release`: that Kafka release's jars, through the adapter for its API."""
    return [(_members(answer), micros) for answer, micros in batch(adapter_for(release), cases, repeat, timeout, release)]


def streams_group_answers(problems: Sequence[StreamsProblem], timeout: float = 300.0, release: str | None = None) -> list[MemberAnswer | str]:
    """Kafka's streams-group assignor's answer per member for each problem, in order."""
    return [answer for answer, _ in timed_answers([streams_group_case(p) for p in problems], 1, timeout, release)]


def _members(answer: Any) -> MemberAnswer | str:
    if isinstance(answer, str):
        return answer
    return {member: {kind: tuple(tasks.get(kind, ())) for kind in ("active", "standby")} for member, tasks in answer.items()}


def random_streams_group(seed: int, kafka_version: str | None = None, assignor: str = "sticky", zombies: float = 0.0) -> StreamsProblem:
    """A seeded streams group (`group.protocol: streams`) of every shape the oracle checks: 1-8
    clients of 1-4 threads, 1-60 tasks over 1-5 subtopologies (stateful, stateless or mixed),
    0-2 standbys, racks and client tags (with `rack.aware.assignment.tags` or without), previous
    actives and standbys (some held by clients that left), lags; some clients restarted (no
    history, lags for their local state), some listing their members with each thread's own tasks
    (warm-ups among them) and, in one group in five, the clients in a shuffled order; each previous
    active is also reported by another client or member (a zombie) with probability `zombies`."""
    from optimizer.generate import add_zombies, random_streams_problem
    from optimizer.model.problem import problem_from_data, problem_to_data

    rng = random.Random(f"streams-group-{seed}")
    tags = rng.choice([(), (), ("zone",), ("zone", "cluster")])
    base = random_streams_problem(
        seed, tasks=rng.randint(1, 60), clients=rng.randint(1, 8), subtopologies=rng.randint(1, 5), racks=rng.choice([0, 2, 3]),
        stateful_fraction=rng.choice([0.0, 0.5, 0.8, 1.0]), standby_replicas=rng.choice([0, 1, 1, 2]), threads=(1, rng.randint(1, 4)),
        tags=tags, previous=rng.random() < 0.85, churn=rng.random() * 0.5, lags=rng.random() < 0.8, name=f"streams-group-{seed}",
    )  # fmt: skip
    data = problem_to_data(base)
    data["config"]["group.protocol"] = "streams"
    data["config"]["streams.assignor.name"] = assignor
    if kafka_version is not None:
        data["config"]["kafka.version"] = kafka_version
    stateful = [t["id"] for t in data["tasks"] if t.get("stateful")]
    for client in data["clients"]:
        roll = rng.random()
        if roll < 0.15 and stateful:
            # Restarted: new member ids, no current assignment, offsets for its local state.
            for key in ("previous_active", "previous_standby", "members"):
                client.pop(key, None)
            client["lags"] = {t: rng.choice([0, 100, 5_000, 400_000]) for t in rng.sample(stateful, rng.randint(1, min(6, len(stateful))))}
        elif roll < 0.4 and (client.get("previous_active") or client.get("previous_standby")):
            _deal_to_members(rng, client)
        elif stateful and rng.random() < 0.2:
            lags = client.setdefault("lags", {})
            held = {*client.get("previous_active", ()), *client.get("previous_standby", ())}
            for task in rng.sample(stateful, min(3, len(stateful))):
                if task not in held:
                    lags[task] = rng.choice([0, 2_000, 90_000])
    if zombies:
        add_zombies(rng, data, zombies)
    if rng.random() < 0.2:
        rng.shuffle(data["clients"])
    problem = problem_from_data(data)
    assert isinstance(problem, StreamsProblem)
    return problem


def _deal_to_members(rng: random.Random, client: dict[str, Any]) -> None:
    """A client's history spread over its threads at random, some standbys held as warm-ups."""
    threads = int(client.get("threads", 1))
    members: list[dict[str, list[str]]] = [{"previous_active": [], "previous_standby": [], "previous_warmup": []} for _ in range(threads)]
    for task in client.pop("previous_active", []):
        members[rng.randrange(threads)]["previous_active"].append(task)
    for task in client.pop("previous_standby", []):
        members[rng.randrange(threads)]["previous_warmup" if rng.random() < 0.3 else "previous_standby"].append(task)
    client.pop("threads", None)
    client["members"] = [{key: tasks for key, tasks in member.items() if tasks} for member in members]
