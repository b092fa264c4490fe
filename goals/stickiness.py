"""`stickiness`: tasks and partitions kept where they were (KIP-54; KIP-925's non-overlap).

Streams: active tasks not on their previous active client (tasks that had one), plus standby
copies on a client that held no copy of the task before (which must restore its state).
Consumers: owned partitions (after Kafka's clean-up, see normalize) not kept by their owner.
"""

from __future__ import annotations

import numpy as np

from goals.common import streams_placement
from optimizer.costs import StreamsIndex
from optimizer.formulation import LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.model.problem import Problem
from optimizer.protocols import ConsumerFormulationAPI, FlowTermsAPI, FormulationAPI


def kept_discount(index: StreamsIndex) -> np.ndarray:
    """tasks x clients: -1 on each task's previous active client, 0 elsewhere (the number of
    moves is the number of tasks that had a previous client plus this)."""
    previous = index.previous_active()
    rows = np.flatnonzero(previous >= 0)
    cost = np.zeros((len(index.tasks), len(index.clients)), dtype=np.int64)
    cost[rows, previous[rows]] = -1
    return cost


def moves(problem: Problem, assignment: Assignment) -> int:
    """Actives moved off their previous client (Streams) or owned partitions moved (consumer)."""
    if problem.kind == "consumer":
        moved = 0
        for member in problem.members:
            held = set(assignment[member.id].active) if member.id in assignment else set()
            moved += sum(partition not in held for partition in member.owned_partitions)
        return moved
    index = StreamsIndex.of(problem)
    placement = streams_placement(index, assignment)
    previous = index.previous_active()
    had = previous >= 0
    return int((placement.active[had] != previous[had]).sum())


def moves_expr(formulation: FormulationAPI) -> LinExpr:
    """`moves` as a linear expression of the formulation's variables."""
    if formulation.kind == "consumer":
        pairs = formulation.pair_of()
        kept = [pairs[p, m] for p, m in owners(formulation) if (p, m) in pairs]
        owned = sum(len(m.owned_partitions) for m in formulation.problem.members)
        return LinExpr.of(kept, -1, owned)
    index = formulation.index
    expr = formulation.active_cost(kept_discount(index))
    expr.constant = int((index.previous_active() >= 0).sum())
    return expr


def owners(formulation: ConsumerFormulationAPI) -> list[tuple[int, int]]:
    """(partition row, member position) of every owned partition still assignable to its owner."""
    result = []
    for member in formulation.problem.members:
        m = formulation.member_position[member.id]
        for partition in member.owned_partitions:
            p = formulation.partition_position.get(partition)
            if p is not None:
                result.append((p, m))
    return result


class Stickiness(Goal):
    name = "stickiness"
    summary = "actives moved off their previous client + standbys where no copy was before; owned partitions moved"
    compressible = True

    def apart(self, problem: Problem) -> frozenset[str]:
        return frozenset({"state"})  # the clients that held a task

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        moved = moves(problem, assignment)
        if problem.kind == "consumer":
            return moved
        index = StreamsIndex.of(problem)
        placement = streams_placement(index, assignment)
        held = index.previous_holders
        return moved + int((~held[placement.standby_rows, placement.standby_clients]).sum())

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        expr = moves_expr(formulation)
        if formulation.kind == "streams" and formulation.standbys:
            fresh = ~formulation.index.previous_holders[formulation.stateful_rows]
            expr += formulation.standby_cost(fresh.astype(np.int64))
        return expr

    def flow(self, terms: FlowTermsAPI) -> bool:
        if terms.kind == "consumer":
            terms.owner_discount(1)
            return True
        previous = terms.index.previous_active()
        rows = np.flatnonzero(previous >= 0)
        uniform = np.zeros(len(terms.index.tasks), dtype=np.int64)
        uniform[rows] = 1
        terms.rack_cost(np.repeat(uniform[:, None], terms.rack_columns, axis=1))
        terms.pair_cost(rows, previous[rows], -1)
        return True
