"""The assignment service's protocol (optimizer/service/protocol.py, docs/service-protocol.md).

Kafka's inputs are built from the project's problems with the live oracle's own builders (the
streams-group spec of `spec_case`; `kip848_case` and `classic_case` renamed to the protocol's
fields; KIP-924's ApplicationState from `task_case`'s offset sums, through Kafka's
`initializePrevTasks` and `computeTaskLags`), read back by `parse_request`, and held to the
criterion that matters: Kafka's reproduction (`solve(..., solver="kafka")`) on the mapped problem
gives what it gives on the problem the inputs came from, member by member (client by client).
No JVM runs here. Then the answers' shapes, the problem files written for requests, the orders
that do not matter, and malformed requests: every problem named, never another exception.
"""

from __future__ import annotations

import copy
import functools
import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optimizer.assignors.java import java_hash_map_order, java_string_hash
from optimizer.assignors.streams.group.spec import group_spec
from optimizer.errors import NoSolutionError, SolverUnavailableError
from optimizer.generate import oracle_classic_groups, oracle_kip848_groups, oracle_varied_classic_groups, random_consumer_problem
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import partition_key, task_id, task_key
from optimizer.model.problem import problem_from_data, problem_to_data, solution_to_data
from optimizer.model.solution import ClientAssignment, Solution
from optimizer.model.streams import StreamsProblem, TaskAssignor
from optimizer.oracle.consumer import classic_case, kip848_case
from optimizer.oracle.streams import application, task_case
from optimizer.oracle.streams_group import random_streams_group, spec_case
from optimizer.service.protocol import (
    NO_METADATA_TOPIC,
    Request,
    RequestError,
    answer_assignment,
    parse_request,
    request_to_problem_data,
)
from optimizer.solve import solve
from tests.fuzzing import mutate, mutations_at, paths

# ---- Kafka's inputs, built from problems ----


def application_state(problem: StreamsProblem) -> dict[str, Any]:
    """KIP-924's ApplicationState for a classic Streams problem: `task_case`'s inputs (what the
    group leader holds) as Kafka's ClientState turns them into previous tasks and lags."""
    case = task_case(problem)
    tasks = {task_id(t["subtopology"], t["partition"]): t for t in case["tasks"]}
    task_of = {(topic, p): ident for ident, t in tasks.items() for topic, p, _ in t["source"]}
    clients = []
    for client in case["clients"]:
        sums = {task_id(s, p): offset for s, p, offset in client["offset_sums"]}
        # initializePrevTasks: actives from the owned partitions, standbys from the other offset sums
        active = sorted({task_of[(t, p)] for t, p in client["owned"] if (t, p) in task_of}, key=task_key)
        standby = sorted((t for t, offset in sums.items() if t not in active and (offset >= 0 or offset == -3)), key=task_key)
        lags = {}
        for ident, task in tasks.items():  # computeTaskLags, over every stateful task's end offset sum
            if task["stateful"]:
                end, offset = task["end_offset_sum"], sums.get(ident, 0)
                lags[ident] = offset if offset in (-2, -3) else end if end < offset else end - offset
        threads = client["threads"]
        clients.append(
            {
                "process_id": client["process"], "rack": client["rack"], "threads": threads,
                "consumers": [f"{client['process']}-StreamThread-{i + 1}-consumer" for i in range(threads)], "tags": client["tags"],
                "previous_active": active, "previous_standby": standby, "lags": lags,
            }
        )  # fmt: skip
    configs = case["configs"]
    return {
        "configs": {
            "num_standby_replicas": configs["num_standby_replicas"], "acceptable_recovery_lag": configs["acceptable_recovery_lag"],
            "max_warmup_replicas": configs["max_warmup_replicas"], "probing_rebalance_interval_ms": configs["probing_rebalance_interval_ms"],
            "rack_aware_assignment_tags": configs["tags"], "rack_aware_assignment_strategy": configs["strategy"],
            "rack_aware_assignment_traffic_cost": configs["traffic_cost"], "rack_aware_assignment_non_overlap_cost": configs["non_overlap_cost"],
        },
        "tasks": [
            {
                "id": task_id(t["subtopology"], t["partition"]), "stateful": t["stateful"],
                "source": [{"topic": topic, "partition": p, "racks": racks or None} for topic, p, racks in t["source"]],
                "changelog": [{"topic": topic, "partition": p, "racks": racks or None} for topic, p, racks in t["changelog"]],
            }
            for t in case["tasks"]
        ],
        "clients": clients,
    }  # fmt: skip


def group_spec_payload(problem: ConsumerProblem) -> dict[str, Any]:
    """KIP-848's GroupSpec: `kip848_case` under the protocol's names."""
    case = kip848_case(problem)
    return {
        "subscription_type": "homogeneous" if case["homogeneous"] else "heterogeneous",
        "topics": [{"id": t["name"], "partitions": t["partitions"], "racks": t["racks"]} for t in case["topics"]],
        "members": [{"id": m["id"], "instance_id": None, "rack": m["rack"], "subscribed": m["subscribed"], "assigned": m["assigned"]} for m in case["members"]],
    }


def group_subscription(problem: ConsumerProblem) -> dict[str, Any]:
    """The classic leader's Cluster and GroupSubscription: `classic_case` under the protocol's names."""
    case = classic_case(problem)
    leaders = {t.name: t.leader_racks for t in problem.topics}
    return {
        "rebalance_protocol": "cooperative" if case["assignor"] == "cooperative-sticky" else "eager",
        "topics": [
            {
                "name": t["name"], "partitions": t["partitions"], "replica_racks": t["replica_racks"] or [[] for _ in range(t["partitions"])],
                "leader_racks": list(leaders[t["name"]] or [None] * t["partitions"]),
            }
            for t in case["topics"]
        ],
        "members": [
            {
                "id": m["id"], "instance_id": None, "rack": m["rack"], "subscriptions": m["subscriptions"], "owned": m["owned"],
                "generation": None if m["generation"] == -1 else m["generation"],
            }
            for m in case["members"]
        ],
    }  # fmt: skip


def streams_group_payload(problem: StreamsProblem) -> dict[str, Any]:
    """KIP-1071's GroupSpec: the live oracle's case (`spec_case`), members with an instance id."""
    case = spec_case(group_spec(problem))
    del case["assignor"]
    for member in case["members"]:
        member["instance_id"] = None
    return case


def envelope(kind: str, payload: dict[str, Any], group: str | None = None) -> dict[str, Any]:
    key = "problem" if kind == "problem" else "kafka"
    return {"version": 1, "kind": kind, "group": group, "deadline_ms": 2000, key: payload}


def members_view(solution: Solution) -> dict[str, tuple[tuple[str, ...], ...]]:
    return {m: (t.active, t.standby, t.warmup) for client in solution.assignment.values() for m, t in client.members.items()}


def clients_view(solution: Solution) -> dict[str, tuple[frozenset[str], ...]]:
    return {c: (frozenset(a.active), frozenset(a.standby), frozenset(a.warmup)) for c, a in solution.assignment.items()}


@functools.cache
def kip924_problems() -> list[StreamsProblem]:
    # one application in four with zombies (a task reported active by two clients): Kafka hands them over as they are
    return [
        application(seed, "kip924_sticky", strategy, zombies=0.3 if seed % 4 == 0 else 0.0)
        for seed in range(120)
        for strategy in ("none", "min_traffic", "balance_subtopology")
    ]


@functools.cache
def kip848_problems() -> list[ConsumerProblem]:
    return oracle_kip848_groups("uniform", 400)


@functools.cache
def classic_problems() -> list[ConsumerProblem]:
    fallbacks = ("range", "cooperative-sticky")
    return oracle_classic_groups("range", 200) + oracle_classic_groups("cooperative-sticky", 200) + oracle_varied_classic_groups(100, fallbacks)


@functools.cache
def streams_groups() -> list[StreamsProblem]:
    return [random_streams_group(seed, zombies=0.3 if seed % 4 == 0 else 0.0) for seed in range(400)]


# ---- Kafka's reproduction on the mapped problem is Kafka's reproduction on the problem ----


def test_kip924_application_state_maps_to_a_problem_kafka_answers_alike():
    differ = []
    for problem in kip924_problems():
        request = parse_request(envelope("streams_task_assignor", application_state(problem), problem.name))
        mapped = request.problem
        assert isinstance(mapped, StreamsProblem) and mapped.config.task_assignor_class == TaskAssignor.KIP924_STICKY
        assert mapped.config.group_protocol == "classic" and set(request.clients) == {c.id for c in problem.clients}
        if clients_view(solve(mapped, solver="kafka")) != clients_view(solve(problem, solver="kafka")):
            differ.append(problem.name)
    assert not differ, differ


def test_kip924_lags_keep_what_kafka_ranks_by():
    """The lags the project's assignors read equal Kafka's lagFor on the problem it came from."""
    from optimizer.assignors.streams.client_state import client_states
    from optimizer.model.normalize import normalize

    for problem in kip924_problems()[:60]:
        mapped = parse_request(envelope("streams_task_assignor", application_state(problem))).problem
        assert isinstance(mapped, StreamsProblem)
        ours = {c.id: c for c in client_states(normalize(mapped).problem)}
        for theirs in client_states(normalize(problem).problem):
            mine = ours[theirs.id]
            assert mine.previous_active == theirs.previous_active and mine.previous_standby == theirs.previous_standby
            for task in theirs.end_offsets:
                assert mine.lag(task) == theirs.lag(task), (problem.name, theirs.id, task)


def test_kip848_group_spec_maps_to_a_problem_kafka_answers_alike():
    differ = []
    for problem in kip848_problems():
        request = parse_request(envelope("consumer_group", group_spec_payload(problem), problem.name))
        mapped = request.problem
        assert isinstance(mapped, ConsumerProblem) and mapped.config.group_protocol == "consumer" and mapped.config.remote_assignor == "uniform"
        assert request.members == tuple(m.id for m in problem.members)
        ours = {m: a.active for m, a in solve(mapped, solver="kafka").assignment.items()}
        if ours != {m: a.active for m, a in solve(problem, solver="kafka").assignment.items()}:
            differ.append(problem.name)
    assert not differ, differ


def test_classic_group_subscription_maps_to_a_problem_kafka_answers_alike():
    differ = []
    for problem in classic_problems():
        mapped = parse_request(envelope("classic_consumer", group_subscription(problem), problem.name)).problem
        assert isinstance(mapped, ConsumerProblem)
        assert mapped.config.partition_assignment_strategy == problem.config.partition_assignment_strategy
        ours = solve(mapped, solver="kafka")
        theirs = solve(problem, solver="kafka")
        if {m: a.active for m, a in ours.assignment.items()} != {m: a.active for m, a in theirs.assignment.items()}:
            differ.append(problem.name)
        assert ours.followup_rebalance == theirs.followup_rebalance
    assert not differ, differ


@pytest.mark.parametrize("order", ["spec", "kafka"])
def test_streams_group_spec_maps_to_a_problem_kafka_answers_alike(order):
    """Members as the oracle's case lists them, and in the order Kafka's member HashMap iterates
    them (what the plug-in sends): the mapped clients keep each bucket's order."""
    differ = []
    for problem in streams_groups():
        payload = streams_group_payload(problem)
        if order == "kafka":
            by_id = {m["member_id"]: m for m in payload["members"]}
            payload["members"] = [by_id[m] for m in java_hash_map_order(list(by_id), java_string_hash)]
        request = parse_request(envelope("streams_group", payload, problem.name))
        mapped = request.problem
        assert isinstance(mapped, StreamsProblem) and mapped.config.group_protocol == "streams" and mapped.config.streams_assignor_name == "sticky"
        assert set(request.members) == {m for c in problem.clients for m in c.member_ids}
        if members_view(solve(mapped, solver="kafka")) != members_view(solve(problem, solver="kafka")):
            differ.append(problem.name)
    assert not differ, differ


def _ids_in_bucket(bucket: int, count: int, capacity: int = 16) -> list[str]:
    """Member ids that fall in `bucket` of a Java HashMap of `capacity` buckets."""
    found = []
    for n in range(10_000):
        h = java_string_hash(f"m{n}") & 0xFFFFFFFF
        if (h ^ (h >> 16)) & (capacity - 1) == bucket:
            found.append(f"m{n}")
            if len(found) == count:
                return found
    raise AssertionError("no such ids")


def test_members_of_two_processes_in_one_bucket_keep_their_order_or_follow_the_first_member():
    """The clients are ordered so that each bucket of Kafka's member map keeps the order given; when
    two buckets want the two processes in opposite orders, the process listed first comes first."""
    process_a, process_b = "00000000-0000-3000-8000-00000000000a", "00000000-0000-3000-8000-00000000000b"
    (a1, b1), (b2, a2) = _ids_in_bucket(3, 2), _ids_in_bucket(9, 2)
    c1 = _ids_in_bucket(12, 1)[0]

    def member(member_id: str, process: str) -> dict[str, Any]:
        return {
            "member_id": member_id, "process_id": process, "instance_id": None, "rack": None, "client_tags": {},
            "active": [], "standby": [], "warmup": [], "task_offsets": {}, "task_end_offsets": {},
        }  # fmt: skip

    def mapped(*members: tuple[str, str]) -> list[tuple[str, list[str]]]:
        spec = {
            "num_standby_replicas": 0, "rack_aware_assignment_tags": [], "subtopologies": [{"id": "0", "partitions": 4, "stateful": False}],
            "members": [member(m, p) for m, p in members],
        }  # fmt: skip
        problem = parse_request(envelope("streams_group", spec)).problem
        assert isinstance(problem, StreamsProblem)
        return [(c.id, list(c.member_ids)) for c in problem.clients]

    # b's member comes first in bucket 9 although a is listed first: b first.
    assert mapped((c1, process_a), (b2, process_b), (a2, process_a)) == [(process_b, [b2]), (process_a, [c1, a2])]
    # bucket 3 wants a first, bucket 9 b first: a, the first listed.
    assert mapped((a1, process_a), (b1, process_b), (b2, process_b), (a2, process_a)) == [(process_a, [a1, a2]), (process_b, [b1, b2])]


# ---- the answers ----


def _every_once(held: list[list[str]], expected: set[str]) -> None:
    flat = [item for items in held for item in items]
    assert len(flat) == len(set(flat)) and set(flat) == expected


def test_answers_list_every_client_and_member_and_each_task_or_partition_once():
    for problem in kip924_problems()[:30]:
        request = parse_request(envelope("streams_task_assignor", application_state(problem)))
        solution = solve(request.problem, solver="kafka")
        answer = answer_assignment(request, solution)
        assert list(answer["clients"]) == list(request.clients)
        _every_once([c["active"] for c in answer["clients"].values()], {t.id for t in problem.tasks})
        for client, held in answer["clients"].items():
            got = solution.assignment[client]
            assert held["standby"] == sorted({*got.standby, *got.warmup}, key=task_key)  # warm-ups are standbys
            assert held["active"] == sorted(held["active"], key=task_key)
        assert answer["followup_rebalance_ms"] == (problem.config.probing_rebalance_interval_ms if solution.followup_rebalance else None)
    for kind, problems, build in (
        ("consumer_group", kip848_problems()[:30], group_spec_payload),
        ("classic_consumer", classic_problems()[:30], group_subscription),
    ):
        for problem in problems:
            request = parse_request(envelope(kind, build(problem)))
            solution = solve(request.problem, solver="kafka")
            answer = answer_assignment(request, solution)
            assert list(answer["members"]) == [m.id for m in problem.members]
            for partitions in answer["members"].values():
                assert partitions == sorted(partitions) and all(isinstance(t, str) and isinstance(p, int) for t, p in partitions)
            assigned = {p for a in solution.assignment.values() for p in a.active}
            _every_once([[f"{t}-{p}" for t, p in parts] for parts in answer["members"].values()], assigned)
            if not solution.followup_rebalance:  # nothing withheld: every partition of the subscribed topics
                subscribed = {t for m in request.problem.members for t in m.subscriptions}  # type: ignore[union-attr]
                assert assigned == {f"{t.name}-{p}" for t in request.problem.topics if t.name in subscribed for p in range(t.partitions)}  # type: ignore[union-attr]
    for problem in streams_groups()[:30]:
        request = parse_request(envelope("streams_group", streams_group_payload(problem)))
        answer = answer_assignment(request, solve(request.problem, solver="kafka"))
        assert list(answer["members"]) == list(request.members)
        assert all(set(held) == {"active", "standby"} for held in answer["members"].values())  # 4.4's MemberAssignment: no warm-ups
        _every_once([m["active"] for m in answer["members"].values()], {t.id for t in problem.tasks})


def test_a_streams_group_solved_per_client_is_dealt_to_its_members():
    """The exact engine assigns processes: each process's tasks go to its threads, evenly, each
    task to the thread that held it when it can."""
    problem = next(p for p in streams_groups() if 6 <= len(p.tasks) <= 20 and any(c.threads > 1 for c in p.clients))
    request = parse_request(envelope("streams_group", streams_group_payload(problem)))
    kafka = solve(request.problem, solver="kafka")
    per_client = kafka.model_copy(
        update={"assignment": {c: ClientAssignment(active=a.active, standby=a.standby, warmup=a.warmup) for c, a in kafka.assignment.items()}}
    )
    answer = answer_assignment(request, per_client)
    mapped = request.problem
    assert isinstance(mapped, StreamsProblem)
    for client in mapped.clients:
        dealt = [answer["members"][m] for m in client.member_ids]
        held = kafka.assignment[client.id]
        for role in ("active", "standby"):
            _every_once([d[role] for d in dealt], set(getattr(held, role)))
            assert max(len(d[role]) for d in dealt) == -(-len(getattr(held, role)) // len(dealt))  # its share, rounded up
    exact = solve(mapped, solver="exact", time_limit=5)
    answer = answer_assignment(request, exact)
    _every_once([m["active"] for m in answer["members"].values()], {t.id for t in problem.tasks})
    # the target, which the coordinator reconciles to (its own warm-ups), not the assignment applied now
    target = exact.target if exact.target is not None else exact.assignment
    assert {t for m in answer["members"].values() for t in m["standby"]} == {t for a in target.values() for t in a.standby}


def test_a_problem_request_answers_with_the_solution_as_solve_writes_it():
    data = problem_to_data(random_consumer_problem(3, members=3, topics=2, strategy="cooperative-sticky"))
    del data["name"]
    request = parse_request(envelope("problem", data, "billing"))
    assert request.problem.name == "billing" and request.members == () and request.clients == ()
    solution = solve(request.problem, solver="kafka")
    assert answer_assignment(request, solution) == {"solution": solution_to_data(solution)}
    named = parse_request(envelope("problem", {**data, "name": "own"}, "billing"))
    assert named.problem.name == "own"


# ---- problem files of requests, orders, names ----


def _requests() -> list[dict[str, Any]]:
    return [
        envelope("streams_task_assignor", application_state(kip924_problems()[7]), "clicks"),
        envelope("consumer_group", group_spec_payload(kip848_problems()[4]), "audit"),
        envelope("classic_consumer", group_subscription(classic_problems()[250]), None),
        envelope("streams_group", streams_group_payload(streams_groups()[5]), "orders-app"),
        envelope("problem", problem_to_data(random_consumer_problem(1, members=2, topics=1)), None),
    ]


def test_a_request_recorded_as_a_problem_file_reads_back_equal():
    for data in _requests():
        request = parse_request(data)
        written = json.loads(json.dumps(request_to_problem_data(request)))
        assert problem_from_data(written) == request.problem
        assert request.problem.name == (data["group"] or data["kind"]) or data["kind"] == "problem"


def _shuffle_where_kafka_has_no_order(kind: str, payload: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The lists whose order Kafka does not keep (sets, maps, the topic metadata) shuffled."""
    data = copy.deepcopy(payload)

    def mix(items: list[Any]) -> None:
        rng.shuffle(items)

    def remap(mapping: dict[str, Any]) -> dict[str, Any]:
        keys = list(mapping)
        rng.shuffle(keys)
        return {key: mapping[key] for key in keys}

    if kind == "streams_task_assignor":
        mix(data["tasks"])
        mix(data["clients"])
        for task in data["tasks"]:
            for partition in (*task["source"], *task["changelog"]):
                if partition["racks"]:
                    mix(partition["racks"])
            mix(task["source"])
            mix(task["changelog"])
        for client in data["clients"]:
            for key in ("previous_active", "previous_standby", "consumers"):
                mix(client[key])
            client["lags"], client["tags"] = remap(client["lags"]), remap(client["tags"])
    elif kind == "consumer_group":
        mix(data["topics"])
        for topic in data["topics"]:
            for racks in topic["racks"]:
                mix(racks)
    elif kind == "classic_consumer":
        mix(data["topics"])
        for topic in data["topics"]:
            for racks in topic["replica_racks"]:
                mix(racks)
    else:
        mix(data["subtopologies"])
        for member in data["members"]:
            for key in ("active", "standby", "warmup"):
                mix(member[key])
            for key in ("task_offsets", "task_end_offsets", "client_tags"):
                member[key] = remap(member[key])
    return data


def test_lists_in_another_order_where_kafka_keeps_none_give_an_equal_problem():
    rng = random.Random(7)
    for data in _requests()[:4]:
        base = parse_request(data).problem
        for _ in range(5):
            mixed = {**data, "kafka": _shuffle_where_kafka_has_no_order(data["kind"], data["kafka"], rng)}
            assert parse_request(mixed).problem == base


def test_consumer_group_subscription_types_reach_the_problem():
    problem = next(p for p in kip848_problems() if len(p.members) >= 2 and len({frozenset(m.subscriptions) for m in p.members}) == 1)
    payload = group_spec_payload(problem)
    assert payload["subscription_type"] == "homogeneous"
    # Heterogeneous with the same topics resolved: some member subscribes to a topic without metadata.
    mapped = parse_request(envelope("consumer_group", {**payload, "subscription_type": "heterogeneous"})).problem
    assert isinstance(mapped, ConsumerProblem)
    assert len({frozenset(m.subscriptions) for m in mapped.members}) > 1 and NO_METADATA_TOPIC in mapped.members[0].subscriptions
    assert set(solve(mapped, solver="kafka").assignment) == {m.id for m in mapped.members}
    lonely = {**payload, "members": [{**m, "subscribed": []} for m in payload["members"]]}
    assert all(m.subscriptions == (NO_METADATA_TOPIC,) for m in parse_request(envelope("consumer_group", lonely)).problem.members)  # type: ignore[union-attr]


def test_kip924_lags_map_to_the_models_meaning():
    process = "00000000-0000-3000-8000-00000000000"
    tasks = [{"id": f"0_{p}", "stateful": True, "source": [{"topic": "in", "partition": p, "racks": None}],
              "changelog": [{"topic": "app-store-changelog", "partition": p, "racks": ["b", "a", "a"]}]} for p in range(3)]  # fmt: skip
    clients = [
        {"process_id": f"{process}1", "rack": None, "threads": 1, "consumers": [], "tags": {}, "previous_active": ["0_0"], "previous_standby": ["0_1"],
         "lags": {"0_0": -2, "0_1": -3, "0_2": 500}},
        {"process_id": f"{process}2", "rack": None, "threads": 2, "consumers": [], "tags": {}, "previous_active": ["0_1"], "previous_standby": ["0_2"],
         "lags": {"0_0": 400, "0_1": 7, "0_2": 30}},
    ]  # fmt: skip
    configs = {"num_standby_replicas": 1, "acceptable_recovery_lag": 10_000, "max_warmup_replicas": 2, "probing_rebalance_interval_ms": 600_000,
               "rack_aware_assignment_tags": [], "rack_aware_assignment_strategy": "none", "rack_aware_assignment_traffic_cost": None,
               "rack_aware_assignment_non_overlap_cost": None}  # fmt: skip
    problem = parse_request(envelope("streams_task_assignor", {"configs": configs, "tasks": tasks, "clients": clients})).problem
    assert isinstance(problem, StreamsProblem)
    first, second = problem.clients
    assert first.lags == {"0_1": 0} and second.lags == {"0_1": 7, "0_2": 30}  # -2 of an active: the running active; -3: caught up
    assert {t.id: t.changelog_end_offset for t in problem.tasks} == {"0_0": 400, "0_1": None, "0_2": 500}  # a stateless client's lag
    assert problem.tasks[0].changelog_partitions[0].replica_racks == ("a", "b")
    clients[0]["lags"]["0_2"] = -1
    with pytest.raises(RequestError) as raised:
        parse_request(envelope("streams_task_assignor", {"configs": configs, "tasks": tasks, "clients": clients}))
    assert raised.value.problems == ["kafka.clients[0].lags.0_2: -1 is not a lag: Kafka's are 0 or more, -2 (Task.LATEST_OFFSET) or -3 (UNKNOWN_OFFSET_SUM)"]


# ---- malformed requests ----


def _problems_of(data: object) -> list[str]:
    with pytest.raises(RequestError) as raised:
        parse_request(data)
    error = raised.value
    assert error.problems and "\n" not in str(error)
    return error.problems


def test_the_envelope_names_every_problem():
    good = _requests()[1]
    assert _problems_of([good]) == ["request: expected an object, got a list"]
    found = _problems_of({**good, "version": 2, "deadline_ms": 0, "group": "a\x1bb", "extra": 1, "kafka_version": "9.9"})
    assert [p.split(":")[0] for p in found] == ["'extra'", "version", "group", "deadline_ms", "kafka_version"]
    assert _problems_of({k: v for k, v in good.items() if k != "kind"}) == [
        "kind: missing required field (streams_task_assignor, consumer_group, streams_group, classic_consumer, problem)"
    ]
    assert _problems_of({**good, "kind": "share_group"})[0].startswith("kind: unknown kind 'share_group'")
    assert [p.split(":")[0] for p in _problems_of({**good, "problem": {}})] == ["problem"]
    assert [p.split(":")[0] for p in _problems_of({k: v for k, v in good.items() if k != "kafka"})] == ["kafka"]
    for deadline in (-1, True, 1.5, "100", 2**63, 10**40):
        assert _problems_of({**good, "deadline_ms": deadline})[0].startswith("deadline_ms: ")
    assert parse_request({**good, "deadline_ms": None}).deadline_ms is None
    assert parse_request({k: v for k, v in good.items() if k not in ("group", "deadline_ms")}).group is None
    assert parse_request({**good, "kafka_version": "4.2"}).problem.config.kafka_version == "4.2"
    assert _problems_of({**_requests()[4], "kafka_version": "4.2"}) == ["kafka_version: a problem says its release in its own config (kafka.version)"]


def test_kafkas_inputs_name_every_problem_in_one_pass():
    payload = copy.deepcopy(_requests()[1]["kafka"])
    members = payload["members"]
    topic = payload["topics"][0]
    members[0]["subscribed"] = [*members[0]["subscribed"], "nowhere"]
    members[0]["assigned"] = [[topic["id"], [topic["partitions"]]]]
    members.append({**members[0], "rack": 7})
    payload["topics"].append({"id": "bad topic", "partitions": -1, "racks": None})
    found = _problems_of(envelope("consumer_group", payload))
    assert any(p.startswith(f"kafka.members[{len(members) - 1}]") and "duplicate member id" in p for p in found), found
    assert any(p.startswith(f"kafka.members[{len(members) - 1}]") and ".rack" in p for p in found), found
    assert any(".partitions" in p and p.startswith(f"kafka.topics[{len(payload['topics']) - 1}]") for p in found), found
    assert "kafka.members[0].subscribed[{}]: topic 'nowhere' is not in kafka.topics".format(len(members[0]["subscribed"]) - 1) in found
    assert f"kafka.members[0].assigned[0][1][0]: partition {topic['partitions']} of topic {topic['id']!r}, which has {topic['partitions']}" in found

    state = application_state(kip924_problems()[12])
    state["clients"][0]["previous_active"].append("9_9")
    state["clients"][-1]["lags"]["8_0"] = 3
    state["tasks"][0]["source"] = []
    state["configs"]["max_warmup_replicas"] = 0
    found = _problems_of(envelope("streams_task_assignor", state))
    assert "kafka.configs.max_warmup_replicas: Input should be greater than or equal to 1, got 0" in found
    assert any(p.startswith("kafka.tasks[0]") and ".source" in p for p in found), found
    assert any(p.startswith("kafka.clients[0].previous_active[") and "task 9_9 is not in kafka.tasks" in p for p in found), found
    assert any("lags.8_0: task 8_0 is not in kafka.tasks" in p for p in found), found

    spec = streams_group_payload(streams_groups()[5])
    spec["subtopologies"].append({"id": "named", "partitions": 2, "stateful": False})
    spec["members"][0]["active"] = [*spec["members"][0]["active"], "77_0"]
    spec["members"][1]["process_id"] = "not-a-uuid"
    found = _problems_of(envelope("streams_group", spec))
    assert any(p.startswith(f"kafka.subtopologies[{len(spec['subtopologies']) - 1}].id") for p in found), found
    assert any(p.startswith("kafka.members[1]") and "process_id" in p for p in found), found


def test_what_only_the_model_checks_comes_back_located_in_the_mapped_problem():
    payload = copy.deepcopy(_requests()[0]["kafka"])
    payload["tasks"][0]["stateful"] = False  # a stateless task with changelog partitions
    payload["tasks"][0]["changelog"] = payload["tasks"][0]["changelog"] or [{"topic": "c", "partition": 0, "racks": None}]
    for client in payload["clients"]:
        client["lags"].pop(payload["tasks"][0]["id"], None)
    found = _problems_of(envelope("streams_task_assignor", payload))
    assert found and all(p.startswith("kafka (as the project's problem).tasks[0]") for p in found), found


@functools.cache
def _fuzz_bases() -> list[dict[str, Any]]:
    return [
        envelope("streams_task_assignor", application_state(kip924_problems()[4]), "app"),
        envelope("consumer_group", group_spec_payload(kip848_problems()[6]), "audit"),
        envelope("classic_consumer", group_subscription(classic_problems()[72]), None),
        envelope("streams_group", streams_group_payload(next(p for p in streams_groups() if len(p.tasks) <= 12 and len(p.clients) >= 2)), "g"),
        envelope("problem", problem_to_data(random_consumer_problem(2, members=2, topics=2, partitions=(1, 3))), None),
    ]


@functools.cache
def request_mutants() -> list[tuple[int, tuple[Any, ...], str, Any]]:
    found = []
    for number, base in enumerate(_fuzz_bases()):
        for path in paths(base):
            node: Any = base
            for key in path:
                node = node[key]
            found += [(number, path, label, how) for label, how in mutations_at(node)]
    return found


@settings(max_examples=2000, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_mutated_request_is_refused_with_every_problem_named_or_answered(data):
    # An index, not sampled_from: hypothesis labels a sampled list by hashing all of it, each draw.
    number, path, label, how = request_mutants()[data.draw(st.integers(0, len(request_mutants()) - 1), label="mutant")]
    mutant = mutate(_fuzz_bases()[number], path, how)
    try:
        request = parse_request(mutant)
    except RequestError as error:
        assert error.problems, (path, label)
        for problem in error.problems:
            assert len(problem) <= 500 and problem.isprintable() and ": " in problem, problem[:200]
        return
    assert isinstance(request, Request)
    try:
        solution = solve(request.problem, solver="kafka", time_limit=5)
    except (SolverUnavailableError, NoSolutionError):
        return  # Kafka's own assignor fails on this group (the service answers 503): not the protocol's concern
    answer = answer_assignment(request, solution)
    if request.kind == "streams_task_assignor":
        assert set(answer["clients"]) == set(request.clients)
    elif request.kind != "problem":
        assert list(answer["members"]) == list(request.members)
    assert problem_from_data(json.loads(json.dumps(request_to_problem_data(request)))) == request.problem


def test_partition_ids_in_answers_split_at_the_last_dash():
    """Topic names with dashes come back whole ([topic, partition])."""
    problem = random_consumer_problem(5, members=2, topics=1, strategy="range")
    data = problem_to_data(problem)
    data["topics"][0]["name"] = "orders-eu-2"
    for member in data["members"]:
        member["subscriptions"] = ["orders-eu-2"]
        member["owned_partitions"] = [f"orders-eu-2-{partition_key(p)[1]}" for p in member.get("owned_partitions", [])]
    request = parse_request(envelope("classic_consumer", group_subscription(problem_from_data(data))))  # type: ignore[arg-type]
    answer = answer_assignment(request, solve(request.problem, solver="kafka"))
    assert {t for parts in answer["members"].values() for t, _ in parts} == {"orders-eu-2"}
