"""Kafka's broker-side streams-group `StickyTaskAssignor` (KIP-1071): exact answers.

Most examples are from Kafka's `StickyTaskAssignorTest` (group coordinator), whose members sit in
a `LinkedHashMap` (`mkMap`), hence `member_map="linked"`; the last is a golden case, Kafka's own
answer for a group whose members sat in a `HashMap`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from optimizer.assignors.streams.group.spec import GroupMember, StreamsGroupSpec, Subtopology, member_id_of, process_id_of
from optimizer.assignors.streams.group.sticky import java_compute_if_absent_order, sticky_assign


def member(
    member_id: str,
    process_id: str,
    active: Iterable[str] = (),
    standby: Iterable[str] = (),
    warmup: Iterable[str] = (),
    offsets: Mapping[str, int] | None = None,
    tags: Mapping[str, str] | None = None,
) -> GroupMember:
    return GroupMember(
        member_id=member_id,
        process_id=process_id,
        client=process_id,
        thread=0,
        rack=None,
        client_tags=dict(tags or {}),
        active=tuple(active),
        standby=tuple(standby),
        warmup=tuple(warmup),
        task_offsets=dict(offsets or {}),
        task_end_offsets={},
    )


def spec(members: list[GroupMember], subtopologies: list[Subtopology], standbys: int = 0, tags: tuple[str, ...] = ()) -> StreamsGroupSpec:
    return StreamsGroupSpec(num_standby_replicas=standbys, rack_aware_assignment_tags=tags, subtopologies=tuple(subtopologies), members=tuple(members))


def tasks(subtopology: str, *partitions: int) -> list[str]:
    return [f"{subtopology}_{p}" for p in partitions]


def actives(result, member_id: str) -> set[str]:
    return set(result[member_id].active)


def standbys(result, member_id: str) -> set[str]:
    return set(result[member_id].standby)


def test_tasks_not_previously_active_go_to_the_new_client():
    # shouldAssignTasksNotPreviouslyActiveToNewClient
    s0, s1, s2 = "test-subtopology0", "test-subtopology1", "test-subtopology2"
    members = [
        member("member1", "process1", [*tasks(s0, 1), *tasks(s1, 2, 3)], [*tasks(s0, 0), *tasks(s1, 1), *tasks(s2, 0, 1, 3)]),
        member("member2", "process2", [*tasks(s0, 0), *tasks(s1, 1), *tasks(s2, 2)], [*tasks(s0, 1, 2, 3), *tasks(s1, 0, 2, 3), *tasks(s2, 0, 1, 3)]),
        member("member3", "process3", tasks(s2, 0, 1, 3), [*tasks(s0, 2), *tasks(s1, 2)]),
        member("newMember", "process4", (), [*tasks(s0, 0, 1, 2, 3), *tasks(s1, 0, 1, 2, 3), *tasks(s2, 0, 1, 2, 3)]),
    ]
    result = sticky_assign(spec(members, [Subtopology(s, 4, False) for s in (s0, s1, s2)]), member_map="linked")
    assert actives(result, "member1") == {*tasks(s0, 1), *tasks(s1, 2, 3)}
    assert actives(result, "member2") == {*tasks(s0, 0), *tasks(s1, 1), *tasks(s2, 2)}
    assert actives(result, "member3") == set(tasks(s2, 0, 1, 3))
    assert actives(result, "newMember") == {*tasks(s0, 2, 3), *tasks(s1, 0)}
    assert all(not r.standby for r in result.values())


def test_active_stickiness_when_more_clients_than_tasks():
    # shouldKeepActiveTaskStickinessWhenMoreClientThanActiveTasks, second round
    s = "test-subtopology"
    members = [
        member("member1", "process1"),
        member("member2", "process2", tasks(s, 0)),
        member("member3", "process3"),
        member("member4", "process4", tasks(s, 2)),
        member("member5", "process5", tasks(s, 1)),
    ]
    result = sticky_assign(spec(members, [Subtopology(s, 3, False)]), member_map="linked")
    assert {m: sorted(r.active) for m, r in result.items()} == {
        "member1": [], "member2": tasks(s, 0), "member3": [], "member4": tasks(s, 2), "member5": tasks(s, 1),
    }


def test_each_flavour_sticky_only_within_its_own_quota():
    # shouldKeepEachFlavorStickyOnlyWithinItsOwnQuotaWhenScalingUp (Kafka's test fixes member2's
    # stateful tasks and every stateless one; it only counts member1's and member3's stateful ones)
    members = [
        member("member1", "process1", tasks("stateless", 0, 1, 2, 3)),
        member("member2", "process2", tasks("stateful", 0, 1, 2, 3)),
        member("member3", "process3"),
    ]
    result = sticky_assign(spec(members, [Subtopology("stateful", 4, True), Subtopology("stateless", 4, False)]), member_map="linked")
    assert actives(result, "member2") == {*tasks("stateful", 0, 1), *tasks("stateless", 3)}
    assert actives(result, "member1") == {*tasks("stateful", 2), *tasks("stateless", 0, 1)}
    assert actives(result, "member3") == {*tasks("stateful", 3), *tasks("stateless", 2)}


def test_stateful_and_stateless_quotas_do_not_add_up_beyond_the_active_quota():
    # shouldNotLetStatefulAndStatelessQuotasAddUpBeyondTheActiveQuota
    members = [
        member("member1", "process1", [*tasks("stateful", 0, 1, 2), *tasks("stateless", 0, 1, 2)]),
        member("member2", "process2"),
    ]
    result = sticky_assign(spec(members, [Subtopology("stateful", 3, True), Subtopology("stateless", 3, False)]), member_map="linked")
    assert actives(result, "member1") == {*tasks("stateful", 0, 1), *tasks("stateless", 0)}
    assert actives(result, "member2") == {*tasks("stateful", 2), *tasks("stateless", 1, 2)}


def test_multiple_standby_replicas():
    # shouldAssignMultipleReplicasOfStandbyTask
    s = "test-subtopology"
    members = [member(f"member{i}", f"process{i}", tasks(s, i - 1)) for i in (1, 2, 3)]
    result = sticky_assign(spec(members, [Subtopology(s, 3, True)], standbys=2), member_map="linked")
    assert [standbys(result, f"member{i}") for i in (1, 2, 3)] == [set(tasks(s, 1, 2)), set(tasks(s, 0, 2)), set(tasks(s, 0, 1))]


def test_previous_warmup_wins_the_active_over_a_less_loaded_member():
    # shouldAssignTasksToClientWithPreviousWarmupTasks
    s = "test-subtopology"
    members = [
        member("member1", "process1", tasks(s, 0, 1, 2)),
        member("member2", "process2", tasks(s, 3, 4, 5)),
        member("member3", "process3", tasks(s, 6, 7), warmup=tasks(s, 8)),
        member("member4", "process4", tasks(s, 9)),
    ]
    result = sticky_assign(spec(members, [Subtopology(s, 12, True)]), member_map="linked")
    assert actives(result, "member3") == set(tasks(s, 6, 7, 8))
    assert actives(result, "member4") == set(tasks(s, 9, 10, 11))


def test_most_caught_up_standby_candidate_wins_whatever_its_role():
    # shouldPreferMoreCaughtUpCandidateRegardlessOfPrevStandbyOrPrevWarmupRole
    s = "test-subtopology"
    members = [
        member("member1", "process1", tasks(s, 0)),
        member("member2", "process2", tasks(s, 1)),
        member("member3", "process3", standby=tasks(s, 0), offsets={f"{s}_0": 100}),
        member("member4", "process4", warmup=tasks(s, 0), offsets={f"{s}_0": 10}),
        member("member5", "process5", standby=tasks(s, 1), offsets={f"{s}_1": 10}),
        member("member6", "process6", warmup=tasks(s, 1), offsets={f"{s}_1": 100}),
    ]
    result = sticky_assign(spec(members, [Subtopology(s, 2, True)], standbys=1), member_map="linked")
    assert standbys(result, "member3") == set(tasks(s, 0))
    assert standbys(result, "member6") == set(tasks(s, 1))
    assert not standbys(result, "member4") and not standbys(result, "member5")


def test_current_owners_rank_ahead_of_reported_offsets():
    # shouldRankCurrentOwnersAheadOfReportedTaskOffsetsAndMostCaughtUpFirst
    s = "test-subtopology"
    members = [
        member("member1", "process1", tasks(s, 0)),
        member("member2", "process2", standby=tasks(s, 0, 1)),
        member("member3", "process3", offsets={f"{s}_0": 1_000_000, f"{s}_1": 1_000_000, f"{s}_2": 100}),
        member("member4", "process4", offsets={f"{s}_2": 50}),
    ]
    result = sticky_assign(spec(members, [Subtopology(s, 4, True)]), member_map="linked")
    assert [sorted(result[f"member{i}"].active) for i in (1, 2, 3, 4)] == [tasks(s, 0), tasks(s, 1), tasks(s, 2), tasks(s, 3)]


def test_golden_fresh_group_with_rack_tags():
    # Golden sg0184: three fresh single-thread clients, tags (zone, cluster), Kafka's own answer.
    # The processes sit in one bin of `processIdToState`, filled by computeIfAbsent, so the heap
    # sees them newest first; `put` order would swap C17 and Y16.
    clients = {"C17": {"zone": "eu-1a", "cluster": "k8s-1"}, "A6": {"zone": "eu-1b", "cluster": "k8s-2"}, "Y16": {"zone": "eu-1b", "cluster": "k8s-1"}}
    members = [member(member_id_of(c, 0), process_id_of(c), tags=t) for c, t in clients.items()]
    assert members[0].member_id == "kB6xM_wGOa2oypxf2ziKJQ"
    result = sticky_assign(spec(members, [Subtopology("0", 16, True)], standbys=1, tags=("zone", "cluster")))
    by_client = {c: result[member_id_of(c, 0)] for c in clients}
    assert {c: (r.active, r.standby) for c, r in by_client.items()} == {
        "Y16": (tasks("0", 0, 5, 7, 9, 14), tasks("0", 1, 2, 4, 6)),
        "C17": (tasks("0", 1, 3, 8, 10, 12), tasks("0", 0, 7, 9, 11, 13, 14, 15)),
        "A6": (tasks("0", 2, 4, 6, 11, 13, 15), tasks("0", 3, 5, 8, 10, 12)),
    }


def test_compute_if_absent_links_new_keys_first_and_resizes_lazily():
    identity = int
    # One bin: newest first (a `put` would keep 1, 17, 33).
    assert java_compute_if_absent_order([1, 17, 33, 17], identity, 16) == [33, 17, 1]
    # Four keys in a table of 4 stay there until a later call finds the map over its threshold.
    assert java_compute_if_absent_order([0, 4, 1, 2], identity, 4) == [4, 0, 1, 2]
    assert java_compute_if_absent_order([0, 4, 1, 2, 0], identity, 4) == [0, 1, 2, 4]
