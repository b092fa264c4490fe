"""`optimizer.sources.kafka_streams`: the adapter's JSON (`kao.jvm.DescribeStreams`) mapped to a
Streams problem, without a cluster. The classic application below is a recording of the sandbox
(tests/kafka/test_import_streams.py's application, ids shortened): three processes, the first with
two stream threads, one standby, its third process rejoined on stale state; its assignment is the one
Kafka 4.4.0's high-availability assignor gave it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from optimizer.errors import InvalidInputError
from optimizer.model.problem import problem_from_data
from optimizer.model.streams import StreamsProblem
from optimizer.solve import solve
from optimizer.sources.kafka_streams import map_streams_application, streams_problem

A, B, C = "0910a36e-0000-4000-8000-00000000000a", "0e6239be-0000-4000-8000-00000000000b", "902d28d6-0000-4000-8000-00000000000c"
IN, REPARTITION, CHANGELOG = "app-in", "app-counts-repartition", "app-counts-changelog"
BROKERS = [{"id": 1, "rack": "a", "replica_selector": None}, {"id": 2, "rack": "b", "replica_selector": None}, {"id": 3, "rack": "c", "replica_selector": None}]
REPLICAS = {  # (leader, replicas) per partition, as Kafka placed them
    IN: [(1, [1, 2]), (2, [2, 3]), (3, [3, 1]), (3, [3, 2]), (2, [2, 1]), (1, [1, 3])],
    REPARTITION: [(1, [1, 2]), (2, [2, 3]), (3, [3, 1]), (1, [1, 2]), (2, [2, 3]), (3, [3, 1])],
    CHANGELOG: [(2, [2, 3]), (3, [3, 1]), (1, [1, 2]), (2, [2, 3]), (3, [3, 1]), (1, [1, 2])],
}
ENDS = [132, 96, 120, 120, 108, 144]
# process, thread, task offset sums, active tasks, standby tasks (as the threads' subscriptions and assignments say)
THREADS = [
    (A, 1, {"1_0": 132, "1_1": -2, "1_3": 120}, ["1_1", "0_0", "0_3"], ["1_0", "1_3"]),
    (A, 2, {"1_2": 120, "1_4": -2, "1_5": 144}, ["1_4", "0_1", "0_5"], ["1_2", "1_5"]),
    (B, 1, {"1_0": 132, "1_1": 96, "1_2": 120, "1_3": 120, "1_4": 108, "1_5": -2}, ["1_2", "1_5", "0_4"], ["1_4"]),
    (C, 1, {"1_0": 132, "1_1": 80, "1_3": 100}, ["1_0", "1_3", "0_2"], ["1_1"]),
]
RACKS = {A: "a", B: "b", C: "c"}


def _source(task: str) -> list[Any]:
    subtopology, partition = (int(x) for x in task.split("_"))
    return [IN if subtopology == 0 else REPARTITION, partition]


def _topics() -> dict[str, Any]:
    return {name: {"partitions": [{"partition": p, "leader": leader, "replicas": replicas} for p, (leader, replicas) in enumerate(layout)]}
            for name, layout in REPLICAS.items()}  # fmt: skip


def classic() -> dict[str, Any]:
    """The recorded classic application's adapter JSON."""
    members = []
    for process, thread, sums, active, standby in THREADS:
        client = f"app-{process}-StreamThread-{thread}-consumer"
        assigned = sorted((_source(task) for task in active), key=lambda p: (p[0], p[1]))
        by_partition = {tuple(_source(task)): task for task in active}
        members.append({
            "member_id": f"{client}-m", "client_id": client, "has_metadata": True, "has_assignment": True, "rack": RACKS[process],
            "subscriptions": [REPARTITION, IN], "generation": 5, "process_id": process, "client_tags": {"zone": "z" + RACKS[process]},
            "task_offset_sums": dict(sums), "assignment": assigned, "active_tasks": [[by_partition[tuple(p)], p] for p in assigned],
            "standby_tasks": {task: [_source(task)] for task in standby}, "assignment_error_code": 0,
        })  # fmt: skip
    tasks = [{"id": f"{s}_{p}", "source_partitions": [_source(f"{s}_{p}")]} for s in (0, 1) for p in range(6)]
    return {
        "application_id": "app", "protocol": "classic", "type": "CLASSIC", "state": "Stable", "assignor": "stream", "members": members,
        "tasks": tasks, "changelog_topics": [CHANGELOG], "end_offsets": {CHANGELOG: ENDS}, "group_configs": {}, "broker_group_configs": {},
        "brokers": copy.deepcopy(BROKERS), "topics": _topics(),
    }  # fmt: skip


RUNNING = {  # what the recorded application ran (and Kafka's assignor gives again)
    A: (["0_0", "0_1", "0_3", "0_5", "1_1", "1_4"], ["1_0", "1_2", "1_3", "1_5"]),
    B: (["0_4", "1_2", "1_5"], ["1_4"]),
    C: (["0_2", "1_0", "1_3"], ["1_1"]),
}


def _problem(document: dict[str, Any]) -> StreamsProblem:
    problem = problem_from_data(document, "imported")
    assert isinstance(problem, StreamsProblem)
    return problem


def test_a_classic_application_maps_to_its_clients_tasks_and_lags_and_solves_to_what_it_ran():
    imported = map_streams_application(classic(), "127.0.0.1:9092")
    problem = _problem(imported.document)
    assert problem.name == "app" and problem.description.startswith("Kafka Streams application app imported from kafka://127.0.0.1:9092")
    assert [(c.id, c.rack, c.threads, dict(c.tags)) for c in problem.clients] == [(A, "a", 2, {"zone": "za"}), (B, "b", 1, {"zone": "zb"}),
                                                                                (C, "c", 1, {"zone": "zc"})]  # fmt: skip
    clients = {c.id: c for c in problem.clients}
    assert {c: (list(x.previous_active), list(x.previous_standby)) for c, x in clients.items()} == RUNNING
    # lags: end offset minus the sum the process reported, 0 for a sum of -2 (a running active when it
    # joined), none for the tasks it runs as active now
    assert dict(clients[A].lags) == {"1_0": 0, "1_2": 0, "1_3": 0, "1_5": 0}
    assert dict(clients[B].lags) == {"1_0": 0, "1_1": 0, "1_3": 0, "1_4": 0}
    assert dict(clients[C].lags) == {"1_1": 96 - 80}
    tasks = {t.id: t for t in problem.tasks}
    assert [t.id for t in problem.tasks] == [f"{s}_{p}" for s in (0, 1) for p in range(6)]
    assert not tasks["0_3"].stateful and tasks["0_3"].changelog_end_offset is None
    one = tasks["1_1"]
    assert one.stateful and one.changelog_end_offset == 96
    assert [(p.topic, p.partition, list(p.replica_racks), p.leader_rack) for p in one.source_partitions] == [(REPARTITION, 1, ["b", "c"], "b")]
    assert [(p.topic, p.partition, list(p.replica_racks), p.leader_rack) for p in one.changelog_partitions] == [(CHANGELOG, 1, ["c", "a"], "c")]
    config = problem.config
    assert (str(config.group_protocol), config.num_standby_replicas, list(config.rack_aware_assignment_tags)) == ("classic", 1, ["zone"])
    assert config.replica_selector_class is None and str(config.kafka_version) == "4.4"
    assert len(imported.warnings) == 5
    assert all(warning in problem.description for warning in imported.warnings)
    for said in ("num.standby.replicas 1: inferred", "rack.aware.assignment.tags ['zone']: guessed", "acceptable.recovery.lag 10000",
                 "(generation 5): they are as old as the last rebalance", "kafka.version 4.4"):  # fmt: skip
        assert any(said in warning for warning in imported.warnings), said
    solution = solve(problem, solver="kafka")
    assert {c: (sorted(a.active), sorted(a.standby)) for c, a in solution.assignment.items()} == RUNNING
    assert not solution.followup_rebalance


def test_kafka_lag_rules_a_given_standby_count_and_rates():
    """A sum above the end offset gives the end offset (Kafka's corrupted-task rule); an unknown sum
    (-3) gives 0 (Kafka keeps -3 as the lag: caught up); a task the application does not have gives
    none; --num-standby-replicas replaces the
    inferred count (a warning when under what runs); rates land on the partitions they name; a
    scheduled probing rebalance is said."""
    described = classic()
    described["members"][3]["task_offset_sums"] = {"1_1": 500, "1_2": -3, "7_0": 4}
    described["members"][1]["next_rebalance_ms"] = 1_800_000_000_000
    rates = {(IN, 2): 1000.0, (CHANGELOG, 1): 250.5}
    imported = map_streams_application(described, "h:1", num_standby_replicas=0, rates=rates)
    problem = _problem(imported.document)
    clients = {c.id: c for c in problem.clients}
    assert dict(clients[C].lags) == {"1_1": 96, "1_2": 0}
    assert problem.config.num_standby_replicas == 0
    assert any("num.standby.replicas 0 as given, but a task runs 1 standbys" in w for w in imported.warnings)
    assert any("a probing rebalance is scheduled for 2027-01-15T08:00:00Z" in w for w in imported.warnings)
    tasks = {t.id: t for t in problem.tasks}
    assert tasks["0_2"].source_partitions[0].bytes_per_second == 1000.0
    assert tasks["1_1"].changelog_partitions[0].bytes_per_second == 250.5
    assert tasks["1_1"].source_partitions[0].bytes_per_second is None
    with pytest.raises(InvalidInputError, match=r"num\.standby\.replicas must be a whole number"):
        map_streams_application(classic(), "h:1", num_standby_replicas=-1)


def test_changelogs_of_several_stateful_subtopologies_are_attributed_by_partition_count_or_refused():
    described = classic()
    # a second changelog with as many partitions as both subtopologies have tasks: which store is whose is unknown
    described["changelog_topics"] = [CHANGELOG, "app-other-changelog"]
    described["topics"]["app-other-changelog"] = copy.deepcopy(described["topics"][CHANGELOG])
    described["end_offsets"]["app-other-changelog"] = [1] * 6
    described["members"][0]["task_offset_sums"]["0_0"] = 5  # subtopology 0 is stateful too
    with pytest.raises(InvalidInputError, match=r"the changelogs app-counts-changelog \(6 partitions: subtopologies 0, 1\); app-other-changelog"):
        streams_problem(described, "h:1")
    # subtopology 0 with 3 tasks: a 3-partition changelog can only be its
    described = classic()
    described["tasks"] = [t for t in described["tasks"] if t["id"] not in ("0_3", "0_4", "0_5")]
    for member in described["members"]:
        member["active_tasks"] = [pair for pair in member["active_tasks"] if pair[0] not in ("0_3", "0_4", "0_5")]
    described["members"][0]["task_offset_sums"]["0_0"] = 5
    described["changelog_topics"] = [CHANGELOG, "app-small-changelog"]
    described["topics"]["app-small-changelog"] = {"partitions": described["topics"][CHANGELOG]["partitions"][:3]}
    described["end_offsets"]["app-small-changelog"] = [7, 8, 9]
    imported = map_streams_application(described, "h:1")
    tasks = {t.id: t for t in _problem(imported.document).tasks}
    assert [p.topic for p in tasks["0_1"].changelog_partitions] == ["app-small-changelog"] and tasks["0_1"].changelog_end_offset == 8
    assert [p.topic for p in tasks["1_1"].changelog_partitions] == [CHANGELOG]
    assert any("changelog app-small-changelog given to subtopology 0 by its partition count (3)" in w for w in imported.warnings)


def test_the_replica_selector_is_written_when_every_broker_has_the_same_and_left_out_otherwise():
    selector = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
    described = classic()
    for broker in described["brokers"]:
        broker["replica_selector"] = selector
    problem = _problem(streams_problem(described, "h:1"))
    assert problem.config.replica_selector_class == selector
    described["brokers"][2]["replica_selector"] = "unknown"
    imported = map_streams_application(described, "h:1")
    assert "replica.selector.class" not in imported.document["config"]
    assert any("replica.selector.class differ or cannot be read" in w for w in imported.warnings)


def streams_group() -> dict[str, Any]:
    """A streams group's adapter JSON: process A with two members, B with one."""

    def member(member_id: str, process: str, thread: int, active: list[str], standby: list[str], offsets: dict[str, int]) -> dict[str, Any]:
        assignment = {"active": active, "standby": standby, "warmup": []}
        return {"member_id": member_id, "member_epoch": 7, "process_id": process, "client_id": f"app-{process}-StreamThread-{thread}-consumer",
                "rack": RACKS[process], "client_tags": {"zone": "z" + RACKS[process]}, "assignment": assignment,
                "target_assignment": copy.deepcopy(assignment), "task_offsets": offsets, "task_end_offsets": {}}  # fmt: skip

    configs = {"streams.num.standby.replicas": {"value": "1", "source": "DYNAMIC_GROUP_CONFIG"},
               "streams.rack.aware.assignment.tags": {"value": "zone", "source": "DYNAMIC_GROUP_CONFIG"},
               "streams.task.offset.interval.ms": {"value": "60000", "source": "DEFAULT_CONFIG"}}  # fmt: skip
    return {
        "application_id": "app", "protocol": "streams", "type": "STREAMS", "state": "Stable", "assignor": "sticky", "group_epoch": 7,
        "members": [
            member("m-a2", A, 2, ["0_1", "1_1"], ["1_2"], {"1_2": 100, "1_0": 90}),
            member("m-a1", A, 1, ["0_0", "1_0"], [], {"1_2": 80, "1_1": 10}),
            member("m-b1", B, 1, ["0_2", "1_2"], ["1_0", "1_1"], {"1_0": 132}),
        ],
        "subtopologies": [
            {"id": "0", "source_topics": [IN], "repartition_source_topics": {}, "repartition_sink_topics": [REPARTITION], "state_changelog_topics": {}},
            {"id": "1", "source_topics": [], "repartition_source_topics": {REPARTITION: {"partitions": 3}}, "repartition_sink_topics": [],
             "state_changelog_topics": {CHANGELOG: {"partitions": 3}}},
        ],
        "changelog_topics": [CHANGELOG], "end_offsets": {CHANGELOG: ENDS[:3]}, "group_configs": configs,
        "broker_group_configs": {"group.streams.num.standby.replicas": {"value": "0", "source": "DEFAULT_CONFIG"}},
        "brokers": copy.deepcopy(BROKERS),
        "topics": {name: {"partitions": topic["partitions"][:3]} for name, topic in _topics().items()},
    }  # fmt: skip


def test_a_streams_group_maps_to_clients_with_their_members_and_the_group_configs():
    imported = map_streams_application(streams_group(), "h:1")
    problem = _problem(imported.document)
    config = problem.config
    assert (str(config.group_protocol), str(config.streams_assignor_name), config.num_standby_replicas) == ("streams", "sticky", 1)
    assert list(config.rack_aware_assignment_tags) == ["zone"]
    clients = {c.id: c for c in problem.clients}
    assert [m.id for m in clients[A].members] == ["m-a1", "m-a2"]  # thread order
    assert [(list(m.previous_active), list(m.previous_standby)) for m in clients[A].members] == [(["0_0", "1_0"], []), (["0_1", "1_1"], ["1_2"])]
    assert clients[A].threads == 2 and list(clients[A].previous_standby) == ["1_2"]
    # a standby's offset from the member holding it (100, not thread 1's older 80); the process's
    # running actives (1_0, 1_1) get none, whatever another thread sent from the state directory
    assert dict(clients[A].lags) == {"1_2": 120 - 100}
    # B's standby 1_1 has no reported offset yet: taken as caught up, said
    assert dict(clients[B].lags) == {"1_0": 0}
    assert any("no offsets reported yet for the standby or warm-up tasks 1_1 (0e6239be" in w and "60000 ms" in w for w in imported.warnings)
    assert [t.id for t in problem.tasks] == ["0_0", "0_1", "0_2", "1_0", "1_1", "1_2"]
    assert all(t.stateful == (t.subtopology == 1) for t in problem.tasks)
    solution = solve(problem, solver="kafka")
    assert set(solution.assignment[A].members or {}) == {"m-a1", "m-a2"}


def test_what_is_not_a_streams_application_or_cannot_be_imported_is_refused_by_name():
    not_streams = {"application_id": "billing", "protocol": None, "type": "CLASSIC", "state": "Stable", "assignor": "range", "members": []}
    with pytest.raises(InvalidInputError, match="'billing': not a Kafka Streams application"):
        streams_problem(not_streams, "h:1")
    described = streams_group()
    described["assignor"] = "my-assignor"
    with pytest.raises(InvalidInputError, match="the group's assignor 'my-assignor' is not one of Kafka's"):
        streams_problem(described, "h:1")
    described = streams_group()
    described["subtopologies"][0]["id"] = "orders__0"
    with pytest.raises(InvalidInputError, match="subtopology 'orders__0' is not a number"):
        streams_problem(described, "h:1")
    described = classic()
    described["topics"].pop(IN)
    with pytest.raises(InvalidInputError, match="partition app-in-0 is not among the topics the cluster described"):
        streams_problem(described, "h:1")


# A streams group recorded on the sandbox after its third instance (process 8d0b89e6) left, 120 records
# were produced and it came back on its state: the running assignment as the group's coordinator gave it
# (Kafka 4.4.0's StickyTaskAssignor); (member id, process id, thread, rack, active, standby, offsets).
RECORDED_GROUP = [
    ("7f0j4TloRbS07CU8U7Y8MQ", "7f8d5bb3-4652-4c94-8c4e-ddb0740f0228", 1, "b", ["0_1", "0_2", "0_4"], ["1_3", "1_4"],
     {"1_0": 132, "1_1": 96, "1_2": 120, "1_3": 120, "1_4": 108, "1_5": 144}),
    ("7ujld8wwQ4OJByEV0VGH2Q", "854bf0ef-e0e2-4363-b555-23979fd99564", 1, "a", ["0_0", "1_0", "1_3"], [],
     {"1_1": 96, "1_2": 120, "1_4": 108, "1_5": 144}),
    ("XRQfyM1mQGuHwhnIItA2xQ", "854bf0ef-e0e2-4363-b555-23979fd99564", 2, "a", ["0_3", "1_1", "1_2"], ["1_5"],
     {"1_0": 132, "1_3": 120, "1_4": 108, "1_5": 144}),
    ("6jDCgKg0QHOAyCS6nGW28w", "8d0b89e6-d838-4075-949a-874df93a6c5b", 1, "c", ["0_5", "1_4", "1_5"], ["1_0", "1_1", "1_2"],
     {"1_0": 132, "1_1": 96, "1_2": 120}),
]  # fmt: skip


def recorded_group() -> dict[str, Any]:
    described = streams_group()
    described["members"] = [
        {"member_id": member, "member_epoch": 8, "process_id": process, "client_id": f"app-{process}-StreamThread-{thread}-consumer", "rack": rack,
         "client_tags": {"zone": "z" + rack}, "assignment": {"active": active, "standby": standby, "warmup": []},
         "target_assignment": {"active": active, "standby": standby, "warmup": []}, "task_offsets": offsets, "task_end_offsets": {}}
        for member, process, thread, rack, active, standby, offsets in RECORDED_GROUP
    ]  # fmt: skip
    described["subtopologies"][1]["repartition_source_topics"][REPARTITION]["partitions"] = 6
    described["subtopologies"][1]["state_changelog_topics"][CHANGELOG]["partitions"] = 6
    described["end_offsets"] = {CHANGELOG: ENDS}
    described["topics"] = _topics()
    return described


def test_a_recorded_streams_group_solves_to_what_its_coordinator_gave_it():
    """After a restart the third process held 6 tasks, over the quota of 5 (18 tasks, 4 members): on
    the next rebalance its standby 1_0 goes to the least-loaded process without the task, a tie
    between processes 7f8d5bb3 and 8d0b89e6 at load 5 that Kafka breaks by the heap order of their
    ids. Kafka 4.4.0's own class, fed this group (tests/kafka/test_import_streams.py does it on a
    live group), keeps the assignment as it is, and so does the reproduction, as it takes an imported
    client's id (the process id) as the process id (optimizer.model.ids.process_id_of)."""
    problem = _problem(streams_problem(recorded_group(), "h:1"))
    solution = solve(problem, solver="kafka")
    answered = {str(m): (list(t.active), list(t.standby)) for c in solution.assignment.values() for m, t in (c.members or {}).items()}
    assert answered == {member: (active, standby) for member, _, _, _, active, standby, _ in RECORDED_GROUP}


def test_the_adapters_answer_is_checked_before_it_is_mapped():
    """What `describe_streams_application` refuses in the adapter's JSON: an empty group, a consumer
    group (classic once stable, KIP-848 in any state), a group still rebalancing at the timeout (not
    called a Streams application before its assignor is known), threads without metadata, and an
    assignment carrying a Streams error code; a stable application passes as it is."""
    from optimizer.errors import KafkaUnavailableError
    from optimizer.kafka.streams_describe import checked

    def answer(**fields: Any) -> dict[str, Any]:
        return {"application_id": "app", "protocol": "classic", "type": "CLASSIC", "state": "Stable", "assignor": "stream", "members": [{}]} | fields

    described = classic()
    assert checked(described, "h:1", "app", 5) is described
    with pytest.raises(InvalidInputError, match="the group 'app' has no members \\(state Empty\\)"):
        checked(answer(protocol=None, state="Empty", assignor="", members=[]), "h:1", "app", 5)
    with pytest.raises(InvalidInputError, match="the Kafka Streams application 'app' has no members"):
        checked(answer(protocol="streams", type="STREAMS", state="Empty", members=[]), "h:1", "app", 5)
    with pytest.raises(InvalidInputError, match="'app' on h:1 is not a Kafka Streams application: a classic group with the assignor 'range'"):
        checked(answer(protocol=None, assignor="range"), "h:1", "app", 5)
    with pytest.raises(InvalidInputError, match="a KIP-848 consumer group with the assignor 'uniform'"):
        checked(answer(protocol=None, type="CONSUMER", state="Reconciling", assignor="uniform"), "h:1", "app", 5)
    with pytest.raises(KafkaUnavailableError, match="the group 'app' is rebalancing \\(state PreparingRebalance after 5 s\\)"):
        checked(answer(protocol=None, state="PreparingRebalance", assignor=""), "h:1", "app", 5)
    with pytest.raises(KafkaUnavailableError, match="the Kafka Streams application 'app' is rebalancing \\(state Assigning"):
        checked(answer(protocol="streams", type="STREAMS", state="Assigning"), "h:1", "app", 5)
    with pytest.raises(KafkaUnavailableError, match="members without metadata or assignment"):
        checked(answer(members=[{"has_metadata": False, "has_assignment": True}]), "h:1", "app", 5)
    broken = classic()
    broken["members"][2]["assignment_error_code"] = 1
    with pytest.raises(InvalidInputError, match="assigned with Streams' INCOMPLETE_SOURCE_TOPIC_METADATA"):
        checked(broken, "h:1", "app", 5)


# A streams group recorded on the sandbox after its third instance (process e3cc16f0) left, 120 records
# were produced and it came back on its state; (member id, process id, thread, rack, active, standby,
# the offsets the member reported).
RECORDED_AFTER_RESTART = [
    ("lQA0dZroSzCsjQfeSt13PQ", "12df719c-e165-4998-9477-1cf7f8439543", 1, "a", ["0_3", "0_4", "1_1"], ["1_5"],
     {"1_0": 132, "1_2": 120, "1_3": 120, "1_4": 108}),
    ("bBQLVDmVQxOSSS9gF5PRZA", "12df719c-e165-4998-9477-1cf7f8439543", 2, "a", ["0_0", "1_3", "1_4"], ["1_0"],
     {"1_0": 132, "1_1": 96, "1_2": 120, "1_5": 144}),
    ("Rt2dXNOLT6O5lwcawG2VHQ", "e3cc16f0-c200-43bf-a0e5-658ed660586b", 1, "c", ["0_5", "1_2", "1_5"], ["1_1", "1_3"],
     {"1_1": 96, "1_3": 120, "1_4": 90}),
    ("BiMKFiWLQ464TX04Cb84gA", "fa205bae-d40f-475f-9cff-856edeb57f19", 1, "b", ["0_1", "0_2", "1_0"], ["1_2", "1_4"],
     {"1_1": 96, "1_2": 120, "1_3": 120, "1_4": 108, "1_5": 144}),
]  # fmt: skip


def test_a_group_whose_threads_report_offsets_of_their_own_solves_as_kafka_does():
    """What Kafka 4.4.0's StickyTaskAssignor gives this group (its own class, run on the recorded
    input): standby 1_2 moves from member BiMK (process fa205bae, 4 tasks) to bBQL, the thread of
    process 12df719c that reports 1_2's offset and holds 3 tasks (`findPrevMemberWithLeastLoad`:
    a less loaded process and member); its sibling lQA0 also reports 1_2 but holds 4. The imported
    members carry the offsets each reported (`members[].lags`), so the reproduction sees both
    candidates, as Kafka does (with the client's lags alone it kept 1_2 where it was)."""
    described = recorded_group()
    described["members"] = [
        {"member_id": member, "member_epoch": 9, "process_id": process, "client_id": f"app-{process}-StreamThread-{thread}-consumer", "rack": rack,
         "client_tags": {"zone": "z" + rack}, "assignment": {"active": active, "standby": standby, "warmup": []},
         "target_assignment": {"active": active, "standby": standby, "warmup": []}, "task_offsets": offsets, "task_end_offsets": {}}
        for member, process, thread, rack, active, standby, offsets in RECORDED_AFTER_RESTART
    ]  # fmt: skip
    problem = _problem(streams_problem(described, "h:1"))
    solution = solve(problem, solver="kafka")
    answered = {str(m): (list(t.active), list(t.standby)) for c in solution.assignment.values() for m, t in (c.members or {}).items()}
    kafka = {member: (active, standby) for member, _, _, _, active, standby, _ in RECORDED_AFTER_RESTART}
    kafka["BiMKFiWLQ464TX04Cb84gA"] = (["0_1", "0_2", "1_0"], ["1_4"])
    kafka["bBQLVDmVQxOSSS9gF5PRZA"] = (["0_0", "1_3", "1_4"], ["1_0", "1_2"])
    assert answered == kafka


def test_a_streams_group_keeps_its_own_standby_count_whatever_is_given():
    """The coordinator reads the group's `streams.num.standby.replicas`: a count given for the import
    (`--num-standby-replicas`, which `import --all` gives every application) is not applied to a
    streams group, and the import says so."""
    own = map_streams_application(recorded_group(), "h:1")
    given = map_streams_application(recorded_group(), "h:1", num_standby_replicas=5)
    assert given.document["config"] == own.document["config"]
    assert any("num.standby.replicas 5 given, but a streams group's is its config" in w for w in given.warnings)
