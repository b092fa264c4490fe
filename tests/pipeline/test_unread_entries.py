"""Every entry of a pipeline input folder that is not read gets a row saying why (issue 34, item
5): links that loop or lead nowhere, a FIFO named like a problem (never opened: reading one waits
for a writer), a directory that cannot be listed, a link back to a directory read already; files
that are not problem documents are named on stderr. Links to directories elsewhere are read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from optimizer.errors import InvalidInputError
from optimizer.generate import random_consumer_problem
from optimizer.model.problem import problem_to_data
from optimizer.sources import read_records
from optimizer.sources.directory import DocumentDirectory


def _problem(path: Path, name: str) -> None:
    path.write_text(json.dumps(problem_to_data(random_consumer_problem(1, members=2, topics=1, partitions=(1, 2), name=name))))


def test_entries_that_cannot_be_read_are_invalid_rows_and_the_rest_is_named(tmp_path):
    folder, elsewhere = tmp_path / "fleet", tmp_path / "elsewhere"
    (folder / "team-a").mkdir(parents=True)
    elsewhere.mkdir()
    _problem(folder / "team-a" / "orders.json", "orders")
    _problem(elsewhere / "billing.json", "billing")
    (folder / "team-b").symlink_to(elsewhere)  # a folder kept elsewhere: read
    (folder / "team-a" / "back").symlink_to(folder)  # a loop: a row, not followed
    (folder / "team-c").symlink_to(folder / "team-a")  # the same folder twice: a row
    (folder / "loop.json").symlink_to(folder / "loop.json")
    (folder / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    os.mkfifo(folder / "waits.json")  # nothing ever writes to it: opening it would wait forever
    (folder / "README.md").write_text("the fleet\n")
    (folder / "team-a" / "orders.solution.json").write_text("{}")
    output = tmp_path / "out"
    command = [sys.executable, "-m", "optimizer", "pipeline", "--input", str(folder), "--output", str(output), "--local", "--solvers", "kafka"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    rows = {row["problem"]: row for row in pq.read_table(output / "summary").to_pylist()}
    assert {name for name, row in rows.items() if row["status"] != "invalid"} == {"orders", "billing"}
    reasons = {name: row["error"] for name, row in rows.items() if row["status"] == "invalid"}
    assert set(reasons) == {"loop", "gone", "waits", "team-a/back", "team-c"}, reasons
    assert "Too many levels of symbolic links" in reasons["loop"] and "loop.json" in reasons["loop"]
    assert "No such file or directory" in reasons["gone"] and "gone.yaml" in reasons["gone"]
    assert "a FIFO (named pipe), not a regular file" in reasons["waits"] and "waits.json" in reasons["waits"]
    assert reasons["team-a/back"] == f"team-a/back: a link to {folder}, a directory that holds it: a loop, not followed"
    assert reasons["team-c"] == f"team-c: a link to {folder / 'team-a'}, the directory read as team-a: not read twice"
    assert (
        "pipeline: 2 entries not read (not problem documents: those end in .json, .yaml, .yml, .jsonl or .ndjson, .gz too): "
        "README.md, team-a/orders.solution.json (a solution file)"
    ) in run.stderr.splitlines()


def test_a_directory_that_cannot_be_listed_is_a_row(tmp_path, monkeypatch):
    (tmp_path / "locked").mkdir()
    _problem(tmp_path / "orders.json", "orders")
    listing = os.scandir

    def scandir(path):  # the tests run as root, whom permissions do not stop: refused here instead
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return listing(path)

    monkeypatch.setattr(os, "scandir", scandir)
    not_read: list[str] = []
    records = {r.name: r for r in read_records(tmp_path, not_read)}
    assert records["orders"].input_error is None and not_read == []
    assert records["locked"].input_error == "locked: cannot list the directory: Permission denied"


def test_a_directory_of_nothing_readable_says_so(tmp_path):
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(InvalidInputError, match="holds no problem or JSON Lines files"):
        DocumentDirectory(tmp_path).records()
