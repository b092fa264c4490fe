"""Kafka's heuristic against the exact optimum, goal by goal."""

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
