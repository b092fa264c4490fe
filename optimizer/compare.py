"""Kafka's heuristic against the exact optimum, goal by goal (`compare`); the classic protocol's
assignor against the new protocol's and the exact optimum (`compare_protocols`).

The results are data (`to_dict()` for JSON); their tables are drawn by `optimizer.console`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from optimizer.catalogue import resolve_goals
from optimizer.console import comparison_table, protocol_comparison_table, text
from optimizer.deadline import deadline_after, remaining
from optimizer.evaluate import headline
from optimizer.model.group_protocol import PROTOCOLS, assignor_label, with_protocol
from optimizer.model.metrics import ConsumerMetrics
from optimizer.model.problem import Problem
from optimizer.model.solution import GoalStatus, Solution
from optimizer.money import DEFAULT_CURRENCY, monthly_cost, price_and_currency
from optimizer.solve import solve
from optimizer.text import whole

if TYPE_CHECKING:
    from rich.table import Table


@dataclass(frozen=True)
class GoalComparison:
    name: str
    kafka: float
    """The goal's value on Kafka's target: where its plan ends (its assignment when it has none)."""
    exact: float | None
    """The goal's value on the exact target."""
    status: GoalStatus
    """The exact stage's status."""
    bound: float | None
    gap: float | None
    seconds: float
    kafka_now: float = 0.0
    """The goal's value on Kafka's assignment applied now."""
    exact_now: float | None = None
    """The goal's value on the exact assignment applied now."""
    notes: dict[str, str] = field(default_factory=dict)
    """Column (`kafka_now`, `kafka`, `exact_now`) -> why its value beats the proven bound (an
    assignment applied now is not the target yet; Kafka's target is worse on an earlier goal)."""
    unit: str | None = None
    """What the values count (the goal's `value_unit`): `bytes_per_second`, ...; None: a count or score."""


@dataclass
class Comparison:
    """Kafka's answer and the exact one, each as applied now and as the target its plan reaches
    (docs/transition.md): the goals, the headline figures and the plans, side by side."""

    problem: str | None
    kind: str
    goals: list[GoalComparison]
    kafka_seconds: float
    exact_seconds: float
    moves: int
    """Tasks (or partitions) whose active client (member) differs between the two targets."""
    kafka: Solution = field(repr=False)
    exact: Solution = field(repr=False)
    reads: str | None = None
    """How cross-rack reads are counted, when Kafka's assignors count them otherwise
    (`reads_counted`); None when both count alike."""
    price_per_gb: float | None = None
    """The price of a GB of cross-zone traffic (the problem's own, else the one given); None: no money figures."""
    currency: str = DEFAULT_CURRENCY
    """The price's currency (ISO 4217)."""

    def figures(self) -> dict[str, dict[str, float]]:
        """Headline figure -> column (`kafka_now`, `kafka`, `exact_now`, `exact`) -> value: the
        evaluator's metrics as the pipeline's summary counts them (`cross_rack_bytes` in bytes per
        second and, with a price, `money_per_month` for the same reads), and each plan's costs."""
        columns = {"kafka_now": self.kafka, "kafka": self.kafka, "exact_now": self.exact, "exact": self.exact}
        figures: dict[str, dict[str, float]] = {}
        for column, solution in columns.items():
            measured = headline(solution.metrics if column.endswith("_now") else (solution.target_metrics or solution.metrics))
            for name, value in measured.items():
                if name == "cross_rack_bytes" and value is None:
                    continue  # the problem gives no rates: no traffic figures, rather than a column of dashes
                figures.setdefault(name, {})[column] = value
                cost = monthly_cost(value, self.price_per_gb) if name == "cross_rack_bytes" else None
                if cost is not None:
                    figures.setdefault("money_per_month", {})[column] = round(cost, 2)
        for name, value in _plan_figures(self.kind, self.kafka).items():
            figures.setdefault(name, {})["kafka"] = value
        for name, value in _plan_figures(self.kind, self.exact).items():
            figures.setdefault(name, {})["exact"] = value
        return figures

    def units(self) -> dict[str, str]:
        """Figure or goal -> what its values count, where that is not a plain count: the goals'
        units (`bytes_per_second`, ...), `money_per_month` in the currency, `hours`."""
        units = {g.name: g.unit for g in self.goals if g.unit is not None}
        units.update(cross_rack_bytes="bytes_per_second", money_per_month=f"{self.currency} per month", hours_to_target="hours")
        return units

    def to_dict(self) -> dict[str, Any]:
        return {
            "problem": self.problem,
            "kind": self.kind,
            "goals": [vars(g) for g in self.goals],
            "figures": self.figures(),
            "units": self.units(),
            "price": {"per_gb": self.price_per_gb, "currency": self.currency},
            "plans": {
                "kafka": _plan_data(self.kafka),
                "exact": _plan_data(self.exact),
            },
            "kafka_seconds": round(self.kafka_seconds, 6),
            "exact_seconds": round(self.exact_seconds, 6),
            "moves": self.moves,
            "kafka_followup_rebalance": self.kafka.followup_rebalance,
            "exact_followup_rebalance": self.exact.followup_rebalance,
            "reads": self.reads,
        }

    def table(self) -> Table:
        """The table `kafka-assign compare` prints (a rich Table)."""
        return comparison_table(self)

    def to_table(self) -> str:
        """The table `kafka-assign compare` prints, as text 130 columns wide."""
        return text(self.table())


def reads_counted(problem: Problem) -> str | None:
    """One line saying how the figures count cross-rack reads when Kafka's assignors count them
    otherwise: on a problem with leaders whose brokers do not serve reads from followers, the bill
    (and every figure and exact goal) counts the leader's rack, while Kafka's rack-aware assignors
    place readers by the replica racks. None otherwise (Kafka's view and the figures agree, or no
    leader is known and the figures count the replica racks too)."""
    config = problem.config
    if not problem.has_leaders or config.follower_fetching:
        return None
    selector = (
        f"replica.selector.class {config.custom_replica_selector} is not Kafka's RackAwareReplicaSelector"
        if config.custom_replica_selector is not None
        else "replica.selector.class unset: Kafka's default"
    )
    return (
        f"Reads are counted from each partition's leader ({selector}, no follower fetching); Kafka's assignors "
        "place readers by the replica racks, as if any replica served them."
    )


def _plan_figures(kind: str, solution: Solution) -> dict[str, float]:
    plan = solution.plan
    if plan is None:
        return {}
    if kind == "consumer":
        # withheld now (the metrics' count); the follow-up may move more (`plan_lines`)
        withheld = solution.metrics.withheld_partitions if isinstance(solution.metrics, ConsumerMetrics) else 0
        return {"withheld": withheld, "followup_rebalances": plan.followup_rebalances}
    figures: dict[str, float] = {
        "followup_rebalances": plan.followup_rebalances,
        "warmups": plan.warmups,
        "restore_offsets": plan.restore_offsets,
        "hours_to_target": plan.seconds_to_target / 3600,
    }
    if plan.restore_unknown:  # not in restore_offsets: the size of their changelog is not known
        figures["restore_unknown"] = plan.restore_unknown
    return figures


def _plan_data(solution: Solution) -> dict[str, Any] | None:
    return None if solution.plan is None else solution.plan.model_dump(mode="json")


def _reasons(g: GoalComparison, earlier: Sequence[GoalComparison], kind: str) -> tuple[str | None, str | None, str | None]:
    """Why Kafka's values (now, target) and the exact value now are below the proven bound, when
    they are: the bound holds for complete targets, under the optima of the `earlier` goals."""
    bound = g.bound
    if bound is None:
        return None, None, None

    def below(value: float | None) -> bool:
        return value is not None and value < bound - 1e-9

    waiting = "tasks wait for their warm-ups" if kind == "streams" else "partitions are withheld until revoked"
    now = f"applied now, not the target yet ({waiting}): the bound is on targets"
    target = None
    if below(g.kafka):
        worse = next((e for e in earlier if e.exact is not None and e.kafka > e.exact), None)
        target = (
            f"Kafka's target is worse on the earlier goal {worse.name} ({whole(worse.kafka)} against {whole(worse.exact)}): "
            f"the bound on {g.name} holds under the earlier goals' optima"
            if worse is not None
            else f"no earlier goal explains Kafka's {g.name} below the bound: a bug, please report it"
        )
    return (now if below(g.kafka_now) else None, target, now if below(g.exact_now) else None)


def compare(
    problem: Problem,
    goals: Sequence[str] | None = None,
    time_limit: float | None = None,
    solver: str = "exact",
    price_per_gb: float | None = None,
    currency: str | None = None,
) -> Comparison:
    """Solve with Kafka's heuristic and exactly, and set them side by side as applied now and as
    their targets. `time_limit` covers both, Kafka's first. `price_per_gb` and `currency` price
    the cross-zone traffic of a problem that gives no price (or currency) of its own."""
    goal_objects = resolve_goals(goals, problem)
    names = [g.name for g in goal_objects]
    deadline = deadline_after(time_limit)
    started = time.perf_counter()
    kafka = solve(problem, solver="kafka", goals=names, time_limit=remaining(deadline))
    kafka_seconds = time.perf_counter() - started
    started = time.perf_counter()
    exact = solve(problem, solver=solver, goals=goals, time_limit=remaining(deadline), kafka=kafka)
    exact_seconds = time.perf_counter() - started
    rows: list[GoalComparison] = []
    for theirs, result in zip(kafka.goals, exact.goals, strict=True):
        row = GoalComparison(
            result.name,
            float(theirs.value or 0.0),
            result.value,
            result.status,
            result.bound,
            result.gap,
            result.seconds,
            float(theirs.value_now or 0.0),
            result.value_now,
            unit=result.unit,
        )
        reasons = zip(("kafka_now", "kafka", "exact_now"), _reasons(row, rows, problem.kind), strict=True)
        rows.append(replace(row, notes={column: why for column, why in reasons if why is not None}))
    kafka_target = kafka.target or kafka.assignment
    placed = {(c, item) for c, held in kafka_target.items() for item in held.active}
    moves = sum(1 for c, held in (exact.target or exact.assignment).items() for item in held.active if (c, item) not in placed)
    price, code = price_and_currency(problem.price_per_gb, problem.currency, price_per_gb, currency)
    return Comparison(problem.name, problem.kind, rows, kafka_seconds, exact_seconds, moves, kafka, exact, reads_counted(problem), price, code)


# What moving a group to the new protocol costs, read from the evaluator's metrics (lower is better).
PROTOCOL_METRICS: dict[str, tuple[str, ...]] = {
    "streams": (
        "cross_rack_active_partitions",
        "cross_rack_standby_partitions",
        "active_load_skew",
        "stateful_load_skew",
        "active_moves",
        "standby_moves",
        "standby_rack_conflicts",
        "actives_not_caught_up",
    ),
    "consumer": ("cross_rack_partitions", "size_skew", "owned_moved", "withheld_partitions"),
}


@dataclass
class ProtocolComparison:
    """One group under the classic protocol's assignor, the new protocol's (KIP-848 or KIP-1071)
    and the exact optimum: the evaluator's metrics and the goal values side by side."""

    problem: str | None
    kind: str
    columns: list[str]
    """`classic`, `new`, `exact`."""
    assignors: dict[str, str]
    """Column -> the assignor that ran (for example `classic range`, `KIP-848 uniform`)."""
    metrics: dict[str, dict[str, float]]
    """Metric name -> column -> value."""
    goals: dict[str, dict[str, float | None]]
    """Goal name -> column -> value."""
    seconds: dict[str, float]
    solutions: dict[str, Solution] = field(repr=False)
    reads: str | None = None
    """How cross-rack reads are counted, when Kafka's assignors count them otherwise (`reads_counted`)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "problem": self.problem,
            "kind": self.kind,
            "assignors": self.assignors,
            "metrics": self.metrics,
            "goals": self.goals,
            "seconds": {c: round(s, 6) for c, s in self.seconds.items()},
            "followup_rebalance": {c: s.followup_rebalance for c, s in self.solutions.items()},
            "reads": self.reads,
        }

    def plans(self) -> dict[str, dict[str, float]]:
        """Column -> the figures of its plan (probing or follow-up rebalances, warm-ups, ...)."""
        return {c: _plan_figures(self.kind, self.solutions[c]) for c in self.columns}

    def table(self) -> Table:
        """The table `kafka-assign compare --protocols` prints (a rich Table)."""
        return protocol_comparison_table(self)

    def to_table(self) -> str:
        """The table `kafka-assign compare --protocols` prints, as text 130 columns wide."""
        return text(self.table())


def compare_protocols(
    problem: Problem,
    goals: Sequence[str] | None = None,
    time_limit: float | None = None,
    solver: str = "exact",
) -> ProtocolComparison:
    """`problem` under Kafka's classic protocol, under the new one (`with_protocol`) and exactly:
    the figures of each assignment applied now, the goal values of each target, and each plan,
    as in `compare`; `time_limit` covers all three."""
    names = [g.name for g in resolve_goals(goals, problem)]
    deadline = deadline_after(time_limit)
    solutions: dict[str, Solution] = {}
    seconds: dict[str, float] = {}
    assignors: dict[str, str] = {}
    for protocol in PROTOCOLS:
        variant = with_protocol(problem, protocol)
        started = time.perf_counter()
        solutions[protocol] = solve(variant, solver="kafka", goals=names, time_limit=remaining(deadline))
        seconds[protocol] = time.perf_counter() - started
        assignors[protocol] = assignor_label(variant)
    started = time.perf_counter()
    exact = solve(problem, solver=solver, goals=goals, time_limit=remaining(deadline), kafka=solutions["classic"])
    seconds["exact"] = time.perf_counter() - started
    solutions["exact"] = exact
    assignors["exact"] = solver
    columns = [*PROTOCOLS, "exact"]
    metrics = {
        name: {c: float(getattr(solutions[c].metrics, name)) for c in columns}
        for name in PROTOCOL_METRICS[problem.kind]
    }
    goal_values: dict[str, dict[str, float | None]] = {
        name: {c: solutions[c].goals[i].value for c in columns} for i, name in enumerate(names)
    }
    return ProtocolComparison(problem.name, problem.kind, columns, assignors, metrics, goal_values, seconds, solutions, reads_counted(problem))
