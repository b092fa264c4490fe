"""What a problem file can make the readers do is bounded by the file (issue 33): a YAML document
whose aliases expand it past the JSON bound, a device that never ends and a FIFO that never opens
are refused, with the reason, within seconds and a few hundred MB, by `validate`, `solve` and the
pipeline's readers; a directory lists them (and links that lead nowhere) as records that say why.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from optimizer.errors import InvalidInputError
from optimizer.sources.directory import DocumentDirectory
from optimizer.sources.documents import parse_document, read_document
from optimizer.sources.json_lines import line_records

MEMORY_BYTES = 1_500 * 2**20
"""The address space the commands get here: what they read must stay well within it."""
SECONDS = 20.0


def alias_bomb(levels: int = 9) -> str:
    """A few hundred bytes of YAML whose aliases stand for 10**levels strings (a 'billion laughs')."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * 10)}]")
    lines.append(f"kind: consumer\nmembers: [{{id: m, subscriptions: [t]}}]\ntopics: [{{name: t, partitions: 1}}]\nbomb: *a{levels}")
    return "\n".join(lines) + "\n"


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "optimizer", *args], capture_output=True, text=True, timeout=SECONDS * 3, preexec_fn=_limited,
    )  # fmt: skip
    assert time.monotonic() - started < SECONDS, args
    return done


def test_an_alias_bomb_is_refused_when_parsed(tmp_path: Path) -> None:
    text = alias_bomb()
    assert len(text) < 800
    with pytest.raises(InvalidInputError, match="aliases expand it to more than 64 MiB as JSON"):
        parse_document(text, "bomb.yaml")
    # aliases that expand modestly (a shared list, merge keys) are read as before
    data = parse_document("defaults: &d {rack: a}\nmembers: [{<<: *d, id: m1}, {<<: *d, id: m2}]\nshared: [*d, *d]\n", "ok.yaml")
    assert data["members"] == [{"rack": "a", "id": "m1"}, {"rack": "a", "id": "m2"}]


@pytest.mark.parametrize("command", ["validate", "solve"])
def test_the_commands_refuse_a_bomb_a_device_and_a_fifo_at_once(tmp_path: Path, command: str) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(alias_bomb())
    fifo = tmp_path / "waits.json"
    os.mkfifo(fifo)
    for path, reason in ((bomb, "aliases expand it"), (Path("/dev/zero"), "a device, not a regular file"), (fifo, "a FIFO (named pipe), not a regular file")):
        done = _cli(command, str(path))
        assert done.returncode != 0 and reason in done.stdout + done.stderr, (path, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr


def test_the_pipelines_readers_give_a_record_saying_why(tmp_path: Path) -> None:
    (tmp_path / "good.problem.yaml").write_text("kind: consumer\nmembers: [{id: m, subscriptions: [t]}]\ntopics: [{name: t, partitions: 1}]\n")
    (tmp_path / "bomb.yaml").write_text(alias_bomb())
    os.mkfifo(tmp_path / "waits.json")
    os.mkfifo(tmp_path / "lines.jsonl")
    (tmp_path / "nowhere.json").symlink_to(tmp_path / "gone.json")
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    started = time.monotonic()
    records = {r.source: r for r in DocumentDirectory(tmp_path).records()}
    assert time.monotonic() - started < SECONDS
    assert records["good.problem.yaml"].input_error is None
    reasons = {source: record.input_error or "" for source, record in records.items()}
    assert "aliases expand it" in reasons["bomb.yaml"]
    assert "a FIFO (named pipe), not a regular file" in reasons["waits.json"]
    assert "a FIFO (named pipe), not a regular file" in reasons["lines.jsonl:1"]
    assert "No such file" in reasons["nowhere.json"]
    assert "symbolic links" in reasons["loop.yaml"].lower()
    assert len(records) == 6, sorted(records)


def test_a_device_as_json_lines_is_refused() -> None:
    [record] = line_records(Path("/dev/zero"), Path("/dev"))
    assert record.input_error is not None and "a device, not a regular file" in record.input_error


def test_read_document_stops_at_the_bound_whatever_the_size_says(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="not a regular file"):
        read_document("/dev/zero")
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: " + b"x" * (9 * 2**20) + b"\n")
    with pytest.raises(InvalidInputError, match="at most 8 MiB"):
        read_document(big)
