"""Plugin machinery: pluggy hook specifications (hookspecs.py) and the plugin manager that loads the
entry-point group `kafka_assignment_optimizer` (manager.py). User code imports `hookimpl` from
`optimizer`."""

from plugins.hookspecs import hookimpl, hookspec

__all__ = ["hookimpl", "hookspec"]
