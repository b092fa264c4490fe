"""`stickiness`: tasks and partitions kept where they were (KIP-54; KIP-925's non-overlap).

Streams: active tasks not on their previous active client (tasks that had one), plus standby
copies on a client that held no copy of the task before (which must restore its state).
Consumers: owned partitions (after Kafka's clean-up, see normalize) not kept by their owner.
"""

from __future__ import annotations

import numpy as np

from goals.base import Goal
from goals.common import index_of, streams_placement
from optimizer.formulation import LinExpr


def previous_holders(index) -> np.ndarray:
    """tasks x clients: True where the client held any copy of the task before."""
    held = np.zeros((len(index.tasks), len(index.clients)), dtype=bool)
    for k, client in enumerate(index.clients):
        for task in (*client.previous_active, *client.previous_standby):
            row = index.task_position.get(task)
            if row is not None:
                held[row, k] = True
    return held


def owners(formulation) -> list[tuple[int, int]]:
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

    def evaluate(self, problem, assignment) -> int:
        if problem.kind == "consumer":
            kept = moved = 0
            for member in problem.members:
                held = set(assignment[member.id].active) if member.id in assignment else set()
                for partition in member.owned_partitions:
                    moved += partition not in held
                    kept += partition in held
            return moved
        index = index_of(problem)
        placement = streams_placement(index, assignment)
        previous = index.previous_active()
        had = previous >= 0
        moved = int((placement.active[had] != previous[had]).sum())
        held = previous_holders(index)
        return moved + int((~held[placement.standby_rows, placement.standby_clients]).sum())

    def encode(self, formulation) -> LinExpr:
        if formulation.kind == "consumer":
            pairs = formulation.pair_of()
            chosen = [pairs[p, m] for p, m in owners(formulation) if (p, m) in pairs]
            owned = sum(len(m.owned_partitions) for m in formulation.problem.members)
            return LinExpr.of(chosen, -1, owned)
        index = formulation.index
        previous = index.previous_active()
        rows = np.flatnonzero(previous >= 0)
        expr = LinExpr.of(formulation.x[rows, previous[rows]], -1, len(rows))
        if len(formulation.y):
            fresh = ~previous_holders(index)[formulation.stateful_rows]
            expr += LinExpr.of(formulation.y, fresh.astype(np.int64))
        return expr

    def flow(self, terms) -> bool:
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

    def upper_bound(self, formulation) -> int:
        if formulation.kind == "consumer":
            return len(formulation.partitions)
        return formulation.n_tasks * (1 + formulation.standbys)
