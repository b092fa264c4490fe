"""The fleet report as one self-contained HTML file: inline CSS, plots as PNG data URIs.

Nothing is fetched when the file is opened (no scripts, no fonts, no stylesheets from the
network), so it can be mailed or attached to a ticket and read offline. Every string that comes
from the data (problem names, solver names, reasons, rack names, plugin names, the input path) is
HTML-escaped: problem names come from users' documents.

Figures are computed in `optimizer.report.totals`; this module only reads the tables, lays out
and formats.
"""

from __future__ import annotations

import base64
import html
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from optimizer.errors import InvalidInputError
from optimizer.model.issues import Issue, Severity
from optimizer.pipeline.status import UnsolvedStatus
from optimizer.report.plots import rack_traffic_plot, savings_plot, solve_time_plot
from optimizer.report.totals import (
    BASELINE_SOLVER,
    REFERENCE_SOLVERS,
    failed_rows,
    fleet_totals,
    is_solved,
    rack_traffic_totals,
    reference_solver,
    top_savings,
)
from optimizer.text import plural

REQUIRED_COLUMNS = (
    "problem",
    "kind",
    "solver",
    "status",
    "error",
    "tasks",
    "clients",
    "seconds",
    "cross_rack_partitions",
    "moves",
    "load_skew",
    "warmups",
    "rack_traffic",
)
"""Summary columns the report reads; a table without one of them is not a pipeline summary."""

REPORT_FILE = "report.html"
"""The file name used when the output given is a directory."""

SAVINGS_LIMIT = 20

_TEXT_CELL = ""
_NUM_CELL = ' class="num"'


def write_report(input_dir: str | Path, output: str | Path) -> Path:
    """Write the HTML report of the pipeline output directory `input_dir` to `output` (a file
    path, or an existing directory to write `report.html` into); return the path written.

    Raises InvalidInputError when `input_dir` is not a pipeline output directory (missing, empty,
    no readable summary table, columns missing, no rows)."""
    input_dir = Path(input_dir)
    table = read_summary(input_dir)
    document = render_report(table.to_pylist(), read_plugins(input_dir), str(input_dir), datetime.now(UTC))
    output = Path(output)
    if output.is_dir():
        output = output / REPORT_FILE
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(document, encoding="utf-8")
    return output


def read_summary(input_dir: Path) -> pa.Table:
    """The summary table of `input_dir`, checked to be one; InvalidInputError otherwise."""
    source = str(input_dir)
    if not input_dir.exists():
        raise InvalidInputError(source, [_issue("input", "no such directory (expected a pipeline output directory)")])
    if not input_dir.is_dir():
        raise InvalidInputError(source, [_issue("input", "not a directory (expected a pipeline output directory)")])
    if not any(input_dir.iterdir()):
        raise InvalidInputError(
            source, [_issue("input", "the directory is empty (expected a pipeline output directory)")]
        )
    summary = input_dir / "summary"
    if not summary.exists():
        raise InvalidInputError(
            source, [_issue("summary", "no summary table: expected a summary/ directory of Parquet files")]
        )
    if summary.is_dir() and not any(p.is_file() and p.suffix == ".parquet" for p in summary.rglob("*")):
        raise InvalidInputError(source, [_issue("summary", "the summary/ directory holds no .parquet files")])
    try:
        table = pq.read_table(summary)
    except (pa.ArrowException, OSError) as error:
        raise InvalidInputError(source, [_issue("summary", f"not a readable Parquet table: {error}")]) from error
    missing = [name for name in REQUIRED_COLUMNS if name not in table.column_names]
    if missing:
        raise InvalidInputError(
            source, [_issue("summary", f"missing column {name!r}: not a pipeline summary table") for name in missing]
        )
    if table.num_rows == 0:
        raise InvalidInputError(source, [_issue("summary", "the summary table has no rows")])
    pairs = Counter(zip(table.column("problem").to_pylist(), table.column("solver").to_pylist(), strict=True))
    repeated = sorted(pair for pair, count in pairs.items() if count > 1)
    if repeated:
        raise InvalidInputError(
            source,
            [_issue("summary", f"problem {p!r} has more than one row for solver {s!r}: not one pipeline run") for p, s in repeated[:5]],
        )
    return table


def read_plugins(input_dir: Path) -> list[dict[str, Any]] | None:
    """The plugins table's rows, or None when the run has none (an older or partial output:
    the report is still useful without it)."""
    plugins = input_dir / "plugins"
    if not plugins.exists():
        return None
    try:
        return pq.read_table(plugins).to_pylist()
    except (pa.ArrowException, OSError):
        return None


def render_report(
    rows: Sequence[Mapping[str, Any]],
    plugins: Sequence[Mapping[str, Any]] | None,
    input_dir: str,
    generated: datetime,
) -> str:
    """The whole HTML document for summary `rows` (dicts, one per (problem, solver))."""
    totals = fleet_totals(rows)
    parts = [
        _head(),
        _header(totals, rows, plugins, input_dir, generated),
        _totals_section(totals),
        _protocols_section(totals),
        _savings_section(totals),
        _failures_section(rows),
        _plots_section(rows, totals),
        "</main>\n</body>\n</html>\n",
    ]
    return "".join(parts)


# --- sections ---------------------------------------------------------------------------------

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 0; color: #222; background: #fff; }
main { max-width: 1100px; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
h1 { margin-bottom: 0.2rem; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2rem; margin-top: 2.2rem; }
table { border-collapse: collapse; margin: 0.6rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.5rem; vertical-align: top; }
th { background: #f4f4f4; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { margin: 0; white-space: pre-wrap; word-break: break-word; font-size: 0.85rem; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: 0.2rem 1rem; }
dl.meta dt { font-weight: 600; }
dl.meta dd { margin: 0; }
p.note { color: #555; font-size: 0.9rem; }
nav a { margin-right: 1rem; }
figure { margin: 1.2rem 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9rem; }
"""


def _head() -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<title>Kafka assignment fleet report</title>\n"
        f"<style>{_STYLE}</style>\n</head>\n<body>\n<main>\n"
    )


def _header(
    totals: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    plugins: Sequence[Mapping[str, Any]] | None,
    input_dir: str,
    generated: datetime,
) -> str:
    out = ["<header id=\"header\">\n<h1>Kafka assignment fleet report</h1>\n<dl class=\"meta\">\n"]
    meta = [
        ("Input directory", f"<code>{_e(input_dir)}</code>"),
        ("Generated", _e(generated.strftime("%Y-%m-%d %H:%M:%S %Z").strip())),
        ("Problems", f"<span data-field=\"problems\">{_int(totals['problems'])}</span>"),
        ("Rows (problem × solver)", f"<span data-field=\"rows\">{_int(totals['rows'])}</span>"),
        ("Solvers", _e(", ".join(totals["solvers"]))),
    ]
    out += [f"<dt>{label}</dt><dd>{value}</dd>\n" for label, value in meta]
    out.append("</dl>\n<h3>Plugins</h3>\n")
    if plugins is None:
        out.append("<p class=\"note\">No plugins table in this output directory.</p>\n")
    elif not plugins:
        out.append("<p class=\"note\">The plugins table is empty.</p>\n")
    else:
        out.append("<table class=\"plugins\">\n<tr><th>name</th><th>version</th></tr>\n")
        for plugin in sorted(plugins, key=lambda p: str(p.get("name"))):
            out.append(f"<tr><td>{_e(plugin.get('name'))}</td><td>{_e(plugin.get('version'))}</td></tr>\n")
        out.append("</table>\n")
    # Rows record the plugins of the process that solved them; several signatures mean the
    # workers did not all load the same plugins, which makes rows incomparable.
    signatures = sorted({str(row.get("plugins")) for row in rows if row.get("plugins")})
    if len(signatures) > 1:
        out.append(
            "<p class=\"note\">Warning: the rows were solved with "
            f"{len(signatures)} different plugin sets: "
            + "; ".join(f"<code>{_e(s)}</code>" for s in signatures)
            + ".</p>\n"
        )
    out.append(
        "<nav><a href=\"#totals\">Fleet totals</a><a href=\"#savings\">Largest savings</a>"
        "<a href=\"#failures\">Problems not solved</a><a href=\"#plots\">Plots</a></nav>\n</header>\n"
    )
    return "".join(out)


_TOTAL_COLUMNS = (
    ("problems", "problems", "int"),
    ("solved", "solved", "int"),
    ("invalid", "invalid", "int"),
    ("errors", "errors", "int"),
    ("cross_rack_partitions", "cross-rack partitions", "int"),
    ("moves", "moves", "int"),
    ("load_skew_mean", "mean load skew", "float"),
    ("load_skew_max", "max load skew", "float"),
    ("warmups", "warm-ups", "int"),
    ("target_cross_rack_partitions", "cross-rack partitions at the target", "int"),
    ("target_load_skew_mean", "mean load skew at the target", "float"),
    ("followup_rebalances", "probing rebalances to the targets", "int"),
    ("restore_offsets", "changelog offsets restored over the plans", "int"),
    ("seconds_total", "total seconds", "seconds"),
    ("seconds_median", "median seconds", "seconds"),
)


def _totals_section(totals: Mapping[str, Any]) -> str:
    out = ["<section id=\"totals\">\n<h2>Fleet totals</h2>\n<table class=\"totals\">\n<tr><th>solver</th>"]
    out += [f"<th>{label}</th>" for _, label, _ in _TOTAL_COLUMNS]
    out.append("</tr>\n")
    for solver, figures in totals["per_solver"].items():
        out.append(f"<tr data-solver=\"{_e(solver)}\"><th>{_e(solver)}</th>")
        for key, _, kind in _TOTAL_COLUMNS:
            value = _format(figures[key], kind)
            out.append(f"<td class=\"num\" data-solver=\"{_e(solver)}\" data-field=\"{key}\">{value}</td>")
        out.append("</tr>\n")
    out.append("</table>\n")
    out.append(
        "<p class=\"note\">Solved: rows with an assignment. Cross-rack partitions, moves, load skew and "
        "warm-ups are those of the assignments applied now; the target columns those of the targets the plans "
        "reach (Streams: warm-ups caught up, one probing rebalance per round; cooperative consumer groups: "
        "withheld partitions assigned), with the plans' rounds and restore volume. All are over solved rows; "
        "seconds over every row with a time (failed solves cost time too). "
        "Load skew is active tasks per thread (max − min) for Streams and partitions per member "
        "(max − min) for consumer groups, so a mean over a mixed fleet mixes both units.</p>\n"
    )
    out.append("<h3 id=\"comparison\">Kafka's heuristic against the exact optimum</h3>\n")
    comparison = totals["comparison"]
    if comparison is None:
        out.append(f"<p class=\"skipped\" data-field=\"comparison_skipped\">{_e(totals['comparison_skipped'])}</p>\n")
        return "".join(out) + "</section>\n"
    base, ref = comparison["baseline"], comparison["reference"]
    out.append(
        f"<p>Compared on <span data-field=\"compared\">{_int(comparison['problems'])}</span> problems where both "
        f"<code>{_e(base)}</code> and <code>{_e(ref)}</code> produced an assignment"
        + (
            f" (<code>{_e(ref)}</code> is the first of {_e(', '.join(REFERENCE_SOLVERS))} in this run)"
            if ref != REFERENCE_SOLVERS[0]
            else ""
        )
        + ".</p>\n"
    )
    percent = comparison["saved_percent"]
    saved = f"{_int(comparison['saved'])}"
    lines = [
        ("baseline_cross_rack", f"cross-rack partitions applied now, {base}", _int(comparison["baseline_cross_rack"])),
        ("reference_cross_rack", f"cross-rack partitions applied now, {ref}", _int(comparison["reference_cross_rack"])),
        ("saved", f"saved now by {ref} ({base} − {ref})", saved),
        ("saved_percent", f"saved now, % of {base}'s", _format(percent, "percent")),
        ("baseline_target_cross_rack", f"cross-rack partitions at the target, {base}", _int(comparison["baseline_target_cross_rack"])),
        ("reference_target_cross_rack", f"cross-rack partitions at the target, {ref}", _int(comparison["reference_target_cross_rack"])),
        ("target_saved", f"saved at the targets by {ref} ({base} − {ref})", _int(comparison["target_saved"])),
        ("target_saved_percent", f"saved at the targets, % of {base}'s", _format(comparison["target_saved_percent"], "percent")),
        ("baseline_rounds", f"probing rebalances to the targets, {base}", _int(comparison["baseline_rounds"])),
        ("reference_rounds", f"probing rebalances to the targets, {ref}", _int(comparison["reference_rounds"])),
        ("baseline_restore_offsets", f"changelog offsets restored over the plans, {base}", _int(comparison["baseline_restore_offsets"])),
        ("reference_restore_offsets", f"changelog offsets restored over the plans, {ref}", _int(comparison["reference_restore_offsets"])),
        ("baseline_moves", f"moves now, {base}", _int(comparison["baseline_moves"])),
        ("reference_moves", f"moves now, {ref}", _int(comparison["reference_moves"])),
        ("moves_difference", f"moves difference ({ref} − {base})", _signed(comparison["moves_difference"])),
        ("better", f"problems where {ref} reads fewer cross-rack partitions", _int(comparison["better"])),
        ("equal", "problems where both read as many", _int(comparison["equal"])),
        ("worse", f"problems where {ref} reads more", _int(comparison["worse"])),
    ]
    out.append("<table class=\"comparison\">\n")
    out += [
        f"<tr><th>{_e(label)}</th><td class=\"num\" data-field=\"{key}\">{value}</td></tr>\n"
        for key, label, value in lines
    ]
    out.append("</table>\n")
    if comparison["worse"]:
        out.append(
            f"<p class=\"note\">{_e(ref)} optimises its goals in priority order, and by default balance (among "
            "others) comes before cross-rack traffic: it reads more across racks where that buys a better "
            "higher-priority goal (see each row's goals).</p>\n"
        )
    return "".join(out) + "</section>\n"


_UNITS = {"streams": "active tasks per thread", "consumer": "partitions per member"}


def _protocols_section(totals: Mapping[str, Any]) -> str:
    protocols = totals["protocols"]
    if not protocols:
        return ""
    out = [
        "<section id=\"protocols\">\n<h2>Classic protocol against the new one</h2>\n"
        "<p>Kafka's assignor under the classic protocol, under the new one (<code>kafka:new</code>: KIP-848's "
        "broker-side assignor for consumer groups, KIP-1071's for Streams) and the exact optimum, on the "
        "problems all of them solved (docs/assignors/protocols.md).</p>\n"
    ]
    for kind, entry in protocols.items():
        columns = list(entry["columns"])
        out.append(
            f"<h3>{_e(kind)} ({_e(plural(entry['problems'], 'problem'))})</h3>\n<table class=\"protocols\" data-kind=\"{_e(kind)}\">\n"
            "<tr><th></th>" + "".join(f"<th>{_e(c)}</th>" for c in columns) + "</tr>\n"
        )
        for key, label, form in (
            ("cross_rack_partitions", "cross-rack partitions", "int"),
            ("moves", "moves", "int"),
            ("load_skew_mean", f"load skew, mean ({_UNITS[kind]}, max − min)", "float"),
        ):
            out.append(f"<tr><th>{_e(label)}</th>")
            out += [
                f"<td class=\"num\" data-solver=\"{_e(c)}\" data-field=\"{key}\">{_format(entry['columns'][c][key], form)}</td>"
                for c in columns
            ]
            out.append("</tr>\n")
        out.append("</table>\n")
    return "".join(out) + "</section>\n"


def _savings_section(totals: Mapping[str, Any]) -> str:
    out = ["<section id=\"savings\">\n<h2>Largest savings</h2>\n"]
    comparison = totals["comparison"]
    if comparison is None:
        out.append(f"<p class=\"skipped\">No savings to list: {_e(totals['comparison_skipped'])}</p>\n")
        return "".join(out) + "</section>\n"
    base, ref = comparison["baseline"], comparison["reference"]
    entries = top_savings(totals["compared"], SAVINGS_LIMIT)
    if not entries:
        out.append(
            f"<p>{_e(ref)} saves no cross-rack partition over {_e(base)} on any of the "
            f"{_int(comparison['problems'])} compared problems.</p>\n"
        )
        return "".join(out) + "</section>\n"
    out.append(
        f"<p>The {len(entries)} applications or groups where <code>{_e(ref)}</code> saves the most cross-rack "
        f"partitions over <code>{_e(base)}</code> (at most {SAVINGS_LIMIT}; only positive savings).</p>\n"
        "<table class=\"savings\">\n<tr><th>problem</th><th>kind</th><th>size (tasks × clients)</th>"
        f"<th>cross-rack, {_e(base)}</th><th>cross-rack, {_e(ref)}</th><th>saving</th>"
        f"<th>moves, {_e(base)}</th><th>moves, {_e(ref)}</th>"
        f"<th>load skew, {_e(base)}</th><th>load skew, {_e(ref)}</th></tr>\n"
    )
    for entry in entries:
        cells = [
            ("kind", _e(entry["kind"] or "")),
            ("size", f"{_format(entry['tasks'], 'int')} × {_format(entry['clients'], 'int')}"),
            ("baseline_cross_rack", _int(entry["baseline_cross_rack"])),
            ("reference_cross_rack", _int(entry["reference_cross_rack"])),
            ("saving", _int(entry["saving"])),
            ("baseline_moves", _int(entry["baseline_moves"])),
            ("reference_moves", _int(entry["reference_moves"])),
            ("baseline_load_skew", _format(entry["baseline_load_skew"], "float")),
            ("reference_load_skew", _format(entry["reference_load_skew"], "float")),
        ]
        out.append(f"<tr data-problem=\"{_e(entry['problem'])}\"><td>{_e(entry['problem'])}</td>")
        # kind and size are text; only the counts align right.
        out += [
            f"<td{_TEXT_CELL if key in ('kind', 'size') else _NUM_CELL} data-field=\"{key}\">{value}</td>"
            for key, value in cells
        ]
        out.append("</tr>\n")
    out.append("</table>\n")
    return "".join(out) + "</section>\n"


def _failures_section(rows: Sequence[Mapping[str, Any]]) -> str:
    out = ["<section id=\"failures\">\n<h2>Problems not solved</h2>\n"]
    failed = failed_rows(rows)
    if not failed:
        out.append("<p class=\"none\">none: every (problem, solver) pair has an assignment.</p>\n")
        return "".join(out) + "</section>\n"
    invalid = sum(1 for row in failed if row.get("status") == UnsolvedStatus.INVALID)
    out.append(
        f"<p>{_int(len(failed))} rows without an assignment: {_int(invalid)} invalid (the document was "
        f"rejected before any solver ran), {_int(len(failed) - invalid)} errors (the solver could not run "
        "on it).</p>\n<table class=\"failures\">\n"
        "<tr><th>problem</th><th>kind</th><th>solver</th><th>status</th><th>reason</th></tr>\n"
    )
    for row in failed:
        out.append(
            f"<tr><td>{_e(row.get('problem'))}</td><td>{_e(row.get('kind') or '')}</td>"
            f"<td>{_e(row.get('solver'))}</td><td>{_e(row.get('status'))}</td>"
            f"<td><pre>{_e(row.get('error') or '(no reason recorded)')}</pre></td></tr>\n"
        )
    out.append("</table>\n")
    return "".join(out) + "</section>\n"


def _plots_section(rows: Sequence[Mapping[str, Any]], totals: Mapping[str, Any]) -> str:
    comparison = totals["comparison"]
    reference = comparison["reference"] if comparison else reference_solver(totals["solvers"])
    savings_png = savings_plot(totals["compared"], BASELINE_SOLVER, reference, totals["comparison_skipped"])
    points: dict[str, list[tuple[float, float]]] = {}
    for solver in totals["solvers"]:
        points[solver] = [
            (float(row["tasks"] * row["clients"]), float(row["seconds"]))
            for row in rows
            if row.get("solver") == solver
            and is_solved(row)
            and row.get("tasks") is not None
            and row.get("clients") is not None
            and row.get("seconds") is not None
        ]
    time_png = solve_time_plot(points)
    traffic_png = rack_traffic_plot(rack_traffic_totals(rows))
    figures = [
        (
            "plot-savings",
            savings_png,
            (
                f"Bar chart: per problem solved by both, cross-rack partitions of {BASELINE_SOLVER} minus those "
                f"of {reference or 'an exact solver'}, largest saving first"
            ),
            "Savings per application or group: bars above zero are partitions no longer read across racks.",
        ),
        (
            "plot-time",
            time_png,
            "Scatter plot, log-log: solve time in seconds against tasks × clients, one marker per solver",
            "Solve time against size (solved rows; the evaluator's check included).",
        ),
        (
            "plot-racks",
            traffic_png,
            "Grouped bar chart: per rack, cross-rack partitions read by its clients over the fleet, one bar per solver",
            "Cross-rack reads per rack, summed over the fleet's solved rows (racks matched by name).",
        ),
    ]
    out = ["<section id=\"plots\">\n<h2>Plots</h2>\n"]
    for ident, png, alt, caption in figures:
        out.append(
            f"<figure id=\"{ident}\"><img src=\"data:image/png;base64,{base64.b64encode(png).decode('ascii')}\" "
            f"alt=\"{_e(alt)}\"><figcaption>{_e(caption)}</figcaption></figure>\n"
        )
    return "".join(out) + "</section>\n"


# --- formatting -------------------------------------------------------------------------------


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _int(value: Any) -> str:
    return f"{int(value):,}"


def _signed(value: int) -> str:
    return f"{int(value):+,}"


def _format(value: Any, kind: str) -> str:
    if value is None:
        return "–"
    if kind == "int":
        return _int(value)
    if kind == "seconds":
        return f"{float(value):,.3f}"
    if kind == "percent":
        return f"{float(value):.1f}%"
    return f"{float(value):,.3f}"


def _issue(location: str, message: str) -> Issue:
    return Issue(severity=Severity.ERROR, location=location, message=message)
