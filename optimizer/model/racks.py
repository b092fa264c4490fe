"""The cross-rack rule: when a client or member reading a partition reads across racks.

One rule for Kafka Streams (KIP-925's traffic: actives reading their source partitions, standbys
and warm-ups their changelogs) and for consumer groups (KIP-881: members reading their
partitions). The evaluator, the goals, the cost arrays and the pipeline's per-rack traffic all
count through `serving_racks` and `reads_across_racks`, so they agree and count what the bill
counts. Kafka's assignors keep their own tests on the replica racks (which differ where racks or
leaders are unknown), as Kafka writes them.

Which replica serves a read (KIP-392): by default (`replica.selector.class` unset) every fetch goes
to the partition's leader. With `RackAwareReplicaSelector` on the brokers and `client.rack` on the
clients, a fetch goes to a replica in the client's rack when there is one, else to the leader.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Annotated, Any, Final, Protocol

import numpy as np
from pydantic import BeforeValidator

from optimizer.model.ids import Name, partition_id, shown

RACK_AWARE_REPLICA_SELECTOR: Final = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
"""Kafka's follower-fetching selector (KIP-392), the value of `replica.selector.class` that makes
brokers serve reads from a replica in the reader's rack."""

_FOLLOWER_FETCHING_NAMES: Final = frozenset({RACK_AWARE_REPLICA_SELECTOR, "RackAwareReplicaSelector"})


def _unset_if_blank(value: Any) -> Any:
    # A properties file writes an unset key as `replica.selector.class=`; Kafka reads it as unset.
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return value


ReplicaSelectorClass = Annotated[Name | None, BeforeValidator(_unset_if_blank)]
"""`replica.selector.class`: a class name, or None (unset, null or empty: Kafka's default, the
leader serves every read)."""


class _SelectsReplicas(Protocol):
    @property
    def replica_selector_class(self) -> str | None: ...


class ReplicaSelection:
    """Mixin of the configs with a `replica_selector_class` field (`replica.selector.class`)."""

    @property
    def follower_fetching(self: _SelectsReplicas) -> bool:
        """Whether brokers serve reads from followers: `replica.selector.class` is Kafka's
        `RackAwareReplicaSelector` (KIP-392). Unset, or any other selector (whose choice the project
        cannot know), counts reads from the leader."""
        return self.replica_selector_class in _FOLLOWER_FETCHING_NAMES

    @property
    def custom_replica_selector(self: _SelectsReplicas) -> str | None:
        """The configured selector when it is neither unset nor Kafka's `RackAwareReplicaSelector`."""
        value = self.replica_selector_class
        return value if value is not None and value not in _FOLLOWER_FETCHING_NAMES else None


def serving_racks(
    replica_racks: tuple[str, ...] | None, leader_rack: str | None, follower_fetching: bool
) -> tuple[str, ...] | None:
    """The racks whose replicas may serve a read of a partition: its replica racks under follower
    fetching, else its leader's rack.

    When the leader is unknown and follower fetching is off, the replica racks: whichever replica
    serves, a reader in none of their racks reads across racks, and that is all that is certain
    (the rule every problem without leaders has always been counted by). Under follower fetching
    the leader adds nothing: a reader with a replica in its rack reads it there, any other reads
    across racks. Empty or None: unknown.
    """
    if follower_fetching or leader_rack is None:
        return replica_racks
    return (leader_rack,)


def read_from_racks(replica_racks: tuple[str, ...] | None, leader_rack: str | None) -> tuple[str, ...]:
    """The racks a read that crosses racks comes from: the leader's when it is known (without
    follower fetching the leader serves every read; with it, a reader with no replica in its rack
    is served by the leader too), else each replica rack for an equal share."""
    if leader_rack is not None:
        return (leader_rack,)
    return replica_racks or ()


def reads_across_racks(rack: str | None, racks_serving: Collection[str] | None) -> bool:
    """Whether a client or member in `rack` reads across racks a partition whose reads can be
    served from `racks_serving` (`serving_racks`): when those are known and not empty and the
    reader's rack is known and not among them.

    Unknown racks never count (a reader without `client.rack`, a partition without replica racks):
    nothing says the read crosses racks, and validation warns when rack information is partial.
    """
    if rack is None or not racks_serving:
        return False
    return rack not in racks_serving


def cross_by_rack(racks_serving: Sequence[tuple[str, ...] | None], racks: Sequence[str | None]) -> np.ndarray:
    """partitions x racks, 0/1: `reads_across_racks(racks[j], racks_serving[i])`; a `None` in
    `racks` is a column for readers without a rack (all 0). Given replica racks, Kafka's view (the
    assignors'); given `serving_racks`, the bill's."""
    # Partitions share few distinct sets of racks: the rule is applied once per set.
    set_of: dict[tuple[str, ...] | None, int] = {}
    rows = [set_of.setdefault(serving, len(set_of)) for serving in racks_serving]
    per_set = np.array(
        [[reads_across_racks(rack, serving) for rack in racks] for serving in set_of], dtype=np.int64
    ).reshape(len(set_of), len(racks))
    return per_set[np.array(rows, dtype=np.int64)]


def layout_violations(
    topic: str, partitions: int, replica_racks: Sequence[Sequence[str]] | None, leader_racks: Sequence[str | None] | None
) -> list[tuple[tuple[str | int, ...], str]]:
    """What is wrong with a topic's per-partition layout of `partitions` partitions (a consumer
    topic's, a Streams problem's `topics[]`): a list that is not one entry per partition, a leader
    outside its partition's replica racks. Locations are relative to the topic."""
    problems: list[tuple[tuple[str | int, ...], str]] = []
    if replica_racks is not None and len(replica_racks) != partitions:
        problems.append(
            (("replica_racks",), f"has {len(replica_racks)} entries but the topic has {partitions} partitions; give one list of racks per partition")
        )
        replica_racks = None
    if leader_racks is None:
        return problems
    if len(leader_racks) != partitions:
        problems.append(
            (
                ("leader_racks",),
                f"has {len(leader_racks)} entries but the topic has {partitions} partitions; give one leader rack per partition (null where unknown)",
            )
        )
        return problems
    if replica_racks is None:
        return problems
    return problems + [
        (
            ("leader_racks", p),
            f"the leader's rack {shown(leader)} of partition {partition_id(topic, p)} is not among its replica racks "
            f"{', '.join(map(shown, replica_racks[p]))}: the leader is one of the replicas",
        )
        for p, leader in enumerate(leader_racks)
        if leader is not None and replica_racks[p] and leader not in replica_racks[p]
    ]
