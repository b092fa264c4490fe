"""KIP-924's public StickyTaskAssignor: scenarios of Kafka's CustomStickyTaskAssignorTest and
TaskAssignmentUtilsTest with Kafka's expected results, and hand-derived cases for what those tests
leave open (exact ties, when the rack-aware optimisation runs, what an active's traffic counts)."""

from __future__ import annotations

import pytest

from optimizer import problem_from_data
from optimizer.assignors.streams.client_state import client_states
from optimizer.assignors.streams.kip924_sticky import all_tasks_order, kip924_sticky_assign
from optimizer.assignors.streams.kip924_utils import TaskRacks, optimize_active_tasks, optimize_standby_tasks
from optimizer.model.ids import parse_task_id
from tests.assignors.streams.kafka_fixtures import ids, uid

KIP924 = "org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor"


def problem(clients: dict[int, dict], tasks: dict[str, dict], **config):
    """Clients UUID(0, n) as in Kafka's tests (spec: threads, rack, previous_active,
    previous_standby); tasks id -> {stateful, source racks, changelog racks}: a stateful task reads
    and logs to one partition, as Kafka's mkTaskInfo builds it."""
    docs = [{"id": uid(n), **spec} for n, spec in clients.items()]
    task_docs = []
    for task, spec in tasks.items():
        s, p = task.split("_")
        source = [{"topic": f"test-topic-{s}", "partition": int(p), "replica_racks": spec.get("racks", [])}]
        doc = {"id": task, "stateful": spec.get("stateful", False), "source_partitions": source}
        if doc["stateful"]:
            changelog = spec.get("changelog", spec.get("racks", []))
            doc["changelog_partitions"] = [{"topic": f"store-{s}-changelog", "partition": int(p), "replica_racks": changelog}]
        task_docs.append(doc)
    return problem_from_data(
        {"kind": "streams", "clients": docs, "tasks": task_docs, "config": {"task.assignor.class": KIP924, **config}}
    )


def run(p) -> dict[int, tuple[list[str], list[str]]]:
    result = kip924_sticky_assign(p)
    assert not result.warmups and not result.followup_rebalance
    return {int(c.id[-12:], 16): (ids(c.active), ids(c.standby)) for c in result.clients}


STATELESS3 = {"0_0": {}, "0_1": {}, "0_2": {}}
STATEFUL3 = {t: {"stateful": True} for t in STATELESS3}


def test_previous_actives_stay():
    # shouldNotMigrateActiveTaskToOtherProcess: 0_2 goes to client 1, first met and forming a new pair.
    p = problem({1: {"previous_active": ["0_0"]}, 2: {"previous_active": ["0_1"]}}, STATELESS3)
    assert run(p) == {1: (["0_0", "0_2"], []), 2: (["0_1"], [])}


def test_stickiness_with_more_clients_than_tasks():
    # shouldKeepActiveTaskStickinessWhenMoreClientThanActiveTasks, both rounds.
    p = problem({1: {"previous_active": ["0_0"]}, 2: {"previous_active": ["0_2"]}, 3: {"previous_active": ["0_1"]}, 4: {}, 5: {}}, STATELESS3)
    assert run(p) == {1: (["0_0"], []), 2: (["0_2"], []), 3: (["0_1"], []), 4: ([], []), 5: ([], [])}
    p = problem({1: {}, 2: {}, 3: {"previous_active": ["0_1"]}, 4: {"previous_active": ["0_0"]}, 5: {"previous_active": ["0_2"]}}, STATELESS3)
    assert run(p) == {1: ([], []), 2: ([], []), 3: (["0_1"], []), 4: (["0_0"], []), 5: (["0_2"], [])}


def test_previous_standbys_take_the_actives():
    # shouldAssignTasksToClientWithPreviousStandbyTasks (Kafka's previous standbys of stateless tasks
    # are offset sums; here the tasks are stateful so that the problem may list them).
    p = problem(
        {1: {"previous_standby": ["0_2"]}, 2: {"previous_standby": ["0_1"]}, 3: {"previous_standby": ["0_0"]}}, STATEFUL3
    )
    assert run(p) == {1: (["0_2"], []), 2: (["0_1"], []), 3: (["0_0"], [])}


def test_capacity_decides_between_previous_standby_holders():
    # shouldAssignBasedOnCapacityWhenMultipleClientHaveStandbyTasks: 3 tasks // 3 threads = 1 per
    # thread, so client 1 (one thread, 0_0) has no room for 0_1 and client 2 (two threads) takes it.
    p = problem(
        {1: {"previous_active": ["0_0"], "previous_standby": ["0_1"]}, 2: {"threads": 2, "previous_active": ["0_2"], "previous_standby": ["0_1"]}},
        STATEFUL3,
    )
    assert run(p) == {1: (["0_0"], []), 2: (["0_1", "0_2"], [])}


def test_multiple_standby_replicas():
    # shouldAssignMultipleReplicasOfStandbyTask.
    p = problem(
        {1: {"previous_active": ["0_0"]}, 2: {"previous_active": ["0_1"]}, 3: {"previous_active": ["0_2"]}},
        STATEFUL3,
        **{"num.standby.replicas": 2},
    )
    assert run(p) == {1: (["0_0"], ["0_1", "0_2"]), 2: (["0_1"], ["0_0", "0_2"]), 3: (["0_2"], ["0_0", "0_1"])}


def test_standbys_only_for_stateful_tasks_and_least_loaded_first():
    # shouldAssignMultipleStandbys: 3 tasks // 4 threads = 0, so every active goes to the least
    # loaded client in UUID hash order (1, 2, 3); the standbys of 0_0 go to 4 (empty), then 2, 3.
    tasks = {"0_0": {"stateful": True}, "0_1": {}, "0_2": {}}
    p = problem({1: {}, 2: {}, 3: {}, 4: {}}, tasks, **{"num.standby.replicas": 3})
    assert run(p) == {1: (["0_0"], []), 2: (["0_1"], ["0_0"]), 3: (["0_2"], ["0_0"]), 4: ([], ["0_0"])}


def test_not_enough_clients_for_the_standbys():
    # shouldNotAssignStandbyTaskReplicasWhenNoClientAvailableWithoutHavingTheTaskAssigned.
    p = problem({1: {"previous_active": ["0_0"]}}, {"0_0": {"stateful": True}}, **{"num.standby.replicas": 2})
    result = kip924_sticky_assign(p)
    assert ids(result.clients[0].active) == ["0_0"] and not result.clients[0].standby
    assert result.notes == ["task 0_0: only 0 of 2 standby replicas could be placed (not enough clients)"]


def test_more_tasks_to_clients_with_more_threads():
    # shouldAssignMoreTasksToClientWithMoreCapacity: 12 tasks // 3 threads = 4 per thread, so the
    # fresh tasks go one by one (task order) to the client of least tasks per thread.
    tasks = {f"{s}_{q}": {} for s in range(4) for q in range(3)}
    out = run(problem({1: {}, 2: {"threads": 2}}, tasks))
    assert out == {
        1: (["0_0", "1_0", "2_0", "3_0"], []),
        2: (["0_1", "0_2", "1_1", "1_2", "2_1", "2_2", "3_1", "3_2"], []),
    }


# ---------------------------------------------------------------------------- rack awareness

SWAP_CLIENTS = {1: {"rack": "rack-1", "previous_active": ["0_0"]}, 2: {"rack": "rack-2", "previous_active": ["0_1"]}}
SWAP_TASKS = {"0_0": {"stateful": True, "racks": ["rack-2"]}, "0_1": {"stateful": True, "racks": ["rack-1"]}}
COSTS = {"rack.aware.assignment.traffic_cost": 100, "rack.aware.assignment.non_overlap_cost": 1}


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
def test_actives_move_to_their_partitions_racks(strategy):
    # shouldOptimizeActiveTaskSimple, through the assignor.
    p = problem(SWAP_CLIENTS, SWAP_TASKS, **{"rack.aware.assignment.strategy": strategy, **COSTS})
    assert run(p) == {1: (["0_1"], []), 2: (["0_0"], [])}


def test_no_rack_optimisation_without_both_costs_configured():
    # canPerformRackAwareOptimization reads the config: the assignor's default costs (1 and 10) do
    # not enable it.
    for config in ({}, {"rack.aware.assignment.traffic_cost": 100}, {"rack.aware.assignment.non_overlap_cost": 1}):
        p = problem(SWAP_CLIENTS, SWAP_TASKS, **{"rack.aware.assignment.strategy": "min_traffic", **config})
        assert run(p) == {1: (["0_0"], []), 2: (["0_1"], [])}


def test_active_traffic_counts_changelog_partitions():
    # 0_0 reads on rack-1 but logs to rack-2; 0_1 reads and logs on rack-1. Counting the changelog,
    # as TaskAssignmentUtils does, swapping them saves more than the two moves cost; counting the
    # source partitions only (the internal assignor) it would not.
    tasks = {
        "0_0": {"stateful": True, "racks": ["rack-1"], "changelog": ["rack-2"]},
        "0_1": {"stateful": True, "racks": ["rack-1"], "changelog": ["rack-1"]},
    }
    clients = {1: {"rack": "rack-1", "previous_active": ["0_0"]}, 2: {"rack": "rack-2", "previous_active": ["0_1"]}}
    p = problem(clients, tasks, **{"rack.aware.assignment.strategy": "min_traffic", **COSTS})
    assert run(p) == {1: (["0_1"], []), 2: (["0_0"], [])}


def _states(p, placement: dict[int, tuple[list[str], list[str]]]):
    states = client_states(p)
    for state in states:
        active, standby = placement.get(int(state.id[-12:], 16), ([], []))
        state.active.update(parse_task_id(t) for t in active)
        state.standby.update(parse_task_id(t) for t in standby)
    return states


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
def test_standby_swaps(strategy):
    # shouldOptimizeStandbyTasksBasic: each standby moves to its changelog's rack.
    clients = {n: {"rack": f"rack-{n}", "threads": 2} for n in (1, 2, 3)}
    tasks = {"0_0": {"stateful": True, "racks": ["rack-2"]}, "0_1": {"stateful": True, "racks": ["rack-3"]}}
    p = problem(clients, tasks, **{"rack.aware.assignment.strategy": strategy, "num.standby.replicas": 1, **COSTS})
    states = _states(p, {1: (["0_0", "0_1"], []), 2: ([], ["0_1"]), 3: ([], ["0_0"])})
    optimize_standby_tasks(TaskRacks(p), states, 100, 1, [])
    assert {s.id[-1]: (ids(s.active), ids(s.standby)) for s in states} == {
        "1": (["0_0", "0_1"], []),
        "2": ([], ["0_0"]),
        "3": ([], ["0_1"]),
    }


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
def test_actives_already_on_their_racks_stay(strategy):
    # shouldOptimizeStandbyTasksWithMultipleRacks (its active part).
    clients = {n: {"rack": f"rack-{n}", "threads": 2} for n in (1, 2, 3)}
    tasks = {
        "0_0": {"stateful": True, "racks": ["rack-1", "rack-2"]},
        "0_1": {"stateful": True, "racks": ["rack-2", "rack-3"]},
        "0_2": {"stateful": True, "racks": ["rack-3", "rack-4"]},
    }
    p = problem(clients, tasks, **{"rack.aware.assignment.strategy": strategy, "num.standby.replicas": 1, **COSTS})
    states = _states(p, {1: (["0_0"], []), 2: (["0_1"], []), 3: (["0_2"], [])})
    optimize_active_tasks(TaskRacks(p), states, [parse_task_id(t) for t in tasks], 100, 1, [])
    assert [ids(s.active) for s in states] == [["0_0"], ["0_1"], ["0_2"]]


def test_all_tasks_in_hash_map_order():
    # TaskId.hashCode() = 31 * (31 * (31 + subtopology) + partition): 0_0 hashes to bucket 15 of
    # 16, 1_0 to bucket 0, so Kafka meets 1_0 first.
    assert all_tasks_order([parse_task_id("0_0"), parse_task_id("1_0")]) == [parse_task_id("1_0"), parse_task_id("0_0")]


def test_room_for_actives_changed_in_kafka_4_4():
    """KAFKA-20198: up to 4.3 a client keeps previous actives while it has fewer than threads x
    (tasks // all threads); from 4.4.0 fewer than ceil(tasks x threads / all threads). Two tasks
    that ran on client 1 (one thread; client 2 has two): up to 4.3 its room is 1 x (2 // 3) = 0, so
    both are placed afresh and 0_0 comes back by load; from 4.4.0 its room is ceil(2 / 3) = 1 and
    it keeps the first of its previous actives in HashMap order, 0_1."""
    from optimizer.assignors.streams.kip924_sticky import kip924_sticky_assign_4_4
    from optimizer.assignors.streams.task_assignors import TASK_ASSIGNORS
    from optimizer.model.streams import TaskAssignor

    p = problem({1: {"previous_active": ["0_0", "0_1"]}, 2: {"threads": 2}}, {"0_0": {}, "0_1": {}})
    first = {release: ids(TASK_ASSIGNORS.select(TaskAssignor.KIP924_STICKY, release)(p).clients[0].active) for release in ((4, 0, 0), (4, 3, 1), (4, 4, 0))}
    assert first == {(4, 0, 0): ["0_0"], (4, 3, 1): ["0_0"], (4, 4, 0): ["0_1"]}
    assert TASK_ASSIGNORS.select(TaskAssignor.KIP924_STICKY, (4, 4, 0)) is kip924_sticky_assign_4_4
