"""Loading plugins: the built-in goals, then the entry points of `kafka_assignment_optimizer`.

The built-in plugins are modules named in `DEFAULT_PLUGINS`, imported by name (as datasette
does), so that this layer imports nothing above it. `KAFKA_ASSIGNMENT_OPTIMIZER_PLUGINS` limits
which entry-point plugins load: a comma-separated list of their names (empty: none). The built-in
plugins always load. Every solution records the plugins loaded, with their versions.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import entry_points

import pluggy

from plugins import hookspecs
from plugins.errors import PluginError
from plugins.hookspecs import PROJECT
from plugins.registry import GoalRegistry

ALLOWLIST_ENV = "KAFKA_ASSIGNMENT_OPTIMIZER_PLUGINS"
DEFAULT_PLUGINS = {"builtin": "goals.builtin"}
"""Built-in plugins, by plugin name: the module that implements their hooks (its `__version__`
is the version recorded)."""


@dataclass(frozen=True)
class LoadedPlugin:
    name: str
    version: str


@dataclass(frozen=True)
class Plugins:
    """The loaded plugins and the goals they registered."""

    manager: pluggy.PluginManager
    loaded: tuple[LoadedPlugin, ...]
    goals: GoalRegistry


def _allowed() -> set[str] | None:
    value = os.environ.get(ALLOWLIST_ENV)
    if value is None:
        return None
    return {name.strip() for name in value.split(",") if name.strip()}


def load_plugins() -> Plugins:
    """A fresh plugin manager with the built-in and the allowed entry-point plugins."""
    manager = pluggy.PluginManager(PROJECT)
    manager.add_hookspecs(hookspecs)
    loaded = []
    for name, module_name in DEFAULT_PLUGINS.items():
        module = importlib.import_module(module_name)
        _register(manager, module, name)
        loaded.append(LoadedPlugin(name, getattr(module, "__version__", "")))
    allowed = _allowed()
    for entry in sorted(entry_points(group=PROJECT), key=lambda e: e.name):
        if allowed is not None and entry.name not in allowed:
            continue
        if manager.has_plugin(entry.name):
            raise PluginError(f"two plugins are named {entry.name!r}")
        try:
            plugin = entry.load()
        except Exception as error:  # any import failure is the plugin's
            raise PluginError(f"plugin {entry.name!r} ({entry.value}) failed to load: {error}") from error
        _register(manager, plugin, entry.name)
        dist = entry.dist
        loaded.append(LoadedPlugin(entry.name, dist.version if dist is not None else ""))
    try:
        manager.check_pending()  # a @hookimpl that matches no hook: a misspelt hook name
    except pluggy.PluginValidationError as error:
        raise PluginError(f"plugin {manager.get_name(error.plugin)!r}: {error}") from None

    registry = GoalRegistry()
    # Each implementation is called with the registry scoped to its plugin, so that a duplicate
    # goal name can name both plugins.
    for impl in manager.hook.register_goals.get_hookimpls():
        try:
            impl.function(registry=registry.scoped(impl.plugin_name))
        except PluginError:
            raise
        except Exception as error:  # whatever a plugin's hook raises is the plugin's
            raise PluginError(f"plugin {impl.plugin_name!r} failed in register_goals: {type(error).__name__}: {error}") from error
    return Plugins(manager, tuple(loaded), registry)


def _register(manager: pluggy.PluginManager, plugin: object, name: str) -> None:
    """Register `plugin` as `name`; a hook implementation whose arguments the hook does not have
    is a PluginError naming the plugin."""
    try:
        manager.register(plugin, name=name)
    except pluggy.PluginValidationError as error:
        raise PluginError(f"plugin {name!r}: {error}") from None


@lru_cache(maxsize=1)
def _cached(allowlist: str | None) -> Plugins:
    return load_plugins()


def plugins() -> Plugins:
    """The process-wide plugins (reloaded when the allowlist environment variable changes)."""
    return _cached(os.environ.get(ALLOWLIST_ENV))


def reset() -> None:
    """Forget the loaded plugins (after installing one, in tests)."""
    _cached.cache_clear()
