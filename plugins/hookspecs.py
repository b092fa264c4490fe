"""Hook specifications of kafka-assignment-optimizer.

A plugin is a module (or object) with functions marked `@hookimpl` (from `optimizer`), found
through the entry-point group `kafka_assignment_optimizer`. Built-in goals register through the
same hook as third-party ones (`goals.builtin`). A function marked `@hookimpl` whose name is not
a hook below is an error when the plugin loads (pluggy's `check_pending`).
"""

from __future__ import annotations

import pluggy

from plugins.registry import PluginGoals

PROJECT = "kafka_assignment_optimizer"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_goals(registry: PluginGoals) -> None:
    """Add this plugin's goals to `registry` with `registry.add(GoalClass)`.

    When: once per process, the first time goals are needed (`solve`, `compare`, `evaluate` of
    goals, `kafka-assign goals`), for every loaded plugin in turn.
    Returns: nothing; goals are added to the registry. A goal whose name another plugin already
    registered fails with PluginError naming both plugins.
    """
