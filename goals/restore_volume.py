"""`restore_volume`: changelog offsets the assignment makes clients replay (KIP-441's lags).

Every stateful copy, active or standby, on a client that does not hold the task's state up to
date costs that client's lag on the task: the reported lag, 0 for a previous holder without one,
else the whole changelog (`changelog_end_offset`). Where the end offset is unknown, the largest
known end offset of the problem stands in for it (1 when none is known). Ranked before
`stickiness` (or anywhere), it lets the target be chosen knowing what reaching it costs: the
restore volume is what warm-ups must replay before the target is reached (optimizer.engine.transition).
"""

from __future__ import annotations

import numpy as np

from goals.common import restore_offsets, streams_placement
from optimizer.costs import StreamsIndex
from optimizer.formulation import LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.model.problem import Problem
from optimizer.model.streams import StreamsProblem
from optimizer.protocols import FormulationAPI


def restore_costs(problem: StreamsProblem, index: StreamsIndex) -> np.ndarray:
    """`restore_offsets` with unknown volumes (-1) replaced as the module docstring says."""
    offsets = restore_offsets(problem, index)
    unknown = offsets < 0
    if unknown.any():
        known = [t.changelog_end_offset for t in index.tasks if t.changelog_end_offset is not None]
        offsets = np.where(unknown, max(known, default=1), offsets)
    return offsets


class RestoreVolume(Goal):
    name = "restore_volume"
    summary = "changelog offsets clients replay to hold their stateful actives and standbys (lags)"
    value_unit = "offsets"
    compressible = True
    kinds = ("streams",)

    def apart(self, problem: Problem) -> frozenset[str]:
        return frozenset({"state"})  # offsets behind: the clients that report a lag

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        assert isinstance(problem, StreamsProblem)  # a Streams goal: the engine checks `kinds`
        index = StreamsIndex.of(problem)
        placement = streams_placement(index, assignment)
        cost = restore_costs(problem, index)
        return placement.active_cost(cost) + placement.standby_cost(cost)

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        assert formulation.kind == "streams"  # a Streams goal: the engine checks `kinds`
        cost = restore_costs(formulation.problem, formulation.index)
        expr = formulation.active_cost(cost)
        if formulation.standbys:
            expr += formulation.standby_cost(cost[formulation.stateful_rows])
        return expr
