"""What several goals need: assignments as index arrays and caught-up ranks (from
`optimizer.placement`, re-exported for plugins), values per rack."""

from __future__ import annotations

import numpy as np

from optimizer.costs import StreamsIndex
from optimizer.placement import StreamsPlacement, behind, caught_up_ranks, restore_offsets, streams_placement

__all__ = ["StreamsPlacement", "behind", "caught_up_ranks", "restore_offsets", "streams_placement", "values_at_racks"]


def values_at_racks(index: StreamsIndex, by_rack: np.ndarray, rows: np.ndarray, clients: np.ndarray, paired: bool = False) -> np.ndarray:
    """by_rack[row, rack of client] for each (row, client) (0 for clients without rack); with
    `paired` the clients are given per row, else `clients` is indexed by row."""
    chosen = clients if paired else clients[rows]
    racks = index.client_rack[chosen]
    known = racks >= 0
    values = np.zeros(len(rows), dtype=np.int64)
    if by_rack.shape[1]:
        values[known] = by_rack[rows[known], racks[known]]
    return values
