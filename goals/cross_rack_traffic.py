"""`cross_rack_traffic`: partitions read from another rack (KIP-925's traffic, KIP-881).

Streams: for each active, its source partitions with no replica in the client's rack; for each
standby, its changelog partitions likewise. Consumers: assigned partitions with no replica in the
member's rack. Unknown racks never count: the rule is `reads_across_racks` (optimizer/model/racks.py).
"""

from __future__ import annotations

import numpy as np

from goals.common import streams_placement, values_at_racks
from optimizer.costs import StreamsIndex
from optimizer.formulation import LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.model.problem import Problem
from optimizer.model.racks import reads_across_racks
from optimizer.protocols import ConsumerFormulationAPI, FlowTermsAPI, FormulationAPI


def consumer_cross(formulation: ConsumerFormulationAPI) -> np.ndarray:
    """Per (partition, member) variable: 1 when the member reads the partition across racks
    (`reads_across_racks`)."""
    problem = formulation.problem
    member = problem.member_by_id
    racks = sorted({m.rack for m in problem.members if m.rack is not None})
    column: dict[str | None, int] = {rack: j for j, rack in enumerate(racks)}
    column[None] = len(racks)  # members without a rack: the last column
    member_column = np.array([column[member[m].rack] for m in formulation.members], dtype=np.int64)
    by_rack = problem.cross_by_rack(formulation.partitions, (*racks, None))
    return by_rack[formulation.pair_partition, member_column[formulation.pair_member]]


class CrossRackTraffic(Goal):
    name = "cross_rack_traffic"
    summary = "partitions read across racks: actives' sources, standbys' changelogs (KIP-925, KIP-881)"
    compressible = True

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        if problem.kind == "consumer":
            total = 0
            for member in problem.members:
                held = assignment.get(member.id)
                if held is not None:
                    total += sum(reads_across_racks(member.rack, problem.replica_racks_of(p)) for p in held.active)
            return total
        index = StreamsIndex.of(problem)
        placement = streams_placement(index, assignment)
        return int(
            values_at_racks(index, index.source_cross_by_rack, np.flatnonzero(placement.active >= 0), placement.active).sum()
            + values_at_racks(index, index.changelog_cross_by_rack, placement.standby_rows, placement.standby_clients, paired=True).sum()
        )

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        if formulation.kind == "consumer":
            return LinExpr.of(formulation.x, consumer_cross(formulation))
        index = formulation.index
        expr = formulation.active_cost(index.by_client(index.source_cross_by_rack))
        if formulation.standbys:
            changelog = index.by_client(index.changelog_cross_by_rack)[formulation.stateful_rows]
            expr += formulation.standby_cost(changelog)
        return expr

    def flow(self, terms: FlowTermsAPI) -> bool:
        if terms.kind == "consumer":
            terms.rack_cost(terms.partition_cross_by_rack())
        else:
            terms.rack_cost(terms.with_rackless(terms.index.source_cross_by_rack))
        return True
