"""Plugin machinery, the bottom layer: the hook specifications (hookspecs.py), the goal registry a
plugin adds its goals to (registry.py), the plugin manager that loads the built-in plugins and the
entry-point group `kafka_assignment_optimizer` (manager.py), and the errors it raises (errors.py).
It imports nothing else of the project. User code imports `hookimpl` from `optimizer`."""
