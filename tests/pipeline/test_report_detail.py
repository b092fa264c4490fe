"""The report's drill-downs and units, from real worker rows of a few sample-fleet applications.

What a reader must be able to act on: money in each problem's currency (never summed across
currencies), time to the target in hours or minutes, restore volume, reductions as reductions,
skews without trailing zeros, unproven answers flagged, the configuration change with its own
cost when the run recorded it, moves grouped by rack and subtopology, and solution files that the
evaluator accepts (a consumer group's answer that withholds partitions only with its target).
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("matplotlib")

from optimizer import solve  # noqa: E402
from optimizer.catalogue import default_goals  # noqa: E402
from optimizer.evaluate import evaluate  # noqa: E402
from optimizer.model.problem import problem_from_data, solution_from_data  # noqa: E402
from optimizer.pipeline.schema import ASSIGNMENTS_SCHEMA, SUMMARY_SCHEMA  # noqa: E402
from optimizer.pipeline.worker import solve_document  # noqa: E402
from optimizer.report import format as fmt  # noqa: E402
from optimizer.report import write_report  # noqa: E402

FLEET = Path(__file__).resolve().parents[2] / "examples" / "fleet" / "fleet.jsonl.gz"
NAMES = ("fraud-app-143", "search-app-262", "identity-app-099", "ledger-group-134")
"""A Streams application with a configuration change and three probing rebalances, one priced in
EUR below, one with one probing rebalance, and a consumer group whose exact answer withholds
partitions (its target assigns them)."""
IN_EUROS = "search-app-262"
WITHHOLDS = "ledger-group-134"


@pytest.fixture(scope="module")
def documents() -> dict[str, dict]:
    found = {}
    with gzip.open(FLEET, "rt", encoding="utf-8") as lines:
        for line in lines:
            document = json.loads(line)
            if document.get("name") in NAMES:
                found[document["name"]] = document
    found[IN_EUROS].update(price_per_gb=0.01, currency="EUR")
    return found


@pytest.fixture(scope="module")
def worker_rows(documents) -> list[dict]:
    rows = []
    for name in NAMES:
        rows += solve_document(name, json.dumps(documents[name]), ["kafka", "exact"], time_limit=10)
    return rows


def _write(directory: Path, rows: list[dict], *, targets: dict | None = None, problems: dict | None = None) -> Path:
    summary = [{k: v for k, v in row.items() if k not in ("assignment", "target", "document")} for row in rows]
    for name, table in (("summary", pa.Table.from_pylist(summary, schema=SUMMARY_SCHEMA)),):
        (directory / name).mkdir(parents=True)
        pq.write_table(table, directory / name / "part-00000.parquet")
    copies = [{"problem": row["problem"], "solver": row["solver"], **copy} for row in rows for copy in row["assignment"]]
    (directory / "assignments").mkdir()
    pq.write_table(pa.Table.from_pylist(copies, schema=ASSIGNMENTS_SCHEMA), directory / "assignments" / "part-00000.parquet")
    if targets is not None:
        (directory / "targets").mkdir()
        pq.write_table(pa.Table.from_pylist(targets, schema=ASSIGNMENTS_SCHEMA), directory / "targets" / "part-00000.parquet")
    if problems is not None:
        (directory / "problems").mkdir()
        table = pa.Table.from_pylist([{"problem": name, "document": json.dumps(document)} for name, document in problems.items()])
        pq.write_table(table, directory / "problems" / "part-00000.parquet")
    return directory


def _section(text: str, ident: str) -> str:
    match = re.search(rf'<section id="{ident}">(.*?)</section>', text, re.DOTALL)
    assert match, f"no section {ident}"
    return match.group(1)


def _articles(text: str) -> dict[str, str]:
    found = re.findall(r'<article class="app" id="app-\d+" data-problem="([^"]*)">(.*?)</article>', text, re.DOTALL)
    return {html.unescape(name): body for name, body in found}


def _download(article: str) -> dict | None:
    match = re.search(r'href="data:application/json;base64,([A-Za-z0-9+/=]+)"', article)
    return json.loads(base64.b64decode(match.group(1))) if match else None


def test_figures_are_written_in_their_units():
    assert [fmt.skew(v) for v in (1.0, 0, 0.5, 1.8333, 12.0)] == ["1", "0", "0.5", "1.83", "12"]
    assert [fmt.duration(v) for v in (0, 30, 600, 3600, 28_800)] == ["none", "1 min", "10 min", "1.0 h", "8.0 h"]
    assert fmt.time_to_target(0, 1) == "at once" and fmt.time_to_target(0, 0) == "none" and fmt.time_to_target(600, 1) == "10 min"
    assert fmt.hours(141.73) == "141.7 h"
    assert [fmt.offsets(v) for v in (0, 999_999, 49_093_399)] == ["0", "999,999", "49.1 M"]
    assert fmt.reduction(675, "675", "fewer") == "675 fewer" and fmt.reduction(-3, "3", "fewer") == "3 more"
    assert fmt.share(675, 3065) == "22.0 % less" and fmt.share(-10, 100) == "10.0 % more" and fmt.share(5, 0) == "–"
    assert fmt.money(1234.5, "EUR") == "EUR 1,234.50 / month" and fmt.rate(1_500_000) == "1.5 MB/s"


def test_money_keeps_each_currency_and_time_is_in_hours(worker_rows, documents, tmp_path):
    problems = {name: problem_from_data(document, name) for name, document in documents.items()}
    text = write_report(_write(tmp_path / "out", worker_rows), tmp_path / "r.html", price_per_gb=0.02, problems=problems).read_text()
    decision = _section(text, "decision")
    # Two currencies: each summed apart, and the ranking in bytes, never in one currency for some.
    assert "EUR" in decision and "USD" in decision and "never converted" in decision
    assert 'data-unit="bytes"' in decision
    euros = _articles(text)[IN_EUROS]
    assert "EUR " in euros and "USD" not in euros.split("<h4>Routes")[0]
    # Time to the target, restore volume; reductions never carry a plus sign.
    assert re.search(r"time_headline.*follow-up rebalances.*(\d h|\d min).*changelog offsets", decision, re.DOTALL)
    for ident in ("decision", "totals", "savings", "applications"):
        assert not re.search(r">\+\d|\(\+\d| \+\d", _section(text, ident)), ident
    assert "fewer" in _section(text, "totals") or "no change" in _section(text, "totals")
    # Skews as numbers, not 1.000.
    assert not re.search(r"\d\.000\b", _section(text, "savings") + _section(text, "totals"))


def test_drill_downs_group_moves_by_rack_and_offer_valid_solution_files(worker_rows, documents, tmp_path):
    problems = {name: problem_from_data(document, name) for name, document in documents.items()}
    text = write_report(_write(tmp_path / "out", worker_rows), tmp_path / "r.html", price_per_gb=0.02, problems=problems).read_text()
    articles = _articles(text)
    assert set(articles) == set(NAMES)  # all four save something
    for name, article in articles.items():
        problem = problems[name]
        clients = problem.clients if problem.kind == "streams" else problem.members
        racks = {client.rack for client in clients}
        # Racks with their clients, and moves from rack to rack: no partition id list.
        for rack in racks:
            assert f'<tr data-rack="{rack}">' in article
        assert 'class="moves' in article, name  # each of them moves something now
        moves = re.findall(r"<tr><td>([^<]*)</td><td[^>]*>([^<]*)</td><td[^>]*>([^<]*)", article.split('class="moves')[1])
        assert moves, name
        for _, source, destination in moves:
            assert source in racks | {"(new)", "(unowned)", "(new copy)"} and destination.strip() in racks, (name, source, destination)
        assert "<h4>The plan:" in article
        document = _download(article)
        if name == WITHHOLDS:
            # Its answer now withholds partitions; without the target the file would be incomplete.
            assert document is None and 'data-field="unusable"' in article and "kafka-assign solve" in article
            continue
        assert document is not None, name
        verdict = evaluate(problem, solution_from_data(document))
        assert verdict.valid, (name, verdict.violations)


def test_a_targets_table_puts_the_target_in_the_solution_file(worker_rows, documents, tmp_path):
    problem = problem_from_data(documents[WITHHOLDS], WITHHOLDS)
    solution = solve(problem, solver="exact", goals=default_goals(problem), time_limit=10)
    assert solution.followup_rebalance and solution.target is not None
    targets = [
        {"problem": WITHHOLDS, "solver": "exact", "client": client, "task": partition, "role": "active"}
        for client, held in solution.target.items()
        for partition in held.active
    ]
    # The problems as the run's own table this time, not an argument.
    run = _write(tmp_path / "out", worker_rows, targets=targets, problems=documents)
    text = write_report(run, tmp_path / "r.html", price_per_gb=0.02).read_text()
    article = _articles(text)[WITHHOLDS]
    document = _download(article)
    assert document is not None and "target" in document
    assert evaluate(problem, solution_from_data(document)).valid
    assert "target (where its plan ends)" in article
    assert '<tr data-rack="' in article and "(no rack)" not in article


def test_unproven_answers_and_the_configuration_change_cost_are_shown(worker_rows, documents, tmp_path):
    rows = [dict(row) for row in worker_rows]
    exact = next(row for row in rows if row["problem"] == "identity-app-099" and row["solver"] == "exact")
    goals = json.loads(exact["goals"])
    goals[-1].update(status="time_limit", gap=0.5)
    exact.update(status="time_limit", goals=json.dumps(goals))
    kafka = next(row for row in rows if row["problem"] == "fraud-app-143" and row["solver"] == "kafka")
    assert kafka["config_change"] == "rack.aware.assignment.strategy=min_traffic"
    assert kafka["config_followup_rebalances"] is not None  # the worker records the change's cost
    for row in rows:  # as a run from before those columns
        row.update(dict.fromkeys(("config_followup_rebalances", "config_seconds_to_target", "config_restore_offsets", "config_moves")))
    text = write_report(_write(tmp_path / "out", rows), tmp_path / "r.html", price_per_gb=0.02).read_text()
    # Flagged in the ranking, in every table, and in its drill-down with why.
    ranked = re.search(r'<tr data-problem="identity-app-099">.*?</tr>', _section(text, "decision"), re.DOTALL).group(0)
    assert "not proven optimal" in ranked
    assert "not proven optimal" in re.search(r'<tr data-problem="identity-app-099">.*?</tr>', _section(text, "savings"), re.DOTALL).group(0)
    article = _articles(text)["identity-app-099"]
    assert 'data-field="unproven"' in article and f"{goals[-1]['name']}: time_limit (gap 0.5)" in article
    # Without the change's own plan in the summary its cost is said to be missing, not zero.
    config = _articles(text)["fraud-app-143"]
    assert "not in the pipeline's summary table" in config
    # With it (the columns a run may record), the route shows rounds, time and restore volume.
    changed = [row for row in rows if row["solver"] == "kafka" and row.get("config_change")]
    assert kafka in changed and len(changed) == 2
    for row in changed:
        row.update(config_followup_rebalances=8, config_seconds_to_target=4800.0, config_restore_offsets=57_500_000, config_moves=40)
    frame = [{k: v for k, v in row.items() if k not in ("assignment", "target", "document")} for row in rows]
    schema = SUMMARY_SCHEMA
    recorded = {
        "config_followup_rebalances": pa.int64(),
        "config_seconds_to_target": pa.float64(),
        "config_restore_offsets": pa.int64(),
        "config_moves": pa.int64(),
    }
    for name, type_ in recorded.items():
        if name not in schema.names:
            schema = schema.append(pa.field(name, type_))
    run = tmp_path / "with-cost"
    _write(run, rows)
    pq.write_table(pa.Table.from_pylist(frame, schema=schema), run / "summary" / "part-00000.parquet")
    text = write_report(run, tmp_path / "cost.html", price_per_gb=0.02).read_text()
    route = re.search(r'<tr data-route="1">.*?</tr>', _articles(text)["fraud-app-143"], re.DOTALL).group(0)
    assert 'data-value="8" data-field="rounds">8<' in route
    assert ">1.3 h<" in route and ">57.5 M<" in route and 'data-value="40" data-field="moves"' in route
    assert "costs 16 probing rebalances, 2.7 h summed and 115.0 M changelog offsets restored" in _section(text, "decision")
