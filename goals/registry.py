"""The goal registry: goal classes by name, each with the plugin that registered it."""

from __future__ import annotations

from dataclasses import dataclass, field

from plugins.manager import PluginError


@dataclass
class GoalRegistry:
    goals: dict[str, type] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)

    def scoped(self, plugin: str) -> _ScopedRegistry:
        return _ScopedRegistry(self, plugin)

    def get(self, name: str) -> type:
        try:
            return self.goals[name]
        except KeyError:
            known = ", ".join(sorted(self.goals))
            raise PluginError(f"unknown goal {name!r}; known goals: {known}") from None

    def names(self) -> list[str]:
        return sorted(self.goals)


@dataclass
class _ScopedRegistry:
    """What a plugin's `register_goals` receives: `add` records the plugin as the goal's owner."""

    registry: GoalRegistry
    plugin: str

    def add(self, goal: type) -> None:
        name = getattr(goal, "name", None)
        if not isinstance(name, str) or not name:
            raise PluginError(f"plugin {self.plugin!r} registered a goal without a name: {goal!r}")
        if name in self.registry.goals:
            raise PluginError(
                f"goal {name!r} is registered by two plugins: {self.registry.owners[name]!r} and {self.plugin!r}"
            )
        self.registry.goals[name] = goal
        self.registry.owners[name] = self.plugin
