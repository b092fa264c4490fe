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

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_LABELLED_BARS = 40
"""Up to this many problems, the savings chart names each bar; beyond, names would overlap."""


def savings_plot(entries: Sequence[Mapping[str, Any]], baseline: str, reference: str | None, note: str | None) -> bytes:
    """Bar chart of `baseline − reference` cross-rack partitions per problem, largest first.

    `entries`: `totals.compared_problems` entries. `note`: why there is no comparison, shown
    instead of bars when there is nothing to plot."""
    figure, axes = _figure()
    if not entries or reference is None:
        _empty(axes, note or "No problem has an assignment from both solvers.")
        return _png(figure)
    ordered = sorted(entries, key=lambda entry: (-entry["saving"], entry["problem"]))
    savings = [entry["saving"] for entry in ordered]
    # Colour by sign so that problems where the exact solver is worse stand out.
    colours = ["tab:green" if s > 0 else "tab:red" if s < 0 else "tab:gray" for s in savings]
    positions = range(len(ordered))
    axes.bar(positions, savings, color=colours, width=0.8)
    axes.axhline(0, color="black", linewidth=0.8)
    if len(ordered) <= _LABELLED_BARS:
        names = [str(entry["problem"]) for entry in ordered]
        axes.set_xticks(list(positions), names, rotation=60, ha="right", fontsize=7)
    else:
        axes.set_xticks([])
    axes.set_xlabel(f"problems ({len(ordered)}), sorted by saving")
    axes.set_ylabel(f"cross-rack partitions, {baseline} − {reference}")
    axes.set_title(f"Cross-rack partitions saved by {reference} over {baseline}, per application or group")
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


def rack_traffic_plot(traffic: Mapping[str, Mapping[str, int]]) -> bytes:
    """Grouped bars: per rack, cross-rack partitions read by its clients over the fleet, one bar
    per solver. `traffic`: `totals.rack_traffic_totals`."""
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
            [traffic[solver].get(rack, 0) for rack in racks],
            width=width,
            label=solver,
            color=f"C{index % 10}",
        )
    crowded = len(racks) > 8  # long rack lists need slanted names to stay readable
    axes.set_xticks(list(range(len(racks))), racks, rotation=45 if crowded else 0, ha="right" if crowded else "center")
    axes.set_xlabel("rack of the reading client")
    axes.set_ylabel("cross-rack partitions (fleet total)")
    axes.set_title("Cross-rack reads per rack")
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
