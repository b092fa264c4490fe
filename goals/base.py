"""The goal API: what a goal (built-in or a plugin's) provides to the engine.

A goal has a unique `name`, applies to some problem `kinds`, is `hard` or soft by default, and
provides:
* `evaluate(problem, assignment) -> int`: its value on an assignment, lower is better, computed
  without any solver (the problem is the normalised one, see `optimizer.normalize`);
* `encode(formulation) -> LinExpr`: the same value as a linear expression over the formulation's
  variables (adding auxiliary variables and rows as needed), so that it runs on CP-SAT and MILP;
  a Streams goal written with the formulation's methods alone may say `compressible = True`;
* optionally `flow(terms) -> bool`: the same value as arc costs of the min-cost-flow network
  (`optimizer.backends.flow`), returning False where it cannot;
* `hard_bound(problem) -> int | None`: when hard, the value it must not exceed (None: the goal is
  optimised first and frozen at its optimum);
* `lower_bound() -> int`: a value no assignment goes below (0 by default), which lets the engine
  prove a stage optimal without a solve when its start already reaches it.

A goal is built from an optional argument string (`movement_budget=10` gives "10").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from optimizer.formulation import Formulation, LinExpr
    from optimizer.model.problem import Problem


class GoalError(ValueError):
    """A goal cannot be used as asked (wrong argument, wrong kind of problem, no encoding)."""


class Goal:
    name: ClassVar[str]
    summary: ClassVar[str] = ""
    kinds: ClassVar[tuple[str, ...]] = ("streams", "consumer")
    hard: ClassVar[bool] = False
    compressible: ClassVar[bool] = False
    """True when `encode` uses only the Streams formulation's methods (`active_cost`,
    `standby_cost`, `client_members`, `group_members`, `copies_in`), never its variables: the
    engine may then solve it on the compressed formulation (optimizer.compressed)."""

    def __init__(self, argument: str | None = None):
        if argument is not None:
            raise GoalError(f"goal {self.name!r} takes no argument (got {argument!r})")
        self.argument = argument

    def __repr__(self) -> str:
        return self.name if self.argument is None else f"{self.name}={self.argument}"

    def applies_to(self, problem: Problem) -> bool:
        return problem.kind in self.kinds

    def evaluate(self, problem: Problem, assignment) -> int:
        raise NotImplementedError

    def encode(self, formulation: Formulation) -> LinExpr:
        raise NotImplementedError

    def flow(self, terms) -> bool:
        return False

    def hard_bound(self, problem: Problem) -> int | None:
        return None

    def lower_bound(self) -> int:
        """A value no assignment goes below (0 for goals that count something)."""
        return 0
