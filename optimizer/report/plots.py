"""The report's three figures, rendered headless to PNG bytes.

Figures are built on `matplotlib.figure.Figure` with the Agg canvas directly rather than through
pyplot: no global backend switch (a user's notebook keeps its backend), no global figure registry
to leak memory over a long pipeline run, and safe to call from several threads. Every function
returns a PNG even without data (a figure that says why it is empty), so the report always has
its three images in the same places.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def pareto_plot(curve: Mapping[str, Any] | None, reference: str | None, note: str | None) -> bytes:
    """The Pareto curve of the savings: the percent of the fleet's saving (in the curve's unit)
    that the top N applications give, against N. `curve`: `totals.pareto`."""
    figure, axes = _figure()
    if curve is None or not curve["cumulative"]:
        _empty(axes, note or "No application saves anything: no curve to draw.")
        return _png(figure)
    shares = [0.0, *curve["cumulative"]]
    axes.plot(range(len(shares)), shares, color="tab:green", marker="o" if len(shares) <= 60 else None, markersize=3)
    curve_share = float(curve["share"])
    axes.axhline(curve_share, color="gray", linewidth=0.8, linestyle="--")
    if curve["top"]:
        axes.axvline(curve["top"], color="gray", linewidth=0.8, linestyle="--")
        axes.annotate(
            f"top {curve['top']} give {curve_share:.0f} %", (curve["top"], curve_share), textcoords="offset points", xytext=(8, -14), fontsize=8
        )
    axes.set_ylim(0, 105)
    axes.set_xlim(0, len(shares) - 1)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # applications are counted whole, even in a fleet of three
    unit = {"money": "money per month", "bytes": "cross-zone bytes per second", "partitions": "cross-rack partitions"}[curve["unit"]]
    axes.set_xlabel(f"applications and groups, largest saving first ({len(shares) - 1} save anything, of {curve['problems']})")
    axes.set_ylabel(f"% of the fleet's saving ({unit})")
    axes.set_title(f"Where the saving of {reference or 'the exact optimum'} is: cumulative share by application")
    return _png(figure)


def solve_time_plot(points: Mapping[str, Sequence[tuple[float, float]]]) -> bytes:
    """Scatter of solve seconds against problem size (tasks × clients), log-log, per solver.

    `points`: solver -> (size, seconds) pairs; non-positive values cannot sit on log axes and are
    left out."""
    figure, axes = _figure()
    plotted = False
    for index, (solver, pairs) in enumerate(points.items()):
        kept = [(size, seconds) for size, seconds in pairs if size > 0 and seconds > 0]
        if not kept:
            continue
        axes.scatter(
            [size for size, _ in kept],
            [seconds for _, seconds in kept],
            label=f"{solver} ({len(kept)})",
            marker=_MARKERS[index % len(_MARKERS)],
            color=f"C{index % 10}",
            alpha=0.7,
        )
        plotted = True
    if not plotted:
        _empty(axes, "No solved problem has a size and a solve time.")
        return _png(figure)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("size: tasks × clients (consumer: partitions × members)")
    axes.set_ylabel("solve time (s)")
    axes.set_title("Solve time against problem size")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(title="solver (points)")
    return _png(figure)


def rack_traffic_plot(traffic: Mapping[str, Mapping[str, float]], in_bytes: bool = False) -> bytes:
    """Grouped bars: per rack, cross-rack partitions read by its clients over the fleet, one bar
    per solver. `traffic`: `totals.rack_traffic_totals`; with `in_bytes`, megabytes per second
    at the targets instead (`totals.zone_matrix` summed by reader)."""
    figure, axes = _figure()
    racks = sorted({rack for per_rack in traffic.values() for rack in per_rack})
    if not racks:
        _empty(axes, "No solved problem has clients with a rack.")
        return _png(figure)
    solvers = list(traffic)
    width = 0.8 / len(solvers)
    for index, solver in enumerate(solvers):
        offsets = [position - 0.4 + width * (index + 0.5) for position in range(len(racks))]
        axes.bar(
            offsets,
            [traffic[solver].get(rack, 0) / (1e6 if in_bytes else 1) for rack in racks],
            width=width,
            label=solver,
            color=f"C{index % 10}",
        )
    crowded = len(racks) > 8  # long rack lists need slanted names to stay readable
    axes.set_xticks(list(range(len(racks))), racks, rotation=45 if crowded else 0, ha="right" if crowded else "center")
    axes.set_xlabel("rack of the reading client")
    axes.set_ylabel("cross-zone MB/s at the targets (fleet total)" if in_bytes else "cross-rack partitions (fleet total)")
    axes.set_title("Cross-zone traffic per rack, problems with throughputs" if in_bytes else "Cross-rack reads per rack")
    axes.legend(title="solver")
    return _png(figure)


def _figure() -> tuple[Figure, Any]:
    figure = Figure(figsize=(10, 5), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    return figure, figure.add_subplot()


def _empty(axes: Any, message: str) -> None:
    axes.set_axis_off()
    axes.text(0.5, 0.5, message, ha="center", va="center", wrap=True, transform=axes.transAxes)


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    # No Software/date metadata: the same data gives the same bytes, which keeps reports diffable.
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()
