"""`caught_up`: active stateful tasks on a most-caught-up client (KIP-441 ranks).

A client's rank on a task is 0 within acceptable.recovery.lag (or when it ran the task), else its
lag; the most caught up are those of least rank. The value is the number of stateful actives on a
client that is not among the most caught up for the task.
"""

from __future__ import annotations

import numpy as np

from optimizer.costs import StreamsIndex
from optimizer.formulation import LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.model.problem import Problem
from optimizer.model.streams import StreamsProblem
from optimizer.placement import behind, streams_placement
from optimizer.protocols import FlowTermsAPI, FormulationAPI


class CaughtUp(Goal):
    name = "caught_up"
    summary = "stateful actives on a client that is not among the most caught up (KIP-441 ranks)"
    compressible = True
    kinds = ("streams",)

    def apart(self, problem: Problem) -> frozenset[str]:
        return frozenset({"state"})  # lags: the clients that report one

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        assert isinstance(problem, StreamsProblem)  # a Streams goal: the engine checks `kinds`
        index = StreamsIndex.of(problem)
        placement = streams_placement(index, assignment)
        return placement.active_cost(behind(problem, index))

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        assert formulation.kind == "streams"  # a Streams goal: the engine checks `kinds`
        return formulation.active_cost(behind(formulation.problem, formulation.index))

    def flow(self, terms: FlowTermsAPI) -> bool:
        assert terms.kind == "streams"  # a Streams goal: the engine checks `kinds`
        cost = behind(terms.problem, terms.index)
        rows = np.flatnonzero(cost.any(axis=1))
        base = np.zeros(len(terms.index.tasks), dtype=np.int64)
        base[rows] = 1
        terms.rack_cost(np.repeat(base[:, None], terms.rack_columns, axis=1))
        ahead_rows, ahead_clients = np.nonzero(cost[rows] == 0)
        terms.pair_cost(rows[ahead_rows], ahead_clients, -1)
        return True
