"""Solver back-ends, one module per technology, and what each can do (capabilities as data).

A back-end opens a session on a `LinearModel` (`start`), then minimises one objective after
another (`minimize`), with rows added between stages (`add_row`, used to freeze a goal at its
optimum). `flow` is different: it solves a whole sequence of flow-representable goals at once.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Capabilities:
    name: str
    linear: bool
    """Solves the integer linear formulation (any goal with `encode`)."""
    flow_only: bool
    """Solves only goals with a flow encoding, all stages at once."""
    proves_optimality: bool
    deterministic: str


CAPABILITIES = {
    "cpsat": Capabilities("cpsat", True, False, True, "fixed seed, one worker unless asked"),
    "milp": Capabilities("milp", True, False, True, "HiGHS single-threaded"),
    "flow": Capabilities("flow", False, True, True, "OR-Tools min-cost flow (deterministic)"),
}
