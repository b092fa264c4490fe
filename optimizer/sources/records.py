"""`Record`: one problem as every source hands it on, read but not yet validated.

Its own module because every source makes Records (problem files, JSON Lines, normalised
tables) and the pipeline's runner and workers take them: each imports it from here, so none of
them imports another for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from optimizer.model.ids import check_name


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


def unique_names(records: list[Record]) -> list[Record]:
    """Records whose name was used before keep their row, renamed `name [source]`, as invalid."""
    first: dict[str, str] = {}
    result = []
    for record in records:
        if record.name in first:
            error = f"duplicate problem name {record.name!r} (first used at {first[record.name]})"
            record = Record(f"{record.name} [{record.source}]", record.document, record.source, error)
        else:
            first[record.name] = record.source
        result.append(record)
    return result


def name_problem(name: str) -> str | None:
    """Why `name` cannot key the output rows (it is printed in reports), or None."""
    try:
        check_name(name)
    except ValueError as error:
        return str(error)
    return None
