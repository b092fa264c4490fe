"""Plugin machinery: pluggy hook specifications (hookspecs.py) and the plugin manager that loads the
entry-point group `kafka_assignment_optimizer`. See DESIGN.md section 3, "Goal plugins"."""
