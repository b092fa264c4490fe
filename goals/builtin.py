"""The built-in goals, registered through the same hook as third-party goals: the plugin
`builtin` of `plugins.manager.DEFAULT_PLUGINS`."""

from __future__ import annotations

from goals.balance import Balance
from goals.balance_now import BalanceNow
from goals.caught_up import CaughtUp
from goals.cross_rack_traffic import CrossRackBytes, CrossRackTraffic
from goals.kip925_cost import Kip925Cost
from goals.movement_budget import MovementBudget
from goals.probing_rebalances import ProbingRebalances
from goals.restore_volume import RestoreVolume
from goals.standby_rack_diversity import StandbyRackDiversity
from goals.stickiness import Stickiness
from goals.subtopology_spread import SubtopologySpread
from goals.weighted_balance import WeightedBalance
from optimizer.version import __version__
from plugins.hookspecs import hookimpl
from plugins.registry import PluginGoals

__all__ = ["BUILTIN_GOALS", "__version__", "register_goals"]

BUILTIN_GOALS = (
    Balance,
    SubtopologySpread,
    StandbyRackDiversity,
    CrossRackTraffic,
    Stickiness,
    CaughtUp,
    Kip925Cost,
    MovementBudget,
    RestoreVolume,
    CrossRackBytes,
    WeightedBalance,
    ProbingRebalances,
    BalanceNow,
)


@hookimpl
def register_goals(registry: PluginGoals) -> None:
    for goal in BUILTIN_GOALS:
        registry.add(goal)
