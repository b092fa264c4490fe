"""`movement_budget=N`: at most N actives (Streams) or owned partitions (consumers) moved.

Hard by default. Its value is the number of moves beyond N (0 when within the budget); a move is
an active task not on its previous active client, or an owned partition given to another member.
"""

from __future__ import annotations

import numpy as np

from goals.stickiness import moves, moves_expr
from optimizer.errors import GoalError
from optimizer.formulation import COUNT_BOUND, UNBOUNDED, LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.model.problem import Problem
from optimizer.protocols import FormulationAPI


class MovementBudget(Goal):
    name = "movement_budget"
    summary = "at most N tasks (or owned partitions) moved: movement_budget=N"
    compressible = True
    hard = True

    def apart(self, problem: Problem) -> frozenset[str]:
        return frozenset({"state"})  # moves off the clients that held a task

    def __init__(self, argument: str | None = None):
        if argument is None or not argument.strip().isdigit():
            raise GoalError(f"goal 'movement_budget' needs the number of moves allowed, like movement_budget=10 (got {argument!r})")
        self.argument = argument
        self.budget = int(argument)

    def hard_bound(self, problem: Problem) -> int | None:
        return 0

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        return max(0, moves(problem, assignment) - self.budget)

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        moved = moves_expr(formulation)
        excess = formulation.model.add_vars(1, 0, COUNT_BOUND)[0]
        # excess >= moves - budget
        formulation.model.add_expr_row(moved + LinExpr.of([excess], [-1]), -UNBOUNDED, self.budget)

        def fix(solution: np.ndarray) -> None:
            solution[excess] = max(0, moved.value(solution) - self.budget)

        formulation.repairs.append(fix)
        return LinExpr.of([excess], [1])
