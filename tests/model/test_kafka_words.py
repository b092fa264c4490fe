"""Input in Kafka's words (issue 34, item 3): Kafka's own keys where a user types them, near misses
suggested, and task ids as Kafka's TaskId.parse reads them."""

from __future__ import annotations

import pytest

from optimizer.errors import InvalidInputError
from optimizer.evaluate import evaluate
from optimizer.model import problem_from_data
from optimizer.solve import solve


def _task(task_id: str, partition: int) -> dict:
    return {"id": task_id, "stateful": True, "source_partitions": [{"topic": "orders", "partition": partition}]}


def _issues(data: dict) -> list[tuple[str | None, str]]:
    with pytest.raises(InvalidInputError) as caught:
        problem_from_data(data, "app.yaml")
    return [(issue.location, issue.message) for issue in caught.value.issues]


def test_a_streams_client_takes_kafkas_keys_for_its_threads_and_rack():
    problem = problem_from_data(
        {
            "kind": "streams",
            "clients": [{"id": "a", "num.stream.threads": 3, "client.rack": "r1"}, {"id": "b", "threads": 2, "rack": "r2"}],
            "tasks": [_task("0_0", 0)],
        }
    )
    assert [(c.threads, c.rack) for c in problem.clients] == [(3, "r1"), (2, "r2")]


def test_a_consumer_member_takes_kafkas_keys_for_its_rack_and_instance_id():
    group = problem_from_data(
        {
            "kind": "consumer",
            "topics": [{"name": "orders", "partitions": 2}],
            "members": [{"id": "m", "subscriptions": ["orders"], "client.rack": "r1", "group.instance.id": "i-1"}],
        }
    )
    assert (group.members[0].rack, group.members[0].group_instance_id) == ("r1", "i-1")


def test_a_near_miss_of_kafkas_key_is_suggested_and_both_names_at_once_are_one_error():
    issues = _issues(
        {
            "kind": "streams",
            "clients": [{"id": "a", "num.stream.thread": 2}, {"id": "b", "threads": 2, "num.stream.threads": 3}],
            "tasks": [_task("0_0", 0)],
        }
    )
    assert issues == [
        ("clients[0] (id 'a').num.stream.thread", "unknown field 'num.stream.thread' (did you mean 'num.stream.threads'?)"),
        ("clients[1] (id 'b')", "'threads' and 'num.stream.threads' name the same setting: give one of them"),
    ]


def test_task_ids_with_leading_zeros_are_the_tasks_kafka_reads_and_are_written_as_kafka_writes_them():
    problem = problem_from_data(
        {
            "kind": "streams",
            "clients": [{"id": "a", "previous_active": ["0_001"], "lags": {"0_01": 0}}, {"id": "b"}],
            "tasks": [_task("0_01", 1), _task("1_0", 0)],
        }
    )
    assert [t.id for t in problem.tasks] == ["0_1", "1_0"]
    assert (problem.clients[0].previous_active, problem.clients[0].lags) == (("0_1",), {"0_1": 0})
    solution = solve(problem)
    assert "0_1" in solution.assignment["a"].active  # sticky: the task the client named '0_001'


def test_two_keys_that_are_one_task_as_kafka_reads_them_are_an_error_not_a_silent_drop():
    issues = _issues({"kind": "streams", "clients": [{"id": "a", "lags": {"0_05": 3, "0_5": 4}}], "tasks": [_task("0_5", 5)]})
    assert issues == [("clients[0] (id 'a').lags", "task 0_5 is given twice, as '0_05' and '0_5'")]


def test_any_setting_given_under_two_of_its_names_is_one_error_naming_both():
    issues = _issues({"kind": "streams", "clients": [{"id": "a"}], "tasks": [], "config": {"num.standby.replicas": 1, "num_standby_replicas": 2}})
    assert issues == [("config", "'num_standby_replicas' and 'num.standby.replicas' name the same setting: give one of them")]


def _layout_problem(topics: list[dict], tasks: list[dict]) -> dict:
    return {
        "kind": "streams",
        "config": {"rack.aware.assignment.strategy": "min_traffic"},
        "clients": [{"id": "a", "rack": "r1"}, {"id": "b", "rack": "r2"}],
        "topics": topics,
        "tasks": tasks,
    }


def _reading(task_id: str, partition: int, **racks: object) -> dict:
    return {
        "id": task_id,
        "stateful": True,
        "source_partitions": [{"topic": "orders", "partition": partition, **racks}],
        "changelog_partitions": [{"topic": "store", "partition": partition}],
    }


def test_a_topic_layout_given_once_reaches_every_partition_the_tasks_read_and_reads_back_the_same():
    data = _layout_problem(
        [
            {"name": "orders", "replica_racks": [["r1", "r2"], ["r2", "r3"]], "leader_racks": ["r2", None]},
            {"name": "store", "partitions": 2, "replica_racks": [["r3"], []]},
        ],
        [_reading("0_0", 0), _reading("0_1", 1, replica_racks=["r3", "r2"], leader_rack="r3")],
    )
    problem = problem_from_data(data)
    laid_out = [
        [(p.id, set(p.replica_racks), p.leader_rack) for p in (*task.source_partitions, *task.changelog_partitions)] for task in problem.tasks
    ]
    assert laid_out == [
        [("orders-0", {"r1", "r2"}, "r2"), ("store-0", {"r3"}, None)],
        [("orders-1", {"r2", "r3"}, "r3"), ("store-1", set(), None)],
    ]
    # The same problem with the racks written on every partition: the same figures.
    spelled_out = problem_from_data(
        {**data, "topics": [], "tasks": [task.model_dump(mode="json", exclude_defaults=True) for task in problem.tasks]}
    )
    solution = solve(problem, solver="kafka")
    assert solution.assignment == solve(spelled_out, solver="kafka").assignment
    assert evaluate(problem, solution).metrics == evaluate(spelled_out, solution).metrics
    assert evaluate(problem, solution).metrics.cross_rack_active_partitions > 0
    assert problem_from_data(problem.model_dump(mode="json", by_alias=True)) == problem


def test_a_partition_that_contradicts_its_topics_layout_or_lies_beyond_it_is_an_error_naming_both():
    issues = _issues(
        _layout_problem(
            [
                {"name": "orders", "replica_racks": [["r1", "r2"], ["r2"]], "leader_racks": ["r1", "r2"]},
                {"name": "unread", "partitions": 1, "leader_racks": ["r1"]},
            ],
            [_reading("0_0", 0, replica_racks=["r1"]), _reading("0_1", 1, leader_rack="r1"), _reading("0_2", 2)],
        )
    )
    assert issues == [
        (
            "tasks[0] (id '0_0').source_partitions[0].replica_racks",
            "racks 'r1' of partition orders-0 disagree with topics[0] ('orders'): 'r1', 'r2'; give them in one place",
        ),
        ("tasks[1] (id '0_1').source_partitions[0].leader_rack", "leader rack 'r1' of partition orders-1 disagrees with topics[0] ('orders'): 'r2'"),
        ("tasks[2] (id '0_2').source_partitions[0]", "partition orders-2 is beyond the 2 partitions that topics[0] ('orders') lays out"),
        ("topics[1] (name 'unread')", "topic 'unread' is read by no task"),
    ]


def test_a_file_without_its_tasks_or_topics_section_is_an_error_and_without_a_format_line_a_warning(tmp_path):
    from optimizer.model.normalize import normalize
    from optimizer.sources.problem_file import load_problem

    streams = tmp_path / "app.yaml"
    streams.write_text("kind: streams\nclients: [{id: a, previous_active: ['0_0'], threads: 0}]\n")
    with pytest.raises(InvalidInputError) as caught:
        load_problem(streams)
    assert [(i.location, i.message) for i in caught.value.issues] == [
        ("tasks", "missing section 'tasks': list the application's tasks (tasks: [] for an application without any)"),
        ("clients[0] (id 'a').threads", "Input should be greater than or equal to 1, got 0"),
    ]
    group = tmp_path / "group.json"
    group.write_text('{"format": "kafka-assignment-problem/v1", "kind": "consumer", "members": [{"id": "m", "subscriptions": ["t"]}]}')
    with pytest.raises(InvalidInputError) as caught:
        load_problem(group)
    assert [i.location for i in caught.value.issues] == ["topics"]

    streams.write_text("kind: streams\nclients: [{id: a}]\ntasks: []\n")
    warnings = [(w.location, w.message) for w in normalize(load_problem(streams)).warnings]
    assert warnings[0] == (
        "format",
        "no format line: read as kafka-assignment-problem/v1; write format: kafka-assignment-problem/v1 so the file says which format it is",
    )
    streams.write_text("format: kafka-assignment-problem/v1\nkind: streams\nclients: [{id: a}]\ntasks: []\n")
    assert "format" not in [w.location for w in normalize(load_problem(streams)).warnings]
    # Python code building a problem from data is not a file: no section or format line needed.
    assert normalize(problem_from_data({"kind": "streams", "clients": [{"id": "a"}]})).warnings[0].location == "tasks"
