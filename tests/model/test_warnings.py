"""Conditions Kafka tolerates: a warning with its location, and Kafka's behaviour applied."""

from __future__ import annotations

import copy

from click.testing import CliRunner

from optimizer import evaluate
from optimizer.cli import cli
from optimizer.model import ClientAssignment, normalize, problem_from_data
from tests.conftest import CONSUMER, STREAMS


def warned(problem, location, words):
    return [w for w in normalize(problem).warnings if w.location == location and words in w.message]


def test_previous_tasks_that_no_longer_exist_are_dropped():
    data = copy.deepcopy(STREAMS)
    data["clients"][0]["previous_active"] = ["0_0", "5_5"]
    data["clients"][1]["previous_standby"] = ["0_0", "5_6", "1_0"]
    problem = problem_from_data(data)
    assert warned(problem, "clients[0] (id 'a').previous_active", "tasks 5_5 are not in the problem")
    assert warned(problem, "clients[1] (id 'b').previous_standby", "tasks 5_6 are not in the problem")
    assert warned(problem, "clients[1] (id 'b').previous_standby", "1_0 are stateless")
    kafka_view = normalize(problem).problem
    assert kafka_view.clients[0].previous_active == ("0_0",)
    assert kafka_view.clients[1].previous_standby == ("0_0",)
    assert problem.clients[0].previous_active == ("0_0", "5_5")  # the file's data stays as written


def test_owned_partitions_that_no_longer_exist_are_dropped():
    data = copy.deepcopy(CONSUMER)
    data["members"][0]["owned_partitions"] = ["orders-eu-0", "orders-eu-9", "legacy-1"]
    problem = problem_from_data(data)
    where = "members[0] (id 'm1').owned_partitions"
    assert warned(problem, where, "legacy-1 belong to topics that no longer exist; dropped, as KIP-54 step 1 does")
    assert warned(problem, where, "orders-eu-9 are beyond their topic's partition count: the exact solvers ignore them")
    assert normalize(problem).problem.members[0].owned_partitions == ("orders-eu-0",)


def test_partition_owned_twice_stays_with_the_higher_generation():
    data = copy.deepcopy(CONSUMER)
    data["members"][1].update(owned_partitions=["orders-eu-0", "orders-eu-1"], generation=3)
    data["members"].append({"id": "m3", "subscriptions": ["orders-eu"], "owned_partitions": ["orders-eu-1"], "generation": 3})
    problem = problem_from_data(data)
    assert warned(problem, "members", "orders-eu-0 is owned by members 'm1', 'm2': member 'm2' (generation 3) keeps it")
    assert warned(problem, "members", "orders-eu-1 is owned by members 'm2', 'm3': they tie at generation 3")
    owned = {m.id: m.owned_partitions for m in normalize(problem).problem.members}
    assert owned == {"m1": (), "m2": ("orders-eu-0",), "m3": ()}


def test_more_standbys_than_clients_allow():
    data = copy.deepcopy(STREAMS)
    data["config"]["num.standby.replicas"] = 4
    problem = problem_from_data(data)
    assert warned(problem, "config.num.standby.replicas", "each stateful task gets 1")
    assert problem.effective_standby_replicas == 1
    assignment = {
        "a": ClientAssignment(active=["0_0", "1_0"]),
        "b": ClientAssignment(standby=["0_0"]),
    }
    evaluation = evaluate(problem, assignment)
    assert evaluation.valid, evaluation.violations


def test_client_without_rack_disables_rack_awareness():
    data = copy.deepcopy(STREAMS)
    del data["clients"][1]["rack"]
    problem = problem_from_data(data)
    assert warned(problem, "config.rack.aware.assignment.strategy", "clients b have no rack: rack-aware assignment is disabled")


def test_partitions_without_racks_disable_rack_awareness():
    data = copy.deepcopy(STREAMS)
    del data["tasks"][1]["source_partitions"][0]["replica_racks"]
    problem = problem_from_data(data)
    assert warned(problem, "config.rack.aware.assignment.strategy", "partitions clicks-0 have no replica racks")


def test_subscription_to_missing_topic():
    data = copy.deepcopy(CONSUMER)
    data["members"][1]["subscriptions"] = ["orders-eu", "audit"]
    problem = problem_from_data(data)
    assert warned(problem, "members[1] (id 'm2').subscriptions", "topics audit do not exist")


def test_valid_problem_has_no_warnings():
    assert normalize(problem_from_data(STREAMS)).warnings == ()
    assert normalize(problem_from_data(CONSUMER)).warnings == ()


def test_warnings_are_printed_and_do_not_fail_validation(tmp_path):
    data = copy.deepcopy(CONSUMER)
    data["members"][1]["subscriptions"] = ["orders-eu", "audit"]
    path = tmp_path / "group.yaml"
    from optimizer.sources.problem_file import save_problem

    save_problem(problem_from_data(data), path)
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 0
    assert "warning members[1] (id 'm2').subscriptions: topics audit do not exist" in result.output


def _zombie(order=(0, 1, 2)):
    """STREAMS with 0_0 reported active by a and by c (a zombie), the clients in `order`."""
    data = copy.deepcopy(STREAMS)
    data["clients"].append({"id": "c", "rack": "r1", "tags": {"zone": "z1"}, "previous_active": ["0_0"]})
    data["clients"] = [data["clients"][i] for i in order]
    return problem_from_data(data)


def test_a_task_active_on_two_clients_is_read_with_a_warning_and_counted_as_the_first_clients():
    problem = _zombie()
    assert problem.zombie_tasks == {"0_0": ("a", "c")}
    assert warned(problem, "clients", "tasks previously active on several clients (zombies: a process that lost the group kept running them): 0_0 on 'a', 'c'")
    assert problem.previous_active_client["0_0"] == "a" == _zombie((2, 1, 0)).previous_active_client["0_0"]
    assert problem.previous_active_clients["0_0"] == {"a", "c"}


def test_every_solver_answers_a_problem_with_a_zombie_and_the_evaluator_accepts_it():
    from optimizer.catalogue import SOLVERS
    from optimizer.errors import SolverUnavailableError
    from optimizer.solve import solve

    for order in ((0, 1, 2), (2, 0, 1)):
        problem = _zombie(order)
        for solver in SOLVERS:
            try:
                solution = solve(problem, solver=solver, time_limit=10)  # the evaluator checks each before it is returned
            except SolverUnavailableError:  # a back-end that cannot take standbys: not the zombie's doing
                assert solver in ("flow",)
                continue
            assert not evaluate(problem, solution).violations, solver
            assert sum("0_0" in held.active for held in solution.assignment.values()) == 1
