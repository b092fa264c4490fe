"""The `status` of a summary row: the worst of its goals' statuses (`GoalStatus`), or, for a row
without an assignment, why not (`UnsolvedStatus`). docs/pipeline.md lists the values.

Free of pyarrow, so that the report's totals (`optimizer.report.totals`) can tell solved rows
from unsolved ones where pyarrow is not installed.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from optimizer.model.solution import GoalStatus


class UnsolvedStatus(StrEnum):
    """The status of a row without an assignment; the row's `error` says why."""

    INVALID = "invalid"
    """The problem document was rejected before any solver ran."""
    ERROR = "error"
    """The solver could not run on the problem (or failed)."""


RowStatus = GoalStatus | UnsolvedStatus
"""What a summary row's `status` column holds."""

UNSOLVED_STATUSES = frozenset(UnsolvedStatus)
"""The row statuses that mean no assignment, as a set the column's plain strings can be looked up in."""

GOAL_STATUS_ORDER = (
    GoalStatus.OPTIMAL,
    GoalStatus.HEURISTIC,
    GoalStatus.FEASIBLE,
    GoalStatus.TIME_LIMIT,
    GoalStatus.INFEASIBLE,
)
"""Goal statuses from best to worst: a proven optimum, Kafka's assignors (no proof claimed), a
feasible solution, the best found when time ran out, and hard goals in conflict."""


def worst_goal_status(statuses: Iterable[GoalStatus]) -> GoalStatus:
    """A solved row's status: the worst of its goals' statuses, `heuristic` when there are no
    goals (a Kafka assignor scored on none)."""
    return max(statuses, key=GOAL_STATUS_ORDER.index, default=GoalStatus.HEURISTIC)
