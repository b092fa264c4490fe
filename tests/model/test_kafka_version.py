"""`kafka.version`: which Kafka release `--solver kafka` reproduces (decision 71)."""

from __future__ import annotations

import pytest

from optimizer import InvalidInputError, problem_from_data, solve
from optimizer.model.releases import TRUNK, parse_kafka_version, release_text
from tests.model.test_group_protocol import consumer, streams


@pytest.mark.parametrize(
    ("written", "release"),
    [("4.4", (4, 4, 0)), ("4.0", (4, 0, 2)), ("4.0.0", (4, 0, 0)), ("3.9", (3, 9, 2)), ("trunk", TRUNK), ("TRUNK", TRUNK), (4.4, (4, 4, 0)), (4.0, (4, 0, 2))],
)
def test_a_line_is_its_newest_patch_a_release_itself(written, release):
    assert problem_from_data(consumer({"kafka.version": written})).config.release == release


def test_the_default_is_the_release_the_project_pins():
    assert problem_from_data(consumer({})).config.release == (4, 4, 0)
    assert release_text(parse_kafka_version("4.4")) == "4.4.0" and release_text(TRUNK) == "trunk"


@pytest.mark.parametrize(
    ("written", "why"),
    [
        ("3.8", "Kafka 3.8 is not covered: the project reproduces the release lines 3.9, 4.0, 4.1, 4.2, 4.3, 4.4 and trunk"),
        ("4.5", "Kafka 4.5 is not covered"),
        ("latest", "'latest' is not a Kafka release"),
        (True, "must be a Kafka release such as 4.4 or 4.0.0, or trunk"),
        ([4, 4], "must be a Kafka release"),
    ],
)
def test_a_release_the_project_does_not_cover_is_refused_by_name(written, why):
    with pytest.raises(InvalidInputError, match=r"config\.kafka\.version") as refused:
        problem_from_data(consumer({"kafka.version": written}))
    assert why in str(refused.value)


def test_streams_groups_need_a_release_that_ships_them():
    with pytest.raises(InvalidInputError, match=r"streams groups \(KIP-1071\) first ship in Kafka 4\.1, not in 4\.0: set kafka\.version: 4\.2 or later"):
        problem_from_data(streams([{"id": "c"}], {"group.protocol": "streams", "kafka.version": "4.0"}))


def test_the_answer_says_which_release_ran():
    solution = solve(problem_from_data(consumer({"kafka.version": "4.0.0", "partition.assignment.strategy": "sticky"})), solver="kafka")
    assert solution.solver.options["kafka.version"] == "4.0.0"
    assert solve(problem_from_data(consumer({})), solver="kafka").solver.options["kafka.version"] == "4.4.0"


def _warned(problem: dict) -> set[str]:
    return {issue.location for issue in solve(problem_from_data(problem), solver="kafka").warnings}


def test_a_streams_group_reads_client_tags_only_in_trunks_sticky():
    clients = [{"id": "c1", "tags": {"zone": "a"}}, {"id": "c2", "tags": {"zone": "b"}}]
    config = {"group.protocol": "streams", "num.standby.replicas": 1, "rack.aware.assignment.tags": ["zone"]}
    said = [i.message for i in solve(problem_from_data(streams(clients, config)), solver="kafka").warnings if i.location == "config.rack.aware.assignment.tags"]
    assert said == ["not read by Kafka 4.4.0's streams-group sticky assignor; trunk's sticky reads it (KAFKA-20999)"]
    assert "config.rack.aware.assignment.tags" not in _warned(streams(clients, {**config, "kafka.version": "trunk"}))


def test_balanced_is_warned_as_a_proposal_no_release_ships():
    solution = solve(problem_from_data(streams([{"id": "c1"}], {"group.protocol": "streams", "streams.assignor.name": "balanced"})), solver="kafka")
    said = [issue.message for issue in solution.warnings if issue.location == "config.streams.assignor.name"]
    assert len(said) == 1 and "balanced is a proposal that no Kafka release ships (KAFKA-20998, pull request #23419" in said[0]
    assert "kafka.version" not in solution.solver.options and solution.solver.options["proposal"] == "KAFKA-20998, pull request #23419"


@pytest.mark.parametrize(("text", "suffix"), [("kafka.version: 4.10\n", ".yaml"), ('{"kafka.version": 4.10}', ".json"), ("kafka.version: 1e0\n", ".yaml")])
def test_a_number_in_a_problem_file_is_read_as_written(text, suffix):
    """`4.10` written as a number is 4.10, not the float 4.1 (a release line the project covers)."""
    from optimizer.sources.documents import parse_document

    config = parse_document(text, f"problem{suffix}")
    with pytest.raises(InvalidInputError, match=r"config\.kafka\.version") as refused:
        problem_from_data(consumer(config))
    assert "4.1 " not in str(refused.value) and "1.0 " not in str(refused.value)


def test_a_patch_newer_than_those_checked_is_answered_with_a_warning():
    problem = problem_from_data(consumer({"kafka.version": "4.4.1"}))
    assert problem.config.release == (4, 4, 1)
    solution = solve(problem, solver="kafka")
    newer = "Kafka 4.4.1 is newer than the releases checked (up to 4.4.0)"
    assert any(issue.location == "config.kafka.version" and newer in issue.message for issue in solution.warnings)
    checked = solve(problem_from_data(consumer({"kafka.version": "4.4.0"})), solver="kafka")
    assert not any(issue.location == "config.kafka.version" for issue in checked.warnings)
