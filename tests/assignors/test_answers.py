"""Kafka's answers in one place: every value the model accepts selects an assignor in its family's
table, every (kind, group.protocol) has a family, and a Kafka release selects its variant."""

from __future__ import annotations

import re

import pytest

from optimizer.assignors.answers import FAMILIES
from optimizer.assignors.consumer.strategy import CLASSIC_ASSIGNORS, KIP848_ASSIGNORS
from optimizer.assignors.streams.group.assign import ASSIGNORS
from optimizer.assignors.streams.task_assignors import TASK_ASSIGNORS
from optimizer.assignors.table import AssignorTable, NotReproduced
from optimizer.errors import SolverUnavailableError
from optimizer.model.consumer import AssignmentStrategy, GroupProtocol, RemoteAssignor
from optimizer.model.releases import DEFAULT_KAFKA_VERSION, EARLIEST, TRUNK, parse_kafka_version
from optimizer.model.streams import StreamsGroupAssignor, StreamsGroupProtocol, TaskAssignor


@pytest.mark.parametrize(
    ("table", "accepted"),
    [(CLASSIC_ASSIGNORS, AssignmentStrategy), (KIP848_ASSIGNORS, RemoteAssignor), (TASK_ASSIGNORS, TaskAssignor), (ASSIGNORS, StreamsGroupAssignor)],
    ids=lambda x: x.key if isinstance(x, AssignorTable) else "",
)
def test_every_value_the_model_accepts_selects_an_assignor(table, accepted):
    assert set(table.values()) == set(accepted)
    for value in accepted:
        assert callable(table.select(value, parse_kafka_version(DEFAULT_KAFKA_VERSION)))
        assert callable(table.select(value, TRUNK))


def test_every_group_protocol_has_a_family():
    expected = {("consumer", str(p)) for p in GroupProtocol} | {("streams", str(p)) for p in StreamsGroupProtocol}
    assert set(FAMILIES) == expected


def test_a_release_selects_the_latest_variant_shipped_in_it_or_before():
    def reproduced() -> str:
        return "as reproduced"

    def since_4_1() -> str:
        return "4.1"

    def since_4_4() -> str:
        return "4.4"

    table = AssignorTable("streams.assignor.name", {("sticky", EARLIEST): reproduced, ("sticky", (4, 1, 0)): since_4_1, ("sticky", (4, 4, 0)): since_4_4})
    assert table.select("sticky", (3, 9, 2)) is reproduced
    assert table.select("sticky", (4, 0, 1)) is reproduced
    assert table.select("sticky", (4, 1, 0)) is since_4_1
    assert table.select("sticky", (4, 3, 1)) is since_4_1
    assert table.select("sticky", (4, 4, 0)) is since_4_4
    with pytest.raises(SolverUnavailableError, match=re.escape("=balanced is not reproduced for Kafka 4.4.0: no such assignor here (sticky)")):
        table.select("balanced", (4, 4, 0))
    unsure = AssignorTable("streams.assignor.name", {("sticky", (4, 1, 0)): NotReproduced("ties by identity hashes"), ("sticky", (4, 2, 0)): since_4_1})
    assert unsure.select("sticky", (4, 3, 0)) is since_4_1
    with pytest.raises(SolverUnavailableError, match=re.escape("not reproduced for Kafka 4.1.2: ties by identity hashes; reproduced from Kafka 4.2.0 on")):
        unsure.select("sticky", (4, 1, 2))
    later = AssignorTable("streams.assignor.name", {("sticky", (4, 1, 0)): since_4_1})
    with pytest.raises(SolverUnavailableError, match=re.escape("is not reproduced for Kafka 4.0.2: reproduced from Kafka 4.1.0 on")):
        later.select("sticky", (4, 0, 2))
