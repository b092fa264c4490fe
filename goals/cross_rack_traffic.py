"""`cross_rack_traffic`: partitions read from another rack (KIP-925's traffic, KIP-881).

Streams: for each active, its source partitions with no replica in the client's rack; for each
standby, its changelog partitions likewise. Consumers: assigned partitions with no replica in the
member's rack. Unknown racks never count.
"""

from __future__ import annotations

import numpy as np

from optimizer.costs import StreamsIndex
from optimizer.goal import Goal
from goals.common import streams_placement
from optimizer.formulation import LinExpr


def _at(index, by_rack: np.ndarray, rows: np.ndarray, clients: np.ndarray, paired: bool = False) -> np.ndarray:
    """by_rack[row, rack of client] for each (row, client) (0 for clients without rack); with
    `paired` the clients are given per row, else `clients` is indexed by row."""
    chosen = clients if paired else clients[rows]
    racks = index.client_rack[chosen]
    known = racks >= 0
    values = np.zeros(len(rows), dtype=np.int64)
    if by_rack.shape[1]:
        values[known] = by_rack[rows[known], racks[known]]
    return values


def consumer_cross(formulation) -> np.ndarray:
    """Per (partition, member) variable: 1 when the partition has racks and the member's rack is
    known and not among them."""
    problem = formulation.problem
    topics = problem.topic_by_name
    racks = {m.id: m.rack for m in problem.members}
    cross = np.zeros(len(formulation.x), dtype=np.int64)
    for pair, (p, m) in enumerate(zip(formulation.pair_partition.tolist(), formulation.pair_member.tolist(), strict=True)):
        topic, number = formulation.partitions[p].rsplit("-", 1)
        replicas = topics[topic].replica_racks
        rack = racks[formulation.members[m]]
        if replicas is not None and replicas[int(number)] and rack is not None:
            cross[pair] = rack not in replicas[int(number)]
    return cross


class CrossRackTraffic(Goal):
    name = "cross_rack_traffic"
    summary = "partitions read across racks: actives' sources, standbys' changelogs (KIP-925, KIP-881)"
    compressible = True

    def evaluate(self, problem, assignment) -> int:
        if problem.kind == "consumer":
            topics = problem.topic_by_name
            total = 0
            for member in problem.members:
                held = assignment.get(member.id)
                if held is None or member.rack is None:
                    continue
                for partition in held.active:
                    topic, number = partition.rsplit("-", 1)
                    racks = topics[topic].replica_racks if topic in topics else None
                    if racks is not None and int(number) < len(racks) and racks[int(number)]:
                        total += member.rack not in racks[int(number)]
            return total
        index = StreamsIndex.of(problem)
        placement = streams_placement(index, assignment)
        return int(
            _at(index, index.source_cross_by_rack, np.flatnonzero(placement.active >= 0), placement.active).sum()
            + _at(index, index.changelog_cross_by_rack, placement.standby_rows, placement.standby_clients, paired=True).sum()
        )

    def encode(self, formulation) -> LinExpr:
        if formulation.kind == "consumer":
            return LinExpr.of(formulation.x, consumer_cross(formulation))
        index = formulation.index
        expr = formulation.active_cost(index.by_client(index.source_cross_by_rack))
        if formulation.standbys:
            changelog = index.by_client(index.changelog_cross_by_rack)[formulation.stateful_rows]
            expr += formulation.standby_cost(changelog)
        return expr

    def flow(self, terms) -> bool:
        if terms.kind == "consumer":
            terms.rack_cost(terms.partition_cross_by_rack())
        else:
            terms.rack_cost(terms.with_rackless(terms.index.source_cross_by_rack))
        return True
