"""KIP-925 inside Kafka's assignors: RackAwareTaskAssignorTest and the rack-aware
LegacyStickyTaskAssignorTest, with Kafka's expected assignments and costs."""

from __future__ import annotations

import pytest

from optimizer.assignors.streams.client_state import client_states
from optimizer.assignors.streams.rack_aware import RackAwareTaskAssignor
from optimizer.assignors.streams.sticky_task import TASK_ORDER, sticky_task_assign
from optimizer.model.ids import parse_task_id
from tests.assignors.streams.kafka_fixtures import ids, rack_problem, uid

STATEFUL, STATELESS = (10, 1), (1, 0)


def optimize(assignment: dict[int, list[str]], strategy: str, costs):
    tasks = sorted(t for held in assignment.values() for t in held)
    problem = rack_problem({n: {} for n in assignment}, tasks, set(), {"rack.aware.assignment.strategy": strategy})
    clients = client_states(problem)
    for client in clients:
        n = int(client.id[-12:], 16)
        for task in assignment[n]:
            client.assign_active(parse_task_id(task))
    RackAwareTaskAssignor(problem).optimize_active_tasks(sorted(map(parse_task_id, tasks)), clients, *costs)
    return {int(c.id[-12:], 16): ids(c.active) for c in clients}


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
@pytest.mark.parametrize("costs", [STATEFUL, STATELESS])
def test_optimize_active_tasks(strategy, costs):
    before = {1: ["0_1", "1_1"], 2: ["1_0"], 3: ["0_0"]}
    assert optimize(before, strategy, costs) == {1: ["0_0", "1_0"], 2: ["1_1"], 3: ["0_1"]}


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
def test_clients_keep_their_task_counts(strategy):
    assert optimize({1: [], 2: ["1_0"], 3: ["0_0"]}, strategy, STATEFUL) == {1: [], 2: ["0_0"], 3: ["1_0"]}
    assert optimize({1: [], 2: ["0_1", "1_0"], 3: ["0_0"]}, strategy, STATEFUL) == {1: [], 2: ["0_0", "0_1"], 3: ["1_0"]}


def test_balance_subtopology_starts_from_a_max_flow():
    before = {2: ["0_0", "1_1"], 5: ["0_1"]}
    assert optimize(before, "min_traffic", STATEFUL) == before
    assert optimize(before, "min_traffic", STATELESS) == before
    assert optimize(before, "balance_subtopology", STATEFUL) == before
    # Without a non-overlap cost the max-flow start decides among equal costs, as in Kafka.
    assert optimize(before, "balance_subtopology", STATELESS) == {2: ["0_0", "0_1"], 5: ["1_1"]}


def standby_cost(clients, problem) -> int:
    assignor = RackAwareTaskAssignor(problem)
    return sum(assignor.cost(t, c, True, 10, 1, standby=True) for c in clients for t in c.standby)


def test_optimize_standby_tasks_when_all_movable():
    layout = {
        1: ("0_0", ["0_1", "1_1"]), 2: ("0_1", ["0_0", "1_0"]), 3: ("1_0", ["0_0", "0_2"]),
        4: ("1_1", ["0_1", "1_2"]), 6: ("0_2", ["1_0", "1_2"]), 7: ("1_2", ["0_2", "1_1"]),
    }  # fmt: skip
    tasks = sorted(active for active, _ in layout.values())
    problem = rack_problem({n: {} for n in layout}, tasks, set(tasks), {"rack.aware.assignment.strategy": "min_traffic", "num.standby.replicas": 2})
    clients = client_states(problem)
    for client in clients:
        active, standbys = layout[int(client.id[-12:], 16)]
        client.assign_active(parse_task_id(active))
        for task in standbys:
            client.assign_standby(parse_task_id(task))
    counts = {c.id: len(c.standby) for c in clients}
    assert standby_cost(clients, problem) == 60
    RackAwareTaskAssignor(problem).optimize_standby_tasks(clients, 10, 1, lambda *args: True)
    assert standby_cost(clients, problem) == 20
    assert {c.id: len(c.standby) for c in clients} == counts
    for task in tasks:
        key = parse_task_id(task)
        assert sum(key in c.standby for c in clients) == 2 and sum(key in c.active for c in clients) == 1


STICKY_EXPECTED = {
    "none": {1: (["0_1", "0_2", "1_3"], ["0_0"]), 2: (["0_3", "1_0", "1_1"], ["0_1"]), 3: (["0_0", "1_2"], ["1_0", "1_1"])},
    "min_traffic": {1: (["0_3", "1_0", "1_2"], ["0_0", "0_1"]), 2: (["0_0", "0_2", "1_1"], []), 3: (["0_1", "1_3"], ["1_0", "1_1"])},
    "balance_subtopology": {1: (["0_0", "0_3", "1_2"], ["1_0"]), 2: (["0_1", "0_2", "1_1"], ["0_0"]), 3: (["1_0", "1_3"], ["0_1", "1_1"])},
}  # fmt: skip


@pytest.mark.parametrize("strategy", sorted(STICKY_EXPECTED))
def test_sticky_assignor_optimizes_stateful_and_stateless_traffic(strategy):
    problem = rack_problem(
        {1: {"previous_active": ["0_0", "0_1", "0_2"]}, 2: {"previous_active": ["1_0", "1_1", "0_3", "1_3"]}, 3: {"previous_active": ["1_2"]}},
        ["0_0", "0_1", "0_2", "0_3", "1_0", "1_1", "1_2", "1_3"],
        {"0_0", "0_1", "1_0", "1_1"},
        {"num.standby.replicas": 1, "rack.aware.assignment.strategy": strategy,
         "rack.aware.assignment.traffic_cost": 10, "rack.aware.assignment.non_overlap_cost": 1},
    )  # fmt: skip
    # Kafka's own test scenario hands the assignor its task sets filled in the order it lists them
    # (task order), not as a rebalance fills them (decision 73).
    result = sticky_task_assign(problem, TASK_ORDER)
    assert {int(c.id[-12:], 16): (ids(c.active), ids(c.standby)) for c in result.clients} == STICKY_EXPECTED[strategy]


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("none", {1: ["0_1", "1_2", "1_3"], 2: ["0_0", "1_1", "2_2"], 3: ["2_0", "2_1", "2_3"], 4: ["0_2", "0_3", "1_0"]}),
        ("min_traffic", {1: ["0_1", "1_2", "1_3"], 2: ["0_0", "1_1", "2_2"], 3: ["2_0", "2_1", "2_3"], 4: ["0_2", "0_3", "1_0"]}),
        ("balance_subtopology", {1: ["0_1", "1_2", "2_3"], 2: ["0_0", "1_1", "2_2"], 3: ["0_2", "1_3", "2_1"], 4: ["0_3", "1_0", "2_0"]}),
    ],
)
def test_sticky_assignor_spreads_tasks_not_previously_active(strategy, expected):
    twelve = [f"{s}_{p}" for s in range(3) for p in range(4)]
    problem = rack_problem(
        {
            1: {"previous_active": ["0_1", "1_2", "1_3"], "previous_standby": ["0_0", "1_1", "2_0", "2_1", "2_3"]},
            2: {"previous_active": ["0_0", "1_1", "2_2"], "previous_standby": ["0_1", "1_0", "0_2", "2_0", "0_3", "1_2", "2_1", "1_3", "2_3"]},
            3: {"previous_standby": ["2_0", "2_1", "2_3"]},
            4: {"previous_standby": ["0_2", "0_3", "1_0"]},
        },
        twelve, set(twelve), {"rack.aware.assignment.strategy": strategy},
    )  # fmt: skip
    result = sticky_task_assign(problem)
    assert {int(c.id[-12:], 16): ids(c.active) for c in result.clients} == expected


def test_rack_awareness_needs_every_client_rack():
    problem = rack_problem({1: {}, 2: {}}, ["0_0"], set(), {"rack.aware.assignment.strategy": "min_traffic"})
    assert RackAwareTaskAssignor(problem).can_enable()
    without = problem.model_copy(update={"clients": (problem.clients[0], problem.clients[1].model_copy(update={"rack": None}))})
    assert not RackAwareTaskAssignor(without).can_enable()
    none = problem.model_copy(update={"config": problem.config.model_copy(update={"rack_aware_assignment_strategy": "none"})})
    assert not RackAwareTaskAssignor(none).can_enable()
    assert uid(1) < uid(2)


@pytest.mark.parametrize("contracted", [False, True])
def test_balance_subtopology_with_a_subtopology_outside_the_optimised_tasks(contracted, monkeypatch):
    """A subtopology without tasks in the optimised set (its (group, client) nodes keep their ids,
    without edges) breaks neither Kafka's search over arrays nor, beyond KAFKA_TIE_BREAK_WORK, the
    contracted cycle canceling."""
    from optimizer.assignors.streams.kip925 import constructors
    from optimizer.model import problem_from_data
    from optimizer.solve import solve

    if contracted:
        monkeypatch.setattr(constructors, "KAFKA_TIE_BREAK_WORK", 1000)

    racks = ["r0", "r1", "r2"]
    tasks = [
        {"id": f"0_{p}", "stateful": True,
         "source_partitions": [{"topic": "in", "partition": p, "replica_racks": [racks[p % 3]]}],
         "changelog_partitions": [{"topic": "cl", "partition": p, "replica_racks": [racks[(p + 1) % 3]]}]}
        for p in range(150)
    ] + [{"id": "1_0", "source_partitions": [{"topic": "other", "partition": 0, "replica_racks": ["r0"]}]}]  # fmt: skip
    data = {
        "kind": "streams",
        "config": {"rack.aware.assignment.strategy": "balance_subtopology"},
        "clients": [{"id": f"c{i}", "rack": racks[i % 3]} for i in range(10)],
        "tasks": tasks,
    }
    for assignor in ("high_availability", "sticky"):
        data["config"]["task.assignor.class"] = assignor
        solution = solve(problem_from_data(data), solver="kafka")  # valid (checked by solve)
        assert solution.metrics.subtopology_cap_excess == 0
        assert any("contracted" in note for note in solution.solver.options["notes"]) == contracted
