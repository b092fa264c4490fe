"""An offline HTML report of a fleet pipeline run: totals, largest savings, failures, plots.

`write_report(input_dir, output)` reads the pipeline's output directory (its `summary/` and
`plugins/` Parquet tables) and writes one self-contained HTML file. `fleet_totals(summary)` is the
aggregation behind the report's totals, pure and free of plotting, for the pipeline's terminal
summary to reuse. See docs/report.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from optimizer.errors import UsageError
from optimizer.model.problem import Problem
from optimizer.report.totals import (
    compared_problems,
    failed_rows,
    fleet_totals,
    largest_savings,
    rack_traffic_totals,
    reference_solver,
    unproven_rows,
)

__all__ = [
    "compared_problems",
    "failed_rows",
    "fleet_totals",
    "largest_savings",
    "rack_traffic_totals",
    "reference_solver",
    "unproven_rows",
    "write_report",
]


def write_report(
    input_dir: str | Path,
    output: str | Path,
    price_per_gb: float | None = None,
    currency: str | None = None,
    problems: str | Path | Mapping[str, Problem] | None = None,
) -> Path:
    """Write the HTML report of pipeline output directory `input_dir` to `output` (a file, or an
    existing directory to hold `report.html`); return the path written. `price_per_gb` and
    `currency` price the problems that give none; `problems` (the pipeline's input, or problems
    by name) adds the racks, clients and previous assignments to the drill-downs.

    Raises InvalidInputError when `input_dir` is not a pipeline output directory. pyarrow and
    matplotlib are imported here rather than at package import, so `fleet_totals` stays usable
    where they are not installed."""
    try:
        from optimizer.report.html import write_report as write
    except ImportError as error:
        raise UsageError(
            f"the report needs pyarrow and matplotlib ({error.name or error} is missing): "
            "pip install 'kafka-assignment-optimizer[spark]'"
        ) from error
    return write(input_dir, output, price_per_gb, currency, problems)
