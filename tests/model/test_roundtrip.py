"""load -> save -> load gives the identical model, for every example and in both formats."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from optimizer.costs import StreamsIndex
from optimizer.errors import InvalidInputError
from optimizer.model import problem_from_data
from optimizer.model.ids import PartitionId, TaskId, TopicName
from optimizer.model.metrics import ConsumerMetrics, StreamsMetrics
from optimizer.model.normalize import normalize
from optimizer.model.problem import solution_from_data, solution_to_data
from optimizer.sources.problem_file import load_problem, load_solution, save_problem, save_solution
from tests.conftest import CONSUMER, EXAMPLES, STREAMS, example_problems, example_solutions


@pytest.mark.parametrize("path", example_problems(), ids=lambda p: p.name)
@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_example_problem_round_trip(path, suffix, tmp_path):
    problem = load_problem(path)
    target = tmp_path / f"copy{suffix}"
    save_problem(problem, target)
    assert load_problem(target) == problem


@pytest.mark.parametrize("data", [STREAMS, CONSUMER], ids=["streams", "consumer"])
@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_every_field_survives_round_trip(data, suffix, tmp_path):
    problem = problem_from_data(data)
    target = tmp_path / f"copy{suffix}"
    save_problem(problem, target)
    again = load_problem(target)
    assert again == problem
    # Kafka's keys are what is written, not Python attribute names.
    text = target.read_text()
    assert ("num.standby.replicas" in text) == (data["kind"] == "streams")
    assert "num_standby_replicas" not in text


@pytest.mark.parametrize("pair", example_solutions(), ids=lambda pair: pair[1].name)
def test_example_solution_round_trip(pair, tmp_path):
    solution = load_solution(pair[1])
    target = tmp_path / "copy.json"
    save_solution(solution, target)
    assert load_solution(target) == solution


def test_yaml_keeps_task_ids_and_rack_names_as_text(tmp_path):
    # YAML 1.1 would read 1_3 as 13, 0_1 as 1 and the rack "no" as false.
    path = tmp_path / "p.yaml"
    path.write_text(
        "kind: streams\n"
        "clients:\n"
        "  - {id: c1, rack: no, previous_active: [1_3], lags: {0_1: 010}}\n"
        "tasks:\n"
        "  - {id: 1_3, source_partitions: [{topic: t, partition: 3}]}\n"
    )
    problem = load_problem(path)
    client = problem.clients[0]
    assert client.rack == "no"
    assert client.previous_active == ("1_3",)
    assert client.lags == {"0_1": 10}
    assert problem.tasks[0].id == "1_3" and problem.tasks[0].subtopology == 1


def test_kafka_spellings_are_accepted():
    streams = problem_from_data(
        {**STREAMS, "config": {"rack.aware.assignment.tags": "zone, cluster", "num.standby.replicas": "2"}}
        | {"clients": [{"id": "a", "tags": {"zone": "z", "cluster": "k"}}]}
    )
    assert streams.config.rack_aware_assignment_tags == ("zone", "cluster")
    assert streams.config.num_standby_replicas == 2
    consumer = problem_from_data(
        {
            **CONSUMER,
            "config": {
                "partition.assignment.strategy": [
                    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
                    "org.apache.kafka.clients.consumer.RangeAssignor",
                ]
            },
        }
    )
    assert consumer.config.partition_assignment_strategy == "cooperative-sticky"


def test_kafka_defaults():
    problem = problem_from_data({"kind": "streams", "clients": [{"id": "a"}]})
    config = problem.config
    assert config.num_standby_replicas == 0
    assert config.acceptable_recovery_lag == 10_000
    assert config.max_warmup_replicas == 2
    assert config.probing_rebalance_interval_ms == 600_000
    assert config.rack_aware_assignment_strategy == "none"
    assert config.rack_aware_assignment_traffic_cost is None
    assert config.rack_aware_assignment_non_overlap_cost is None
    assert problem.clients[0].threads == 1
    group = problem_from_data({"kind": "consumer", "members": [{"id": "m", "subscriptions": ["t"]}]})
    assert group.config.partition_assignment_strategy == "range"
    assert group.members[0].generation == -1


def test_topic_names_may_contain_dashes():
    problem = problem_from_data(CONSUMER)
    assert problem.members[0].owned_partitions == ("orders-eu-0",)


def test_non_default_config_and_full_solution_round_trip(tmp_path):
    from optimizer.model import ClientAssignment, GoalResult, PluginInfo, Solution, SolverInfo
    from optimizer.model.issues import Issue, Severity
    from optimizer.sources.problem_file import load_solution

    data = {
        **STREAMS,
        "config": {
            "num.standby.replicas": 2,
            "acceptable.recovery.lag": 500,
            "max.warmup.replicas": 5,
            "probing.rebalance.interval.ms": 120000,
            "rack.aware.assignment.strategy": "balance_subtopology",
            "rack.aware.assignment.traffic_cost": 3,
            "rack.aware.assignment.non_overlap_cost": 7,
            "rack.aware.assignment.tags": ["zone"],
        },
    }
    problem = problem_from_data(data)
    for suffix in (".json", ".yaml"):
        target = tmp_path / f"p{suffix}"
        save_problem(problem, target)
        assert load_problem(target) == problem
    solution = Solution(
        problem="orders-app",
        kind="streams",
        assignment={"a": ClientAssignment(active=("0_0",), warmup=("1_0",)), "b": ClientAssignment(standby=("0_0",))},
        followup_rebalance=True,
        goals=(GoalResult(name="balance", value=0.0, status="optimal", bound=0.0, seconds=0.25),),
        metrics=StreamsMetrics(
            clients=2, tasks=2, active_tasks=1, standby_tasks=1, warmup_tasks=1, cross_rack_active_partitions=1,
            cross_rack_standby_partitions=0, cross_rack_warmup_partitions=2, kip925_cost=12, active_moves=1,
            standby_moves=0, active_load_skew=0.5, stateful_load_skew=1.0, subtopology_skew=1,
            subtopology_skews={"0": 1, "1": 0}, subtopology_cap_excess=0, standby_rack_conflicts=1,
            standby_tag_conflicts=0, tag_conflicts={"zone": 0}, actives_not_caught_up=0, rack_info_complete=True,
        ),
        solver=SolverInfo(name="exact", version="1.2.3", options={"goals": ["balance"]}, plugins=(PluginInfo(name="builtin", version="1"),)),
        warnings=(Issue(severity=Severity.WARNING, location="clients", message="m"),),
    )
    target = tmp_path / "s.json"
    save_solution(solution, target)
    assert load_solution(target) == solution


# The `metrics` objects `kafka-assign solve -o` wrote before metrics were typed (the file format).
STREAMS_METRICS = {
    "clients": 3, "tasks": 3, "active_tasks": 3, "standby_tasks": 3, "warmup_tasks": 2, "cross_rack_active_partitions": 0,
    "cross_rack_standby_partitions": 0, "cross_rack_warmup_partitions": 0, "kip925_cost": 0, "active_moves": 0,
    "standby_moves": 0, "active_load_skew": 2.0, "stateful_load_skew": 3.0, "subtopology_skew": 2, "subtopology_skews": {"0": 2},
    "subtopology_cap_excess": 0, "standby_rack_conflicts": 0, "standby_tag_conflicts": 0, "tag_conflicts": {},
    "actives_not_caught_up": 0, "rack_info_complete": False,
}
CONSUMER_METRICS = {
    "members": 2, "partitions": 8, "assigned_partitions": 8, "withheld_partitions": 0, "min_size": 4, "max_size": 4,
    "size_skew": 0, "balance_score": 0, "owned_kept": 5, "owned_moved": 0, "cross_rack_partitions": 0, "rack_info_complete": False,
}


@pytest.mark.parametrize(
    "kind, metrics, typed",
    [("streams", STREAMS_METRICS, StreamsMetrics), ("consumer", CONSUMER_METRICS, ConsumerMetrics)],
)
def test_solution_metrics_are_typed_and_written_back_unchanged(kind, metrics, typed):
    data = {"format": "kafka-assignment-solution/v1", "kind": kind, "assignment": {}, "metrics": metrics}
    solution = solution_from_data(data)
    assert type(solution.metrics) is typed
    assert solution_to_data(solution) == data
    assert list(solution_to_data(solution)["metrics"]) == list(metrics)  # Kafka's key names, in the same order


def test_a_solution_without_metrics_has_none():
    assert solution_from_data({"assignment": {}}).metrics is None
    assert solution_from_data({"assignment": {}, "metrics": {}}).metrics is None  # the old empty default
    assert "metrics" not in solution_to_data(solution_from_data({"assignment": {}}))


@pytest.mark.parametrize(
    "metrics",
    [
        {"kip925_cost": 12},
        {**STREAMS_METRICS, "members": 2},
        {k: v for k, v in CONSUMER_METRICS.items() if k != "owned_kept"},
    ],
)
def test_metrics_that_are_not_a_complete_set_read_as_not_evaluated(metrics):
    # The evaluator recomputes metrics whenever they matter: a partial or foreign set does not
    # fail the file (the assignment is what counts) ...
    solution = solution_from_data({"assignment": {"a": {"active": ["0_0"]}}, "metrics": metrics})
    assert solution.metrics is None and solution.assignment["a"].active == ("0_0",)
    # ... but metrics that are not an object at all are a malformed file.
    with pytest.raises(InvalidInputError) as error:
        solution_from_data({"assignment": {}, "metrics": [1, 2]})
    assert all(issue.location.startswith("metrics") for issue in error.value.issues)


def test_yaml_written_here_reads_back_the_same_text(tmp_path):
    # Ids that YAML 1.1 or 1.2 would read as numbers, booleans or dates stay text.
    data = {"kind": "consumer", "topics": [{"name": "1e3", "partitions": 1}], "members": [
        {"id": "no", "rack": "2024-01-01", "subscriptions": ["1e3"]},
        {"id": "0_1", "rack": "12E7", "subscriptions": ["1e3"]},
        {"id": "010", "subscriptions": ["1e3"]},
    ]}
    problem = problem_from_data(data)
    target = tmp_path / "g.yaml"
    save_problem(problem, target)
    assert load_problem(target) == problem


@pytest.mark.parametrize(
    "task_id, written, error",
    [
        ("0_3", "0_3", None),
        ("999999999_999999999", "999999999_999999999", None),
        ("2147483647_2147483647", "2147483647_2147483647", None),  # 10 digits: past the quick check, still a Java int
        ("2147483648_0", None, "Java ints"),
        ("0_2147483648", None, "Java ints"),
        ("0_05", "0_5", None),  # Kafka's TaskId.parse: Integer.parseInt("05") is 5
        ("00000000002147483647_00", "2147483647_0", None),
        ("1_", None, "malformed task id"),
        ("1_2\n", None, "malformed task id"),
    ],
)
def test_task_ids_are_two_java_ints_written_without_leading_zeros(task_id, written, error):
    adapter = TypeAdapter(TaskId)
    if error is None:
        assert adapter.validate_python(task_id) == written
    else:
        with pytest.raises(ValidationError, match=error):
            adapter.validate_python(task_id)


@pytest.mark.parametrize("model, text", [(TopicName, "orders\n"), (PartitionId, "orders-3\n"), (PartitionId, "orders\n-3")])
def test_a_trailing_or_inner_newline_is_not_part_of_a_legal_id(model, text):
    with pytest.raises(ValidationError, match=r"illegal topic name|malformed partition id"):
        TypeAdapter(model).validate_python(text)


def test_equal_problems_stay_equal_with_their_derivations_kept_on_them():
    # The normalised problem and the index are kept on the problem (`derived`); comparing two
    # equal problems must not compare those field by field (it recursed through index.problem).
    path = EXAMPLES / "kip441" / "scaling-out-1.problem.yaml"
    first, second = load_problem(path), load_problem(path)
    for problem in (first, second):
        StreamsIndex.of(problem)
        StreamsIndex.of(normalize(problem).problem)
    assert first == second
    assert normalize(first).problem == normalize(second).problem
