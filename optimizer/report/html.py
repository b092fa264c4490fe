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
from optimizer.model.ids import natural_key
from optimizer.model.issues import Issue, Severity
from optimizer.money import money_text, rate_text
from optimizer.pipeline.status import UnsolvedStatus
from optimizer.report.plots import pareto_plot, rack_traffic_plot, solve_time_plot
from optimizer.report.totals import (
    REFERENCE_SOLVERS,
    SAVING_KEY,
    failed_rows,
    fleet_totals,
    is_solved,
    rack_traffic_totals,
    ranked_savings,
    top_savings,
    unproven_rows,
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


def write_report(input_dir: str | Path, output: str | Path, price_per_gb: float | None = None, currency: str | None = None) -> Path:
    """Write the HTML report of the pipeline output directory `input_dir` to `output` (a file
    path, or an existing directory to write `report.html` into); return the path written.
    `price_per_gb`: the price of cross-zone traffic for problems that give none of their own;
    `currency`: its currency, and that of problems with a price but no currency (default USD).

    Raises InvalidInputError when `input_dir` is not a pipeline output directory (missing, empty,
    no readable summary table, columns missing, no rows)."""
    input_dir = Path(input_dir)
    table = read_summary(input_dir)
    rows = table.to_pylist()
    totals = fleet_totals(rows, price_per_gb, currency)
    changes = read_changes(input_dir, totals, CHANGES_LISTED)
    document = render_report(rows, read_plugins(input_dir), str(input_dir), datetime.now(UTC), price_per_gb, changes, currency)
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


def read_changes(input_dir: Path, totals: Mapping[str, Any], limit: int) -> dict[str, list[tuple[str, str, str]]]:
    """For the `limit` problems the decision table lists: the actives the reference places
    elsewhere than the baseline, as (task, baseline's client, reference's client), from the
    assignments table (empty when it is missing or unreadable: the table then says so)."""
    comparison = totals["comparison"]
    if comparison is None:
        return {}
    _, ranked = ranked_savings(totals["compared"])
    wanted = [entry["problem"] for entry in ranked[:limit]]
    base, ref = comparison["baseline"], comparison["reference"]
    try:
        table = pq.read_table(
            input_dir / "assignments",
            columns=["problem", "solver", "client", "task", "role"],
            filters=[("problem", "in", wanted), ("solver", "in", [base, ref]), ("role", "=", "active")],
        )
    except (pa.ArrowException, OSError, ValueError):
        return {}
    placed: dict[tuple[str, str], dict[str, str]] = {}
    for row in table.to_pylist():
        placed.setdefault((row["problem"], row["solver"]), {})[row["task"]] = row["client"]
    changes: dict[str, list[tuple[str, str, str]]] = {}
    for problem in wanted:
        ours, theirs = placed.get((problem, base), {}), placed.get((problem, ref), {})
        moved = [(task, ours.get(task, "-"), client) for task, client in theirs.items() if ours.get(task) != client]
        changes[problem] = sorted(moved, key=lambda change: natural_key(change[0]))
    return changes


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
    price_per_gb: float | None = None,
    changes: Mapping[str, Sequence[tuple[str, str, str]]] | None = None,
    currency: str | None = None,
) -> str:
    """The whole HTML document for summary `rows` (dicts, one per (problem, solver));
    `changes`: `read_changes` (None: the assignments were not read)."""
    totals = fleet_totals(rows, price_per_gb, currency)
    parts = [
        _head(),
        _header(totals, rows, plugins, input_dir, generated),
        _decision_section(totals, price_per_gb, changes),
        _totals_section(totals),
        _protocols_section(totals),
        _savings_section(totals),
        _failures_section(rows),
        _unproven_section(rows),
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
        "<nav><a href=\"#decision\">Where to start</a><a href=\"#totals\">Fleet totals</a><a href=\"#savings\">Largest savings</a>"
        "<a href=\"#failures\">Problems not solved</a><a href=\"#plots\">Plots</a></nav>\n</header>\n"
    )
    return "".join(out)


CHANGES_LISTED = 20
"""Applications the decision table lists (ranked by saving)."""
MOVES_SHOWN = 4
"""Task moves spelled out per application; the rest are counted."""


def _decision_section(totals: Mapping[str, Any], price_per_gb: float | None, changes: Mapping[str, Sequence[tuple[str, str, str]]] | None) -> str:
    out = ["<section id=\"decision\">\n<h2>Where to start</h2>\n"]
    comparison = totals["comparison"]
    curve = totals["pareto"]
    if comparison is None:
        out.append(f"<p class=\"skipped\">{_e(totals['comparison_skipped'])}</p>\n")
        png = pareto_plot(None, None, totals["comparison_skipped"])
        alt = "Pareto curve of the savings: empty, there is no comparison in this run"
        out.append(f"<figure id=\"plot-pareto\"><img src=\"data:image/png;base64,{base64.b64encode(png).decode('ascii')}\" alt=\"{_e(alt)}\"></figure>\n")
        return "".join(out) + "</section>\n"
    base, ref = comparison["baseline"], comparison["reference"]
    money = totals["money"]
    out.append(_money_headline(money, base, ref, comparison, price_per_gb))
    if money is not None:
        out.append(_zone_table(money["zones"], base, ref))
    png = pareto_plot(curve, ref, totals["comparison_skipped"])
    caption = f"Cumulative share of the saving, applications ranked by their saving (in {(curve or {}).get('unit', 'partitions')})."
    unit_words = {"money": "of the money saved", "bytes": "of the cross-zone bytes saved", "partitions": "of the cross-rack partitions saved"}
    if curve and curve["top"]:
        saving = len(curve["cumulative"])
        out.append(
            f"<p data-field=\"pareto\">The top <strong>{_int(curve['top'])}</strong> of {_int(curve['problems'])} compared applications and "
            f"groups give {curve['share']:.0f} % {unit_words[curve['unit']]} ({_int(saving)} save anything).</p>\n"
        )
    out.append(
        f"<figure id=\"plot-pareto\"><img src=\"data:image/png;base64,{base64.b64encode(png).decode('ascii')}\" "
        f"alt=\"{_e('Pareto curve: cumulative percent of the fleet saving against the number of applications, largest saving first')}\">"
        f"<figcaption>{_e(caption)}</figcaption></figure>\n"
    )
    out.append(_ranked_table(totals["compared"], base, ref, changes))
    return "".join(out) + "</section>\n"


def _money_headline(money: Mapping[str, Any] | None, base: str, ref: str, comparison: Mapping[str, Any], price_per_gb: float | None) -> str:
    if money is None:
        return (
            "<p class=\"note\" data-field=\"units\">No application or group in this run gives bytes per second, so traffic is counted in "
            f"partitions read across racks, not bytes or money: at the targets {_e(ref)} reads "
            f"{_int(comparison['target_saved'])} fewer than {_e(base)}. Give <code>bytes_per_second</code> (docs/file-formats.md, "
            "\"Weights\") to rank by traffic, and a price to rank by money.</p>\n"
        )
    parts = [
        f"<p data-field=\"bytes_headline\">On the {_int(money['with_bytes'])} compared applications and groups with throughputs, "
        f"{_e(ref)} reads <strong>{_e(rate_text(money['bytes_saved']))}</strong> less across zones than {_e(base)} at the targets "
        f"({_e(rate_text(money['baseline_bytes']))} → {_e(rate_text(money['reference_bytes']))}).</p>\n"
    ]
    if money["money_saved"] is not None:
        share = 100.0 * money["money_saved"] / money["baseline_money"] if money["baseline_money"] else None
        parts.append(
            f"<p data-field=\"money_headline\">That is <strong>{_e(money_text(money['money_saved']))}</strong> of cross-zone traffic "
            f"({_format(share, 'percent')} of {_e(base)}'s {_e(money_text(money['baseline_money']))}) on the {_int(money['priced'])} with a "
            "price (their own <code>price_per_gb</code>"
            + (f", else {price_per_gb:g} per GB from <code>--price-per-gb</code>" if price_per_gb is not None else "")
            + "; a month of 730 h, 1 GB = 10<sup>9</sup> bytes).</p>\n"
        )
    else:
        parts.append(
            "<p class=\"note\" data-field=\"money_headline\">No price: give <code>--price-per-gb</code> (or <code>price_per_gb</code> in "
            "the problem files) to see the saving in money.</p>\n"
        )
    if money["configured"]:
        config_money = money["config_money_saved"]
        parts.append(
            f"<p data-field=\"config_headline\">A configuration change alone (<code>rack.aware.assignment.strategy=min_traffic</code> on "
            f"{_int(money['configured'])} Streams applications that use another strategy) gets {_e(rate_text(money['config_bytes_saved']))} "
            + (f"({_e(money_text(config_money))}) " if config_money is not None else "")
            + f"of it with Kafka's own assignor; the rest needs {_e(ref)}'s assignment.</p>\n"
        )
    return "".join(parts)


def _zone_table(zones: Mapping[str, Mapping[str, Mapping[str, float]]], base: str, ref: str) -> str:
    readers = sorted({reader for matrix in zones.values() for reader in matrix})
    sources = sorted({source for matrix in zones.values() for row in matrix.values() for source in row})
    if not readers:
        return "<p class=\"note\">No bytes cross zones at the targets.</p>\n"
    out = [
        f"<h3>Cross-zone traffic by zone pair, at the targets ({_e(base)} → {_e(ref)})</h3>\n"
        "<table class=\"zones\">\n<tr><th>read by ↓ from →</th>" + "".join(f"<th>{_e(s)}</th>" for s in sources) + "</tr>\n"
    ]
    for reader in readers:
        out.append(f"<tr><th>{_e(reader)}</th>")
        for source in sources:
            mine = zones.get(base, {}).get(reader, {}).get(source, 0.0)
            yours = zones.get(ref, {}).get(reader, {}).get(source, 0.0)
            cell = "" if not mine and not yours else f"{_e(rate_text(mine))} → {_e(rate_text(yours))}"
            out.append(f"<td class=\"num\" data-reader=\"{_e(reader)}\" data-source=\"{_e(source)}\">{cell}</td>")
        out.append("</tr>\n")
    out.append(
        "</table>\n<p class=\"note\">Bytes per second read by clients and members in one zone from the replica that serves them in "
        "another: the partition's leader unless the brokers serve reads from followers (replica.selector.class), and then a "
        "replica in the reader's zone when there is one. A crossing read comes from the leader's zone when the problem gives "
        "the leader; a partition without one counts a share in each of its replicas' zones.</p>\n"
    )
    return "".join(out)


def _ranked_table(
    entries: Sequence[Mapping[str, Any]], base: str, ref: str, changes: Mapping[str, Sequence[tuple[str, str, str]]] | None
) -> str:
    unit, ranked = ranked_savings(entries)
    if not ranked:
        return f"<p>{_e(ref)} saves nothing over {_e(base)} on any compared application.</p>\n"
    shown = ranked[:CHANGES_LISTED]
    label = {"money": "saved per month", "bytes": "cross-zone saved", "partitions": "cross-rack partitions saved"}[unit]
    out = [
        f"<h3>The {len(shown)} applications and groups that save the most ({_e(label)}; of {len(ranked)} that save anything)</h3>\n"
        f"<table class=\"decision\" data-unit=\"{unit}\">\n<tr><th>#</th><th>problem</th><th>kind</th><th>{_e(label)}</th>"
        f"<th>cross-zone, {_e(base)} → {_e(ref)}</th><th>configuration change alone</th><th>what changes ({_e(ref)} against {_e(base)})</th>"
        "<th>cost to get there</th></tr>\n"
    ]
    for rank, entry in enumerate(shown, 1):
        saving = entry[SAVING_KEY[unit]]
        value = money_text(saving) if unit == "money" else rate_text(saving) if unit == "bytes" else _int(saving)
        traffic = (
            f"{rate_text(entry['baseline_bytes'])} → {rate_text(entry['reference_bytes'])}"
            if entry["baseline_bytes"] is not None
            else f"{_int(entry['baseline_target_cross_rack'])} → {_int(entry['reference_target_cross_rack'])} partitions"
        )
        out.append(
            f"<tr data-problem=\"{_e(entry['problem'])}\"><td class=\"num\">{rank}</td><td>{_e(entry['problem'])}</td><td>{_e(entry['kind'] or '')}</td>"
            f"<td class=\"num\" data-field=\"saving\">{_e(value)}</td><td class=\"num\">{_e(traffic)}</td>"
            f"<td>{_config_cell(entry, unit)}</td><td>{_changes_cell(entry, changes)}</td><td>{_cost_cell(entry)}</td></tr>\n"
        )
    out.append(
        "</table>\n<p class=\"note\">Savings between the targets (the steady state each plan reaches). What changes: actives "
        f"placed on another client by {_e(ref)} than by {_e(base)}, as applied now. Cost to get there: {_e(ref)}'s moves now, "
        "its probing rebalances until the target holds and the changelog offsets its plan restores (Streams).</p>\n"
    )
    return "".join(out)


def _config_cell(entry: Mapping[str, Any], unit: str) -> str:
    change = entry.get("config_change")
    if change is None:
        return "–"
    if not (entry.get("config_bytes_saving") or entry.get("config_partition_saving")):
        return f"<code>{_e(change)}</code>: saves nothing here"
    if unit == "money" and entry.get("config_money_saving") is not None:
        got = money_text(entry["config_money_saving"])
    elif entry.get("config_bytes_saving") is not None:
        got = rate_text(entry["config_bytes_saving"])
    else:
        got = f"{_int(entry['config_partition_saving'] or 0)} partitions"
    return f"<code>{_e(change)}</code>: {_e(got)}"


def _changes_cell(entry: Mapping[str, Any], changes: Mapping[str, Sequence[tuple[str, str, str]]] | None) -> str:
    if changes is None or entry["problem"] not in changes:
        return "(assignments not read)"
    moved = changes[entry["problem"]]
    if not moved:
        return "the same actives; standbys differ"
    noun = "active" if entry.get("kind") == "streams" else "partition"
    listed = ", ".join(f"{task}: {source} → {target}" for task, source, target in moved[:MOVES_SHOWN])
    more = f", and {len(moved) - MOVES_SHOWN} more" if len(moved) > MOVES_SHOWN else ""
    return f"{_e(plural(len(moved), noun))} elsewhere: {_e(listed)}{_e(more)}"


def _cost_cell(entry: Mapping[str, Any]) -> str:
    parts = [plural(entry["reference_moves"], "move"), plural(entry["reference_rounds"], "probing rebalance")]
    if entry.get("kind") == "streams":
        parts.append(f"{_int(entry['reference_restore_offsets'])} offsets restored")
    return _e(", ".join(parts))


_TOTAL_COLUMNS = (
    ("problems", "problems", "int"),
    ("solved", "solved", "int"),
    ("invalid", "invalid", "int"),
    ("errors", "errors", "int"),
    ("cross_rack_partitions", "cross-rack partitions", "int"),
    ("moves", "moves", "int"),
    ("streams_skew_mean", "mean skew, Streams (tasks per thread)", "float"),
    ("consumer_skew_mean", "mean skew, groups (partitions per member)", "float"),
    ("warmups", "warm-ups", "int"),
    ("target_cross_rack_partitions", "cross-rack partitions at the target", "int"),
    ("target_cross_rack_bytes", "cross-zone traffic at the target (with throughputs)", "rate"),
    ("streams_target_skew_mean", "mean skew at the target, Streams", "float"),
    ("consumer_target_skew_mean", "mean skew at the target, groups", "float"),
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
        "Skew is active tasks per thread (max − min) for Streams and partitions per member "
        "(max − min) for consumer groups: one column each. Cross-zone traffic sums the rows whose problems give "
        "throughputs.</p>\n"
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


def _unproven_section(rows: Sequence[Mapping[str, Any]]) -> str:
    out = ["<section id=\"unproven\">\n<h2>Answers not proven optimal</h2>\n"]
    unproven = unproven_rows(rows)
    if not unproven:
        out.append("<p class=\"none\">none: every exact answer is proven optimal, goal by goal.</p>\n")
        return "".join(out) + "</section>\n"
    out.append(
        f"<p>{_int(len(unproven))} rows have an assignment whose goals are not all proven optimal: a time limit "
        "cut a stage (its value is the best found, the gap to the proven bound beside it), or hard goals "
        "conflicted. Their figures are what the assignment reaches, not what is possible; a longer "
        "<code>--time-limit</code> may do better.</p>\n<table class=\"failures\">\n"
        "<tr><th>problem</th><th>kind</th><th>solver</th><th>status</th><th>stages not proven</th></tr>\n"
    )
    for row, why in unproven:
        out.append(
            f"<tr><td>{_e(row.get('problem'))}</td><td>{_e(row.get('kind') or '')}</td>"
            f"<td>{_e(row.get('solver'))}</td><td>{_e(row.get('status'))}</td><td>{_e(why)}</td></tr>\n"
        )
    out.append("</table>\n")
    return "".join(out) + "</section>\n"


def _plots_section(rows: Sequence[Mapping[str, Any]], totals: Mapping[str, Any]) -> str:
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
    money = totals["money"]
    if money is not None:  # throughputs known: bytes per reading rack at the targets, not partition counts
        by_reader = {solver: {reader: sum(row.values()) for reader, row in matrix.items()} for solver, matrix in money["zones"].items()}
        traffic_png = rack_traffic_plot(by_reader, in_bytes=True)
        traffic_alt = "Grouped bar chart: per rack, cross-zone megabytes per second its clients read at the targets, one bar per solver"
        traffic_caption = "Cross-zone traffic per reading rack at the targets, over the problems with throughputs (racks matched by name)."
    else:
        traffic_png = rack_traffic_plot(rack_traffic_totals(rows))
        traffic_alt = "Grouped bar chart: per rack, cross-rack partitions read by its clients over the fleet, one bar per solver"
        traffic_caption = "Cross-rack reads per rack, summed over the fleet's solved rows (racks matched by name; no throughputs: partitions)."
    figures = [
        (
            "plot-time",
            time_png,
            "Scatter plot, log-log: solve time in seconds against tasks × clients, one marker per solver",
            "Solve time against size (solved rows; the evaluator's check included).",
        ),
        (
            "plot-racks",
            traffic_png,
            traffic_alt,
            traffic_caption,
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
    if kind == "rate":
        return rate_text(value)
    return f"{float(value):,.3f}"


def _issue(location: str, message: str) -> Issue:
    return Issue(severity=Severity.ERROR, location=location, message=message)
