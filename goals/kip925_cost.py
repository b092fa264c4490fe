"""`kip925_cost`: KIP-925's weighted cost of the actives, for one-to-one comparison with the
reference goal (`--solver kip925`).

For a stateful task on client k: traffic_cost x its source partitions read across racks from k (the
serving replica's rack: the leader's, or any replica's under follower fetching; Kafka's own KIP-925
assignor counts any replica) + non_overlap_cost if k is not its previous active client (config, else Kafka's HA defaults 10 and
1); stateless tasks with Kafka's fixed 1 and 0. Equal to the evaluator's `kip925_cost`.
"""

from __future__ import annotations

import numpy as np

from goals.common import streams_placement, values_at_racks
from optimizer.costs import StreamsIndex
from optimizer.formulation import LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.model.problem import Problem
from optimizer.model.streams import STATELESS_NON_OVERLAP_COST, STATELESS_TRAFFIC_COST, StreamsProblem, TaskAssignor, kip925_costs
from optimizer.protocols import FlowTermsAPI, FormulationAPI


def weights(problem: StreamsProblem, index: StreamsIndex) -> tuple[np.ndarray, np.ndarray]:
    traffic, non_overlap = kip925_costs(problem.config, TaskAssignor.HIGH_AVAILABILITY)
    stateful = index.stateful
    return (
        np.where(stateful, traffic, STATELESS_TRAFFIC_COST).astype(np.int64),
        np.where(stateful, non_overlap, STATELESS_NON_OVERLAP_COST).astype(np.int64),
    )


def cost_matrix(problem: StreamsProblem, index: StreamsIndex) -> np.ndarray:
    traffic, non_overlap = weights(problem, index)
    cost = traffic[:, None] * index.by_client(index.source_cross_by_rack) + non_overlap[:, None]
    previous = index.previous_active()
    rows = np.flatnonzero(previous >= 0)
    cost[rows, previous[rows]] -= non_overlap[rows]
    return np.asarray(cost, dtype=np.int64)


class Kip925Cost(Goal):
    name = "kip925_cost"
    summary = "KIP-925's traffic_cost x cross-rack partitions + non_overlap_cost x moved (actives)"
    compressible = True
    kinds = ("streams",)

    def apart(self, problem: Problem) -> frozenset[str]:
        return frozenset({"rack", "state"})  # traffic by rack, non-overlap with the previous client

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        assert isinstance(problem, StreamsProblem)  # a Streams goal: the engine checks `kinds`
        index = StreamsIndex.of(problem)
        placement = streams_placement(index, assignment)
        traffic, non_overlap = weights(problem, index)
        assigned = np.flatnonzero(placement.active >= 0)
        crossing = values_at_racks(index, index.source_cross_by_rack, assigned, placement.active)
        moved = placement.active[assigned] != index.previous_active()[assigned]
        return int((traffic[assigned] * crossing + non_overlap[assigned] * moved).sum())

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        assert formulation.kind == "streams"  # a Streams goal: the engine checks `kinds`
        return formulation.active_cost(cost_matrix(formulation.problem, formulation.index))

    def flow(self, terms: FlowTermsAPI) -> bool:
        assert terms.kind == "streams"  # a Streams goal: the engine checks `kinds`
        index = terms.index
        traffic, non_overlap = weights(terms.problem, index)
        racks = terms.with_rackless(index.source_cross_by_rack) * traffic[:, None] + non_overlap[:, None]
        terms.rack_cost(racks)
        previous = index.previous_active()
        rows = np.flatnonzero((previous >= 0) & (non_overlap > 0))
        terms.pair_cost(rows, previous[rows], -non_overlap[rows])
        return True
