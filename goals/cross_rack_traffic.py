"""`cross_rack_traffic`: partitions read from another rack (KIP-925's traffic, KIP-881), and
`cross_rack_bytes`: the same reads in bytes per second.

Streams: for each active, its source partitions served from another rack than the client's; for
each standby, its changelog partitions likewise. Consumers: assigned partitions served from another
rack than the member's. The serving replica is the leader, or under follower fetching any replica
(`replica.selector.class`); unknown racks never count: the rule is `serving_racks` and
`reads_across_racks` (optimizer/model/racks.py, docs/file-formats.md "Leaders and follower fetching").
`cross_rack_bytes` weighs each read by the partition's bytes per second (`rate_of`: its own or
its topic's rate, else the mean known rate of the problem; 1 per partition when none is known).
Where every read at once could exceed `BYTES_LIMIT` bytes per second (256 GB/s), it counts in
units of u bytes per second instead, u the smallest power of two that brings that under the
limit, each read (a partition read by one active, standby or member) rounded up to whole units
(`byte_unit`), in `evaluate`, the linear encoding and the flow's costs alike: any throughput
Kafka can carry is solved, in coarser units, and the solution's notes say so.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from goals.common import streams_placement, values_at_racks
from optimizer.costs import StreamsIndex
from optimizer.formulation import UNBOUNDED, LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.model.base import derived
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.problem import Problem
from optimizer.model.racks import cross_by_rack, reads_across_racks
from optimizer.model.streams import StreamsProblem, TopicPartition
from optimizer.protocols import ConsumerFormulationAPI, FlowTermsAPI, FormulationAPI

BYTES_LIMIT = 2**38
"""The most bytes per second `cross_rack_bytes` counts one by one: every read at once below it
keeps the integer models' frozen bounds well inside their range (`UNBOUNDED`, 2^40)."""


def byte_unit(most: int) -> int:
    """1 when `most` (every read at once, in bytes per second) is below `BYTES_LIMIT`, else the
    smallest power of two u with most / u below it: the unit `cross_rack_bytes` counts in."""
    unit = 1
    while most >= BYTES_LIMIT * unit:
        unit *= 2
    return unit


def in_units(values: np.ndarray, unit: int) -> np.ndarray:
    """`values` (bytes per second) in whole units of `unit`, rounded up (a read never counts 0)."""
    return values if unit == 1 else -(-np.asarray(values, dtype=np.int64) // unit)


def consumer_cross(formulation: ConsumerFormulationAPI, in_bytes: bool = False) -> np.ndarray:
    """Per (partition, member) variable: 1 when the member reads the partition across racks
    (`reads_across_racks`); with `in_bytes`, the partition's bytes per second instead of 1."""
    problem = formulation.problem
    member = problem.member_by_id
    racks = sorted({m.rack for m in problem.members if m.rack is not None})
    column: dict[str | None, int] = {rack: j for j, rack in enumerate(racks)}
    column[None] = len(racks)  # members without a rack: the last column
    member_column = np.array([column[member[m].rack] for m in formulation.members], dtype=np.int64)
    by_rack = (problem.bytes_by_rack if in_bytes else problem.cross_by_rack)(formulation.partitions, (*racks, None))
    return by_rack[formulation.pair_partition, member_column[formulation.pair_member]]


class CrossRackTraffic(Goal):
    name = "cross_rack_traffic"
    summary = "partitions read across racks: actives' sources, standbys' changelogs (KIP-925, KIP-881)"
    value_unit = "partitions"
    compressible = True
    in_bytes: ClassVar[bool] = False
    """Whether a read counts its partition's bytes per second (else 1)."""

    def apart(self, problem: Problem) -> frozenset[str]:
        return frozenset({"rack"})  # the reading client's rack

    def unit(self, problem: Problem) -> int:
        """The bytes per second one unit of the value stands for (`byte_unit`; 1 for partitions)."""
        if not self.in_bytes:
            return 1
        return _consumer_unit(problem) if isinstance(problem, ConsumerProblem) else _streams_unit(problem)

    def notes(self, problem: Problem) -> list[str]:
        unit = self.unit(problem)
        if unit == 1:
            return []
        return [f"goal {self.name!r} counts in units of {unit:,} bytes per second, each read rounded up: every read at once would exceed {BYTES_LIMIT:,}"]

    def _consumer_value(self, problem: ConsumerProblem, partition: str, unit: int) -> int:
        return -(-problem.rate_of(partition) // unit) if self.in_bytes else 1

    def _by_rack(self, index: StreamsIndex, reads: str) -> np.ndarray:
        if not self.in_bytes:
            return index.source_cross_by_rack if reads == "source" else index.changelog_cross_by_rack
        if self.unit(index.problem) == 1:
            return index.source_bytes_by_rack if reads == "source" else index.changelog_bytes_by_rack
        source, changelog = _streams_units_by_rack(index.problem)
        return source if reads == "source" else changelog

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        if problem.kind == "consumer":
            unit = self.unit(problem)
            total = 0
            for member in problem.members:
                held = assignment.get(member.id)
                if held is not None:
                    total += sum(
                        self._consumer_value(problem, p, unit) for p in held.active if reads_across_racks(member.rack, problem.serving_racks_of(p))
                    )
            return total
        index = StreamsIndex.of(problem)
        placement = streams_placement(index, assignment)
        return int(
            values_at_racks(index, self._by_rack(index, "source"), np.flatnonzero(placement.active >= 0), placement.active).sum()
            + values_at_racks(index, self._by_rack(index, "changelog"), placement.standby_rows, placement.standby_clients, paired=True).sum()
        )

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        if formulation.kind == "consumer":
            costs = in_units(consumer_cross(formulation, self.in_bytes), self.unit(formulation.problem))
            return LinExpr.of(formulation.x, costs)
        index = formulation.index
        source = index.by_client(self._by_rack(index, "source"))
        expr = formulation.active_cost(source)
        most = int(source.max(axis=1, initial=0).sum())
        if formulation.standbys:
            changelog = index.by_client(self._by_rack(index, "changelog"))[formulation.stateful_rows]
            expr += formulation.standby_cost(changelog)
            most += formulation.standbys * int(changelog.max(axis=1, initial=0).sum())
        # Frozen stages are rows `value <= optimum`: a bound at UNBOUNDED would be no bound at all
        # (the unit keeps bytes below BYTES_LIMIT; counted partitions never come near)
        assert most < UNBOUNDED, most
        return expr

    def flow(self, terms: FlowTermsAPI) -> bool:
        if terms.kind == "consumer":
            terms.rack_cost(in_units(terms.partition_bytes_by_rack(), self.unit(terms.problem)) if self.in_bytes else terms.partition_cross_by_rack())
        else:
            terms.rack_cost(terms.with_rackless(self._by_rack(terms.index, "source")))
        return True


@derived
def _consumer_unit(problem: ConsumerProblem) -> int:
    return byte_unit(sum(problem.rate_of(p) for topic in problem.topics for p in topic.partition_ids()))


@derived
def _streams_units_by_rack(problem: StreamsProblem) -> tuple[np.ndarray, np.ndarray]:
    """tasks x racks, sources and changelogs: the task's reads across racks from that rack, each
    in whole units of the goal's unit (`_streams_unit`), rounded up read by read (a task's reads
    from one rack are not added up first: the documented rule, which the evaluator's per-read
    figures recompute)."""
    index = StreamsIndex.of(problem)
    unit = _streams_unit(problem)

    def by_rack(partitions_per_task: list[tuple[TopicPartition, ...]]) -> np.ndarray:
        owners = np.array([t for t, partitions in enumerate(partitions_per_task) for _ in partitions], dtype=np.int64)
        listed = [p for partitions in partitions_per_task for p in partitions]
        rates = in_units(np.array([problem.rate_of(p) for p in listed], dtype=np.int64), unit)
        result = np.zeros((len(partitions_per_task), len(index.racks)), dtype=np.int64)
        if listed:
            np.add.at(result, owners, cross_by_rack([problem.serving_racks(p) for p in listed], index.racks) * rates[:, None])
        return result

    return by_rack([t.source_partitions for t in index.tasks]), by_rack([t.changelog_partitions for t in index.tasks])


@derived
def _streams_unit(problem: StreamsProblem) -> int:
    index = StreamsIndex.of(problem)
    most = int(index.source_bytes_by_rack.max(axis=1, initial=0).sum())
    most += problem.effective_standby_replicas * int(index.changelog_bytes_by_rack.max(axis=1, initial=0).sum())
    return byte_unit(most)


class CrossRackBytes(CrossRackTraffic):
    name = "cross_rack_bytes"
    summary = "bytes per second read across racks (cross-zone traffic): cross_rack_traffic weighted by throughput"
    value_unit = "bytes_per_second"
    in_bytes = True
