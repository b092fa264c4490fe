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
        "greater than 0, got 0",
    ),
    (
        "negative-partition-count",
        consumer(_set(["topics", 0, "partitions"], -3)),
        "topics[0] (name 'orders-eu').partitions",
        "greater than 0, got -3",
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
        streams(_set(["clients", 1, "previous_standby"], ["0_00"])),
        "clients[1] (id 'b').previous_standby[0]",
        "malformed task id '0_00'",
    ),
    (
        "malformed-partition-id",
        consumer(_set(["members", 0, "owned_partitions"], ["orders_eu_0"])),
        "members[0] (id 'm1').owned_partitions[0]",
        "malformed partition id 'orders_eu_0'",
    ),
    (
        "active-on-two-clients",
        streams(lambda d: d["clients"][1].update(previous_active=["0_0"], previous_standby=[])),
        "clients[1] (id 'b').previous_active[0]",
        "task 0_0 is previously active on two clients, 'a' and 'b'",
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
    rendered = [str(issue) for issue in caught.value.issues]
    assert any(issue.location == location and words in issue.message for issue in caught.value.issues), rendered

    path = tmp_path / "app.json"
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 1
    assert location in result.output and words in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("app.json", '{"kind": "streams", "clients": [{"id": "a"},]}', "malformed JSON at line 1, column 45"),
        ("app.json", '{"kind": "streams", "kind": "consumer"}', "duplicate key 'kind'"),
        ("app.yaml", "kind: streams\nclients:\n  - {id: a\n", "malformed YAML at line 4"),
        ("app.yaml", "kind: streams\nkind: consumer\n", "duplicate key 'kind'"),
        ("app.yaml", "- just\n- a list\n", "a problem document is a mapping"),
        ("app.json", "", "malformed JSON at line 1"),
    ],
)
def test_malformed_documents(name, text, words, tmp_path):
    path = tmp_path / name
    path.write_text(text)
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 1
    assert words in result.output
    assert "Traceback" not in result.output


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
