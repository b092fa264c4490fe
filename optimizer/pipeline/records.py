"""`Record`: one problem of the fleet as every reader hands it to the workers.

Its own module because both kinds of reader make Records (`optimizer.pipeline.inputs` for
documents, `optimizer.pipeline.tables` for normalised tables) and the runner and the worker take
them: each imports it from here, so none of them imports another for it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Record:
    """One problem of the fleet, as shipped to a worker."""

    name: str
    """The problem's key in every output table (unique within the input)."""
    document: str
    """The problem document as JSON text (workers validate it with pydantic)."""
    source: str
    """Where it came from: `file:line` or the file's path."""
    input_error: str | None = None
    """Why the record cannot be solved, when the reader already knows."""
