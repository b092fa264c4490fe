"""`drain_clients=ID+ID+...`: copies of tasks (or partitions) left on clients being drained.

Before decommissioning a host, a platform team wants it empty without disturbing the rest more
than necessary. Put this goal first (or right after `balance`) and the optimiser moves every task
off the named clients that the other goals allow; its value is the number of task copies
(actives and standbys; partitions for consumer groups) still on them.

A goal provides a solver-free `evaluate` and an `encode` on the optimiser's formulation; this one
prices each copy on a drained client at 1, through the formulation's `active_cost` and
`standby_cost` (Streams) or its (partition, member) variables (consumers). It uses only the public
names of `optimizer`: the protocols `StreamsFormulationAPI` and `ConsumerFormulationAPI` declare
what a formulation offers. (It is not `compressible`: it prices the drained clients of a rack
differently from their neighbours, which the compressed model cannot express.)
"""

from __future__ import annotations

import numpy as np

from optimizer import Assignment, FormulationAPI, Goal, GoalError, LinExpr, PluginGoals, Problem, hookimpl


class DrainClients(Goal):
    name = "drain_clients"
    summary = "task copies (or partitions) left on clients being drained: drain_clients=ID+ID"

    def __init__(self, argument: str | None = None) -> None:
        clients = [c.strip() for c in (argument or "").split("+") if c.strip()]
        if not clients:
            raise GoalError("goal 'drain_clients' needs the clients to drain, like drain_clients=node-1+node-2")
        self.argument = argument
        self.clients = frozenset(clients)

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        return sum(len(held.active) + len(held.standby) for client, held in assignment.items() if client in self.clients)

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        if formulation.kind == "consumer":
            members = np.array(formulation.members, dtype=object)
            drained = np.isin(members[formulation.pair_member], sorted(self.clients))
            return LinExpr.of(formulation.x, drained.astype(np.int64))
        drained = np.array([c.id in self.clients for c in formulation.index.clients], dtype=np.int64)
        expr = formulation.active_cost(np.broadcast_to(drained, (formulation.n_tasks, len(drained))))
        if formulation.standbys:
            expr += formulation.standby_cost(np.broadcast_to(drained, (len(formulation.stateful_rows), len(drained))))
        return expr


@hookimpl
def register_goals(registry: PluginGoals) -> None:
    """Called once when the optimiser loads its plugins: add this package's goals."""
    registry.add(DrainClients)
