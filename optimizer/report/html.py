"""The fleet report as one self-contained HTML file: inline CSS and script, plots as PNG data URIs.

Nothing is fetched when the file is opened (no external scripts, fonts or stylesheets), so it can
be mailed or attached to a ticket and read offline; the solution files it offers are data: URIs
in the page. Every string that comes from the data (problem names, solver names, reasons, rack
names, plugin names, the input path) is HTML-escaped: problem names come from users' documents.

Figures are computed in `optimizer.report.totals` (the fleet) and `optimizer.report.applications`
(one application's drill-down); this module reads the tables, lays out and formats
(`optimizer.report.format`).
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import optimizer.report.format as fmt
from optimizer.errors import InvalidInputError, KafkaAssignmentError
from optimizer.model.issues import Issue, Severity
from optimizer.model.problem import Problem, problem_from_data
from optimizer.pipeline.status import UnsolvedStatus
from optimizer.report.applications import Application, Copies, build_application
from optimizer.report.detail import UNIT_LABEL, applications_section, saving_text
from optimizer.report.format import MISSING, cell, e
from optimizer.report.plots import pareto_plot, rack_traffic_plot, solve_time_plot
from optimizer.report.totals import (
    REFERENCE_SOLVERS,
    SAVING_KEY,
    failed_rows,
    fleet_totals,
    is_solved,
    rack_traffic_totals,
    ranked_savings,
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

DETAILED = 20
"""Applications with a drill-down: the first of the ranking (largest saving first)."""

Problems = str | Path | Mapping[str, Problem] | None
"""The fleet's problems for the drill-downs: the pipeline's input (any form it reads), or problems by name."""


def write_report(
    input_dir: str | Path,
    output: str | Path,
    price_per_gb: float | None = None,
    currency: str | None = None,
    problems: Problems = None,
) -> Path:
    """Write the HTML report of the pipeline output directory `input_dir` to `output` (a file
    path, or an existing directory to write `report.html` into); return the path written.
    `price_per_gb`: the price of cross-zone traffic for problems that give none of their own;
    `currency`: its currency, and that of problems with a price but no currency (default USD);
    `problems`: the pipeline's input (or problems by name), for the drill-downs' racks, clients
    and previous assignments (without it they show what the output tables hold).

    Raises InvalidInputError when `input_dir` is not a pipeline output directory (missing, empty,
    no readable summary table, columns missing, no rows), or `problems` cannot be read."""
    input_dir = Path(input_dir)
    table = read_summary(input_dir)
    rows = table.to_pylist()
    totals = fleet_totals(rows, price_per_gb, currency)
    wanted = detailed_problems(totals)
    comparison = totals["comparison"]
    solvers = [comparison["baseline"], comparison["reference"]] if comparison else []
    copies = read_copies(input_dir, wanted, solvers)
    targets = read_copies(input_dir, wanted, solvers, TARGETS_TABLE) if (input_dir / TARGETS_TABLE).exists() else {}
    known = read_problems(problems, wanted) if problems is not None else read_problem_table(input_dir, wanted)
    document = render_report(rows, read_plugins(input_dir), str(input_dir), datetime.now(UTC), price_per_gb, copies, currency, known, targets, totals)
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


def detailed_problems(totals: Mapping[str, Any]) -> list[str]:
    """The problems that get a drill-down: the first DETAILED of the ranking."""
    if totals["comparison"] is None:
        return []
    _, ranked = ranked_savings(totals["compared"])
    return [entry["problem"] for entry in ranked[:DETAILED]]


TARGETS_TABLE = "targets"
"""A table like `assignments` holding each solver's target (where its plan ends), read when the
run has it: the drill-downs' moves then lead to the target, and the solution files carry it."""
PROBLEMS_TABLE = "problems"
"""A table of (problem, document) rows, the problems' documents as JSON, read when the run has
it and the report is not given the problems otherwise."""


def read_copies(
    input_dir: Path, problems: Sequence[str], solvers: Sequence[str], table_name: str = "assignments"
) -> dict[str, dict[str, list[tuple[str, str, str]]]] | None:
    """problem -> solver -> its assignment applied now as (client, task, role), from the
    assignments table (or `table_name`), for `problems` and `solvers`; None when the table is
    missing or unreadable (the drill-downs then say so)."""
    if not problems:
        return {}
    try:
        table = pq.read_table(
            input_dir / table_name,
            columns=["problem", "solver", "client", "task", "role"],
            filters=[("problem", "in", list(problems)), ("solver", "in", list(solvers))],
        )
    except (pa.ArrowException, OSError, ValueError):
        return None
    copies: dict[str, dict[str, list[tuple[str, str, str]]]] = {problem: {} for problem in problems}
    for row in table.to_pylist():
        copies[row["problem"]].setdefault(row["solver"], []).append((row["client"], row["task"], row["role"]))
    return copies


def read_problems(problems: Problems, wanted: Sequence[str]) -> dict[str, Problem]:
    """The problems named in `wanted` from `problems` (a location the pipeline reads, or a
    mapping); documents that do not validate are left out (the pipeline reported them)."""
    if problems is None or not wanted:
        return {}
    if isinstance(problems, Mapping):
        return {name: problems[name] for name in wanted if name in problems}
    from optimizer.sources import read_records

    names = set(wanted)
    found: dict[str, Problem] = {}
    for record in read_records(problems):
        if record.name not in names or record.input_error is not None:
            continue
        try:
            found[record.name] = problem_from_data(json.loads(record.document), record.source)
        except (ValueError, KafkaAssignmentError):
            continue
    return found


def read_problem_table(input_dir: Path, wanted: Sequence[str]) -> dict[str, Problem]:
    """The problems named in `wanted` from the run's PROBLEMS_TABLE, when it has one."""
    if not wanted or not (input_dir / PROBLEMS_TABLE).exists():
        return {}
    try:
        table = pq.read_table(input_dir / PROBLEMS_TABLE, columns=["problem", "document"], filters=[("problem", "in", list(wanted))])
    except (pa.ArrowException, OSError, ValueError):
        return {}
    found: dict[str, Problem] = {}
    for row in table.to_pylist():
        try:
            found[row["problem"]] = problem_from_data(json.loads(row["document"]), row["problem"])
        except (ValueError, TypeError, KafkaAssignmentError):
            continue
    return found


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
    copies: Mapping[str, Mapping[str, Copies]] | None = None,
    currency: str | None = None,
    problems: Mapping[str, Problem] | None = None,
    targets: Mapping[str, Mapping[str, Copies]] | None = None,
    totals: Mapping[str, Any] | None = None,
) -> str:
    """The whole HTML document for summary `rows` (dicts, one per (problem, solver)); `copies`:
    `read_copies` (None: the assignments table could not be read); `problems`: the drilled-down
    problems by name, when known; `targets`: their targets per solver, when the run has them;
    `totals`: `fleet_totals` of the rows when the caller has it already."""
    totals = totals if totals is not None else fleet_totals(rows, price_per_gb, currency)
    unproven = {(row.get("problem"), row.get("solver")): why for row, why in unproven_rows(rows)}
    details = _applications(rows, totals, copies, problems or {}, unproven, targets or {})
    anchors = {application.problem: f"app-{index}" for index, application in enumerate(details, 1)}
    parts = [
        _head(),
        _header(totals, rows, input_dir, generated, currency),
        _decision_section(totals, price_per_gb, anchors, unproven),
        _savings_section(totals, anchors, unproven),
        _totals_section(totals),
        _protocols_section(totals),
        _unproven_section(rows, anchors),
        _failures_section(rows),
        _plots_section(rows, totals),
        applications_section(details, anchors, totals, copies is None),
        _run_section(rows, plugins),
        f"</main>\n<script>{_SCRIPT}</script>\n</body>\n</html>\n",
    ]
    return "".join(parts)


def _applications(
    rows: Sequence[Mapping[str, Any]],
    totals: Mapping[str, Any],
    copies: Mapping[str, Mapping[str, Copies]] | None,
    problems: Mapping[str, Problem],
    unproven: Mapping[tuple[Any, Any], str],
    targets: Mapping[str, Mapping[str, Copies]],
) -> list[Application]:
    comparison = totals["comparison"]
    if comparison is None:
        return []
    base, ref = comparison["baseline"], comparison["reference"]
    by_pair = {(row["problem"], row["solver"]): row for row in rows}
    _, ranked = ranked_savings(totals["compared"])
    return [
        build_application(
            entry,
            by_pair[(entry["problem"], base)],
            by_pair[(entry["problem"], ref)],
            (copies or {}).get(entry["problem"], {}),
            problems.get(entry["problem"]),
            unproven.get((entry["problem"], ref)),
            targets.get(entry["problem"]),
        )
        for entry in ranked[:DETAILED]
    ]


# --- page -------------------------------------------------------------------------------------

_STYLE = """
* { box-sizing: border-box; }
body { font-family: system-ui, sans-serif; margin: 0; color: #222; background: #fff; line-height: 1.4; }
main { max-width: 1200px; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
h1 { margin-bottom: 0.2rem; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2rem; margin-top: 2.2rem; }
h4 { margin: 1rem 0 0.3rem; }
table { border-collapse: collapse; margin: 0.6rem 0; font-size: 0.85rem; max-width: 100%; }
table.wide { width: 100%; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.45rem; vertical-align: top; overflow-wrap: break-word; }
td.name { min-width: 10rem; overflow-wrap: anywhere; }
td.kind, td.nowrap { white-space: nowrap; }
th { background: #f4f4f4; text-align: left; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; overflow-wrap: normal; white-space: nowrap; }
table.sortable thead th { cursor: pointer; }
table.sortable thead th::after { content: " ↕"; color: #999; font-weight: normal; }
table.sortable thead th[aria-sort="ascending"]::after { content: " ▲"; color: #222; }
table.sortable thead th[aria-sort="descending"]::after { content: " ▼"; color: #222; }
pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.8rem; }
code { overflow-wrap: anywhere; }
dl.meta { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.2rem 1rem; }
dl.meta dt { font-weight: 600; }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
p.note { color: #555; font-size: 0.88rem; }
nav { display: flex; flex-wrap: wrap; gap: 0.3rem 1rem; margin-top: 0.8rem; }
figure { margin: 1.2rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9rem; }
.flag { display: inline-block; background: #fff3cd; color: #7a5a00; border: 1px solid #e6c96a; border-radius: 3px;
        padding: 0 0.3rem; font-size: 0.78rem; white-space: nowrap; }
p.flag { display: block; white-space: normal; padding: 0.3rem 0.5rem; font-size: 0.88rem; }
article.app { border-top: 2px solid #bbb; margin-top: 2rem; padding-top: 0.3rem; }
article.app h3 { margin-bottom: 0.2rem; }
.small { font-size: 0.8rem; color: #555; }
a.download { display: inline-block; padding: 0.3rem 0.7rem; border: 1px solid #4a7; border-radius: 4px; background: #effaf2;
             color: #174; text-decoration: none; font-weight: 600; }
@media (max-width: 1100px) { td.num { white-space: normal; } }
@media print {
  nav, a.back, .noprint { display: none; }
  td.num { white-space: normal; }
  th, td { padding: 0.15rem 0.3rem; }
  body { font-size: 10pt; }
  main { max-width: none; padding: 0; }
  table { font-size: 8pt; }
  tr, figure, dl { break-inside: avoid; }
  h2, h3, h4 { break-after: avoid; }
  article.app { break-before: page; border-top: none; }
  table.sortable thead th::after { content: ""; }
  a { color: inherit; text-decoration: none; }
  a.download { border: none; background: none; padding: 0; font-weight: normal; }
  figure img { max-height: 9cm; width: auto; }
}
"""

# Sorting: a click (or Enter) on a header of a table.sortable orders its body by that column,
# by the cells' data-value when they have one (figures), else their text; empty cells last.
_SCRIPT = """
(function () {
  function key(row, index) {
    var cell = row.cells[index];
    if (!cell) return null;
    var raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
    if (raw === "" || raw === "\\u2013") return null;
    var number = Number(raw);
    return cell.hasAttribute("data-value") && !isNaN(number) ? number : raw;
  }
  function sortBy(table, header, index) {
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a, index), y = key(b, index);
      if (x === null || y === null) return x === y ? 0 : (x === null ? 1 : -1);
      var order = (typeof x === "number" && typeof y === "number") ? x - y : String(x).localeCompare(String(y), undefined, {numeric: true});
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, index) {
      header.tabIndex = 0;
      header.title = "sort by this column";
      header.addEventListener("click", function () { sortBy(table, header, index); });
      header.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(table, header, index); }
      });
    });
  });
})();
"""


def _head() -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<title>Kafka assignment fleet report</title>\n"
        f"<style>{_STYLE}</style>\n</head>\n<body>\n<main>\n"
    )


def _header(totals: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], input_dir: str, generated: datetime, currency: str | None) -> str:
    out = ["<header id=\"header\">\n<h1>Kafka assignment fleet report</h1>\n<dl class=\"meta\">\n"]
    money = totals["money"]
    currencies = sorted(money["by_currency"]) if money else []
    meta = [
        ("Input directory", f"<code>{e(input_dir)}</code>"),
        ("Generated", e(generated.strftime("%Y-%m-%d %H:%M:%S %Z").strip())),
        ("Problems", f"<span data-field=\"problems\">{fmt.count(totals['problems'])}</span>"),
        ("Rows (problem × solver)", f"<span data-field=\"rows\">{fmt.count(totals['rows'])}</span>"),
        ("Solvers", e(", ".join(totals["solvers"]))),
        ("Money in", e(", ".join(currencies) if currencies else (currency or "no price")) + " per month (730 h; 1 GB = 10<sup>9</sup> bytes)"),
    ]
    out += [f"<dt>{label}</dt><dd>{value}</dd>\n" for label, value in meta]
    out.append("</dl>\n")
    # Rows record the plugins of the process that solved them; several signatures mean the
    # workers did not all load the same plugins, which makes rows incomparable.
    signatures = sorted({str(row.get("plugins")) for row in rows if row.get("plugins")})
    if len(signatures) > 1:
        out.append(
            "<p class=\"flag\">Warning: the rows were solved with "
            f"{len(signatures)} different plugin sets: "
            + "; ".join(f"<code>{e(s)}</code>" for s in signatures)
            + " (see <a href=\"#run\">Run details</a>).</p>\n"
        )
    links = [
        ("decision", "Where to start"),
        ("savings", "Every application"),
        ("totals", "Fleet totals"),
        ("unproven", "Not proven optimal"),
        ("failures", "Not solved"),
        ("plots", "Plots"),
        ("applications", "Applications in detail"),
        ("run", "Run details"),
    ]
    out.append("<nav>" + "".join(f"<a href=\"#{ident}\">{label}</a>" for ident, label in links) + "</nav>\n</header>\n")
    return "".join(out)


# --- where to start ---------------------------------------------------------------------------


def _decision_section(totals: Mapping[str, Any], price_per_gb: float | None, anchors: Mapping[str, str], unproven: Mapping[tuple[Any, Any], str]) -> str:
    out = ["<section id=\"decision\">\n<h2>Where to start</h2>\n"]
    comparison = totals["comparison"]
    curve = totals["pareto"]
    if comparison is None:
        out.append(f"<p class=\"skipped\">{e(totals['comparison_skipped'])}</p>\n")
        png = pareto_plot(None, None, totals["comparison_skipped"])
        alt = "Pareto curve of the savings: empty, there is no comparison in this run"
        out.append(f"<figure id=\"plot-pareto\"><img src=\"data:image/png;base64,{base64.b64encode(png).decode('ascii')}\" alt=\"{e(alt)}\"></figure>\n")
        return "".join(out) + "</section>\n"
    base, ref = comparison["baseline"], comparison["reference"]
    money = totals["money"]
    out.append(_money_headline(money, base, ref, comparison, price_per_gb))
    out.append(_time_headline(comparison, base, ref))
    if money is not None:
        out.append(_config_headline(money, totals["compared"], ref))
        out.append(_zone_table(money["zones"], base, ref))
    png = pareto_plot(curve, ref, totals["comparison_skipped"])
    caption = f"Cumulative share of the saving, applications ranked by their saving (in {(curve or {}).get('unit', 'partitions')})."
    unit_words = {"money": "of the money saved", "bytes": "of the cross-zone bytes saved", "partitions": "of the cross-rack partitions saved"}
    if curve and curve["top"]:
        saving = len(curve["cumulative"])
        out.append(
            f"<p data-field=\"pareto\">The top <strong>{fmt.count(curve['top'])}</strong> of {_applications_count(curve['problems'], 'compared ')} "
            f"give {curve['share']:.0f} % {unit_words[curve['unit']]} ({plural(saving, 'saves', 'save')} anything).</p>\n"
        )
    out.append(
        f"<figure id=\"plot-pareto\"><img src=\"data:image/png;base64,{base64.b64encode(png).decode('ascii')}\" "
        f"alt=\"{e('Pareto curve: cumulative percent of the fleet saving against the number of applications, largest saving first')}\">"
        f"<figcaption>{e(caption)}</figcaption></figure>\n"
    )
    out.append(_ranked_table(totals["compared"], base, ref, anchors, unproven))
    return "".join(out) + "</section>\n"


def _applications_count(number: int, adjective: str = "") -> str:
    """`1 compared application or group`, `300 compared applications and groups`."""
    return plural(number, f"{adjective}application or group", f"{adjective}applications and groups")


def _money_sentence(money: Mapping[str, Any], key: str) -> str:
    """A money total of `money` in its currency, or each currency's when the fleet has several."""
    if money["currency"] is not None:
        return fmt.money(money[key], money["currency"])
    return " and ".join(fmt.money(figures[key], currency) for currency, figures in money["by_currency"].items())


def _money_headline(money: Mapping[str, Any] | None, base: str, ref: str, comparison: Mapping[str, Any], price_per_gb: float | None) -> str:
    if money is None:
        return (
            "<p class=\"note\" data-field=\"units\">No application or group in this run gives bytes per second, so traffic is counted in "
            f"partitions read across racks, not bytes or money: at the targets {e(ref)} reads "
            f"{fmt.reduction(comparison['target_saved'], fmt.count(abs(comparison['target_saved'])), 'fewer')} than {e(base)}. "
            "Give <code>bytes_per_second</code> (docs/file-formats.md, \"Weights\") to rank by traffic, and a price to rank by money.</p>\n"
        )
    saved = money["bytes_saved"]
    parts = [
        f"<p data-field=\"bytes_headline\">On the {_applications_count(money['with_bytes'], 'compared ')} with throughputs, "
        f"{e(ref)} reads <strong>{e(fmt.reduction(saved, fmt.rate(abs(saved))))}</strong> across zones than {e(base)} at the targets "
        f"({e(fmt.rate(money['baseline_bytes']))} → {e(fmt.rate(money['reference_bytes']))}, {e(fmt.share(saved, money['baseline_bytes']))}).</p>\n"
    ]
    if money["by_currency"]:
        several = money["currency"] is None
        pieces = []
        for currency, figures in money["by_currency"].items():
            share = 100.0 * figures["money_saved"] / figures["baseline_money"] if figures["baseline_money"] else None
            pieces.append(
                f"<strong>{e(fmt.reduction(figures['money_saved'], fmt.money(abs(figures['money_saved']), currency)))}</strong> "
                f"({e(fmt.percent(share))} of {e(base)}'s "
                f"{e(fmt.money(figures['baseline_money'], currency))}) on the {_applications_count(figures['priced'])} priced in {e(currency)}"
            )
        parts.append(
            "<p data-field=\"money_headline\">In money, at the targets: "
            + "; ".join(pieces)
            + (" (the currencies are summed apart, never converted)" if several else "")
            + ". Prices: each problem's own <code>price_per_gb</code> and <code>currency</code>"
            + (f", else {price_per_gb:g} per GB from <code>--price-per-gb</code>" if price_per_gb is not None else "")
            + ".</p>\n"
        )
    else:
        parts.append(
            "<p class=\"note\" data-field=\"money_headline\">No price: give <code>--price-per-gb</code> and <code>--currency</code> (or "
            "<code>price_per_gb</code> and <code>currency</code> in the problem files) to see the saving in money.</p>\n"
        )
    return "".join(parts)


def _time_headline(comparison: Mapping[str, Any], base: str, ref: str) -> str:
    return (
        f"<p data-field=\"time_headline\">Getting there, over the {plural(comparison['problems'], 'compared problem')}: {e(ref)}'s plans take "
        f"<strong>{plural(comparison['reference_rounds'], 'follow-up rebalance')}</strong>, "
        f"<strong>{e(fmt.hours(comparison['reference_hours_to_target']))}</strong> summed (the longest {e(fmt.hours(comparison['reference_longest_hours']))}) "
        f"and restore {e(fmt.offsets(comparison['reference_restore_offsets']))} changelog offsets; {e(base)}'s take "
        f"{plural(comparison['baseline_rounds'], 'follow-up rebalance')}, {e(fmt.hours(comparison['baseline_hours_to_target']))} "
        f"(the longest {e(fmt.hours(comparison['baseline_longest_hours']))}) and {e(fmt.offsets(comparison['baseline_restore_offsets']))} offsets. "
        "Time is at least one <code>probing.rebalance.interval.ms</code> per probing rebalance (warm-ups that catch up in time).</p>\n"
    )


def _config_headline(money: Mapping[str, Any], entries: Sequence[Mapping[str, Any]], ref: str) -> str:
    if not money["configured"]:
        return ""
    changed = [entry for entry in entries if entry.get("config_change") and entry.get("config_bytes_saving") is not None]
    config_money = _money_sentence(money, "config_money_saved") if money["by_currency"] else None
    return (
        f"<p data-field=\"config_headline\">A configuration change alone (<code>rack.aware.assignment.strategy=min_traffic</code> on "
        f"{plural(money['configured'], 'Streams application that uses', 'Streams applications that use')} another strategy) "
        f"gets {e(fmt.rate(money['config_bytes_saved']))} "
        + (f"({e(config_money)}) " if config_money else "")
        + f"of it with Kafka's own assignor; the rest needs {e(ref)}'s assignment. {_config_cost_text(changed)}</p>\n"
    )


def _config_cost_text(changed: Sequence[Mapping[str, Any]]) -> str:
    """What the configuration change costs, when the run recorded it (see CONFIG_COST_COLUMNS)."""
    if not changed or any(entry.get("config_rounds") is None for entry in changed):
        return (
            "Its own cost (Kafka's plan with the changed configuration: rounds, time, restore volume) is not in this run's summary "
            "table; each application's routes below show what is known."
        )
    rounds = sum(int(entry["config_rounds"]) for entry in changed)
    hours = sum(float(entry.get("config_seconds_to_target") or 0.0) for entry in changed) / 3600
    restored = sum(int(entry.get("config_restore_offsets") or 0) for entry in changed)
    return (
        f"On those it costs {plural(rounds, 'probing rebalance')}, {e(fmt.hours(hours))} summed and "
        f"{e(fmt.offsets(restored))} changelog offsets restored (Kafka's plans with the changed configuration)."
    )


def _zone_table(zones: Mapping[str, Mapping[str, Mapping[str, float]]], base: str, ref: str) -> str:
    readers = sorted({reader for matrix in zones.values() for reader in matrix})
    sources = sorted({source for matrix in zones.values() for row in matrix.values() for source in row})
    if not readers:
        return "<p class=\"note\">No bytes cross zones at the targets.</p>\n"
    out = [
        f"<h3>Cross-zone traffic by zone pair, at the targets ({e(base)} → {e(ref)})</h3>\n"
        "<table class=\"zones\">\n<tr><th>read by ↓ from →</th>" + "".join(f"<th>{e(s)}</th>" for s in sources) + "</tr>\n"
    ]
    for reader in readers:
        out.append(f"<tr><th>{e(reader)}</th>")
        for source in sources:
            mine = zones.get(base, {}).get(reader, {}).get(source, 0.0)
            yours = zones.get(ref, {}).get(reader, {}).get(source, 0.0)
            text = "" if not mine and not yours else f"{e(fmt.rate(mine))} → {e(fmt.rate(yours))}"
            out.append(f"<td class=\"num\" data-reader=\"{e(reader)}\" data-source=\"{e(source)}\">{text}</td>")
        out.append("</tr>\n")
    out.append(
        "</table>\n<p class=\"note\">Bytes per second read by clients and members in one zone from the replica that serves them in "
        "another: the partition's leader unless the brokers serve reads from followers (replica.selector.class), and then a "
        "replica in the reader's zone when there is one. A crossing read comes from the leader's zone when the problem gives "
        "the leader; a partition without one counts a share in each of its replicas' zones.</p>\n"
    )
    return "".join(out)


def _problem_link(name: str, anchors: Mapping[str, str]) -> str:
    anchor = anchors.get(name)
    return f"<a href=\"#{anchor}\">{e(name)}</a>" if anchor else e(name)


def _flag(why: str | None) -> str:
    return "" if why is None else f" <span class=\"flag\" title=\"{e(why)}\">not proven optimal</span>"


def _ranked_table(entries: Sequence[Mapping[str, Any]], base: str, ref: str, anchors: Mapping[str, str], unproven: Mapping[tuple[Any, Any], str]) -> str:
    unit, ranked = ranked_savings(entries)
    if not ranked:
        return f"<p>{e(ref)} saves nothing over {e(base)} on any compared application.</p>\n"
    shown = ranked[:DETAILED]
    label = UNIT_LABEL[unit]
    money_column = unit != "money" and any(entry.get("money_saving") for entry in shown)
    out = [
        f"<h3 id=\"ranked\">The {_applications_count(len(shown))} that {'saves' if len(shown) == 1 else 'save'} the most "
        f"({e(label)}; of {fmt.count(len(ranked))} that save anything)</h3>\n"
        f"<table class=\"decision sortable wide\" data-unit=\"{unit}\">\n<thead><tr><th>#</th><th>application or group</th><th>kind</th>"
        f"<th>{e(label)}</th><th>cross-zone at the target, {e(base)} → {e(ref)}</th>"
        + ("<th>saved per month</th>" if money_column else "")
        + f"<th>follow-up rebalances, {e(ref)}</th><th>time to the target, {e(ref)}</th><th>changelog offsets restored, {e(ref)}</th>"
        f"<th>configuration change alone (<code>{e(_changes(entries))}</code>)</th></tr></thead>\n<tbody>\n"
    ]
    for rank, entry in enumerate(shown, 1):
        name = entry["problem"]
        traffic = (
            f"{fmt.rate(entry['baseline_bytes'])} → {fmt.rate(entry['reference_bytes'])}"
            if entry["baseline_bytes"] is not None
            else f"{fmt.count(entry['baseline_target_cross_rack'])} → {fmt.count(entry['reference_target_cross_rack'])} partitions"
        )
        streams = entry.get("kind") == "streams"
        out.append(
            f"<tr data-problem=\"{e(name)}\">{cell(rank, str(rank))}<td class=\"name\">{_problem_link(name, anchors)}{_flag(unproven.get((name, ref)))}</td>"
            f"<td class=\"kind\">{e(entry['kind'] or '')}</td>"
            + cell(entry[SAVING_KEY[unit]], e(saving_text(entry, unit)), "saving")
            + cell(entry["bytes_saving"] if entry["bytes_saving"] is not None else entry["target_saving"], e(traffic), "traffic")
            + (cell(entry.get("money_saving"), e(fmt.money(entry.get("money_saving"), entry.get("currency"))), "money") if money_column else "")
            + cell(entry["reference_rounds"], fmt.count(entry["reference_rounds"]), "rounds")
            + cell(entry["reference_seconds_to_target"], e(fmt.time_to_target(entry["reference_seconds_to_target"], entry["reference_rounds"])), "time")
            + (
                cell(entry["reference_restore_offsets"], e(fmt.offsets(entry["reference_restore_offsets"])), "restore")
                if streams
                else cell(None, "none (consumers)", "restore")
            )
            + f"<td>{_config_cell(entry, unit)}</td></tr>\n"
        )
    out.append(
        "</tbody></table>\n<p class=\"note\">Savings between the targets (the steady state each plan reaches). Time to the target: "
        f"{e(ref)}'s probing rebalances × <code>probing.rebalance.interval.ms</code>, at least. Click a name for what changes, "
        "the plan, and the assignment to take away; click a header to sort.</p>\n"
    )
    return "".join(out)


def _changes(entries: Sequence[Mapping[str, Any]]) -> str:
    """The configuration changes the column shows (the worker tries one: the KIP-925 strategy)."""
    changes = sorted({str(entry["config_change"]) for entry in entries if entry.get("config_change")})
    return ", ".join(changes) or "none tried"


def _config_cell(entry: Mapping[str, Any], unit: str) -> str:
    change = entry.get("config_change")
    if change is None:
        return MISSING
    if not (entry.get("config_bytes_saving") or entry.get("config_partition_saving")):
        return "saves nothing here"
    if unit == "money" and entry.get("config_money_saving") is not None:
        got = fmt.money(entry["config_money_saving"], entry.get("currency"))
    elif entry.get("config_bytes_saving") is not None:
        got = fmt.rate(entry["config_bytes_saving"])
    else:
        got = plural(entry["config_partition_saving"] or 0, "partition")
    return f"{e(got)} less"


# --- every compared application ---------------------------------------------------------------


def _savings_section(totals: Mapping[str, Any], anchors: Mapping[str, str], unproven: Mapping[tuple[Any, Any], str]) -> str:
    out = ["<section id=\"savings\">\n<h2>Every compared application</h2>\n"]
    comparison = totals["comparison"]
    if comparison is None:
        out.append(f"<p class=\"skipped\">No savings to list: {e(totals['comparison_skipped'])}</p>\n")
        return "".join(out) + "</section>\n"
    base, ref = comparison["baseline"], comparison["reference"]
    unit, ranked = ranked_savings(totals["compared"])
    order = {entry["problem"]: index for index, entry in enumerate(ranked)}
    key = SAVING_KEY[unit]
    # One ranking in the whole report: the decision table's unit first, then the rest by name.
    entries = sorted(totals["compared"], key=lambda entry: (order.get(entry["problem"], len(order)), entry["problem"]))
    out.append(
        f"<p>The {plural(len(entries), 'problem')} both <code>{e(base)}</code> and <code>{e(ref)}</code> solved, in the order of the ranking "
        f"above ({e(UNIT_LABEL[unit])}; those that save nothing after, by name). Click a header to sort by another column.</p>\n"
        "<table class=\"savings sortable wide\">\n<thead><tr><th>application or group</th><th>kind</th><th>size</th>"
        f"<th>{e(UNIT_LABEL[unit])}</th>"
        f"<th>cross-rack partitions at the target, {e(base)} → {e(ref)}</th>"
        f"<th>cross-rack partitions now, {e(base)} → {e(ref)}</th>"
        f"<th>moves now, {e(base)} → {e(ref)}</th>"
        f"<th>load skew now, {e(base)} → {e(ref)}</th>"
        f"<th>follow-up rebalances, {e(ref)}</th><th>time to the target, {e(ref)}</th></tr></thead>\n<tbody>\n"
    )
    for entry in entries:
        name = entry["problem"]
        value = entry.get(key)
        size = entry["size"]
        out.append(
            f"<tr data-problem=\"{e(name)}\"><td class=\"name\">{_problem_link(name, anchors)}{_flag(unproven.get((name, ref)))}</td>"
            f"<td class=\"kind\">{e(entry['kind'] or '')}</td>"
            + cell(size, f"{fmt.count(entry['tasks'])} × {fmt.count(entry['clients'])}", "size")
            + cell(value, e(saving_text(entry, unit)) if value is not None else MISSING, "saving")
            + cell(entry["target_saving"], _pair(entry, "target_cross_rack"), "target_cross_rack")
            + cell(entry["saving"], _pair(entry, "cross_rack"), "cross_rack")
            + cell(entry["baseline_moves"] - entry["reference_moves"], _pair(entry, "moves"), "moves")
            + cell(
                entry["reference_load_skew"],
                f"{fmt.skew(entry['baseline_load_skew'])} → {fmt.skew(entry['reference_load_skew'])}",
                "load_skew",
            )
            + cell(entry["reference_rounds"], fmt.count(entry["reference_rounds"]), "rounds")
            + cell(entry["reference_seconds_to_target"], e(fmt.time_to_target(entry["reference_seconds_to_target"], entry["reference_rounds"])), "time")
            + "</tr>\n"
        )
    out.append(
        "</tbody></table>\n<p class=\"note\">Sorting a column of pairs (before → after) sorts by the reduction (before − after); "
        "load skew by the reference's. Size: tasks × clients (consumer groups: partitions × members). Load skew: active tasks per "
        "thread (Streams) or partitions per member (groups), max − min.</p>\n"
    )
    return "".join(out) + "</section>\n"


def _pair(entry: Mapping[str, Any], figure: str) -> str:
    """`before → after` of a count, the baseline's and the reference's."""
    return f"{fmt.count(entry['baseline_' + figure])} → {fmt.count(entry['reference_' + figure])}"


# --- fleet totals -----------------------------------------------------------------------------

_TOTAL_ROWS = (
    ("problems", "problems", "count"),
    ("solved", "solved (with an assignment)", "count"),
    ("invalid", "invalid documents", "count"),
    ("errors", "errors (no assignment)", "count"),
    ("cross_rack_partitions", "cross-rack partitions, applied now (warm-ups included)", "count"),
    ("moves", "moves, applied now", "count"),
    ("streams_skew_mean", "mean load skew now, Streams (active tasks per thread)", "skew"),
    ("consumer_skew_mean", "mean load skew now, groups (partitions per member)", "skew"),
    ("warmups", "warm-ups started now", "count"),
    ("target_cross_rack_partitions", "cross-rack partitions at the target", "count"),
    ("target_cross_rack_bytes", "cross-zone traffic at the target (problems with throughputs)", "rate"),
    ("streams_target_skew_mean", "mean load skew at the target, Streams", "skew"),
    ("consumer_target_skew_mean", "mean load skew at the target, groups", "skew"),
    ("followup_rebalances", "follow-up rebalances to the targets (Streams: probing)", "count"),
    ("restore_offsets", "changelog offsets restored over the plans", "offsets"),
    ("seconds_total", "solve time, total", "seconds"),
    ("seconds_median", "solve time, median", "seconds"),
)


def _totals_section(totals: Mapping[str, Any]) -> str:
    solvers = list(totals["per_solver"])
    out = [
        "<section id=\"totals\">\n<h2>Fleet totals</h2>\n<table class=\"totals\">\n<thead><tr><th>figure</th>"
        + "".join(f"<th data-solver=\"{e(s)}\">{e(s)}</th>" for s in solvers)
        + "</tr></thead>\n<tbody>\n"
    ]
    for key, label, kind in _TOTAL_ROWS:
        out.append(f"<tr><th>{e(label)}</th>")
        for solver in solvers:
            value = totals["per_solver"][solver][key]
            text = MISSING if value is None else e(getattr(fmt, kind)(value))
            out.append(f"<td class=\"num\" data-solver=\"{e(solver)}\" data-field=\"{key}\" data-value=\"{e(value)}\">{text}</td>")
        out.append("</tr>\n")
    out.append("</tbody></table>\n")
    out.append(
        "<p class=\"note\">One column per solver. \"Now\": the assignments applied at this rebalance (Kafka's with its warm-ups "
        "pending or partitions withheld, as the exact ones); \"at the target\": where the plans end (Streams: warm-ups caught up, "
        "one probing rebalance per round; cooperative consumer groups: withheld partitions assigned). All over solved rows; solve "
        "time over every row with a time (failed solves cost time too). Load skew is counted per kind, never mixed.</p>\n"
    )
    out.append("<h3 id=\"comparison\">Kafka's heuristic against the exact optimum</h3>\n")
    comparison = totals["comparison"]
    if comparison is None:
        out.append(f"<p class=\"skipped\" data-field=\"comparison_skipped\">{e(totals['comparison_skipped'])}</p>\n")
        return "".join(out) + "</section>\n"
    base, ref = comparison["baseline"], comparison["reference"]
    out.append(
        f"<p>Compared on <span data-field=\"compared\">{fmt.count(comparison['problems'])}</span> problems where both "
        f"<code>{e(base)}</code> and <code>{e(ref)}</code> produced an assignment"
        + (f" (<code>{e(ref)}</code> is the first of {e(', '.join(REFERENCE_SOLVERS))} in this run)" if ref != REFERENCE_SOLVERS[0] else "")
        + ".</p>\n"
    )
    saved, target_saved, moves = comparison["saved"], comparison["target_saved"], -comparison["moves_difference"]
    rounds = comparison["baseline_rounds"] - comparison["reference_rounds"]
    restored = comparison["baseline_restore_offsets"] - comparison["reference_restore_offsets"]
    hours = comparison["baseline_hours_to_target"] - comparison["reference_hours_to_target"]
    def figure(key: str, label: str, form: Any) -> tuple[str, str, Any, str]:
        return key, label, comparison[key], form(comparison[key])

    lines = [
        figure("baseline_cross_rack", f"cross-rack partitions applied now, {base}", fmt.count),
        figure("reference_cross_rack", f"cross-rack partitions applied now, {ref}", fmt.count),
        ("saved", f"reduction now ({base} − {ref})", saved, fmt.reduction(saved, fmt.count(abs(saved)), "fewer")),
        ("saved_percent", f"reduction now, share of {base}'s", comparison["saved_percent"], fmt.share(saved, comparison["baseline_cross_rack"])),
        figure("baseline_target_cross_rack", f"cross-rack partitions at the target, {base}", fmt.count),
        figure("reference_target_cross_rack", f"cross-rack partitions at the target, {ref}", fmt.count),
        ("target_saved", f"reduction at the targets ({base} − {ref})", target_saved, fmt.reduction(target_saved, fmt.count(abs(target_saved)), "fewer")),
        (
            "target_saved_percent",
            f"reduction at the targets, share of {base}'s",
            comparison["target_saved_percent"],
            fmt.share(target_saved, comparison["baseline_target_cross_rack"]),
        ),
        figure("baseline_rounds", f"follow-up rebalances to the targets, {base}", fmt.count),
        figure("reference_rounds", f"follow-up rebalances to the targets, {ref}", fmt.count),
        ("rounds_saved", "follow-up rebalances, reduction", rounds, fmt.reduction(rounds, fmt.count(abs(rounds)), "fewer")),
        figure("baseline_hours_to_target", f"time to the targets, summed over the problems, {base}", fmt.hours),
        figure("reference_hours_to_target", f"time to the targets, summed over the problems, {ref}", fmt.hours),
        ("hours_saved", "time to the targets, reduction", hours, fmt.reduction(hours, fmt.hours(abs(hours)))),
        figure("baseline_longest_hours", f"longest time to a target, {base}", fmt.hours),
        figure("reference_longest_hours", f"longest time to a target, {ref}", fmt.hours),
        figure("baseline_restore_offsets", f"changelog offsets restored over the plans, {base}", fmt.offsets),
        figure("reference_restore_offsets", f"changelog offsets restored over the plans, {ref}", fmt.offsets),
        ("restore_saved", "changelog offsets restored, reduction", restored, fmt.reduction(restored, fmt.offsets(abs(restored)), "fewer")),
        figure("baseline_moves", f"moves now, {base}", fmt.count),
        figure("reference_moves", f"moves now, {ref}", fmt.count),
        ("moves_saved", f"moves now, reduction ({base} − {ref})", moves, fmt.reduction(moves, fmt.count(abs(moves)), "fewer")),
        figure("better", f"problems where {ref} reads fewer cross-rack partitions now", fmt.count),
        figure("equal", "problems where both read as many", fmt.count),
        figure("worse", f"problems where {ref} reads more", fmt.count),
    ]
    out.append("<table class=\"comparison\">\n<tbody>\n")
    out += [f"<tr><th>{e(label)}</th>{cell(value, e(text), key)}</tr>\n" for key, label, value, text in lines]
    out.append("</tbody></table>\n")
    if comparison["worse"]:
        out.append(
            f"<p class=\"note\">{e(ref)} optimises its goals in priority order, and by default balance (among "
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
        "problems all of them solved (docs/assignors/protocols.md). Figures of the assignments applied now.</p>\n"
    ]
    for kind, entry in protocols.items():
        columns = list(entry["columns"])
        out.append(
            f"<h3>{e(kind)} ({e(plural(entry['problems'], 'problem'))})</h3>\n<table class=\"protocols\" data-kind=\"{e(kind)}\">\n"
            "<tr><th></th>" + "".join(f"<th>{e(c)}</th>" for c in columns) + "</tr>\n"
        )
        for key, label, form in (
            ("cross_rack_partitions", "cross-rack partitions now", fmt.count),
            ("moves", "moves now", fmt.count),
            ("load_skew_mean", f"mean load skew now ({_UNITS[kind]}, max − min)", fmt.skew),
        ):
            out.append(f"<tr><th>{e(label)}</th>")
            values = {c: entry["columns"][c][key] for c in columns}
            out += [f"<td class=\"num\" data-solver=\"{e(c)}\" data-field=\"{key}\" data-value=\"{e(values[c])}\">{form(values[c])}</td>" for c in columns]
            out.append("</tr>\n")
        out.append("</table>\n")
    return "".join(out) + "</section>\n"


# --- what went wrong --------------------------------------------------------------------------


def _failures_section(rows: Sequence[Mapping[str, Any]]) -> str:
    out = ["<section id=\"failures\">\n<h2>Problems not solved</h2>\n"]
    failed = failed_rows(rows)
    if not failed:
        out.append("<p class=\"none\">none: every (problem, solver) pair has an assignment.</p>\n")
        return "".join(out) + "</section>\n"
    # One line per problem and reason: an invalid document is the same failure for every solver.
    grouped: dict[tuple[str, str, str, str], list[str]] = {}
    for row in failed:
        key = (str(row.get("problem")), str(row.get("kind") or ""), str(row.get("status")), str(row.get("error") or "(no reason recorded)"))
        grouped.setdefault(key, []).append(str(row.get("solver")))
    invalid = len({problem for problem, _, status, _ in grouped if status == UnsolvedStatus.INVALID})
    others = sum(1 for row in failed if row.get("status") != UnsolvedStatus.INVALID)
    said = []
    if invalid:
        said.append(f"{plural(invalid, 'invalid document')} (rejected before any solver ran; each listed once, with every solver it was given to)")
    if others:
        said.append(f"{plural(others, 'row')} where a solver could not run or found nothing in time")
    out.append(
        f"<p>{' and '.join(said)}.</p>\n<table class=\"failures wide\">\n"
        "<thead><tr><th>problem</th><th>kind</th><th>solvers</th><th>status</th><th>reason</th></tr></thead>\n<tbody>\n"
    )
    for (problem, kind, status, error), solvers in grouped.items():
        out.append(
            f"<tr data-problem=\"{e(problem)}\"><td>{e(problem)}</td><td>{e(kind)}</td><td data-field=\"solvers\">{e(', '.join(sorted(solvers)))}</td>"
            f"<td>{e(status)}</td><td><pre>{e(error)}</pre></td></tr>\n"
        )
    out.append("</tbody></table>\n")
    return "".join(out) + "</section>\n"


def _unproven_section(rows: Sequence[Mapping[str, Any]], anchors: Mapping[str, str]) -> str:
    out = ["<section id=\"unproven\">\n<h2>Answers not proven optimal</h2>\n"]
    unproven = unproven_rows(rows)
    if not unproven:
        out.append("<p class=\"none\">none: every exact answer is proven optimal, goal by goal.</p>\n")
        return "".join(out) + "</section>\n"
    out.append(
        f"<p>{plural(len(unproven), 'row has', 'rows have')} an assignment whose goals are not all proven optimal: a time limit "
        "cut a stage (its value is the best found, the gap to the proven bound beside it), or hard goals "
        "conflicted. Their figures are what the assignment reaches, not what is possible; a longer "
        "<code>--time-limit</code> may do better. They are flagged <span class=\"flag\">not proven optimal</span> wherever they appear.</p>\n"
        "<table class=\"unproven wide\">\n<thead><tr><th>problem</th><th>kind</th><th>solver</th><th>status</th><th>stages not proven</th></tr></thead>\n"
        "<tbody>\n"
    )
    for row, why in unproven:
        out.append(
            f"<tr data-problem=\"{e(row.get('problem'))}\"><td>{_problem_link(str(row.get('problem')), anchors)}</td><td>{e(row.get('kind') or '')}</td>"
            f"<td>{e(row.get('solver'))}</td><td>{e(row.get('status'))}</td><td>{e(why)}</td></tr>\n"
        )
    out.append("</tbody></table>\n")
    return "".join(out) + "</section>\n"


# --- plots ------------------------------------------------------------------------------------


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
        ("plot-racks", traffic_png, traffic_alt, traffic_caption),
    ]
    out = ["<section id=\"plots\">\n<h2>Plots</h2>\n"]
    for ident, png, alt, caption in figures:
        out.append(
            f"<figure id=\"{ident}\"><img src=\"data:image/png;base64,{base64.b64encode(png).decode('ascii')}\" "
            f"alt=\"{e(alt)}\"><figcaption>{e(caption)}</figcaption></figure>\n"
        )
    return "".join(out) + "</section>\n"


# --- run details ------------------------------------------------------------------------------


def _run_section(rows: Sequence[Mapping[str, Any]], plugins: Sequence[Mapping[str, Any]] | None) -> str:
    out = ["<section id=\"run\">\n<h2>Run details</h2>\n<h3>Plugins</h3>\n"]
    if plugins is None:
        out.append("<p class=\"note\">No plugins table in this output directory.</p>\n")
    elif not plugins:
        out.append("<p class=\"note\">The plugins table is empty.</p>\n")
    else:
        out.append("<table class=\"plugins\">\n<tr><th>name</th><th>version</th></tr>\n")
        for plugin in sorted(plugins, key=lambda p: str(p.get("name"))):
            out.append(f"<tr><td>{e(plugin.get('name'))}</td><td>{e(plugin.get('version'))}</td></tr>\n")
        out.append("</table>\n")
    return "".join(out) + "</section>\n"


def _issue(location: str, message: str) -> Issue:
    return Issue(severity=Severity.ERROR, location=location, message=message)
