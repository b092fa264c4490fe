"""`movement_budget=N`: at most N actives (Streams) or owned partitions (consumers) moved.

Hard by default. Its value is the number of moves beyond N (0 when within the budget); a move is
an active task not on its previous active client, or an owned partition given to another member.
"""

from __future__ import annotations

import numpy as np

from goals.base import Goal, GoalError
from goals.common import index_of, streams_placement
from goals.stickiness import kept_discount, owners
from optimizer.formulation import LinExpr


class MovementBudget(Goal):
    name = "movement_budget"
    summary = "at most N tasks (or owned partitions) moved: movement_budget=N"
    compressible = True
    hard = True

    def __init__(self, argument: str | None = None):
        if argument is None or not argument.strip().isdigit():
            raise GoalError(f"goal 'movement_budget' needs the number of moves allowed, like movement_budget=10 (got {argument!r})")
        self.argument = argument
        self.budget = int(argument)

    def hard_bound(self, problem) -> int | None:
        return 0

    def moves(self, problem, assignment) -> int:
        if problem.kind == "consumer":
            return sum(
                partition not in set(assignment[m.id].active if m.id in assignment else ())
                for m in problem.members
                for partition in m.owned_partitions
            )
        index = index_of(problem)
        placement = streams_placement(index, assignment)
        previous = index.previous_active()
        had = previous >= 0
        return int((placement.active[had] != previous[had]).sum())

    def evaluate(self, problem, assignment) -> int:
        return max(0, self.moves(problem, assignment) - self.budget)

    def encode(self, formulation) -> LinExpr:
        if formulation.kind == "consumer":
            pairs = formulation.pair_of()
            kept = [pairs[p, m] for p, m in owners(formulation) if (p, m) in pairs]
            total = sum(len(m.owned_partitions) for m in formulation.problem.members)
            moves = LinExpr.of(kept, -1, total)
        else:
            index = formulation.index
            moves = formulation.active_cost(kept_discount(index))
            moves.constant = int((index.previous_active() >= 0).sum())
        excess = formulation.model.add_vars(1, 0, 10**9)[0]
        # excess >= moves - budget
        formulation.model.add_expr_row(moves + LinExpr.of([excess], [-1]), -(10**15), self.budget)

        def fix(solution: np.ndarray) -> None:
            solution[excess] = max(0, moves.value(solution) - self.budget)

        formulation.repairs.append(fix)
        return LinExpr.of([excess], [1])
