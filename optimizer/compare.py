"""Kafka's heuristic against the exact optimum, goal by goal (`compare`); the classic protocol's
assignor against the new protocol's and the exact optimum (`compare_protocols`)."""

from __future__ import annotations

import io
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from optimizer.deadline import deadline_after, remaining
from optimizer.model.group_protocol import PROTOCOLS, assignor_label, with_protocol
from optimizer.model.normalize import normalize
from optimizer.model.problem import Problem
from optimizer.model.solution import GoalStatus, Solution
from optimizer.solve import resolve_goals, solve


@dataclass(frozen=True)
class GoalComparison:
    name: str
    kafka: float
    """The goal's value on Kafka's assignment."""
    exact: float | None
    """The goal's value on the exact (target) assignment."""
    status: GoalStatus
    """The exact stage's status."""
    bound: float | None
    gap: float | None
    seconds: float


@dataclass
class Comparison:
    problem: str | None
    kind: str
    goals: list[GoalComparison]
    kafka_seconds: float
    exact_seconds: float
    moves: int
    """Tasks (or partitions) whose active client (member) differs between the two."""
    kafka: Solution = field(repr=False)
    exact: Solution = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "problem": self.problem,
            "kind": self.kind,
            "goals": [vars(g) for g in self.goals],
            "kafka_seconds": round(self.kafka_seconds, 6),
            "exact_seconds": round(self.exact_seconds, 6),
            "moves": self.moves,
            "kafka_followup_rebalance": self.kafka.followup_rebalance,
            "exact_followup_rebalance": self.exact.followup_rebalance,
        }

    def table(self) -> Table:
        name = f" {self.problem!r}" if self.problem else ""
        table = Table(title=escape(f"Kafka heuristic vs exact on{name}"), title_justify="left")
        for column in ("goal", "kafka", "exact", "bound", "gap", "status", "seconds"):
            table.add_column(column, justify="left" if column in ("goal", "status") else "right", no_wrap=True)
        for g in self.goals:
            better = g.exact is not None and g.exact < g.kafka
            exact = "-" if g.exact is None else f"{g.exact:g}"
            table.add_row(
                escape(g.name),
                f"{g.kafka:g}",
                f"[green]{exact}[/green]" if better else exact,
                "-" if g.bound is None else f"{g.bound:g}",
                "-" if g.gap is None else f"{g.gap:.2%}",
                g.status,
                f"{g.seconds:.3f}",
            )
        table.caption = (
            f"Kafka {self.kafka_seconds:.3f} s, exact {self.exact_seconds:.3f} s; {self.moves} "
            f"{'tasks' if self.kind == 'streams' else 'partitions'} placed differently"
            + ("; Kafka's assignment has warm-ups pending" if self.kafka.followup_rebalance else "")
        )
        return table

    def to_table(self) -> str:
        buffer = io.StringIO()
        Console(file=buffer, width=110, highlight=False).print(self.table())
        return buffer.getvalue()


def compare(
    problem: Problem,
    goals: Sequence[str] | None = None,
    time_limit: float | None = None,
    solver: str = "exact",
) -> Comparison:
    """Solve with Kafka's heuristic and exactly; the exact side without warm-up planning, so that
    goal values compare target with target. `time_limit` covers both, Kafka's first."""
    goal_objects = resolve_goals(goals, problem.kind)
    deadline = deadline_after(time_limit)
    started = time.perf_counter()
    kafka = solve(problem, solver="kafka", time_limit=remaining(deadline))
    kafka_seconds = time.perf_counter() - started
    started = time.perf_counter()
    exact = solve(problem, solver=solver, goals=goals, time_limit=remaining(deadline), warmups=False, kafka=kafka)
    exact_seconds = time.perf_counter() - started
    normalized = normalize(problem).problem
    rows = []
    for goal, result in zip(goal_objects, exact.goals, strict=True):
        rows.append(
            GoalComparison(
                goal.name,
                float(goal.evaluate(normalized, kafka.assignment)),
                result.value,
                result.status,
                result.bound,
                result.gap,
                result.seconds,
            )
        )
    placed = {(c, item) for c, held in kafka.assignment.items() for item in held.active}
    moves = sum(1 for c, held in exact.assignment.items() for item in held.active if (c, item) not in placed)
    return Comparison(problem.name, problem.kind, rows, kafka_seconds, exact_seconds, moves, kafka, exact)


# What moving a group to the new protocol costs, read from the evaluator's metrics (lower is better).
PROTOCOL_METRICS: dict[str, tuple[tuple[str, str], ...]] = {
    "streams": (
        ("cross_rack_active_partitions", "cross-rack source partitions (actives)"),
        ("cross_rack_standby_partitions", "cross-rack changelog partitions (standbys)"),
        ("active_load_skew", "active tasks per thread, max - min"),
        ("stateful_load_skew", "stateful tasks per thread, max - min"),
        ("active_moves", "active tasks moved"),
        ("standby_moves", "standbys placed anew"),
        ("standby_rack_conflicts", "standbys sharing a rack with a copy"),
        ("actives_not_caught_up", "actives not caught up"),
    ),
    "consumer": (
        ("cross_rack_partitions", "cross-rack partitions"),
        ("size_skew", "partitions per member, max - min"),
        ("owned_moved", "owned partitions moved"),
        ("withheld_partitions", "partitions withheld a round"),
    ),
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "problem": self.problem,
            "kind": self.kind,
            "assignors": self.assignors,
            "metrics": self.metrics,
            "goals": self.goals,
            "seconds": {c: round(s, 6) for c, s in self.seconds.items()},
            "followup_rebalance": {c: s.followup_rebalance for c, s in self.solutions.items()},
        }

    def table(self) -> Table:
        name = f" {self.problem!r}" if self.problem else ""
        table = Table(title=escape(f"Classic protocol vs new protocol vs exact on{name}"), title_justify="left")
        table.add_column("figure (lower is better)", justify="left", no_wrap=True)
        for column in self.columns:
            table.add_column(escape(f"{column}\n{self.assignors[column]}"), justify="right", no_wrap=True)
        labels = dict(PROTOCOL_METRICS[self.kind])
        for metric, figures in self.metrics.items():
            table.add_row(escape(labels[metric]), *(f"{figures[c]:g}" for c in self.columns))
        for goal, values in self.goals.items():
            table.add_row(escape(f"goal {goal}"), *("-" if values[c] is None else f"{values[c]:g}" for c in self.columns))
        table.caption = ", ".join(f"{c} {self.seconds[c]:.3f} s" for c in self.columns) + f"; goals in order: {', '.join(self.goals)}" + (
            "; exact is the target assignment (warm-ups not planned)" if self.kind == "streams" else ""
        )
        return table

    def to_table(self) -> str:
        buffer = io.StringIO()
        Console(file=buffer, width=130, highlight=False).print(self.table())
        return buffer.getvalue()


def compare_protocols(
    problem: Problem,
    goals: Sequence[str] | None = None,
    time_limit: float | None = None,
    solver: str = "exact",
) -> ProtocolComparison:
    """`problem` under Kafka's classic protocol, under the new one (`with_protocol`) and exactly.
    The exact side is the target assignment, as in `compare`; `time_limit` covers all three."""
    goal_objects = resolve_goals(goals, problem.kind)
    deadline = deadline_after(time_limit)
    solutions: dict[str, Solution] = {}
    seconds: dict[str, float] = {}
    assignors: dict[str, str] = {}
    for protocol in PROTOCOLS:
        variant = with_protocol(problem, protocol)
        started = time.perf_counter()
        solutions[protocol] = solve(variant, solver="kafka", time_limit=remaining(deadline))
        seconds[protocol] = time.perf_counter() - started
        assignors[protocol] = assignor_label(variant)
    started = time.perf_counter()
    exact = solve(problem, solver=solver, goals=goals, time_limit=remaining(deadline), warmups=False, kafka=solutions["classic"])
    seconds["exact"] = time.perf_counter() - started
    solutions["exact"] = exact
    assignors["exact"] = solver
    columns = [*PROTOCOLS, "exact"]
    metrics = {
        name: {c: float(getattr(solutions[c].metrics, name)) for c in columns}
        for name, _ in PROTOCOL_METRICS[problem.kind]
    }
    normalized = normalize(problem).problem
    goal_values: dict[str, dict[str, float | None]] = {}
    for goal, result in zip(goal_objects, exact.goals, strict=True):
        values: dict[str, float | None] = {c: float(goal.evaluate(normalized, solutions[c].assignment)) for c in PROTOCOLS}
        goal_values[goal.name] = values | {"exact": result.value}
    return ProtocolComparison(problem.name, problem.kind, columns, assignors, metrics, goal_values, seconds, solutions)
