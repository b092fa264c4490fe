"""Kafka's HighAvailabilityTaskAssignor: the scenarios of HighAvailabilityTaskAssignorTest,
TaskMovementTest and ClientTagAwareStandbyTaskAssignorTest, with Kafka's expected results."""

from __future__ import annotations

from optimizer import problem_from_data
from optimizer.assignors.streams.client_state import client_states
from optimizer.assignors.streams.high_availability import high_availability_assign
from optimizer.assignors.streams.standby import ClientTagAwareStandbyTaskAssignor
from optimizer.assignors.streams.sticky_task import sticky_task_assign
from tests.assignors.streams.kafka_fixtures import MAX_LONG, ids, lag_problem, mock

S2 = ["0_0", "0_1"]
S4 = ["0_0", "0_1", "0_2", "0_3"]
NINE = [f"{s}_{p}" for s in range(3) for p in range(3)]


def run(problem):
    result = high_availability_assign(problem)
    out = {}
    for client in result.clients:
        warm = result.warmups.get(client.id, set())
        out[client.id] = (ids(client.active), ids(client.standby - warm), ids(warm))
    return out, result.followup_rebalance


def test_active_moves_back_to_a_caught_up_client_with_a_warm_up():
    problem = lag_problem(
        {"C1": {"previous_active": ["0_0"], "lags": {"0_0": 500}}, "C2": {"previous_active": ["0_1"], "lags": {"0_0": 0}}},
        ["0_0"], ("0_1",), acceptable_recovery_lag=100, max_warmup_replicas=2, num_standby_replicas=0,
    )  # fmt: skip
    assert run(problem) == ({"C1": (["0_1"], [], ["0_0"]), "C2": (["0_0"], [], [])}, True)


def test_active_goes_to_the_most_caught_up_client():
    problem = lag_problem(
        {"C1": {"lags": {"0_0": MAX_LONG}}, "C2": {"lags": {"0_0": 1000}}, "C3": {"lags": {"0_0": 500}}},
        ["0_0"], acceptable_recovery_lag=100, max_warmup_replicas=2, num_standby_replicas=1,
    )  # fmt: skip
    assert run(problem) == ({"C1": ([], [], ["0_0"]), "C2": ([], ["0_0"], []), "C3": (["0_0"], [], [])}, True)


def test_standbys_for_stateful_tasks():
    problem = lag_problem({"C1": mock(["0_0"], S2), "C2": mock(["0_1"], S2)}, S2, num_standby_replicas=1)
    assert run(problem) == ({"C1": (["0_0"], ["0_1"], []), "C2": (["0_1"], ["0_0"], [])}, False)


def test_warm_up_without_standbys_configured():
    problem = lag_problem({"C1": mock(S2, S2), "C2": mock([], S2)}, S2, acceptable_recovery_lag=100)
    assert run(problem) == ({"C1": (S2, [], []), "C2": ([], [], ["0_1"])}, True)


def test_no_more_than_max_warmup_replicas():
    problem = lag_problem({"C1": mock(S4, S4), "C2": mock([], S4)}, S4, acceptable_recovery_lag=100, max_warmup_replicas=1)
    assert run(problem) == ({"C1": (S4, [], []), "C2": ([], [], ["0_1"])}, True)


def test_no_warm_up_and_standby_on_one_client():
    problem = lag_problem(
        {"C1": mock(S4, S4), "C2": mock([], S4)}, S4,
        acceptable_recovery_lag=100, max_warmup_replicas=1, num_standby_replicas=1,
    )  # fmt: skip
    assert run(problem) == ({"C1": (S4, [], []), "C2": ([], S4, [])}, True)


def test_previous_assignment_reused_needs_no_probing_rebalance():
    problem = lag_problem({"C1": mock(["0_0", "0_2"], S4), "C2": mock(["0_1", "0_3"], S4)}, S4, acceptable_recovery_lag=100)
    assert run(problem) == ({"C1": (["0_0", "0_2"], [], []), "C2": (["0_1", "0_3"], [], [])}, False)


def test_sticky_for_active_and_standby_while_warming_up():
    problem = lag_problem(
        {
            "C1": {"previous_active": NINE, "lags": dict.fromkeys(NINE, 0)},
            "C2": {"previous_standby": NINE, "lags": dict.fromkeys(NINE, 10)},
            "C3": {"lags": dict.fromkeys(NINE, MAX_LONG)},
        },
        NINE, acceptable_recovery_lag=11, max_warmup_replicas=2, num_standby_replicas=1,
    )  # fmt: skip
    assignment, followup = run(problem)
    assert followup
    assert {c: len(a) + len(s) + len(w) for c, (a, s, w) in assignment.items()} == {"C1": 9, "C2": 9, "C3": 2}


def test_no_warm_ups_when_acceptable_lag_is_max():
    problem = lag_problem(
        {
            "C1": {"previous_active": NINE, "lags": dict.fromkeys(NINE, 0)},
            "C2": {"lags": dict.fromkeys(NINE, MAX_LONG)},
            "C3": {"lags": dict.fromkeys(NINE, MAX_LONG)},
        },
        NINE, acceptable_recovery_lag=MAX_LONG, max_warmup_replicas=1, num_standby_replicas=1,
    )  # fmt: skip
    assignment, followup = run(problem)
    assert not followup
    assert [len(a) + len(s) + len(w) for a, s, w in assignment.values()] == [6, 6, 6]


def test_actives_balanced_over_uneven_threads():
    six = ["0_0", "0_1", "0_2", "1_0", "1_1", "1_2"]
    lags = dict.fromkeys(six, 10)
    problem = lag_problem(
        {"C1": {"threads": 1, "lags": lags}, "C2": {"threads": 2, "lags": lags}, "C3": {"threads": 3, "lags": lags}},
        six, acceptable_recovery_lag=0, max_warmup_replicas=1,
    )  # fmt: skip
    assignment, followup = run(problem)
    assert [len(a) for a, _, _ in assignment.values()] == [1, 2, 3] and not followup


def test_moves_to_caught_up_clients_in_movement_order():
    # TaskMovementTest: round robin puts 0_1 on C2 and 0_2 on C3, but the other is caught up.
    problem = lag_problem(
        {
            "C1": {"previous_active": ["0_0"], "lags": {"0_0": 0, "0_1": 1000, "0_2": 1000}},
            "C2": {"lags": {"0_0": 1000, "0_1": 1000, "0_2": 0}},
            "C3": {"lags": {"0_0": 1000, "0_1": 0, "0_2": 1000}},
        },
        ["0_0", "0_1", "0_2"], acceptable_recovery_lag=100, max_warmup_replicas=10,
    )  # fmt: skip
    assert run(problem) == (
        {"C1": (["0_0"], [], []), "C2": (["0_2"], [], ["0_1"]), "C3": (["0_1"], [], ["0_2"])},
        True,
    )


def test_tag_aware_standbys_on_different_clusters_and_zones():
    # ClientTagAwareStandbyTaskAssignorTest.shouldDoThePartialRackAwareness, calling the standby
    # assignor directly with the actives in place: C1 (c1, z1) runs 0_0, C6 (c2, z3) runs 1_0.
    tags = {"C1": ("c1", "z1"), "C2": ("c1", "z2"), "C3": ("c1", "z3"), "C4": ("c2", "z1"), "C5": ("c2", "z2"), "C6": ("c2", "z3")}
    problem = lag_problem(
        {c: {"tags": {"cluster": cl, "zone": z}} for c, (cl, z) in tags.items()},
        ["0_0", "1_0"], num_standby_replicas=2, tags=["cluster", "zone"],
    )  # fmt: skip
    clients = client_states(problem)
    by_id = {c.id: c for c in clients}
    by_id["C1"].assign_active((0, 0))
    by_id["C6"].assign_active((1, 0))
    ClientTagAwareStandbyTaskAssignor(["cluster", "zone"]).assign(clients, [(0, 0), (1, 0)], 2)
    standbys = {task: {c.id for c in clients if task in c.standby} for task in ((0, 0), (1, 0))}
    # The first standby differs in both tags; with both clusters used, only the zone constrains.
    assert standbys[0, 0] in ({"C5", "C3"}, {"C5", "C6"})
    assert standbys[1, 0] in ({"C2", "C4"}, {"C2", "C1"})
    assert sum(len(c.standby) for c in clients) == 4
    assert len(by_id["C2"].standby) == len(by_id["C5"].standby) == 1


def test_tag_fallback_walks_kafkas_full_hash_map():
    """Standbys no client can take under the tags are placed in the order of Kafka's HashMap of
    every stateful task (the map keeps its capacity as placed tasks are removed)."""
    from optimizer.model import problem_from_data
    from optimizer.solve import solve

    tasks = [
        {"id": f"0_{p}", "stateful": True, "source_partitions": [{"topic": "in", "partition": p}],
         "changelog_partitions": [{"topic": "cl", "partition": p}], "changelog_end_offset": 0}
        for p in range(19)
    ]  # fmt: skip
    problem = problem_from_data({
        "kind": "streams",
        "config": {"num.standby.replicas": 1, "rack.aware.assignment.tags": ["zone", "cluster"]},
        "clients": [
            {"id": "A", "tags": {"zone": "z1", "cluster": "c1"}},
            {"id": "B", "tags": {"zone": "z1", "cluster": "c2"}},
            {"id": "C", "tags": {"zone": "z2", "cluster": "c1"}},
        ],
        "tasks": tasks,
    })  # fmt: skip
    standby = {c: set(h.standby) for c, h in solve(problem, solver="kafka").assignment.items()}
    assert {"0_3", "0_9", "0_15"} <= standby["C"] and {"0_6", "0_12", "0_18"} <= standby["B"]


def test_a_reported_lag_makes_a_previous_standby():
    # Kafka's ClientState.initializeRemainingPrevTasksFromTaskOffsetSums: a task a client reports
    # an offset sum for, and did not run as active, is one of its previous standbys.
    problem = lag_problem(
        {"C1": {"threads": 3, "lags": {"0_0": 139_456}}, "C2": {"threads": 1, "previous_standby": ["0_1"]}},
        ["0_0", "0_1", "0_2"], num_standby_replicas=0,
    )  # fmt: skip
    by_id = {c.id: c for c in client_states(problem)}
    assert ids(by_id["C1"].previous_standby) == ["0_0"] and ids(by_id["C2"].previous_standby) == ["0_1"]
    # The legacy sticky assignor hands a task to a previous standby holder first.
    sticky = problem.model_copy(update={"config": problem.config.model_copy(update={"task_assignor_class": "sticky"})})
    result = {c.id: ids(c.active) for c in sticky_task_assign(sticky).clients}
    assert result == {"C1": ["0_0", "0_2"], "C2": ["0_1"]}


def test_movements_are_polled_in_priority_order():
    # Since Kafka 3.4.0 TaskMovement polls its queue (fewest caught-up clients, then task id);
    # walking the heap array instead gives the warm-up of 2_0 to the other client.
    a, b = "650b6703-5388-7d3a-c74b-6391c9ca22c4", "eab89637-d9ae-b106-ad99-bd0abe1a087d"
    ends = {"0_0": 1578, "0_1": 0, "1_0": 4356, "2_0": 1_707_864, "3_0": 13_923}
    problem = problem_from_data({
        "kind": "streams",
        "config": {"num.standby.replicas": 0, "acceptable.recovery.lag": 0, "max.warmup.replicas": 3},
        "clients": [
            {"id": a, "threads": 4, "previous_active": ["0_0", "1_0", "3_0"], "lags": {"0_0": 1293, "1_0": 1135}},
            {"id": b, "threads": 3, "previous_active": ["0_1", "2_0"]},
        ],
        "tasks": [
            {"id": t, "stateful": True, "source_partitions": [{"topic": f"in{t[0]}", "partition": int(t[2])}],
             "changelog_partitions": [{"topic": f"store{t[0]}-changelog", "partition": int(t[2])}],
             "changelog_end_offset": end}
            for t, end in ends.items()
        ],
    })  # fmt: skip
    assert run(problem) == ({a: (["0_0", "0_1", "1_0", "3_0"], [], ["2_0"]), b: (["2_0"], [], ["0_0", "1_0"])}, True)
