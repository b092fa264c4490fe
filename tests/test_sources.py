"""The seam for inputs: a location's form chooses the module that reads it, imported on first use."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from optimizer.errors import InvalidInputError
from optimizer.sources import (
    DOCUMENT_DIRECTORY,
    FORMS,
    JSON_LINES,
    PROBLEM_FILE,
    TABLE_DIRECTORY,
    form_of,
    open_source,
    read_records,
)
from optimizer.sources.problem_file import load_problem
from optimizer.sources.tables.writer import write_tables
from tests.conftest import EXAMPLES, REPO

PROBLEM = EXAMPLES / "kip54" / "example1-fresh.problem.yaml"


def test_each_form_is_recognised_by_the_location_alone(tmp_path):
    (tmp_path / "fleet.jsonl.gz").write_bytes(b"")
    (tmp_path / "fleet.ndjson").write_text("")
    write_tables([load_problem(PROBLEM)], tmp_path / "tables")
    assert form_of(PROBLEM) is PROBLEM_FILE
    assert form_of(tmp_path / "fleet.jsonl.gz") is JSON_LINES
    assert form_of(tmp_path / "fleet.ndjson") is JSON_LINES
    assert form_of(EXAMPLES) is DOCUMENT_DIRECTORY
    assert form_of(tmp_path / "tables") is TABLE_DIRECTORY
    assert form_of(tmp_path / "missing.json") is None
    assert form_of(REPO / "pyproject.toml") is None


def test_every_form_opens_a_source_of_its_own_module(tmp_path):
    write_tables([load_problem(PROBLEM)], tmp_path / "tables")
    (tmp_path / "fleet.jsonl").write_text("")
    locations = (PROBLEM, tmp_path / "fleet.jsonl", EXAMPLES, tmp_path / "tables")
    opened = {form_of(location): type(open_source(location)) for location in locations}
    assert set(opened) == set(FORMS)
    assert all(reader.__module__ == form.module and reader.__name__ == form.reader for form, reader in opened.items())


def test_an_unknown_scheme_is_refused_with_the_forms_there_are():
    with pytest.raises(InvalidInputError) as raised:
        read_records("kafka://localhost:9092")
    assert raised.value.source == "kafka://localhost:9092"
    message = str(raised.value)
    assert "unknown scheme 'kafka'" in message
    assert all(form.what in message for form in FORMS)


def test_a_missing_location_and_a_file_of_another_kind_say_so():
    with pytest.raises(InvalidInputError, match="no such file or directory"):
        open_source(EXAMPLES / "missing")
    with pytest.raises(InvalidInputError, match=r"expected a \.jsonl"):
        open_source(REPO / "pyproject.toml")


def test_reading_a_problem_file_loads_no_table_reader():
    """The modules of the other forms (pyarrow for tables) are imported when a location of
    their form is opened, not before."""
    code = (
        "import json, sys; from optimizer.sources import read_records; read_records(sys.argv[1]); "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('optimizer.sources.', 'pyarrow')))))"
    )
    run = subprocess.run([sys.executable, "-c", code, str(PROBLEM)], capture_output=True, text=True, cwd=REPO, check=True)
    loaded = json.loads(run.stdout)
    assert "optimizer.sources.problem_file" in loaded
    assert not any(name.startswith(("pyarrow", "optimizer.sources.tables.reader", "optimizer.sources.json_lines")) for name in loaded)
