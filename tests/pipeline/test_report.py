"""The fleet HTML report, rendered from real worker rows (no Spark: rows come from solve_document).

Figures are checked against sums computed here from the rows, independently of
optimizer.report.totals, and read back out of the HTML through the report's data-field cells.
"""

from __future__ import annotations

import base64
import html
import json
import re
import statistics
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("matplotlib")

from optimizer.errors import InvalidInputError  # noqa: E402
from optimizer.generate import random_consumer_problem, random_streams_problem  # noqa: E402
from optimizer.model.problem import problem_to_data  # noqa: E402
from optimizer.pipeline.schema import PLUGINS_SCHEMA, SUMMARY_SCHEMA  # noqa: E402
from optimizer.pipeline.worker import solve_document  # noqa: E402
from optimizer.report import fleet_totals, write_report  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
HOSTILE_NAME = '<b>x</b> & "q"'
"""A problem name with markup in it: the report must show it as text."""
BAD_DOCUMENT = '{"kind": "streams", "name": "bad", "clients": 3}'


def _fleet_rows() -> list[dict]:
    rows: list[dict] = []
    problems = [random_streams_problem(seed, tasks=10, clients=4, standby_replicas=1) for seed in range(1, 5)]
    problems += [random_consumer_problem(seed, members=4, topics=3) for seed in range(1, 3)]
    for index, problem in enumerate(problems):
        # One problem also runs an unknown solver: an `error` row, and a third solver name.
        solvers = ["kafka", "exact", "bogus"] if index == 0 else ["kafka", "exact"]
        rows += solve_document(problem.name, json.dumps(problem_to_data(problem)), solvers)
    rows += solve_document("bad", BAD_DOCUMENT, ["kafka", "exact"])
    rows += solve_document(HOSTILE_NAME, json.dumps({"kind": "consumer", "name": HOSTILE_NAME}), ["kafka", "exact"])
    for row in rows:
        row.pop("assignment")
    return rows


def _write_run(directory: Path, rows: list[dict], plugins: bool = True) -> Path:
    (directory / "summary").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=SUMMARY_SCHEMA), directory / "summary" / "part-00000.parquet")
    if plugins:
        (directory / "plugins").mkdir()
        table = pa.Table.from_pylist([{"name": "builtin", "version": "0.1.0"}], schema=PLUGINS_SCHEMA)
        pq.write_table(table, directory / "plugins" / "part-00000.parquet")
    return directory


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return _fleet_rows()


@pytest.fixture(scope="module")
def report(rows, tmp_path_factory) -> tuple[Path, Path, str]:
    """(input dir, report path, report text) of the whole fleet."""
    base = tmp_path_factory.mktemp("fleet")
    run = _write_run(base / "out", rows)
    written = write_report(run, base / "report.html")
    return run, written, written.read_text(encoding="utf-8")


def _section(text: str, ident: str) -> str:
    match = re.search(rf'<section id="{ident}">(.*?)</section>', text, re.DOTALL)
    assert match, f"no section {ident}"
    return match.group(1)


def _number(cell: str) -> float:
    return float(cell.replace(",", "").rstrip("%"))


def _solver_cells(text: str) -> dict[tuple[str, str], str]:
    """(solver, field) -> the figure a totals cell holds (data-value: unformatted; empty for none)."""
    found = re.findall(r'<td class="num" data-solver="([^"]+)" data-field="([^"]+)" data-value="([^"]*)">', text)
    return {(solver, field): value for solver, field, value in found}


def _field_cells(text: str) -> dict[str, str]:
    """field -> the figure a cell holds (its data-value)."""
    return {field: value for value, field in re.findall(r'<td class="num" data-value="([^"]*)" data-field="([^"]+)">', text)}


def _solved(row: dict) -> bool:
    return row["error"] is None


def _pairs(rows: list[dict], reference: str = "exact") -> list[tuple[dict, dict]]:
    by_key = {(row["problem"], row["solver"]): row for row in rows}
    pairs = []
    for problem in sorted({row["problem"] for row in rows}):
        kafka, other = by_key.get((problem, "kafka")), by_key.get((problem, reference))
        if kafka and other and _solved(kafka) and _solved(other):
            pairs.append((kafka, other))
    return pairs


def test_the_fixture_has_what_the_report_must_show(rows):
    statuses = {(row["problem"], row["solver"]): row["status"] for row in rows}
    assert statuses[("bad", "kafka")] == "invalid"
    assert statuses[("streams-1", "bogus")] == "error"
    assert sum(1 for row in rows if _solved(row)) == 12  # 6 problems × kafka, exact


def test_report_is_one_offline_file_with_its_sections_and_three_pngs(report):
    _, written, text = report
    assert written.is_file() and written.name == "report.html"
    for ident in ("decision", "savings", "totals", "unproven", "failures", "plots", "applications", "run"):
        assert f'<section id="{ident}">' in text
    for heading in ("Where to start", "Every compared application", "Fleet totals", "Problems not solved", "Applications in detail"):
        assert f"<h2>{heading}</h2>" in text
    # Nothing fetched when opened: one inline script (the tables' sorting), no external resource.
    for fetch in ("http://", "https://", "<script src", "<link", "url("):
        assert fetch not in text
    assert text.count("<script>") == 1
    images = re.findall(r"<img [^>]*>", text)
    assert len(images) == 3
    assert text.count('<img src="data:image/png;base64,') == 3
    for image in images:
        encoded = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', image).group(1)
        png = base64.b64decode(encoded, validate=True)
        assert png.startswith(PNG_SIGNATURE)
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        assert width > 100 and height > 100
        alt = re.search(r'alt="([^"]*)"', image).group(1)
        assert len(alt) > 20


def test_header_names_the_input_the_plugins_and_the_problem_count(report, rows):
    run, _, text = report
    header = text[: text.index('<section id="decision">')]
    assert html.escape(str(run)) in header
    # The plugins table is a detail of the run: at the end, not at the top.
    assert "<td>builtin</td><td>0.1.0</td>" in _section(text, "run") and "builtin" not in header
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", header)
    assert f'<span data-field="problems">{len({row["problem"] for row in rows})}</span>' in header
    assert '<span data-field="problems">8</span>' in header


def test_totals_equal_sums_over_the_rows(report, rows):
    cells = _solver_cells(_section(report[2], "totals"))
    totals = fleet_totals(rows)
    assert totals["solvers"] == ["kafka", "exact", "bogus"]
    for solver in ("kafka", "exact", "bogus"):
        mine = [row for row in rows if row["solver"] == solver]
        solved = [row for row in mine if _solved(row)]
        streams_skews = [row["load_skew"] for row in solved if row["kind"] == "streams"]
        consumer_skews = [row["load_skew"] for row in solved if row["kind"] == "consumer"]
        seconds = [row["seconds"] for row in mine if row["seconds"] is not None]
        expected = {
            "problems": len(mine),
            "solved": len(solved),
            "invalid": sum(row["status"] == "invalid" for row in mine),
            "errors": sum(row["status"] == "error" for row in mine),
            "cross_rack_partitions": sum(row["cross_rack_partitions"] for row in solved),
            "moves": sum(row["moves"] for row in solved),
            "warmups": sum(row["warmups"] or 0 for row in solved),
            # one mean per unit: tasks per thread, partitions per member
            "streams_skew_mean": sum(streams_skews) / len(streams_skews) if streams_skews else None,
            "consumer_skew_mean": sum(consumer_skews) / len(consumer_skews) if consumer_skews else None,
            "seconds_total": sum(seconds),
            "seconds_median": statistics.median(seconds) if seconds else None,
        }
        got = totals["per_solver"][solver]
        for field, value in expected.items():
            if value is None:
                assert got[field] is None and cells[(solver, field)] == "", (solver, field)
            elif isinstance(value, int):
                assert got[field] == value, (solver, field)
                assert _number(cells[(solver, field)]) == value, (solver, field)
            else:
                assert got[field] == pytest.approx(value), (solver, field)
                assert _number(cells[(solver, field)]) == pytest.approx(value), (solver, field)
    # Known counts of the fixture, in case both sides above agree on something wrong.
    assert totals["per_solver"]["kafka"]["solved"] == 6
    assert totals["per_solver"]["kafka"]["invalid"] == 2
    assert totals["per_solver"]["bogus"]["errors"] == 1
    assert totals["per_solver"]["exact"]["cross_rack_partitions"] > 0


def test_kafka_against_exact_counts_only_problems_both_solved(report, rows):
    cells = _field_cells(_section(report[2], "totals"))
    pairs = _pairs(rows)
    assert len(pairs) == 6
    kafka = sum(k["cross_rack_partitions"] for k, _ in pairs)
    exact = sum(e["cross_rack_partitions"] for _, e in pairs)
    expected = {
        "baseline_cross_rack": kafka,
        "reference_cross_rack": exact,
        "saved": kafka - exact,
        "baseline_moves": sum(k["moves"] for k, _ in pairs),
        "reference_moves": sum(e["moves"] for _, e in pairs),
        "moves_difference": sum(e["moves"] - k["moves"] for k, e in pairs),
        "moves_saved": sum(k["moves"] - e["moves"] for k, e in pairs),
        "better": sum(e["cross_rack_partitions"] < k["cross_rack_partitions"] for k, e in pairs),
        "equal": sum(e["cross_rack_partitions"] == k["cross_rack_partitions"] for k, e in pairs),
        "worse": sum(e["cross_rack_partitions"] > k["cross_rack_partitions"] for k, e in pairs),
    }
    comparison = fleet_totals(rows)["comparison"]
    assert comparison["reference"] == "exact" and comparison["problems"] == 6
    for field, value in expected.items():
        if field in comparison:
            assert comparison[field] == value, field
        if field in cells:
            assert _number(cells[field]) == value, field
    assert "moves_difference" not in cells and _number(cells["moves_saved"]) == -comparison["moves_difference"]
    assert comparison["better"] + comparison["equal"] + comparison["worse"] == 6
    assert _number(cells["saved_percent"]) == pytest.approx(100 * (kafka - exact) / kafka, abs=0.05)
    assert '<span data-field="compared">6</span>' in report[2]


def test_every_compared_application_is_listed_in_the_ranking_order(report, rows):
    """One ranking in the whole report: the decision table's unit (here cross-rack partitions at
    the targets: no throughputs), largest saving first, then those that save nothing, by name."""
    section = _section(report[2], "savings")
    pairs = _pairs(rows)
    ranked = sorted(
        (
            (k["target_cross_rack_partitions"] - e["target_cross_rack_partitions"], k["problem"], k, e)
            for k, e in pairs
            if k["target_cross_rack_partitions"] > e["target_cross_rack_partitions"]
        ),
        key=lambda item: (-item[0], item[1]),
    )
    rest = sorted((k["problem"], k, e) for k, e in pairs if k["target_cross_rack_partitions"] <= e["target_cross_rack_partitions"])
    expected = [(name, k, e) for _, name, k, e in ranked] + rest
    listed = re.findall(r'<tr data-problem="([^"]*)">(.*?)</tr>', section, re.DOTALL)
    assert [html.unescape(name) for name, _ in listed] == [name for name, _, _ in expected]
    assert 'class="savings sortable wide"' in section
    for (_, cells), (_, kafka, exact) in zip(listed, expected, strict=True):
        fields = {field: value for value, field in re.findall(r'data-value="([^"]*)" data-field="([^"]+)"', cells)}
        assert _number(fields["target_cross_rack"]) == kafka["target_cross_rack_partitions"] - exact["target_cross_rack_partitions"]
        assert _number(fields["cross_rack"]) == kafka["cross_rack_partitions"] - exact["cross_rack_partitions"]
        assert _number(fields["moves"]) == kafka["moves"] - exact["moves"]
        assert _number(fields["size"]) == exact["tasks"] * exact["clients"]
        assert f"{kafka['target_cross_rack_partitions']:,} → {exact['target_cross_rack_partitions']:,}</td>" in cells


def test_failures_show_every_unsolved_problem_once_with_its_solvers_and_full_reason(report, rows):
    text = report[2]
    section = _section(text, "failures")
    failed = [row for row in rows if not _solved(row)]
    assert len(failed) == 5  # bad × 2, hostile name × 2, streams-1 × bogus
    # An invalid document is one failure, whatever the solvers: one line naming them all.
    listed = re.findall(r'<tr data-problem="([^"]*)">(.*?)</tr>', section, re.DOTALL)
    assert sorted(html.unescape(name) for name, _ in listed) == sorted(["bad", HOSTILE_NAME, "streams-1"])
    solvers = {html.unescape(name): re.search(r'data-field="solvers">([^<]*)<', cells).group(1) for name, cells in listed}
    assert solvers == {"bad": "exact, kafka", HOSTILE_NAME: "exact, kafka", "streams-1": "bogus"}
    for row in failed:
        assert f"<pre>{html.escape(row['error'])}</pre>" in section
    assert "<td>bad</td>" in section and "clients: Input should be a valid tuple" in section
    assert "unknown solver &#x27;bogus&#x27;" in section
    assert "2 invalid documents" in section and "1 row where" in section
    # Markup from a document's name is shown, never interpreted.
    assert HOSTILE_NAME not in text and "<b>" not in text
    assert html.escape(HOSTILE_NAME) in section


def test_no_failures_says_none(rows, tmp_path):
    solved = [row for row in rows if _solved(row)]
    text = write_report(_write_run(tmp_path / "out", solved), tmp_path / "report.html").read_text()
    assert '<p class="none">none' in _section(text, "failures")


def test_only_exact_skips_the_comparison_and_says_why(rows, tmp_path):
    only_exact = [row for row in rows if row["solver"] == "exact"]
    written = write_report(_write_run(tmp_path / "out", only_exact, plugins=False), tmp_path)
    assert written == tmp_path / "report.html"  # an output directory gets report.html
    text = written.read_text()
    totals = fleet_totals(only_exact)
    assert totals["comparison"] is None and "kafka" in totals["comparison_skipped"]
    assert 'data-field="comparison_skipped"' in _section(text, "totals")
    assert 'data-field="saved"' not in text
    assert "No savings to list" in _section(text, "savings")
    assert "No plugins table" in text
    assert text.count('<img src="data:image/png;base64,') == 3


def test_only_kafka_skips_the_comparison(rows):
    totals = fleet_totals([row for row in rows if row["solver"] == "kafka"])
    assert totals["comparison"] is None and "No exact solver" in totals["comparison_skipped"]


def test_other_exact_solvers_stand_in_for_exact(rows, tmp_path):
    as_milp = [row | {"solver": "milp"} if row["solver"] == "exact" else row for row in rows]
    comparison = fleet_totals(as_milp)["comparison"]
    assert comparison["reference"] == "milp"
    assert comparison["saved"] == fleet_totals(rows)["comparison"]["saved"]
    text = write_report(_write_run(tmp_path / "out", as_milp), tmp_path / "r.html").read_text()
    assert "<th>cross-rack partitions applied now, milp</th>" in text
    assert "<th>cross-rack partitions at the target, milp</th>" in text
    # With exact present too, exact is the reference whatever milp says.
    milp = [row | {"cross_rack_partitions": 10_000} for row in as_milp if row["solver"] == "milp" and _solved(row)]
    both = rows + milp
    assert fleet_totals(both)["comparison"]["reference"] == "exact"
    assert fleet_totals(both)["solvers"] == ["kafka", "exact", "milp", "bogus"]


def test_fleet_totals_takes_a_table_or_rows(rows):
    table = pa.Table.from_pylist(rows, schema=SUMMARY_SCHEMA)
    assert fleet_totals(table) == fleet_totals(rows)


def test_the_ranking_is_capped_at_twenty_and_every_application_listed(tmp_path):
    def row(problem: str, solver: str, cross_rack: int) -> dict:
        values = dict.fromkeys(SUMMARY_SCHEMA.names)
        values.update(
            problem=problem, kind="streams", solver=solver, status="optimal", tasks=5, clients=2, seconds=0.01,
            cross_rack_partitions=cross_rack, moves=1, load_skew=0.0, warmups=0,
            rack_traffic=json.dumps({"rack-a": cross_rack}),
        )  # fmt: skip
        return values

    rows = [r for i in range(25) for r in (row(f"app-{i:02}", "kafka", 30), row(f"app-{i:02}", "exact", 30 - i))]
    text = write_report(_write_run(tmp_path / "out", rows), tmp_path / "r.html").read_text()
    ranked = re.findall(r'<tr data-problem="([^"]*)">', _section(text, "decision"))
    assert ranked == [f"app-{i:02}" for i in range(24, 4, -1)]  # the 20 that save the most
    listed = re.findall(r'<tr data-problem="([^"]*)">', _section(text, "savings"))
    assert listed == [f"app-{i:02}" for i in range(24, 0, -1)] + ["app-00"]  # all of them, app-00 saves nothing
    details = re.findall(r'<article class="app" id="(app-\d+)" data-problem="([^"]*)">', _section(text, "applications"))
    assert details == [(f"app-{rank}", f"app-{i:02}") for rank, i in enumerate(range(24, 4, -1), 1)]
    cells = _field_cells(_section(text, "totals"))
    assert _number(cells["saved"]) == sum(range(25))
    assert _number(cells["better"]) == 24 and _number(cells["equal"]) == 1


def test_missing_input_dir_is_an_input_error_naming_it(tmp_path):
    missing = tmp_path / "no-such-run"
    with pytest.raises(InvalidInputError) as caught:
        write_report(missing, tmp_path / "report.html")
    assert caught.value.source == str(missing)
    assert str(missing) in str(caught.value) and "no such directory" in str(caught.value)
    assert not (tmp_path / "report.html").exists()


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ("empty", "directory is empty"),
        ("no-summary", "no summary table"),
        ("summary-without-parquet", "holds no .parquet files"),
        ("not-parquet", "not a readable Parquet table"),
        ("wrong-columns", "missing column 'solver'"),
        ("no-rows", "has no rows"),
    ],
)
def test_unusable_input_dirs_are_input_errors(tmp_path, layout, message):
    run = tmp_path / "run"
    run.mkdir()
    summary = run / "summary"
    if layout == "no-summary":
        (run / "plugins").mkdir()
    elif layout == "summary-without-parquet":
        summary.mkdir()
        (summary / "_SUCCESS").write_text("")
    elif layout == "not-parquet":
        summary.mkdir()
        (summary / "part-00000.parquet").write_text("not parquet")
    elif layout == "wrong-columns":
        summary.mkdir()
        pq.write_table(pa.table({"problem": ["a"]}), summary / "part-00000.parquet")
    elif layout == "no-rows":
        summary.mkdir()
        pq.write_table(SUMMARY_SCHEMA.empty_table(), summary / "part-00000.parquet")
    with pytest.raises(InvalidInputError) as caught:
        write_report(run, tmp_path / "report.html")
    assert str(run) in str(caught.value)
    assert message in str(caught.value)


def test_two_runs_in_one_directory_are_an_input_error(rows, tmp_path):
    run = _write_run(tmp_path / "run", rows + rows[:2])
    with pytest.raises(InvalidInputError) as caught:
        write_report(run, tmp_path / "report.html")
    first = rows[0]
    assert f"problem {first['problem']!r} has more than one row for solver {first['solver']!r}" in str(caught.value)
    assert not (tmp_path / "report.html").exists()


def test_protocol_table_has_a_column_per_protocol_on_problems_all_solved():
    from optimizer.report.totals import protocol_totals

    def row(problem, kind, solver, cross, moves=0, skew=0.0, error=None):
        return {"problem": problem, "kind": kind, "solver": solver, "status": "heuristic", "error": error,
                "cross_rack_partitions": cross, "moves": moves, "load_skew": skew}

    rows = [
        row("a", "streams", "kafka", 4), row("a", "streams", "kafka:new", 9, 1), row("a", "streams", "exact", 1, 3),
        row("b", "streams", "kafka", 2), row("b", "streams", "kafka:new", 2), row("b", "streams", "exact", None, error="time"),
        row("g", "consumer", "kafka", 3, skew=1.0), row("g", "consumer", "kafka:new", 0), row("g", "consumer", "exact", 0),
    ]
    totals = protocol_totals(rows)
    assert totals["streams"] == {  # b is left out: exact has no assignment for it
        "problems": 1,
        "columns": {
            "kafka": {"cross_rack_partitions": 4, "moves": 0, "load_skew_mean": 0.0},
            "kafka:new": {"cross_rack_partitions": 9, "moves": 1, "load_skew_mean": 0.0},
            "exact": {"cross_rack_partitions": 1, "moves": 3, "load_skew_mean": 0.0},
        },
    }
    assert totals["consumer"]["columns"]["kafka"]["load_skew_mean"] == 1.0
    assert protocol_totals([r for r in rows if r["solver"] != "kafka:new"]) == {}


@pytest.fixture(scope="module")
def money_report(tmp_path_factory):
    """A fleet with throughputs: Streams applications (one using no rack-aware strategy) and
    groups, the report priced at 0.02 per GB where a problem gives no price of its own."""
    rows: list[dict] = []
    problems = [random_streams_problem(seed, tasks=12, clients=4, rates=True, strategy="none" if seed == 1 else "min_traffic") for seed in range(1, 4)]
    problems += [random_consumer_problem(seed, members=4, topics=3, rates=True) for seed in range(1, 3)]
    for problem in problems:
        rows += solve_document(problem.name, json.dumps(problem_to_data(problem)), ["kafka", "exact"])
    base = tmp_path_factory.mktemp("money")
    run = _write_run(base / "out", [{k: v for k, v in row.items() if k != "assignment"} for row in rows])
    assignments = [
        {"problem": row["problem"], "solver": row["solver"], **copy} for row in rows for copy in row["assignment"]
    ]
    (run / "assignments").mkdir()
    pq.write_table(pa.Table.from_pylist(assignments), run / "assignments" / "part-00000.parquet")
    written = write_report(run, base / "report.html", price_per_gb=0.02)
    return [{k: v for k, v in row.items() if k != "assignment"} for row in rows], written.read_text(encoding="utf-8")


def test_the_report_ranks_applications_by_money_saved(money_report):
    rows, text = money_report
    decision = _section(text, "decision")
    totals = fleet_totals(rows, 0.02)
    entries = [entry for entry in totals["compared"] if entry["money_saving"] and entry["money_saving"] > 0]
    assert entries, "the fixture must save something"
    # Money per entry: the saved bytes per second over a month of 730 h, at 0.02 per 10^9 bytes.
    for entry in entries:
        assert entry["money_saving"] == pytest.approx(entry["bytes_saving"] * 730 * 3600 / 1e9 * 0.02)
    ranked = re.findall(r'<tr data-problem="([^"]+)"><td class="num" data-value="(\d+)"', decision)
    expected = sorted(entries, key=lambda entry: (-entry["money_saving"], entry["problem"]))
    assert [html.unescape(name) for name, _ in ranked] == [entry["problem"] for entry in expected]
    assert 'data-unit="money"' in decision and "/ month" in decision
    assert totals["money"]["money_saved"] == pytest.approx(sum(entry["money_saving"] for entry in entries))


def test_the_zone_matrix_adds_up_to_the_cross_zone_bytes(money_report):
    rows, text = money_report
    totals = fleet_totals(rows, 0.02)
    zones = totals["money"]["zones"]
    for solver, key in (("kafka", "baseline_bytes"), ("exact", "reference_bytes")):
        cells = sum(value for row in zones[solver].values() for value in row.values())
        assert cells == pytest.approx(totals["money"][key])
    decision = _section(text, "decision")
    assert 'class="zones"' in decision and 'data-reader="rack-a"' in decision
    assert 'id="plot-pareto"' in decision


def test_without_throughputs_the_report_says_it_counts_partitions(report):
    decision = _section(report[2], "decision")
    assert 'data-field="units"' in decision and "partitions read across racks, not bytes or money" in decision
    assert 'class="zones"' not in decision


def test_exact_rows_not_proven_are_listed_with_the_stages_that_are_not(rows, tmp_path):
    """A stage cut by the time limit, and an exact row that fell back to Kafka's answer: both have
    an assignment, both are flagged with why; proven rows and Kafka's own rows are not."""
    solved = [dict(row) for row in rows if _solved(row)]
    exact = [row for row in solved if row["solver"] == "exact"]
    cut, fallback = exact[0], exact[1]
    goals = json.loads(cut["goals"])
    goals[-1].update(status="time_limit", gap=0.25)
    cut.update(status="time_limit", goals=json.dumps(goals))
    fallback.update(status="heuristic", goals=json.dumps([dict(g, status="heuristic") for g in json.loads(fallback["goals"])]))
    text = write_report(_write_run(tmp_path / "out", solved), tmp_path / "report.html").read_text()
    section = _section(text, "unproven")
    assert section.count("<tr data-problem=") == 2
    assert f"{goals[-1]['name']}: time_limit (gap 0.25)" in section
    assert "Kafka&#x27;s assignment (the exact engine found none in time)" in section
    proven = write_report(_write_run(tmp_path / "proven", [row for row in solved if row not in (cut, fallback)]), tmp_path / "p.html").read_text()
    assert '<p class="none">none' in _section(proven, "unproven")
