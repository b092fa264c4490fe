"""Built-in optimisation goals (balance, subtopology spread, standby rack diversity, cross-rack
traffic, stickiness, caught-up, kip925_cost), one module each, registered through the same plugin
hook as third-party goals. See DESIGN.md section 3, "Goal plugins"."""
