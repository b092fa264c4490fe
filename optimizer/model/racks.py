"""The cross-rack rule: when a client or member reading a partition reads across racks.

One rule for Kafka Streams (KIP-925's traffic: actives reading their source partitions, standbys
and warm-ups their changelogs) and for consumer groups (KIP-881: members reading their
partitions). The evaluator, the goals, the cost arrays and the pipeline's per-rack traffic all
count through `reads_across_racks`, so they agree. Kafka's assignors keep their own tests (which
differ where racks are unknown), as Kafka writes them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np


def reads_across_racks(rack: str | None, replica_racks: Collection[str] | None) -> bool:
    """Whether a client or member in `rack` reading a partition whose replicas are on brokers in
    `replica_racks` reads across racks: when the partition's replica racks are known and not empty
    and the reader's rack is known and not among them.

    Unknown racks never count (a reader without `client.rack`, a partition without replica racks):
    nothing says the read crosses racks, and validation warns when rack information is partial.
    """
    if rack is None or not replica_racks:
        return False
    return rack not in replica_racks


def cross_by_rack(replica_racks: Sequence[tuple[str, ...] | None], racks: Sequence[str | None]) -> np.ndarray:
    """partitions x racks, 0/1: `reads_across_racks(racks[j], replica_racks[i])`; a `None` in
    `racks` is a column for readers without a rack (all 0)."""
    # Partitions share few distinct sets of replica racks: the rule is applied once per set.
    set_of: dict[tuple[str, ...] | None, int] = {}
    rows = [set_of.setdefault(replicas, len(set_of)) for replicas in replica_racks]
    per_set = np.array(
        [[reads_across_racks(rack, replicas) for rack in racks] for replicas in set_of], dtype=np.int64
    ).reshape(len(set_of), len(racks))
    return per_set[np.array(rows, dtype=np.int64)]
