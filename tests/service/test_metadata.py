"""The cluster's leaders and replica selector added to requests (`optimizer.service.metadata`):
what the plug points cannot tell the service. The cluster's view here is built as
`kao.jvm.Describe --topics` reports one; tests/kafka/test_plugins_live.py reads a real one."""

from __future__ import annotations

import json
from typing import Any

from optimizer.evaluate import evaluate
from optimizer.kafka.describe import RACK_AWARE_SELECTOR
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import kafka_uuid_text, name_uuid_bytes
from optimizer.model.streams import StreamsProblem
from optimizer.service.metadata import ClusterView, enrich, streams_group_of
from optimizer.service.protocol import parse_request
from optimizer.solve import solve

RACKS = {1: "a", 2: "b", 3: "c"}
TOPIC_ID = kafka_uuid_text(name_uuid_bytes("clicks"))
# 12 partitions, two replicas each over racks a, b, c; leaders rotate so that every rack leads 4
REPLICAS = [[1 + p % 3, 1 + (p + 1) % 3] for p in range(12)]


def described(selector: str | None = None) -> dict[str, Any]:
    return {
        "brokers": [{"id": b, "rack": r, "replica_selector": selector} for b, r in RACKS.items()],
        "topics": {"clicks": {"id": TOPIC_ID, "partitions": [{"partition": p, "leader": r[0], "replicas": r} for p, r in enumerate(REPLICAS)]}},
    }


def kip848_request() -> dict[str, Any]:
    """What OptimizerConsumerGroupAssignor sends for a new group of three members, one per rack."""
    racks = [[RACKS[b] for b in sorted(r)] for r in REPLICAS]
    return {
        "version": 1, "kind": "consumer_group", "group": None, "deadline_ms": 10_000,
        "kafka": {
            "subscription_type": "homogeneous",
            "topics": [{"id": TOPIC_ID, "partitions": 12, "racks": racks}],
            "members": [{"id": f"m-{rack}", "instance_id": None, "rack": rack, "subscribed": [TOPIC_ID], "assigned": []} for rack in "abc"],
        },
    }  # fmt: skip


def test_a_kip848_request_gets_the_leaders_and_the_exact_assignment_reads_from_them() -> None:
    request = parse_request(kip848_request())
    problem, added = enrich(request.problem, ClusterView.of(described()))
    assert added == 1 and isinstance(problem, ConsumerProblem)
    topic = problem.topics[0]
    assert topic.topic_id == TOPIC_ID and topic.leader_racks == tuple(RACKS[r[0]] for r in REPLICAS)
    assert problem.config.replica_selector_class is None  # unset on the brokers: the leader serves
    # Without leaders only reads with no replica in the reader's rack are certain: with them, every
    # read the exact assignment makes is from the reader's rack (each rack leads 4 partitions).
    exact = solve(problem)
    assert evaluate(problem, exact).metrics.cross_rack_partitions == 0
    # the assignment made without them is optimal for what it sees, and no better for what is
    # (which of its equally good answers reads from the leaders is luck)
    blind = solve(request.problem)
    assert evaluate(problem, blind).metrics.cross_rack_partitions >= evaluate(problem, exact).metrics.cross_rack_partitions


def test_with_follower_fetching_the_selector_is_added_and_replica_racks_count() -> None:
    request = parse_request(kip848_request())
    problem, added = enrich(request.problem, ClusterView.of(described(RACK_AWARE_SELECTOR)))
    assert added == 1 and problem.config.replica_selector_class == RACK_AWARE_SELECTOR


def test_a_topic_reassigned_since_the_view_was_read_is_left_as_the_plug_in_sent_it() -> None:
    request = parse_request(kip848_request())
    moved = described()
    moved["topics"]["clicks"]["partitions"][0]["replicas"] = [3, 2]
    problem, added = enrich(request.problem, ClusterView.of(moved))
    assert added == 0 and problem is request.problem
    other = described()
    other["topics"]["clicks"]["id"] = kafka_uuid_text(name_uuid_bytes("another"))
    assert enrich(request.problem, ClusterView.of(other)) == (request.problem, 0)


def test_a_streams_request_gets_leaders_by_topic_name() -> None:
    tasks = [
        {"id": f"0_{p}", "stateful": True, "source": [{"topic": "clicks", "partition": p, "racks": sorted({RACKS[b] for b in REPLICAS[p]})}], "changelog": []}
        for p in range(12)
    ]
    request = parse_request(
        {
            "version": 1, "kind": "streams_task_assignor", "group": "app",
            "kafka": {
                "configs": {
                    "num_standby_replicas": 0, "acceptable_recovery_lag": 10000, "max_warmup_replicas": 2, "probing_rebalance_interval_ms": 600000,
                    "rack_aware_assignment_tags": [], "rack_aware_assignment_strategy": "none", "rack_aware_assignment_traffic_cost": None,
                    "rack_aware_assignment_non_overlap_cost": None,
                },
                "tasks": tasks,
                "clients": [
                    {"process_id": f"00000000-0000-0000-0000-00000000000{i}", "rack": rack, "threads": 1, "consumers": [f"c-{rack}"], "tags": {},
                     "previous_active": [], "previous_standby": [], "lags": {t["id"]: 0 for t in tasks}}
                    for i, rack in enumerate("abc")
                ],
            },
        }
    )  # fmt: skip
    problem, added = enrich(request.problem, ClusterView.of(json.loads(json.dumps(described()))))
    assert added == 1 and isinstance(problem, StreamsProblem)
    leaders = {t.id: t.source_partitions[0].leader_rack for t in problem.tasks}
    assert leaders == {f"0_{p}": RACKS[REPLICAS[p][0]] for p in range(12)}
    assert evaluate(problem, solve(problem)).metrics.cross_rack_active_partitions == 0


def test_sampled_rates_are_added_and_the_default_goals_count_bytes() -> None:
    from dataclasses import replace

    from optimizer.catalogue import default_goals

    request = parse_request(kip848_request())
    rates = {("clicks", p): float(1000 * (12 - p)) for p in range(12)}
    problem, added = enrich(request.problem, replace(ClusterView.of(described()), rates=rates))
    assert added == 1 and isinstance(problem, ConsumerProblem)
    assert problem.topics[0].partition_bytes_per_second == tuple(float(1000 * (12 - p)) for p in range(12))
    assert "cross_rack_bytes" in default_goals(problem)
    partial = dict(rates)
    del partial[("clicks", 5)]  # a partition not measured: the topic keeps no rates
    problem, _ = enrich(request.problem, replace(ClusterView.of(described()), rates=partial))
    assert problem.topics[0].partition_bytes_per_second is None


# ---- streams groups: the plug point names neither the group nor its topics

PROCESSES = {rack: f"00000000-0000-4000-8000-00000000000{i}" for i, rack in enumerate("abc")}


def streams_group_request(partitions: int = 12) -> dict[str, Any]:
    """What OptimizerStreamsGroupAssignor sends for a group of three single-threaded instances, one per rack, with a
    stateful subtopology 0 and a stateless subtopology 1, nothing assigned yet."""
    return {
        "version": 1, "kind": "streams_group", "group": None, "deadline_ms": 10_000,
        "kafka": {
            "num_standby_replicas": 0, "rack_aware_assignment_tags": [],
            "subtopologies": [{"id": "0", "partitions": partitions, "stateful": True}, {"id": "1", "partitions": partitions, "stateful": False}],
            "members": [
                {"member_id": f"member-{rack}", "process_id": PROCESSES[rack], "instance_id": None, "rack": rack, "client_tags": {},
                 "active": [], "standby": [], "warmup": [], "task_offsets": {}, "task_end_offsets": {}}
                for rack in "abc"
            ],
        },
    }  # fmt: skip


def streams_described(members: list[str] | None = None, groups: int = 1) -> dict[str, Any]:
    """The cluster: the app's input, repartition and changelog topics laid out as `clicks`, and its group's topology
    with `members` (default: the request's); `groups` > 1 adds a copy of the group under another id."""
    base = described()
    layout = base["topics"]["clicks"]["partitions"]
    for name in ("app-input", "app-repartition", "app-store-changelog"):
        base["topics"][name] = {"id": kafka_uuid_text(name_uuid_bytes(name)), "partitions": layout}
    entry = {
        "subtopologies": [
            {"id": "0", "source_topics": ["app-input"], "repartition_source_topics": {}, "repartition_sink_topics": ["app-repartition"],
             "state_changelog_topics": {"app-store-changelog": {"partitions": 12, "replication_factor": 2}}},
            {"id": "1", "source_topics": [], "repartition_source_topics": {"app-repartition": {"partitions": 12, "replication_factor": 2}},
             "repartition_sink_topics": [], "state_changelog_topics": {}},
        ],
        "members": [{"member_id": m, "process_id": PROCESSES[m[-1]]} for m in (members if members is not None else ["member-a", "member-b", "member-c"])],
    }  # fmt: skip
    base["streams_groups"] = {f"app-{i}": entry for i in range(groups)}
    return json.loads(json.dumps(base))


def test_a_streams_group_request_gets_its_groups_topics_and_their_leaders() -> None:
    request = parse_request(streams_group_request())
    view = ClusterView.of(streams_described())
    group = streams_group_of(request.problem, view)
    assert group is not None and group.group == "app-0"
    problem, added = enrich(request.problem, view, group)
    assert added == 3 and isinstance(problem, StreamsProblem)
    tasks = {t.id: t for t in problem.tasks}
    assert [(p.topic, p.partition, p.leader_rack) for p in tasks["0_5"].source_partitions] == [("app-input", 5, RACKS[REPLICAS[5][0]])]
    assert [(p.topic, p.partition) for p in tasks["0_5"].changelog_partitions] == [("app-store-changelog", 5)]
    assert [p.topic for p in tasks["1_5"].source_partitions] == ["app-repartition"] and not tasks["1_5"].changelog_partitions
    # the exact assignment now reads every partition from its own rack; without the cluster it cannot know where they are
    assert evaluate(problem, solve(problem)).metrics.cross_rack_active_partitions == 0
    assert evaluate(problem, solve(request.problem)).metrics.cross_rack_active_partitions > 0


def test_a_streams_group_is_found_by_a_process_when_its_members_are_new() -> None:
    request = parse_request(streams_group_request())
    view = ClusterView.of(streams_described(members=["member-old-a"]))  # a restarted instance: new member id, same process
    group = streams_group_of(request.problem, view)
    assert group is not None and group.group == "app-0"


def test_a_streams_group_request_is_left_alone_when_its_group_is_not_certain() -> None:
    request = parse_request(streams_group_request())
    unseen = ClusterView.of(streams_described(members=[]))  # members the view has not seen
    twice = ClusterView.of(streams_described(groups=2))  # two groups with its members (cannot be: ids are unique) and topology
    reshaped = ClusterView.of(streams_described())
    other = parse_request(streams_group_request(partitions=6))  # the cluster's topics have 12 partitions
    for problem, view in ((request.problem, unseen), (request.problem, twice), (other.problem, reshaped)):
        assert streams_group_of(problem, view) is None
    assert enrich(request.problem, ClusterView.of(streams_described())) == (request.problem, 0)  # without its group: made-up topics
