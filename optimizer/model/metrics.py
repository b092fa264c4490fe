"""Metrics of an assignment: what the evaluator measures and a solution records.

Defined in the model, below the evaluator that computes them, so that `Solution.metrics` is typed
without the model importing the evaluator. A solution file's `metrics` object has exactly these
fields; docs/metrics.md defines each of them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from optimizer.model.base import FrozenModel


class StreamsMetrics(FrozenModel):
    """Metrics of a Kafka Streams assignment; lower is better unless said otherwise."""

    clients: int
    """Clients in the problem."""
    tasks: int
    """Tasks in the problem."""
    active_tasks: int
    """Active task copies assigned."""
    standby_tasks: int
    """Standby task copies assigned (warm-ups not included)."""
    warmup_tasks: int
    """Warm-up replicas assigned (KIP-441)."""
    cross_rack_active_partitions: int
    """Source partitions of active tasks read across racks (KIP-925).
    Across racks: no replica that can serve the read is in the client's rack (the leader, unless the
    brokers serve reads from followers; docs/metrics.md)."""
    cross_rack_standby_partitions: int
    """Changelog partitions of standbys read across racks (as for actives)."""
    cross_rack_warmup_partitions: int
    """Changelog partitions of warm-ups read across racks (as for actives)."""
    kip925_cost: int
    """KIP-925 cost of the actives: traffic_cost x cross-rack source partitions + non_overlap_cost
    x tasks not on their previous active client (stateless tasks: 1 and 0, as in Kafka)."""
    active_moves: int
    """Tasks previously active somewhere that are now active on another client."""
    standby_moves: int
    """Standby copies on a client that did not hold that task's standby before."""
    active_load_skew: float
    """max - min over clients of active tasks per thread (KIP-441 balance)."""
    stateful_load_skew: float
    """max - min over clients of (stateful actives + standbys) per thread."""
    subtopology_skew: int
    """Largest, over subtopologies, max - min active tasks of the subtopology per client."""
    subtopology_skews: dict[str, int]
    """Per subtopology: max - min active tasks of it per client."""
    subtopology_cap_excess: int
    """Actives beyond KIP-925's caps ceil(S_s x C_k / n), summed over subtopologies and clients."""
    standby_rack_conflicts: int
    """Per stateful task, copies (active + standbys) minus distinct racks among them (KIP-708)."""
    standby_tag_conflicts: int
    """Summed over `rack.aware.assignment.tags`: copies minus distinct tag values, per task."""
    tag_conflicts: dict[str, int]
    """standby_tag_conflicts per tag key."""
    actives_not_caught_up: int
    """Stateful actives on a client that is not caught up while a caught-up client exists (KIP-441)."""
    rack_info_complete: bool
    """Whether every client and every partition has rack information (else cross-rack figures
    count only what is known); where leaders serve reads and some are given, every partition a leader."""
    cross_rack_active_bytes: int | None = None
    """Bytes per second of the cross-rack source partitions of actives (whole bytes per partition:
    its rate, its topic's, else the mean known rate); None when the problem gives no rate."""
    cross_rack_standby_bytes: int | None = None
    """Bytes per second of the cross-rack changelog partitions of standbys; None without rates."""
    cross_rack_warmup_bytes: int | None = None
    """Bytes per second of the cross-rack changelog partitions of warm-ups; None without rates."""
    cross_rack_bytes_by_racks: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Cross-rack bytes per second by reader rack, then by the rack read from (the leader's when
    known, else a partition's rate shared equally among its replica racks); actives, standbys and
    warm-ups; empty without rates."""
    max_load_per_capacity: float = 0.0
    """Highest, over clients, sum of its actives' task weights / (threads x capacity)."""
    load_per_capacity_skew: float = 0.0
    """max - min over clients of that load per capacity."""


class ConsumerMetrics(FrozenModel):
    """Metrics of a consumer-group assignment; lower is better unless said otherwise."""

    members: int
    """Members in the group."""
    partitions: int
    """Partitions of topics that exist and that some member subscribes to."""
    assigned_partitions: int
    """Partitions assigned."""
    withheld_partitions: int
    """Cooperative rebalancing: claimed partitions left unassigned until their holders revoke them."""
    min_size: int
    """Fewest partitions on a member."""
    max_size: int
    """Most partitions on a member."""
    size_skew: int
    """max_size - min_size."""
    balance_score: int
    """KIP-54: sum over all member pairs of the difference of their partition counts."""
    owned_kept: int
    """Previously owned partitions assigned to the same member again (higher is stickier)."""
    owned_moved: int
    """Previously owned partitions now assigned to another member or withheld."""
    cross_rack_partitions: int
    """Assignments read across racks (KIP-881).
    Across racks: no replica that can serve the read is in the member's rack (the leader, unless the
    brokers serve reads from followers; docs/metrics.md)."""
    rack_info_complete: bool
    """Whether every member and every partition has rack information (and a leader, as for Streams)."""
    cross_rack_bytes: int | None = None
    """Bytes per second of those cross-rack assignments (whole bytes per partition: its rate, its
    topic's, else the mean known rate); None when the group gives no rate."""
    cross_rack_bytes_by_racks: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Cross-rack bytes per second by reader rack, then by the rack read from (the leader's when
    known, else a partition's rate shared equally among its replica racks); empty without rates."""
    max_load_per_capacity: float = 0.0
    """Highest, over members, partitions / capacity."""
    load_per_capacity_skew: float = 0.0
    """max - min over members of partitions / capacity."""
    max_bytes_per_capacity: float | None = None
    """Highest, over members, bytes per second / capacity; None without rates."""
    bytes_per_capacity_skew: float | None = None
    """max - min over members of bytes per second / capacity; None without rates."""


def _metrics_kind(metrics: Any) -> Literal["streams", "consumer"] | None:
    """Which kind of assignment `metrics` (a model, or a file's object) measures: Streams metrics
    count clients, consumer metrics count members."""
    if isinstance(metrics, StreamsMetrics) or (isinstance(metrics, dict) and "clients" in metrics):
        return "streams"
    if isinstance(metrics, ConsumerMetrics) or (isinstance(metrics, dict) and "members" in metrics):
        return "consumer"
    return None


Metrics = Annotated[
    Annotated[StreamsMetrics, Tag("streams")] | Annotated[ConsumerMetrics, Tag("consumer")],
    Discriminator(
        _metrics_kind,
        custom_error_type="metrics_kind",
        custom_error_message="metrics of a Streams assignment (with `clients`) or of a consumer group (with `members`)",
    ),
]
"""The metrics of a Streams or a consumer-group assignment, told apart by their fields (the
file format has no tag for it)."""
