"""The summary's `status` column: goal statuses ranked worst-wins, and the two statuses of rows
without an assignment, spelled as docs/pipeline.md documents them."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.model.solution import GoalStatus
from optimizer.pipeline.status import GOAL_STATUS_ORDER, UNSOLVED_STATUSES, UnsolvedStatus, worst_goal_status

PIPELINE_DOC = Path(__file__).parents[2] / "docs" / "pipeline.md"


def test_every_goal_status_is_ranked_once():
    assert sorted(GOAL_STATUS_ORDER) == sorted(GoalStatus)


@pytest.mark.parametrize(
    "statuses, worst",
    [
        ([], GoalStatus.HEURISTIC),
        ([GoalStatus.OPTIMAL, GoalStatus.OPTIMAL], GoalStatus.OPTIMAL),
        ([GoalStatus.OPTIMAL, GoalStatus.HEURISTIC], GoalStatus.HEURISTIC),
        ([GoalStatus.FEASIBLE, GoalStatus.HEURISTIC, GoalStatus.OPTIMAL], GoalStatus.FEASIBLE),
        ([GoalStatus.TIME_LIMIT, GoalStatus.FEASIBLE], GoalStatus.TIME_LIMIT),
        ([GoalStatus.INFEASIBLE, GoalStatus.TIME_LIMIT, GoalStatus.OPTIMAL], GoalStatus.INFEASIBLE),
    ],
)
def test_a_solved_row_has_its_worst_goal_status(statuses, worst):
    assert worst_goal_status(statuses) is worst


def test_the_column_values_are_the_documented_ones():
    text = PIPELINE_DOC.read_text()
    for status in (*GoalStatus, *UnsolvedStatus):
        assert f"`{status.value}`" in text
    assert UNSOLVED_STATUSES == {"invalid", "error"}
    assert not UNSOLVED_STATUSES & set(GoalStatus)
