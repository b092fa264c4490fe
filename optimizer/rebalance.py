"""The next rebalance after a solution: what a probing rebalance starts from (KIP-441).

`next_rebalance(problem, solution)` returns the problem as it will look once the solution's
assignment has been running: previous actives and standbys (warm-ups included) are the solution's,
every copy caught up (`caught_up=True`, the state a probing rebalance meets once warm-ups have
restored), and for consumer groups the owned partitions are the solution's, one generation later.
"""

from __future__ import annotations

from optimizer.model.consumer import ConsumerProblem
from optimizer.model.problem import Problem
from optimizer.model.solution import Solution


def next_rebalance(problem: Problem, solution: Solution) -> Problem:
    if isinstance(problem, ConsumerProblem):
        generation = max(m.generation for m in problem.members) + 1
        members = tuple(
            m.model_copy(
                update={
                    "owned_partitions": tuple(solution.assignment[m.id].active) if m.id in solution.assignment else (),
                    "generation": generation,
                }
            )
            for m in problem.members
        )
        return problem.model_copy(update={"members": members})
    clients = []
    for client in problem.clients:
        held = solution.assignment.get(client.id)
        active = tuple(held.active) if held else ()
        standby = tuple((*held.standby, *held.warmup)) if held else ()
        # Copies held now report no lag: running actives and caught-up standbys.
        lags = {t: lag for t, lag in client.lags.items() if t not in active and t not in standby}
        clients.append(
            client.model_copy(update={"previous_active": active, "previous_standby": standby, "lags": lags})
        )
    return problem.model_copy(update={"clients": tuple(clients)})
