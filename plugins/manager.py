"""Loading plugins: the built-in goals, then the entry points of `kafka_assignment_optimizer`.

`KAFKA_ASSIGNMENT_OPTIMIZER_PLUGINS` limits which entry-point plugins load: a comma-separated
list of their names (empty: none). The built-in plugin always loads. Every solution records the
plugins loaded, with their versions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import entry_points, version

import pluggy

from plugins import hookspecs
from plugins.hookspecs import PROJECT

ALLOWLIST_ENV = "KAFKA_ASSIGNMENT_OPTIMIZER_PLUGINS"
BUILTIN = "builtin"


class PluginError(Exception):
    """A plugin could not be loaded or conflicts with another."""


@dataclass(frozen=True)
class LoadedPlugin:
    name: str
    version: str


@dataclass(frozen=True)
class Plugins:
    """The loaded plugins and the goals they registered."""

    manager: pluggy.PluginManager
    loaded: tuple[LoadedPlugin, ...]
    goals: object  # goals.registry.GoalRegistry


def _allowed() -> set[str] | None:
    value = os.environ.get(ALLOWLIST_ENV)
    if value is None:
        return None
    return {name.strip() for name in value.split(",") if name.strip()}


def _package_version() -> str:
    try:
        return version("kafka-assignment-optimizer")
    except Exception:  # noqa: BLE001 - running from a source tree that is not installed
        return "0+unknown"


def load_plugins() -> Plugins:
    """A fresh plugin manager with the built-in and the allowed entry-point plugins."""
    from goals import builtin
    from goals.registry import GoalRegistry

    manager = pluggy.PluginManager(PROJECT)
    manager.add_hookspecs(hookspecs)
    manager.register(builtin, name=BUILTIN)
    loaded = [LoadedPlugin(BUILTIN, _package_version())]
    allowed = _allowed()
    for entry in sorted(entry_points(group=PROJECT), key=lambda e: e.name):
        if allowed is not None and entry.name not in allowed:
            continue
        if entry.name == BUILTIN or manager.has_plugin(entry.name):
            raise PluginError(f"two plugins are named {entry.name!r}")
        try:
            plugin = entry.load()
        except Exception as error:  # noqa: BLE001 - any import failure is the plugin's
            raise PluginError(f"plugin {entry.name!r} ({entry.value}) failed to load: {error}") from error
        manager.register(plugin, name=entry.name)
        dist = entry.dist
        loaded.append(LoadedPlugin(entry.name, dist.version if dist is not None else ""))

    registry = GoalRegistry()
    # Each implementation is called with the registry scoped to its plugin, so that a duplicate
    # goal name can name both plugins.
    for impl in manager.hook.register_goals.get_hookimpls():
        impl.function(registry=registry.scoped(impl.plugin_name))
    return Plugins(manager, tuple(loaded), registry)


@lru_cache(maxsize=1)
def _cached(allowlist: str | None) -> Plugins:
    return load_plugins()


def plugins() -> Plugins:
    """The process-wide plugins (reloaded when the allowlist environment variable changes)."""
    return _cached(os.environ.get(ALLOWLIST_ENV))


def reset() -> None:
    """Forget the loaded plugins (after installing one, in tests)."""
    _cached.cache_clear()
