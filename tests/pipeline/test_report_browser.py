"""The fleet report in a real browser: Debian's Chromium, headless, driven by Playwright.

A small real pipeline run (the local runner, Kafka's assignor and the exact one, on a few of the
sample fleet's applications and its two broken documents, one application priced in EUR) gives
the report; Chromium opens it at 1,280 px and checks what a reader meets: nothing wider than the
page or its column (on screen and in print), sorting by a header, the drill-down links, and each
drill-down's solution file, downloaded and checked by the evaluator against its problem.

Screenshots (PNG), the printed PDF and the downloaded solution files are kept in
$KAO_TEST_ARTIFACTS/report-browser, by default out/test-artifacts/report-browser (CI keeps files);
the test prints where.

Never skipped: without Chromium or Playwright it fails saying how to get them (`./run tests`
installs Chromium with apt-get).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from optimizer.evaluate import evaluate
from optimizer.model.problem import problem_from_data, solution_from_data
from optimizer.pipeline.run import run_pipeline
from optimizer.report import write_report

ROOT = Path(__file__).resolve().parents[2]
FLEET = ROOT / "examples" / "fleet" / "fleet.jsonl.gz"
ARTIFACTS = ROOT / "out" / "test-artifacts"
"""Where screenshots go unless KAO_TEST_ARTIFACTS says otherwise (out/ is not versioned)."""
PICKED = ("fraud-app-143", "search-app-262", "identity-app-099", "shipping-group-025", "payments-app-180", "broken-app-0", "broken-group-1")
"""Applications of the sample fleet that save something (one with a configuration change, one
consumer group, one with many probing rebalances) and its two invalid documents."""
IN_EUROS = "search-app-262"
WIDTH = 1280
PRINTED = 718
"""A4's width at 96 px per inch (794) less Chromium's default print margins (0.4 in each side)."""
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

OVERFLOW = """
() => {
  // Elements whose box ends right of their parent's (beyond a pixel of rounding), where the
  // parent does not scroll or clip: what a reader sees cut off or spilling over the column.
  const found = [];
  for (const element of document.querySelectorAll("body *")) {
    const parent = element.parentElement;
    if (!parent || element.getClientRects().length === 0) continue;
    const style = getComputedStyle(parent);
    if (style.overflowX !== "visible") continue;
    const mine = element.getBoundingClientRect(), theirs = parent.getBoundingClientRect();
    if (mine.right > theirs.right + 1 || mine.left < theirs.left - 1) {
      const where = (box) => `${Math.round(box.left)}-${Math.round(box.right)}`;
      found.push(`${element.tagName.toLowerCase()}.${element.className} in ${parent.tagName.toLowerCase()}: ${where(mine)} outside ${where(theirs)}`);
    }
  }
  return found.slice(0, 20);
}
"""


def _chromium() -> str:
    path = os.environ.get("KAO_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("Chromium is not installed: `./run tests` installs it (apt-get install chromium), or set KAO_CHROMIUM to its path")
    return path


@pytest.fixture(scope="module")
def artifacts() -> Path:
    directory = Path(os.environ.get("KAO_TEST_ARTIFACTS") or ARTIFACTS) / "report-browser"
    shutil.rmtree(directory, ignore_errors=True)  # this run's files only
    directory.mkdir(parents=True, exist_ok=True)
    print(f"\nreport browser test artifacts: {directory}")
    return directory


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> dict[str, Any]:
    """The run: its input file, output directory, report, and the problems by name."""
    base = tmp_path_factory.mktemp("browser-fleet")
    lines = {}
    with gzip.open(FLEET, "rt", encoding="utf-8") as source:
        for line in source:
            document = json.loads(line)
            if document.get("name") in PICKED:
                if document["name"] == IN_EUROS:
                    document.update(price_per_gb=0.01, currency="EUR")
                lines[document["name"]] = json.dumps(document)
    assert set(lines) == set(PICKED)
    fleet_input = base / "fleet.jsonl"
    fleet_input.write_text("".join(lines[name] + "\n" for name in PICKED), encoding="utf-8")
    output = base / "out"
    run_pipeline(fleet_input, output, solvers=["kafka", "exact"], runner="local", time_limit=10)
    report = write_report(output, base / "report.html", price_per_gb=0.02, currency="USD", problems=fleet_input)
    problems = {name: problem_from_data(json.loads(lines[name]), name) for name in PICKED if not name.startswith("broken")}
    return {"input": fleet_input, "output": output, "report": report, "problems": problems}


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright is not installed: it is in the test extra (pip install -e '.[test]')")
    executable = _chromium()
    profile = tempfile.mkdtemp(prefix="kao-chromium-")
    manager = sync_playwright().start()
    context = None
    try:
        context = manager.chromium.launch_persistent_context(
            profile,
            executable_path=executable,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": WIDTH, "height": 900},
            accept_downloads=True,
        )
        yield context
    finally:
        if context is not None:
            context.close()
        manager.stop()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture()
def page(browser, fleet):
    """The report opened, with every request that is not the file itself or a data: URI recorded."""
    opened = browser.new_page()
    fetched: list[str] = []
    errors: list[str] = []
    opened.on("request", lambda request: None if request.url.startswith(("file://", "data:")) else fetched.append(request.url))
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.goto(fleet["report"].as_uri())
    try:
        yield opened
    finally:
        opened.close()
    assert not fetched, f"the report fetched {fetched}: it must work offline"
    assert not errors, f"script errors: {errors}"


def test_the_report_fits_1280_pixels_on_screen_and_in_print(page, artifacts):
    assert page.evaluate("window.innerWidth") == WIDTH
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    assert page.evaluate("document.body.scrollWidth") <= WIDTH
    assert page.evaluate(OVERFLOW) == []
    page.screenshot(path=str(artifacts / "report-top.png"))
    page.screenshot(path=str(artifacts / "report-full.png"), full_page=True)
    for section in ("decision", "savings", "totals", "failures", "applications"):
        page.locator(f"#{section}").screenshot(path=str(artifacts / f"section-{section}.png"))
    # Printed (A4, Chromium's print layout): nothing spills out of its column either.
    page.emulate_media(media="print")
    page.set_viewport_size({"width": PRINTED, "height": 1123})
    assert page.evaluate("document.documentElement.scrollWidth") <= PRINTED
    assert page.evaluate(OVERFLOW) == []
    assert page.locator("nav").first.is_hidden()
    page.pdf(path=str(artifacts / "report.pdf"), format="A4")
    assert (artifacts / "report.pdf").stat().st_size > 10_000


def _column(page, table: str, index: int, attribute: str | None = None) -> list[str]:
    cells = page.locator(f"{table} tbody tr td:nth-child({index + 1})")
    if attribute:
        return [cells.nth(i).get_attribute(attribute) or "" for i in range(cells.count())]
    return [text.strip() for text in cells.all_inner_texts()]


def test_clicking_a_header_sorts_its_table(page, fleet):
    table = "table.savings"
    headers = page.locator(f"{table} thead th")
    names = [headers.nth(i).inner_text() for i in range(headers.count())]
    name_column = next(i for i, text in enumerate(names) if text.startswith("application"))
    size_column = next(i for i, text in enumerate(names) if text.startswith("size"))
    before = _column(page, table, name_column)
    assert len(before) == 5  # the five valid applications, compared
    assert before != sorted(before)  # ranked by saving, not by name: the click must change it
    headers.nth(name_column).click()
    assert _column(page, table, name_column) == sorted(before)
    assert headers.nth(name_column).get_attribute("aria-sort") == "ascending"
    headers.nth(name_column).click()
    assert _column(page, table, name_column) == sorted(before, reverse=True)
    # A column of figures sorts by number (data-value), not by its text.
    headers.nth(size_column).click()
    sizes = [int(value) for value in _column(page, table, size_column, "data-value")]
    assert sizes == sorted(sizes) and len(set(sizes)) > 1
    expected = {name: len(problem.tasks) * len(problem.clients) if problem.kind == "streams" else None for name, problem in fleet["problems"].items()}
    for name, size in zip(_column(page, table, name_column), sizes, strict=True):
        if expected[name] is not None:
            assert size == expected[name], name


def test_drill_down_links_lead_to_their_application(page, artifacts):
    anchors = page.locator("a[href^='#']")
    targets = {anchors.nth(i).get_attribute("href") for i in range(anchors.count())}
    assert targets, "no in-page links"
    for target in targets:
        assert page.locator(target).count() == 1, f"link {target} leads nowhere"
    ranked = page.locator("table.decision tbody tr")
    assert ranked.count() >= 3
    for index in range(ranked.count()):
        row = ranked.nth(index)
        name = row.get_attribute("data-problem")
        link = row.locator("td.name a")
        link.click()
        anchor = link.get_attribute("href")
        assert page.evaluate("location.hash") == anchor
        article = page.locator(f"article{anchor}")
        assert article.get_attribute("data-problem") == name
        top = article.evaluate("element => element.getBoundingClientRect().top")
        assert -2 <= top < 50, f"{name}: the drill-down is not scrolled to ({top})"
        article.screenshot(path=str(artifacts / f"drill-down-{index + 1}.png"))
        for heading in ("Routes to a lower traffic", "Racks and their clients", "What moves where", "The plan", "Take it away"):
            assert article.get_by_text(heading).count() >= 1, (name, heading)


def test_each_drill_down_offers_its_solution_file_valid_for_its_problem(page, fleet, artifacts):
    downloads = page.locator("a.download")
    assert downloads.count() >= 3
    checked = []
    for index in range(downloads.count()):
        link = downloads.nth(index)
        name = link.get_attribute("data-problem")
        with page.expect_download() as caught:
            link.click()
        download = caught.value
        assert download.suggested_filename == f"{name}.solution.json"
        saved = artifacts / download.suggested_filename
        download.save_as(str(saved))
        data = json.loads(saved.read_text(encoding="utf-8"))
        assert data["format"] == "kafka-assignment-solution/v1" and data["problem"] == name
        solution = solution_from_data(data, str(saved))
        problem = fleet["problems"][name]
        verdict = evaluate(problem, solution)
        assert verdict.valid, (name, verdict.violations)
        assert solution.solver is not None and solution.solver.name == "exact"
        checked.append(name)
    assert set(checked) <= set(fleet["problems"]) and len(checked) == len(set(checked))


def test_what_the_reader_is_told(page, fleet):
    """Money with its currency (EUR apart from USD), hours to the target, invalid documents once
    with every solver, and moves grouped by rack, not listed partition by partition."""
    decision = page.locator("#decision").inner_text()
    assert "EUR" in decision and "USD" in decision and "/ month" in decision
    assert "probing rebalance" in decision and (" h " in decision or " min" in decision)
    failures = page.locator("#failures tbody tr")
    assert failures.count() == 2
    assert {failures.nth(i).get_attribute("data-problem") for i in range(2)} == {"broken-app-0", "broken-group-1"}
    for i in range(2):
        assert failures.nth(i).locator("td[data-field=solvers]").inner_text() == "exact, kafka"
    moves = page.locator("article.app table.moves tbody tr")
    assert moves.count() > 0
    racks = {rack for problem in fleet["problems"].values() for rack in _racks(problem)}
    for i in range(moves.count()):
        source, destination = moves.nth(i).locator("td").nth(1).inner_text(), moves.nth(i).locator("td").nth(2).inner_text()
        assert source in racks | {"(new)", "(unowned)", "(new copy)"}, source
        assert destination.split(" (same rack)")[0] in racks, destination


def _racks(problem) -> set[str]:
    members = problem.clients if hasattr(problem, "clients") else problem.members
    return {member.rack for member in members if member.rack}
