"""The streams-group `sticky` assignor per Kafka release: which variant `kafka.version` selects, and
what each variant changes. The expected answers of the examples are the releases' own (Kafka's
jars, through `kao.jvm.StreamsGroupAssignors*`, when these tests were written); the live oracle
(tests/kafka/test_streams_group_oracle.py) and bench/streams_group_releases.py check many more."""

from __future__ import annotations

import pytest

from optimizer.assignors.streams.group import sticky
from optimizer.assignors.streams.group.assign import ASSIGNORS
from optimizer.assignors.streams.group.spec import Subtopology, member_id_of, process_id_of
from optimizer.assignors.streams.group.sticky import KAFKA_4_2, KAFKA_4_2_2, KAFKA_4_4, TRUNK, java_put_order, sticky_assign
from optimizer.errors import SolverUnavailableError
from optimizer.model.releases import TRUNK as TRUNK_RELEASE
from optimizer.model.streams import StreamsGroupAssignor
from tests.assignors.streams.group.test_group_sticky import member, spec


@pytest.mark.parametrize(
    ("release", "expected"),
    [
        ((4, 2, 0), sticky.sticky_assign_4_2),
        ((4, 2, 1), sticky.sticky_assign_4_2),
        ((4, 2, 2), sticky.sticky_assign_4_2_2),
        ((4, 3, 0), sticky.sticky_assign_4_2),
        ((4, 3, 1), sticky.sticky_assign_4_2),
        ((4, 4, 0), sticky.sticky_assign_4_4),
        (TRUNK_RELEASE, sticky.sticky_assign),
    ],
)
def test_each_release_selects_its_variant(release, expected):
    assert ASSIGNORS.select(StreamsGroupAssignor.STICKY, release) is expected


def test_4_1_is_refused_with_the_releases_reproduced():
    refusal = r"streams.assignor.name=sticky is not reproduced for Kafka 4\.1\.2: its ties fall by Java identity hash codes.*; reproduced from Kafka 4\.2\.0 on"
    with pytest.raises(SolverUnavailableError, match=refusal):
        ASSIGNORS.select(StreamsGroupAssignor.STICKY, (4, 1, 2))


def test_put_if_absent_keeps_a_bins_keys_in_insertion_order():
    identity = int
    assert java_put_order([1, 17, 33, 17], identity, 16) == [1, 17, 33]
    assert java_put_order([0, 4, 1], identity, 4) == [0, 4, 1]
    assert java_put_order([0, 4, 1, 2], identity, 4) == [0, 1, 2, 4]  # a fourth key in 4: resized to 8
    assert java_put_order([5, 2], identity, 16) == [2, 5]  # bucket order


def _answer(result) -> dict[str, tuple[list[str], list[str]]]:
    return {m: (t.active, t.standby) for m, t in result.items()}


def test_kafka_20899_before_the_fix_a_first_candidate_holding_the_task_sends_the_standby_to_the_least_loaded():
    # Standby candidates of 0_0: a2 (whose process P1 runs 0_0 as active), then b. Before the fix
    # the first candidate's process decides: it holds the task, so no candidate is taken.
    members = [
        member("a1", "P1", active=["0_0"]),
        member("a2", "P1", active=["0_2"], standby=["0_0"]),
        member("b", "P2", standby=["0_0"]),
        member("b2", "P2", active=["0_1"]),
        member("c", "P3"),
    ]
    group = spec(members, [Subtopology("0", 3, True)], standbys=1)
    before = {"a1": (["0_0"], []), "a2": (["0_2"], []), "b": ([], ["0_0"]), "b2": (["0_1"], []), "c": ([], ["0_1", "0_2"])}
    after = {"a1": (["0_0"], ["0_1"]), "a2": (["0_2"], []), "b": ([], ["0_0"]), "b2": (["0_1"], []), "c": ([], ["0_2"])}
    assert _answer(sticky_assign(group, variant=KAFKA_4_2)) == before  # 4.2.0, 4.2.1, 4.3.x
    assert _answer(sticky_assign(group, variant=KAFKA_4_2_2)) == after
    assert _answer(sticky_assign(group, variant=KAFKA_4_4)) == after


def test_4_4_ranks_standby_candidates_by_offset_and_reads_offsets_of_restarted_members():
    members = [
        member("a", "P1", standby=["0_0"], offsets={"0_0": 10}),
        member("b", "P2", standby=["0_0"], offsets={"0_0": 90}),
        member("r", "P3", offsets={"0_0": 500}),  # restarted: only offsets
        member("w", "P4", warmup=["0_0"], offsets={"0_0": 40}),
    ]
    group = spec(members, [Subtopology("0", 1, True)], standbys=1)

    def candidates(variant):
        state = sticky._initialize(group, members, variant)
        return [m.member_id for m in state.standby_task_to_prev_member[("0", 0)]]

    assert candidates(KAFKA_4_2) == ["a", "b"]  # standbys only, member order
    assert candidates(KAFKA_4_4) == ["b", "a", "r", "w"]  # standbys by offset, then offsets alone (a warm-up is one)
    assert candidates(TRUNK) == ["b", "w", "a", "r"]  # warm-ups hold state like standbys (KAFKA-21001)


def test_released_variants_do_not_read_rack_aware_assignment_tags():
    # The fresh group of golden sg0184 (test_group_sticky), where trunk's rack-aware standbys matter.
    clients = {"C17": {"zone": "eu-1a", "cluster": "k8s-1"}, "A6": {"zone": "eu-1b", "cluster": "k8s-2"}, "Y16": {"zone": "eu-1b", "cluster": "k8s-1"}}
    members = [member(member_id_of(c, 0), process_id_of(c), tags=t) for c, t in clients.items()]
    tagged = spec(members, [Subtopology("0", 16, True)], standbys=1, tags=("zone", "cluster"))
    untagged = spec(members, [Subtopology("0", 16, True)], standbys=1)
    for variant in (KAFKA_4_2, KAFKA_4_2_2, KAFKA_4_4):
        assert _answer(sticky_assign(tagged, variant=variant)) == _answer(sticky_assign(untagged, variant=variant))
    assert _answer(sticky_assign(tagged, variant=TRUNK)) != _answer(sticky_assign(untagged, variant=TRUNK))


def test_the_cli_refuses_4_1_with_the_message_and_no_traceback(tmp_path):
    from click.testing import CliRunner

    from optimizer.cli import cli

    problem = tmp_path / "group.yaml"
    problem.write_text(
        "kind: streams\n"
        "config: {group.protocol: streams, kafka.version: '4.1'}\n"
        "clients: [{id: a, threads: 2}, {id: b}]\n"
        "tasks:\n"
        "  - {id: 0_0, source_partitions: [{topic: in, partition: 0}]}\n"
        "  - {id: 0_1, source_partitions: [{topic: in, partition: 1}]}\n"
    )
    result = CliRunner().invoke(cli, ["solve", "--solver", "kafka", str(problem)])
    assert result.exit_code == 2
    assert "streams.assignor.name=sticky is not reproduced for Kafka 4.1.2: its ties fall by Java identity hash codes" in result.output
    assert "; reproduced from Kafka 4.2.0 on" in result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
