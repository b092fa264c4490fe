"""`standby_rack_diversity`: the copies of a stateful task on different racks, or on different
values of every `rack.aware.assignment.tags` key when tags are configured (KIP-708; KIP-925's
"default to tags").

For each stateful task and each dimension (rack, or each tag key), the copies (active and
standbys) sharing a value beyond the first are conflicts; the value is their number. Clients
without a rack never conflict on racks.
"""

from __future__ import annotations

import numpy as np

from goals.common import streams_placement
from optimizer.costs import StreamsIndex
from optimizer.formulation import LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.model.problem import Problem
from optimizer.model.streams import StreamsProblem
from optimizer.protocols import FlowTermsAPI, FormulationAPI


def diversity_groups(index: StreamsIndex, problem: StreamsProblem) -> list[np.ndarray]:
    """Client positions sharing a value, per dimension, for values held by two or more clients."""
    keys = problem.config.rack_aware_assignment_tags
    dimensions = [[c.tags.get(key) for c in index.clients] for key in keys] if keys else [
        [c.rack for c in index.clients]
    ]
    groups = []
    for values in dimensions:
        by_value: dict[str, list[int]] = {}
        for k, value in enumerate(values):
            if value is not None:
                by_value.setdefault(value, []).append(k)
        groups += [np.array(ks, dtype=np.int64) for _, ks in sorted(by_value.items()) if len(ks) > 1]
    return groups


class StandbyRackDiversity(Goal):
    name = "standby_rack_diversity"
    summary = "copies of a task sharing a rack (or a tag value, per rack.aware.assignment.tags)"
    compressible = True
    kinds = ("streams",)

    def apart(self, problem: Problem) -> frozenset[str]:
        assert isinstance(problem, StreamsProblem)  # a Streams goal: the engine checks `kinds`
        return frozenset({"tags"} if problem.config.rack_aware_assignment_tags else {"rack"})

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        assert isinstance(problem, StreamsProblem)  # a Streams goal: the engine checks `kinds`
        index = StreamsIndex.of(problem)
        placement = streams_placement(index, assignment)
        stateful = index.stateful
        owners = np.flatnonzero((placement.active >= 0) & stateful)
        standby = stateful[placement.standby_rows]
        rows = np.concatenate([owners, placement.standby_rows[standby]])
        clients = np.concatenate([placement.active[owners], placement.standby_clients[standby]])
        total = 0
        for members in diversity_groups(index, problem):
            inside = np.isin(clients, members)
            per_task = np.bincount(rows[inside], minlength=len(index.tasks))
            total += int(np.maximum(per_task - 1, 0).sum())
        return total

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        assert formulation.kind == "streams"  # a Streams goal: the engine checks `kinds`
        if not formulation.standbys:
            return LinExpr.zero()
        groups = diversity_groups(formulation.index, formulation.problem)
        if not groups:
            return LinExpr.zero()
        total = LinExpr.zero()
        for members in groups:
            total += formulation.copies_beyond(members, 1)
        return total

    def flow(self, terms: FlowTermsAPI) -> bool:
        assert terms.kind == "streams"  # a Streams goal: the engine checks `kinds`
        # The flow back-end only takes problems without standbys, where there is nothing to spread.
        problem = terms.problem
        return not (problem.effective_standby_replicas and any(t.stateful for t in problem.tasks))
