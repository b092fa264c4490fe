"""The built-in goals, registered through the same hook as third-party goals."""

from __future__ import annotations

from goals.balance import Balance
from goals.caught_up import CaughtUp
from goals.cross_rack_traffic import CrossRackTraffic
from goals.kip925_cost import Kip925Cost
from goals.movement_budget import MovementBudget
from goals.standby_rack_diversity import StandbyRackDiversity
from goals.stickiness import Stickiness
from goals.subtopology_spread import SubtopologySpread
from plugins.hookspecs import hookimpl

BUILTIN_GOALS = (
    Balance,
    SubtopologySpread,
    StandbyRackDiversity,
    CrossRackTraffic,
    Stickiness,
    CaughtUp,
    Kip925Cost,
    MovementBudget,
)


@hookimpl
def register_goals(registry) -> None:
    for goal in BUILTIN_GOALS:
        registry.add(goal)
