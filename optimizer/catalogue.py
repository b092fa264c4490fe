"""Every name a user chooses a solver or a goal by, in one place.

Solvers, as `solve(solver=...)`, `--solver` and the pipeline's `--solvers` take them:

* `EXACT_SOLVERS`: the exact engine: `exact` (the engine chooses its back-end) or a registered
  back-end by name (`optimizer.backends.REGISTRY`).
* `KAFKA_SOLVERS`: Kafka's assignor that the problem's config selects (`kafka`,
  `optimizer.assignors.answers`), and the KIP-925 reference goal (`kip925`).
* `PROTOCOL_SOLVERS`: the pipeline's per-protocol columns, Kafka's assignor with `group.protocol`
  set to the classic protocol or to its kind's new one.

Goals are registered by plugins (`plugins.manager`; the built-ins in `goals/`); `resolve_goals` turns
names like `balance` or `movement_budget=10` into goal objects, and `default_goals` is the sequence
a problem gets when none is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from optimizer.backends import REGISTRY
from optimizer.errors import GoalError, PluginError
from optimizer.goal import Goal
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.group_protocol import ProtocolName
from optimizer.model.problem import Problem
from optimizer.model.streams import StreamsProblem
from optimizer.model.suggest import did_you_mean
from plugins.manager import plugins

EXACT_SOLVERS: Final[tuple[str, ...]] = ("exact", *(backend.name for backend in REGISTRY))
"""The exact engine's names: `exact` (its choice of back-end), then each back-end in the registry's
order of preference. The report compares Kafka with the first of them present in a run."""

KAFKA_SOLVERS: Final[tuple[str, ...]] = ("kafka", "kip925")
"""Kafka's assignor (what the problem's config selects) and the KIP-925 reference goal."""

SOLVERS: Final[tuple[str, ...]] = (*EXACT_SOLVERS, *KAFKA_SOLVERS)
"""Every name `solve` and `kafka-assign solve --solver` accept."""

PROTOCOL_SOLVERS: Final[dict[str, ProtocolName]] = {"kafka:classic": "classic", "kafka:new": "new"}
"""The pipeline's per-protocol columns: Kafka's assignor with `group.protocol` set to each."""

PIPELINE_SOLVERS: Final[tuple[str, ...]] = (*SOLVERS, *PROTOCOL_SOLVERS)
"""Every name the pipeline's `--solvers` accepts."""

DEFAULT_PIPELINE_SOLVERS: Final[tuple[str, ...]] = ("kafka", "kafka:new", "exact")
"""The pipeline's solvers when none are given: Kafka under the configured protocol and under the
new one, and the exact engine."""

SOLVER_ORDER: Final[tuple[str, ...]] = ("kafka", *PROTOCOL_SOLVERS, "kip925", *EXACT_SOLVERS)
"""The order solvers are shown in (reports, tables): Kafka's first, the exact engine's last."""

DEFAULT_GOALS: Final[dict[str, tuple[str, ...]]] = {
    "streams": ("balance", "standby_rack_diversity", "subtopology_spread", "cross_rack_traffic", "stickiness"),
    "consumer": ("balance", "cross_rack_traffic", "stickiness"),
}
"""Each kind's default sequence for a problem without weights (`default_goals`)."""


def default_goals(problem: Problem) -> tuple[str, ...]:
    """The default sequence for `problem`: its kind's, with `cross_rack_bytes` in place of
    `cross_rack_traffic` when it gives any bytes per second, and `weighted_balance` after
    `balance` when it gives task weights or capacities (a load model of its own: bytes per second
    alone do not add it, as the highest load is a makespan problem that large groups do not
    prove optimal in seconds; docs/goals.md), and `balance_now` last for a cooperative consumer
    group (the first round of equally good targets as even as can be)."""
    goals = list(DEFAULT_GOALS[problem.kind])
    if problem.has_rates:
        goals[goals.index("cross_rack_traffic")] = "cross_rack_bytes"
    if isinstance(problem, StreamsProblem):
        loaded = any(t.weight != 1.0 for t in problem.tasks) or any(c.capacity != 1.0 for c in problem.clients)
    else:
        loaded = any(m.capacity != 1.0 for m in problem.members)
    if loaded:
        goals.insert(goals.index("balance") + 1, "weighted_balance")
    if isinstance(problem, ConsumerProblem) and problem.config.cooperative:
        goals.append("balance_now")
    return tuple(goals)


def goal_class(name: str) -> type[Goal]:
    """The goal class registered as `name`: GoalError when there is none, PluginError when a
    plugin registered something that is not an `optimizer.Goal`."""
    registry = plugins().goals
    if name not in registry.goals:
        hint = did_you_mean(name, registry.names())
        raise GoalError(f"unknown goal {name!r}{hint}; known goals: {', '.join(registry.names())}")
    found = registry.get(name)
    if not (isinstance(found, type) and issubclass(found, Goal)):
        raise PluginError(f"goal {name!r} of plugin {registry.owners[name]!r} is not an optimizer.Goal")
    return found


def resolve_goals(specs: Sequence[str | Goal] | None, of: str | Problem) -> list[Goal]:
    """Goal objects from names like `balance` or `movement_budget=10`, for problems of a kind or
    for one problem (`of`); None: the default sequence (`default_goals` of the problem, else the
    kind's `DEFAULT_GOALS`)."""
    kind = of if isinstance(of, str) else of.kind
    if specs is None:
        specs = DEFAULT_GOALS[kind] if isinstance(of, str) else default_goals(of)
    goals: list[Goal] = []
    for spec in specs:
        if isinstance(spec, Goal):
            goals.append(spec)
            continue
        name, _, argument = spec.strip().partition("=")
        goals.append(goal_class(name.strip())(argument.strip() if argument else None))
    names = [g.name for g in goals]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise GoalError(f"goal {repeated[0]!r} is listed twice")
    for goal in goals:
        if kind not in goal.kinds:
            raise GoalError(f"goal {goal.name!r} does not apply to {kind} problems (only {', '.join(goal.kinds)})")
    return goals
