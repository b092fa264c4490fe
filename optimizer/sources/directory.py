"""A directory of problem files and JSON Lines files, searched recursively in name order
(`*.solution.*` files skipped): a fleet kept as files, one per application or a few exports."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from optimizer.errors import InvalidInputError
from optimizer.sources import LINES_SUFFIXES, PROBLEM_SUFFIXES, input_issue, suffix_of
from optimizer.sources.json_lines import line_records
from optimizer.sources.problem_file import file_record
from optimizer.sources.records import Record, unique_names


@dataclass(frozen=True)
class DocumentDirectory:
    """A directory of problem documents given as the pipeline's input."""

    path: Path

    def records(self) -> list[Record]:
        # Every entry with a document's suffix but directories: a FIFO, a device or a link that
        # leads nowhere becomes a record that says why it cannot be read, rather than no record.
        files = sorted(
            p for p in self.path.rglob("*")
            if suffix_of(p) in PROBLEM_SUFFIXES + LINES_SUFFIXES and ".solution." not in p.name and not _is_directory(p)
        )  # fmt: skip
        if not files:
            raise InvalidInputError(str(self.path), [input_issue("the directory holds no problem or JSON Lines files")])
        records = []
        for file in files:
            records += line_records(file, self.path) if suffix_of(file) in LINES_SUFFIXES else [file_record(file, self.path)]
        return unique_names(records)


def _is_directory(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a link that loops: not a directory, and its record will say why
        return False
