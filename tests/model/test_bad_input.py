"""Every class of bad input gets a clear message naming the field, and exit code 1."""

from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner

from optimizer.cli import cli
from optimizer.errors import InvalidInputError
from optimizer.model import problem_from_data
from tests.conftest import CONSUMER, STREAMS


def streams(change):
    data = copy.deepcopy(STREAMS)
    change(data)
    return data


def consumer(change):
    data = copy.deepcopy(CONSUMER)
    change(data)
    return data


def _set(path, value):
    def change(data):
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


# (id, document, expected location, expected words in the message)
CASES = [
    ("unknown-field-top", streams(_set(["colour"], "blue")), "colour", "unknown field 'colour'"),
    (
        "unknown-field-nested",
        streams(_set(["clients", 1, "hostname"], "x")),
        "clients[1] (id 'b').hostname",
        "unknown field 'hostname'",
    ),
    (
        "unknown-config-key",
        streams(_set(["config", "num.standbys"], 1)),
        "config.num.standbys",
        "unknown field",
    ),
    (
        "missing-task-id",
        streams(lambda d: d["tasks"][1].pop("id")),
        "tasks[1].id",
        "missing required field 'id'",
    ),
    (
        "missing-subscriptions",
        consumer(lambda d: d["members"][1].pop("subscriptions")),
        "members[1] (id 'm2').subscriptions",
        "missing required field",
    ),
    ("missing-kind", streams(lambda d: d.pop("kind")), "kind", "missing required field 'kind'"),
    (
        "wrong-type-threads",
        streams(_set(["clients", 0, "threads"], "two")),
        "clients[0] (id 'a').threads",
        "valid integer",
    ),
    (
        "wrong-type-list",
        streams(_set(["clients", 0, "previous_active"], "0_0")),
        "clients[0] (id 'a').previous_active",
        "valid tuple",
    ),
    (
        "duplicate-client",
        streams(_set(["clients", 1, "id"], "a")),
        "clients[1] (id 'a')",
        "duplicate client id 'a'",
    ),
    (
        "duplicate-task",
        streams(_set(["tasks", 1, "id"], "0_0")),
        "tasks[1] (id '0_0')",
        "duplicate task id '0_0'",
    ),
    (
        "duplicate-member",
        consumer(_set(["members", 1, "id"], "m1")),
        "members[1] (id 'm1')",
        "duplicate member id 'm1'",
    ),
    (
        "duplicate-topic",
        consumer(lambda d: d["topics"].append({"name": "orders-eu", "partitions": 1})),
        "topics[1] (name 'orders-eu')",
        "duplicate topic name 'orders-eu'",
    ),
    (
        "negative-lag",
        streams(_set(["clients", 0, "lags", "0_0"], -5)),
        "clients[0] (id 'a').lags.0_0",
        "greater than or equal to 0, got -5",
    ),
    (
        "zero-threads",
        streams(_set(["clients", 1, "threads"], 0)),
        "clients[1] (id 'b').threads",
        "greater than or equal to 1, got 0",
    ),
    (
        "negative-partition-count",
        consumer(_set(["topics", 0, "partitions"], -3)),
        "topics[0] (name 'orders-eu').partitions",
        "greater than or equal to 1, got -3",
    ),
    (
        "unknown-rack-strategy",
        streams(_set(["config", "rack.aware.assignment.strategy"], "cheapest")),
        "config.rack.aware.assignment.strategy",
        "'min_traffic'",
    ),
    (
        "unknown-partition-strategy",
        consumer(_set(["config", "partition.assignment.strategy"], "fair")),
        "config.partition.assignment.strategy",
        "got 'fair'",
    ),
    (
        "tag-missing-on-client",
        streams(lambda d: d["clients"][1]["tags"].pop("zone")),
        "clients[1] (id 'b').tags",
        "lacks tag 'zone' named in rack.aware.assignment.tags",
    ),
    (
        "malformed-task-id",
        streams(_set(["tasks", 1, "id"], "1-0")),
        "tasks[1] (id '1-0').id",
        "malformed task id '1-0'",
    ),
    (
        "malformed-task-id-in-previous",
        streams(_set(["clients", 1, "previous_standby"], ["0_x"])),
        "clients[1] (id 'b').previous_standby[0]",
        "malformed task id '0_x'",
    ),
    (
        "malformed-partition-id",
        consumer(_set(["members", 0, "owned_partitions"], ["orders_eu_0"])),
        "members[0] (id 'm1').owned_partitions[0]",
        "malformed partition id 'orders_eu_0'",
    ),
    (
        "active-and-standby-on-one-client",
        streams(_set(["clients", 0, "previous_standby"], ["0_0"])),
        "clients[0] (id 'a').previous_standby[0]",
        "also in previous_active",
    ),
    (
        "partition-of-two-tasks",
        streams(_set(["tasks", 1, "source_partitions", 0, "topic"], "orders")),
        "tasks[1] (id '1_0').source_partitions[0]",
        "source partition orders-0 belongs to task 0_0 too",
    ),
    (
        "replica-racks-per-partition",
        consumer(_set(["topics", 0, "replica_racks"], [["r1"]])),
        "topics[0] (name 'orders-eu').replica_racks",
        "has 1 entries but the topic has 2 partitions",
    ),
    ("no-clients", streams(_set(["clients"], [])), "clients", "needs at least 1 entry"),
]


@pytest.mark.parametrize(("data", "location", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_named_and_located(data, location, words, tmp_path):
    with pytest.raises(InvalidInputError) as caught:
        problem_from_data(data, "app.json")
    issues = caught.value.issues
    assert len(issues) == 1, [str(i) for i in issues]  # one fault, one message
    assert issues[0].location == location and words in issues[0].message, str(issues[0])

    path = tmp_path / "app.json"
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert_clean_exit(result, 1)
    assert location in result.output and words in result.output


def assert_clean_exit(result, code):
    """The command ended through sys.exit with `code`, not through an exception."""
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("app.json", '{"kind": "streams", "clients": [{"id": "a"},]}', "malformed JSON at line 1, column 45"),
        ("app.json", '{"kind": "streams", "kind": "consumer"}', "duplicate key 'kind'"),
        ("app.yaml", "kind: streams\nclients:\n  - {id: a\n", "malformed YAML at line 4"),
        ("app.yaml", "kind: streams\nkind: consumer\n", "duplicate key 'kind'"),
        ("app.yaml", "- just\n- a list\n", "a problem document is a mapping"),
        ("app.json", "", "the file is empty"),
        ("app.yaml", "\n\n", "the file is empty"),
        ("app.json", "[" * 5000, "malformed JSON: nested too deeply"),
        ("app.yaml", "a:\n" + "- " * 3000 + "x\n", "nested too deeply"),
        ("app.json", '{"kind": "streams", "n": ' + "9" * 5000 + "}", "is too long"),
        ("app.yaml", "kind: streams\nn: " + "9" * 5000 + "\n", "is too long"),
        ("app.yaml", "kind: streams\nname: !!binary aGVsbG8=\n", "YAML tag tag:yaml.org,2002:binary is not supported"),
        ("app.yaml", "kind: streams\nclients: !!set {a, b}\n", "is not supported"),
    ],
)
def test_malformed_documents(name, text, words, tmp_path):
    path = tmp_path / name
    path.write_text(text)
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert_clean_exit(result, 1)
    assert words in result.output


@pytest.mark.parametrize(
    ("change", "location", "words"),
    [
        (_set(["clients", 0, "threads"], True), "clients[0] (id 'a').threads", "valid integer"),
        (_set(["clients", 0, "threads"], "3"), "clients[0] (id 'a').threads", "valid integer"),
        (_set(["clients", 0, "threads"], 2.0), "clients[0] (id 'a').threads", "valid integer"),
        (_set(["tasks", 0, "stateful"], "yes"), "tasks[0] (id '0_0').stateful", "valid boolean"),
        (_set(["tasks", 0, "stateful"], 1), "tasks[0] (id '0_0').stateful", "valid boolean"),
        (_set(["clients", 0, "threads"], 10**400), "clients[0] (id 'a').threads", "less than or equal to 1000"),
        (_set(["clients", 0, "lags", "0_0"], 2**63), "clients[0] (id 'a').lags.0_0", "less than or equal to"),
        (_set(["tasks", 1, "id"], "99999999999_1"), "tasks[1] (id '99999999999_1').id", "Java ints"),
        (_set(["config", "num.standby.replicas"], True), "config.num.standby.replicas", "whole number"),
        (_set(["config", "num.standby.replicas"], 1.5), "config.num.standby.replicas", "whole number"),
    ],
)
def test_wrong_types_are_not_coerced(change, location, words):
    with pytest.raises(InvalidInputError) as caught:
        problem_from_data(streams(change))
    issues = caught.value.issues
    assert len(issues) == 1 and issues[0].location == location and words in issues[0].message, str(issues[0])


def test_kafka_config_accepts_numbers_written_as_text():
    problem = problem_from_data(streams(_set(["config", "num.standby.replicas"], " 2 ")))
    assert problem.config.num_standby_replicas == 2


def test_huge_partition_count_is_rejected_before_use():
    with pytest.raises(InvalidInputError) as caught:
        problem_from_data(consumer(_set(["topics", 0, "partitions"], 10**12)))
    assert "less than or equal to 100000" in caught.value.issues[0].message


def test_strategy_lists_are_checked_entry_by_entry():
    with pytest.raises(InvalidInputError) as caught:
        problem_from_data(consumer(_set(["config", "partition.assignment.strategy"], ["sticky", "fair"])))
    assert "unknown strategy 'fair'" in caught.value.issues[0].message


def test_markup_in_ids_is_printed_as_text(tmp_path):
    data = streams(_set(["name"], "[/]"))
    data["clients"][0]["id"] = "[bold red]a"
    data["clients"][1]["threads"] = 0
    path = tmp_path / "app.json"
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert_clean_exit(result, 1)
    assert "(id 'b').threads" in result.output
    data["clients"][1]["threads"] = 1
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert_clean_exit(result, 0)
    assert "'[/]'" in result.output


def test_yaml_merge_keys_may_be_overridden(tmp_path):
    path = tmp_path / "app.yaml"
    path.write_text(
        "kind: streams\n"
        "clients:\n"
        "  - &base {id: a, threads: 2}\n"
        "  - {<<: *base, id: b}\n"
        "tasks: []\n"
    )
    from optimizer.sources.problem_file import load_problem

    assert [(c.id, c.threads) for c in load_problem(path).clients] == [("a", 2), ("b", 2)]


def test_a_byte_order_mark_is_not_content(tmp_path):
    path = tmp_path / "app.json"
    path.write_bytes("\ufeff".encode() + json.dumps(STREAMS).encode())
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert_clean_exit(result, 0)


def test_problem_wide_errors_are_reported_once():
    data = streams(lambda d: d["clients"][1]["tags"].pop("zone"))
    data["tasks"][1]["source_partitions"] = copy.deepcopy(data["tasks"][0]["source_partitions"])
    with pytest.raises(InvalidInputError) as caught:
        problem_from_data(data)
    assert sorted(map(str, caught.value.issues)) == [
        "clients[1] (id 'b').tags: lacks tag 'zone' named in rack.aware.assignment.tags; every client needs every tag",
        "tasks[1] (id '1_0').source_partitions[0]: source partition orders-0 belongs to task 0_0 too; "
        "in Kafka Streams a partition belongs to one task",
    ]


def test_previous_active_of_a_task_not_in_the_problem_is_not_an_error():
    data = streams(lambda d: d["clients"][0].update(previous_active=["0_0", "7_7"]))
    data["clients"][1].update(previous_active=["7_7"], previous_standby=[])
    problem = problem_from_data(data)  # 7_7 is gone: dropped with a warning, not an error
    assert problem.clients[1].previous_active == ("7_7",)


def test_every_problem_is_reported_in_one_pass():
    data = streams(_set(["clients", 0, "threads"], 0))
    data["clients"][1]["id"] = "a"  # duplicate, beside an error inside the first client
    data["tasks"][1]["id"] = "x"
    data["colour"] = "blue"
    data["clients"].append({"id": "c", "tags": {}})  # lacks the zone tag: a problem-wide check
    with pytest.raises(InvalidInputError) as caught:
        problem_from_data(data)
    locations = {issue.location for issue in caught.value.issues}
    assert {
        "clients[0] (id 'a').threads",
        "clients[1] (id 'a')",
        "tasks[1] (id 'x').id",
        "colour",
        "clients[2] (id 'c').tags",
    } <= locations


def test_lag_for_a_task_not_in_the_problem_is_fine():
    data = streams(_set(["clients", 1, "lags"], {"7_7": 12}))
    problem = problem_from_data(data)
    assert problem.clients[1].lags == {"7_7": 12}
