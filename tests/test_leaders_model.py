"""Leaders and follower fetching in the problem format: the serving rule, the fields' validation
and the warnings (issue 31, item 2; docs/file-formats.md, "Leaders and follower fetching")."""

from __future__ import annotations

import pytest

from optimizer.errors import InvalidInputError
from optimizer.model import problem_from_data, problem_to_data
from optimizer.model.normalize import normalize
from optimizer.model.racks import RACK_AWARE_REPLICA_SELECTOR, read_from_racks, reads_across_racks, serving_racks

THREE = ("r1", "r2", "r3")


@pytest.mark.parametrize(
    ("reader", "replicas", "leader", "follower_fetching", "across"),
    [
        # Leader only (Kafka's default): every reader outside the leader's rack crosses racks.
        ("r1", THREE, "r1", False, False),
        ("r2", THREE, "r1", False, True),
        ("r3", THREE, "r1", False, True),
        ("r4", THREE, "r1", False, True),
        ("r2", (), "r1", False, True),  # replica racks unknown, the leader known: it serves
        # Follower fetching: a replica in the reader's rack serves it.
        ("r2", THREE, "r1", True, False),
        ("r3", THREE, "r1", True, False),
        ("r4", THREE, "r1", True, True),
        ("r4", ("r1", "r2"), None, True, True),
        ("r2", (), "r1", True, False),  # which followers exist is unknown: not certain
        # The leader unknown, follower fetching off: only what is certain (no replica in the rack).
        ("r2", THREE, None, False, False),
        ("r4", THREE, None, False, True),
        ("r2", ("r1",), None, False, True),
        ("r2", (), None, False, False),
        ("r2", None, None, False, False),
        # A reader without a rack never reads across racks.
        (None, THREE, "r1", False, False),
        (None, THREE, "r1", True, False),
        (None, ("r1",), None, False, False),
    ],
)
def test_the_serving_rule(reader, replicas, leader, follower_fetching, across):
    assert reads_across_racks(reader, serving_racks(replicas, leader, follower_fetching)) is across


def test_a_crossing_read_comes_from_the_leader_when_known():
    assert read_from_racks(THREE, "r2") == ("r2",)
    assert read_from_racks(THREE, None) == THREE  # shared among the replica racks
    assert read_from_racks((), "r2") == ("r2",)
    assert read_from_racks(None, None) == ()


def _streams(config=None, **partition):
    return {
        "kind": "streams",
        "config": config or {},
        "clients": [{"id": "a", "rack": "r1"}, {"id": "b", "rack": "r2"}],
        "tasks": [
            {"id": "0_0", "source_partitions": [{"topic": "orders", "partition": 0, "replica_racks": ["r1", "r2"], **partition}]},
            {"id": "0_1", "source_partitions": [{"topic": "orders", "partition": 1, "replica_racks": ["r1", "r2"]}]},
        ],
    }


def _consumer(config=None, **topic):
    return {
        "kind": "consumer",
        "config": config or {},
        "topics": [{"name": "orders", "partitions": 3, "replica_racks": [["r1", "r2"], ["r2", "r3"], ["r3"]], **topic}],
        "members": [{"id": "m1", "rack": "r1", "subscriptions": ["orders"]}],
    }


def _issues(data):
    with pytest.raises(InvalidInputError) as raised:
        problem_from_data(data)
    return [str(issue) for issue in raised.value.issues]


def test_a_streams_leader_outside_the_replica_racks_is_an_error_naming_task_and_partition():
    assert _issues(_streams(leader_rack="r3")) == [
        "tasks[0] (id '0_0').source_partitions[0].leader_rack: the leader's rack 'r3' of partition orders-0 is not among "
        "its replica racks 'r1', 'r2': the leader is one of the replicas"
    ]


def test_a_consumer_leader_outside_its_partitions_replica_racks_is_an_error_per_partition():
    assert _issues(_consumer(leader_racks=["r3", "r1", "r1"])) == [
        "topics[0] (name 'orders').leader_racks[0]: the leader's rack 'r3' of partition orders-0 is not among its replica "
        "racks 'r1', 'r2': the leader is one of the replicas",
        "topics[0] (name 'orders').leader_racks[1]: the leader's rack 'r1' of partition orders-1 is not among its replica "
        "racks 'r2', 'r3': the leader is one of the replicas",
        "topics[0] (name 'orders').leader_racks[2]: the leader's rack 'r1' of partition orders-2 is not among its replica "
        "racks 'r3': the leader is one of the replicas",
    ]


@pytest.mark.parametrize("leaders", [["r1"], ["r1", "r2", "r3", "r3"], []])
def test_leader_racks_of_the_wrong_length_is_an_error(leaders):
    assert _issues(_consumer(leader_racks=leaders)) == [
        f"topics[0] (name 'orders').leader_racks: has {len(leaders)} entries but the topic has 3 partitions; give one "
        "leader rack per partition (null where unknown)"
    ]


def test_leaders_without_replica_racks_are_not_checked_against_them():
    data = _consumer(leader_racks=["r9", None, "r3"])
    del data["topics"][0]["replica_racks"]
    problem = problem_from_data(data)
    assert problem.serving_racks_of("orders-0") == ("r9",)
    assert problem.serving_racks_of("orders-1") is None
    assert problem_from_data(_streams(leader_rack="r2")).tasks[0].source_partitions[0].leader_rack == "r2"


def test_a_leader_rack_is_a_checked_name():
    assert _issues(_streams(leader_rack="r\x1b1"))[0].startswith("tasks[0] (id '0_0').source_partitions[0].leader_rack: ")
    assert "leader_racks[0]" in _issues(_consumer(leader_racks=[7, None, None]))[0]


@pytest.mark.parametrize(
    ("value", "follower_fetching"),
    [
        (None, False),
        ("", False),
        ("  ", False),
        (RACK_AWARE_REPLICA_SELECTOR, True),
        ("RackAwareReplicaSelector", True),
        (f" {RACK_AWARE_REPLICA_SELECTOR} ", True),
    ],
)
def test_replica_selector_class(value, follower_fetching):
    for data in (_streams({"replica.selector.class": value}), _consumer({"replica.selector.class": value})):
        problem = problem_from_data(data)
        assert problem.config.follower_fetching is follower_fetching
        assert normalize(problem).warnings == ()


def test_a_custom_selector_is_warned_about_and_counts_from_the_leader():
    for data in (_streams({"replica.selector.class": "com.example.ZoneSelector"}), _consumer({"replica.selector.class": "com.example.ZoneSelector"})):
        problem = problem_from_data(data)
        assert not problem.config.follower_fetching
        assert [str(w) for w in normalize(problem).warnings] == [
            "config.replica.selector.class: 'com.example.ZoneSelector' is not Kafka's RackAwareReplicaSelector: which "
            "replica it picks is unknown, so cross-rack reads are counted from the leader, as with Kafka's default"
        ]


def test_leaders_for_some_partitions_only_are_warned_about_unless_followers_serve():
    streams = problem_from_data(_streams(leader_rack="r1"))
    assert [str(w) for w in normalize(streams).warnings] == [
        "tasks: partitions orders-1 have replica racks but no leader rack while others have one: their reads are "
        "counted as cross-rack only when no replica is in the reader's rack"
    ]
    consumer = problem_from_data(_consumer(leader_racks=["r1", None, "r3"]))
    assert [str(w) for w in normalize(consumer).warnings] == [
        "topics: partitions orders-1 have replica racks but no leader rack while others have one: their reads are "
        "counted as cross-rack only when no replica is in the reader's rack"
    ]
    following = problem_from_data(_consumer({"replica.selector.class": "RackAwareReplicaSelector"}, leader_racks=["r1", None, "r3"]))
    assert normalize(following).warnings == ()


def test_problems_without_leaders_get_no_new_warning():
    assert normalize(problem_from_data(_streams())).warnings == ()
    assert normalize(problem_from_data(_consumer())).warnings == ()


def test_leaders_and_the_selector_round_trip():
    for data in (
        _streams({"replica.selector.class": "RackAwareReplicaSelector"}, leader_rack="r2"),
        _consumer({"replica.selector.class": "RackAwareReplicaSelector"}, leader_racks=["r2", None, "r3"]),
    ):
        problem = problem_from_data(data)
        written = problem_to_data(problem)
        assert written["config"]["replica.selector.class"] == "RackAwareReplicaSelector"
        assert problem_from_data(written) == problem


def test_serving_racks_of_a_consumer_partition():
    leader_reads = problem_from_data(_consumer(leader_racks=["r2", None, "r3"]))
    assert [leader_reads.serving_racks_of(f"orders-{p}") for p in range(3)] == [("r2",), ("r2", "r3"), ("r3",)]
    assert leader_reads.serving_racks_of("gone-0") is None
    following = problem_from_data(_consumer({"replica.selector.class": "RackAwareReplicaSelector"}, leader_racks=["r2", None, "r3"]))
    assert [following.serving_racks_of(f"orders-{p}") for p in range(3)] == [("r1", "r2"), ("r2", "r3"), ("r3",)]
    assert leader_reads.cross_by_rack(["orders-0", "orders-1", "orders-2"], ["r1", "r2", "r3", None]).tolist() == [
        [1, 0, 1, 0],
        [1, 0, 0, 0],
        [1, 1, 0, 0],
    ]
