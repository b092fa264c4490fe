"""KIP-1071/KIP-1357 `BalancedTaskAssignor` (Kafka PR #23419 at 07a283a): exact assignments.

The single-process fan-out cases are scenarios of Kafka's BalancedTaskAssignorTest (the stored
version, 520636e, is a later revision of the PR whose deal across processes differs, but not for
these); the cases across processes are derived by hand from 07a283a's round-robin deal and skew
loop (the derivation is in each test's comment).
"""

from __future__ import annotations

import pytest

from optimizer.assignors.streams.group.balanced import balanced_assign
from optimizer.assignors.streams.group.spec import GroupMember, StreamsGroupSpec, Subtopology

S1, S2 = "test-subtopology1", "test-subtopology2"


def tasks(subtopology: str, *partitions: int) -> tuple[str, ...]:
    return tuple(f"{subtopology}_{p}" for p in partitions)


def member(member_id: str, process_id: str, active=(), standby=(), warmup=()) -> GroupMember:
    return GroupMember(
        member_id=member_id,
        process_id=process_id,
        client=process_id,
        thread=0,
        rack=None,
        client_tags={},
        active=tuple(active),
        standby=tuple(standby),
        warmup=tuple(warmup),
        task_offsets={},
        task_end_offsets={},
    )


def spec(members, *subtopologies: Subtopology, standbys: int = 0) -> StreamsGroupSpec:
    return StreamsGroupSpec(num_standby_replicas=standbys, rack_aware_assignment_tags=(), subtopologies=subtopologies, members=tuple(members))


def stateful(subtopology: str, partitions: int) -> Subtopology:
    return Subtopology(subtopology, partitions, True)


def stateless(subtopology: str, partitions: int) -> Subtopology:
    return Subtopology(subtopology, partitions, False)


def result(group: StreamsGroupSpec) -> dict[str, tuple[list[str], list[str]]]:
    return {m: (sorted(t.active), sorted(t.standby)) for m, t in balanced_assign(group).items()}


def test_keeps_tasks_on_their_current_member_within_a_process():
    group = spec([member("member1", "process1", tasks(S1, 1, 3)), member("member2", "process1", tasks(S1, 0, 2))], stateful(S1, 4))
    assert result(group) == {"member1": (list(tasks(S1, 1, 3)), []), "member2": (list(tasks(S1, 0, 2)), [])}


def test_moves_tasks_off_an_overloaded_member():
    # Level 2: member1 keeps its first two tasks in TaskId order, member2 fills up with the rest.
    group = spec([member("member1", "process1", tasks(S1, 0, 1, 2, 3)), member("member2", "process1")], stateful(S1, 4))
    assert result(group) == {"member1": (list(tasks(S1, 0, 1)), []), "member2": (list(tasks(S1, 2, 3)), [])}


def test_joining_member_gets_a_task_and_the_leftover_stays_with_its_owner():
    # Level 4 // 3 = 1: the owners keep 0 and 2, member3 (below the level) takes 1, and the leftover
    # task 3 goes to its owner member2, which is at the level, rather than to member1 (first in id order).
    group = spec(
        [member("member1", "process1", tasks(S1, 0, 1)), member("member2", "process1", tasks(S1, 2, 3)), member("member3", "process1")],
        stateful(S1, 4),
    )
    assert result(group) == {
        "member1": (list(tasks(S1, 0)), []),
        "member2": (list(tasks(S1, 2, 3)), []),
        "member3": (list(tasks(S1, 1)), []),
    }


def test_stateful_tasks_levelled_separately_from_stateless_tasks():
    group = spec([member("member1", "process1", tasks(S1, 0, 1)), member("member2", "process1")], stateful(S1, 2), stateless(S2, 2))
    assert result(group) == {
        "member1": ([f"{S1}_0", f"{S2}_0"], []),
        "member2": ([f"{S1}_1", f"{S2}_1"], []),
    }


def test_keeps_standby_tasks_on_their_current_member():
    members = [
        member("member1", "process1", tasks(S1, 0), tasks(S1, 3)),
        member("member2", "process1", tasks(S1, 2), tasks(S1, 1)),
        member("member3", "process2", tasks(S1, 1), tasks(S1, 2)),
        member("member4", "process2", tasks(S1, 3), tasks(S1, 0)),
    ]
    assert result(spec(members, stateful(S1, 4), standbys=1)) == {m.member_id: (list(m.active), list(m.standby)) for m in members}


def test_a_task_stays_on_its_member_when_its_role_changes():
    group = spec(
        [
            member("member1", "process1", tasks(S1, 3), tasks(S1, 2)),
            member("member2", "process1", tasks(S1, 1), tasks(S1, 0)),
            member("member3", "process2"),
            member("member4", "process2"),
        ],
        stateful(S1, 4),
        standbys=1,
    )
    assert result(group) == {
        "member1": (list(tasks(S1, 2)), list(tasks(S1, 3))),
        "member2": (list(tasks(S1, 0)), list(tasks(S1, 1))),
        "member3": (list(tasks(S1, 1)), list(tasks(S1, 0))),
        "member4": (list(tasks(S1, 3)), list(tasks(S1, 2))),
    }


def test_round_robin_deal_then_skew_loop_by_members():
    # Dealt p1, p2, p1, p2, p1, p2: p1 {1_0, 1_2, 2_1} (1.5 per member), p2 {1_1, 2_0, 2_2} (3 per
    # member). One move, p2's first task 1_1, levels them at 2. (PR revision 520636e deals by
    # Sainte-Laguë instead and gives p1 partitions 0 and 2 of each subtopology.)
    group = spec([member("member1_1", "process1"), member("member1_2", "process1"), member("member2_1", "process2")], stateful(S1, 3), stateful(S2, 3))
    assert result(group) == {
        "member1_1": ([f"{S1}_0", f"{S1}_2"], []),
        "member1_2": ([f"{S1}_1", f"{S2}_1"], []),
        "member2_1": ([f"{S2}_0", f"{S2}_2"], []),
    }


def test_skew_loop_with_uneven_member_counts():
    # p1 (3 members) is dealt 0, 2, 4, 6 and p2 (1 member) 1, 3, 5, 7; p2 then hands over 1 and 3.
    group = spec(
        [member("member1_1", "process1"), member("member1_2", "process1"), member("member1_3", "process1"), member("member2_1", "process2")],
        stateful(S1, 8),
    )
    assert result(group) == {
        "member1_1": (list(tasks(S1, 0, 3)), []),
        "member1_2": (list(tasks(S1, 1, 4)), []),
        "member1_3": (list(tasks(S1, 2, 6)), []),
        "member2_1": (list(tasks(S1, 5, 7)), []),
    }


def test_standbys_go_to_the_least_loaded_process_without_the_task():
    # Loads tie at 1.0, so process1 is polled first: it holds 0, so 0 goes to process2, 1 to
    # process1, and so on, alternating.
    group = spec(
        [member("member1_1", "process1"), member("member1_2", "process1"), member("member2_1", "process2"), member("member2_2", "process2")],
        stateful(S1, 4),
        standbys=1,
    )
    assert result(group) == {
        "member1_1": (list(tasks(S1, 0)), list(tasks(S1, 1))),
        "member1_2": (list(tasks(S1, 2)), list(tasks(S1, 3))),
        "member2_1": (list(tasks(S1, 1)), list(tasks(S1, 0))),
        "member2_2": (list(tasks(S1, 3)), list(tasks(S1, 2))),
    }


def test_no_standbys_on_a_single_process():
    group = spec([member("member1", "process1"), member("member2", "process1")], stateful(S1, 4), standbys=1)
    assert result(group) == {"member1": (list(tasks(S1, 0, 2)), []), "member2": (list(tasks(S1, 1, 3)), [])}


def test_stateless_tasks_go_by_active_load_ties_to_the_smaller_process_id():
    group = spec([member("member1_1", "process1"), member("member1_2", "process1"), member("member2_1", "process2")], stateful(S1, 3), stateless(S2, 3))
    assert result(group) == {
        "member1_1": ([f"{S1}_0", f"{S2}_0"], []),
        "member1_2": ([f"{S1}_2", f"{S2}_2"], []),
        "member2_1": ([f"{S1}_1", f"{S2}_1"], []),
    }


def test_task_ids_in_java_string_order_of_subtopologies():
    # "10" sorts before "2": the deal is 10_0 -> p1, 2_0 -> p2, 2_1 -> p1.
    group = spec([member("a", "p1"), member("b", "p2")], stateful("10", 1), stateful("2", 2))
    assert result(group) == {"a": (["10_0", "2_1"], []), "b": (["2_0"], [])}


def test_warmup_marks_the_owner_and_the_smaller_member_id_wins_a_clash():
    # Both claim 1_0; member1 (warm-up) beats member2 (active) by id, so member2 gets 1_1.
    group = spec([member("member2", "process1", active=["1_0"]), member("member1", "process1", warmup=["1_0"])], stateful("1", 2))
    assert result(group) == {"member1": (["1_0"], []), "member2": (["1_1"], [])}


def test_every_member_is_a_key_and_member_order_does_not_matter():
    members = [member("member3", "process2"), member("member1", "process1"), member("member2", "process1")]
    forward = result(spec(members, stateful(S1, 1)))
    assert forward == {"member1": ([f"{S1}_0"], []), "member2": ([], []), "member3": ([], [])}
    assert result(spec(reversed(members), stateful(S1, 1))) == forward


def test_no_members():
    assert balanced_assign(spec([], stateful(S1, 0))) == {}
    with pytest.raises(ValueError, match="No process"):
        balanced_assign(spec([], stateful(S1, 1)))
