"""The goal registry: goal classes by name, each with the plugin that registered it.

A plugin's `register_goals(registry)` hook receives a registry scoped to that plugin and calls
`registry.add(GoalClass)` for each of its goals. Goal names are unique across plugins: a second
registration of a name fails naming both plugins.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from plugins.errors import PluginError


class GoalClass(Protocol):
    """What the plugin layer needs of a goal class: its unique `name`. `optimizer.Goal` declares
    the rest, and the engine refuses a registered class that is not one (`catalogue.goal_class`)."""

    name: ClassVar[str]


@dataclass
class GoalRegistry:
    """Every goal available in this process, by name, and the plugin that registered it."""

    goals: dict[str, type[GoalClass]] = field(default_factory=dict)
    """Goal classes by name."""
    owners: dict[str, str] = field(default_factory=dict)
    """The plugin that registered each goal name."""

    def scoped(self, plugin: str) -> PluginGoals:
        """The view of this registry handed to `plugin`'s `register_goals` hook."""
        return PluginGoals(self, plugin)

    def get(self, name: str) -> type[GoalClass]:
        """The goal class registered as `name`; PluginError naming the known goals, and the closest
        one when one is close, otherwise."""
        try:
            return self.goals[name]
        except KeyError:
            known = ", ".join(sorted(self.goals))
            raise PluginError(f"unknown goal {name!r}{did_you_mean(name, self.goals)}; known goals: {known}") from None

    def names(self) -> list[str]:
        """The goal names, sorted."""
        return sorted(self.goals)


@dataclass
class PluginGoals:
    """What a plugin's `register_goals` receives: `add` records the plugin as the goal's owner."""

    registry: GoalRegistry
    plugin: str

    def add(self, goal: type[GoalClass]) -> None:
        """Register `goal` under its `name`; PluginError when it has none or another plugin
        registered that name."""
        name = getattr(goal, "name", None)
        if not isinstance(name, str) or not name:
            raise PluginError(f"plugin {self.plugin!r} registered a goal without a name: {goal!r}")
        if name in self.registry.goals:
            raise PluginError(
                f"goal {name!r} is registered by two plugins: {self.registry.owners[name]!r} and {self.plugin!r}"
            )
        self.registry.goals[name] = goal
        self.registry.owners[name] = self.plugin


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`" (did you mean 'x'?)"` for the choice closest to `name` (letter case ignored), or `""` when
    none is close. A copy of `optimizer.model.suggest.did_you_mean`: this layer imports nothing of
    `optimizer`, and tests/model/test_suggestions.py checks the two agree."""
    by_folded: dict[str, str] = {}
    for choice in choices:
        by_folded.setdefault(choice.casefold(), choice)
    found = difflib.get_close_matches(name.casefold(), by_folded, n=1, cutoff=0.6)
    return f" (did you mean {by_folded[found[0]]!r}?)" if found else ""
