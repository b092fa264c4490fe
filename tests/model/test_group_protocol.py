"""The protocol keys of issue 13 (`group.protocol`, `group.remote.assignor`,
`streams.assignor.name`, KIP-924's class name) and a streams client's members."""

from __future__ import annotations

import pytest

from optimizer import InvalidInputError, problem_from_data, with_protocol
from optimizer.model.consumer import GroupProtocol, RemoteAssignor
from optimizer.model.group_protocol import assignor_label
from optimizer.model.ids import member_id_of
from optimizer.model.normalize import normalize
from optimizer.model.streams import StreamsGroupAssignor, StreamsGroupProtocol, TaskAssignor


def consumer(config: dict) -> dict:
    return {
        "kind": "consumer",
        "topics": [{"name": "t", "partitions": 4}],
        "members": [{"id": "a", "subscriptions": ["t"]}, {"id": "b", "subscriptions": ["t"]}],
        "config": config,
    }


def streams(clients: list[dict], config: dict | None = None) -> dict:
    return {
        "kind": "streams",
        "tasks": [
            {"id": f"0_{p}", "stateful": True, "source_partitions": [{"topic": "in", "partition": p}], "changelog_end_offset": 100}
            for p in range(4)
        ],
        "clients": clients,
        "config": config or {},
    }


def test_consumer_protocol_keys_follow_kafka():
    assert problem_from_data(consumer({})).config.group_protocol == GroupProtocol.CLASSIC
    new = problem_from_data(consumer({"group.protocol": "CONSUMER"})).config
    assert (new.group_protocol, new.group_remote_assignor, new.remote_assignor) == (GroupProtocol.CONSUMER, None, RemoteAssignor.UNIFORM)
    ranged = problem_from_data(
        consumer({"group.protocol": "consumer", "group.remote.assignor": "org.apache.kafka.coordinator.group.assignor.RangeAssignor"})
    )
    assert ranged.config.remote_assignor == RemoteAssignor.RANGE
    assert assignor_label(ranged) == "KIP-848 range"


def test_remote_assignor_under_the_classic_protocol_is_refused_as_kafka_does():
    with pytest.raises(InvalidInputError, match=r"group\.remote\.assignor: cannot be set when group\.protocol=classic"):
        problem_from_data(consumer({"group.remote.assignor": "range"}))


def test_streams_protocol_keys_and_kip924_class():
    config = problem_from_data(streams([{"id": "c"}], {"group.protocol": "Streams", "streams.assignor.name": "balanced"})).config
    assert (config.group_protocol, config.streams_assignor_name) == (StreamsGroupProtocol.STREAMS, StreamsGroupAssignor.BALANCED)
    kip924 = "org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor"
    assert problem_from_data(streams([{"id": "c"}], {"task.assignor.class": kip924})).config.task_assignor_class == TaskAssignor.KIP924_STICKY
    with pytest.raises(InvalidInputError, match=r"streams\.assignor\.name"):
        problem_from_data(streams([{"id": "c"}], {"streams.assignor.name": "greedy"}))


def test_with_protocol_switches_only_the_protocol():
    group = problem_from_data(consumer({"partition.assignment.strategy": "cooperative-sticky"}))
    new = with_protocol(group, "new")
    assert new.config.group_protocol == GroupProtocol.CONSUMER and not new.config.cooperative
    assert with_protocol(new, "classic").config == group.config
    app = problem_from_data(streams([{"id": "c"}], {"num.standby.replicas": 0}))
    assert assignor_label(with_protocol(app, "new")) == "KIP-1071 sticky"
    assert assignor_label(app) == "classic high_availability"


def test_members_give_the_client_its_threads_and_history():
    app = problem_from_data(
        streams([{"id": "c", "members": [{"id": "m0", "previous_active": ["0_1"]}, {"previous_active": ["0_0"], "previous_warmup": ["0_2"]}]}])
    )
    client = app.clients[0]
    assert client.threads == 2
    assert set(client.previous_active) == {"0_0", "0_1"} and client.previous_standby == ("0_2",)
    assert client.member_ids == ("m0", member_id_of("c", 1))


def test_members_that_disagree_are_each_reported():
    data = streams(
        [
            {
                "id": "c",
                "threads": 3,
                "previous_active": ["0_3"],
                "members": [{"id": "m", "previous_active": ["0_0"]}, {"previous_active": ["0_1"], "previous_standby": ["0_1"]}],
            },
            {"id": "d", "members": [{"id": "m"}]},
        ]
    )
    with pytest.raises(InvalidInputError) as raised:
        problem_from_data(data)
    text = str(raised.value)
    assert "clients[0] (id 'c').threads: 3 threads but 2 members" in text
    assert "members[1].previous_standby[0]: task 0_1 is already in this member's previous_active[0]: a member holds one copy of a task" in text
    assert "clients[0] (id 'c').previous_active: disagrees with the union" in text


def test_member_ids_are_unique_in_the_group():
    with pytest.raises(InvalidInputError, match=r"clients\[1\] \(id 'd'\)\.members\[0\] \(id 'm'\)\.id: member id 'm' is already used by client 'c'"):
        problem_from_data(streams([{"id": "c", "members": [{"id": "m"}]}, {"id": "d", "members": [{"id": "m"}]}]))


def test_streams_groups_need_whole_subtopologies_of_one_statefulness():
    data = streams([{"id": "c"}], {"group.protocol": "streams"})
    data["tasks"] = [t for t in data["tasks"] if t["id"] != "0_1"]
    data["tasks"].append({"id": "1_0", "stateful": True, "source_partitions": [{"topic": "other", "partition": 0}]})
    data["tasks"].append({"id": "1_1", "source_partitions": [{"topic": "other", "partition": 1}]})
    with pytest.raises(InvalidInputError) as raised:
        problem_from_data(data)
    text = str(raised.value)
    assert "subtopology 0 lacks tasks 0_1" in text
    assert "task 1_1 is stateless but task 1_0 of the same subtopology is not" in text
    data["config"] = {}  # the classic assignors take tasks one by one
    problem = problem_from_data(data)
    with pytest.raises(InvalidInputError, match="subtopology 0 lacks tasks 0_1"):
        with_protocol(problem, "new")


def test_members_of_one_process_reporting_one_task_give_the_process_one_copy_with_a_warning():
    app = problem_from_data(
        streams(
            [
                {
                    "id": "c",
                    "members": [{"previous_active": ["0_0"], "previous_standby": ["0_2"]}, {"previous_active": ["0_0", "0_2"]}, {"previous_standby": ["0_1"]}],
                },
                {"id": "d", "members": [{"previous_standby": ["0_1"]}]},
            ]
        )
    )
    client = app.clients[0]
    assert client.previous_active == ("0_0", "0_2") and client.previous_standby == ("0_1",)
    warned = [str(w) for w in normalize(app).warnings]
    assert any(w.startswith("clients[0] (id 'c').members: tasks 0_0, 0_2 are reported by several members") for w in warned)
