"""What the broker's streams-group assignor is given (the golden README's mapping): checked
against every golden's recorded input in tests/parity; here on hand-made cases."""

from __future__ import annotations

from optimizer import evaluate, problem_from_data, solve
from optimizer.assignors.streams.group.spec import deal_round_robin, group_spec, java_string_order
from optimizer.model.ids import member_id_of, process_id_of


def app(clients: list[dict], config: dict | None = None) -> dict:
    return {
        "kind": "streams",
        "tasks": [
            {
                "id": f"{s}_{p}",
                "stateful": s == 0,
                "source_partitions": [{"topic": f"in{s}", "partition": p}],
                **({"changelog_partitions": [{"topic": "store0-changelog", "partition": p}], "changelog_end_offset": 1000} if s == 0 else {}),
            }
            for s in (0, 10, 2)
            for p in range(3)
        ],
        "clients": clients,
        "config": {"group.protocol": "streams", **(config or {})},
    }


def test_ids_are_kafkas_name_uuids():
    # Recorded in the golden sg0001: instance-30 thread 0.
    assert member_id_of("instance-30", 0) == "9ymctOMiOEWhi90VinlYDA"
    assert process_id_of("instance-30") == "76e6ffaa-b2ba-3e27-98e4-03732b5d0d8e"


def test_history_is_dealt_round_robin_actives_first_then_standbys():
    dealt = deal_round_robin(["0_10", "0_2", "1_0"], ["0_1", "0_2", "0_3"], 2)
    assert dealt == [(["0_2", "1_0"], ["0_3"]), (["0_10"], ["0_1"])]


def test_subtopologies_in_java_string_order_with_partition_counts():
    spec = group_spec(problem_from_data(app([{"id": "c"}])))
    assert [(s.id, s.partitions, s.stateful) for s in spec.subtopologies] == [("0", 3, True), ("10", 3, False), ("2", 3, False)]
    assert java_string_order(["2", "10", "0"]) == ["0", "10", "2"]


def test_offsets_are_reported_by_the_standby_holder_else_thread_zero():
    problem = problem_from_data(
        app([{"id": "c", "threads": 2, "previous_active": ["0_0"], "previous_standby": ["0_1"], "lags": {"0_1": 30, "0_2": 2000, "0_0": 5}}])
    )
    first, second = group_spec(problem).members
    assert (first.active, first.standby, second.active, second.standby) == (("0_0",), (), (), ("0_1",))
    assert second.task_offsets == {"0_1": 970} and second.task_end_offsets == {"0_1": 1000}
    assert first.task_offsets == {"0_2": 0}  # a lag beyond the end offset reports 0, by thread 0


def test_listed_members_keep_their_own_history():
    problem = problem_from_data(
        app([{"id": "c", "members": [{"id": "alpha", "previous_warmup": ["0_2"]}, {"id": "beta", "previous_active": ["0_0", "0_1"]}]}])
    )
    alpha, beta = group_spec(problem).members
    assert (alpha.member_id, alpha.warmup, alpha.task_offsets) == ("alpha", ("0_2",), {"0_2": 1000})
    assert (beta.member_id, beta.active) == ("beta", ("0_0", "0_1"))


def test_solution_lists_each_member_and_the_evaluator_checks_them():
    problem = problem_from_data(app([{"id": "c", "threads": 2}, {"id": "d"}], {"streams.assignor.name": "balanced"}))
    solution = solve(problem, "kafka")
    members = solution.assignment["c"].members
    assert set(members) == {member_id_of("c", 0), member_id_of("c", 1)}
    assert sorted(t for m in members.values() for t in m.active) == sorted(solution.assignment["c"].active)
    broken = solution.model_copy(
        update={"assignment": {**solution.assignment, "c": solution.assignment["c"].model_copy(update={"active": ()})}}
    )
    codes = {v.code.value for v in evaluate(problem, broken).violations}
    assert "MEMBERS_DISAGREE_WITH_CLIENT" in codes
