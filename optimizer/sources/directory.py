"""A directory of problem files and JSON Lines files, searched recursively in name order
(`*.solution.*` files skipped): a fleet kept as files, one per application or a few exports.

Nothing in it goes unsaid. An entry with a document's suffix that cannot be read (a FIFO, a
device, a link that leads nowhere or loops) is a record that says why, and so is a directory
that cannot be listed or a link to a directory read already (a loop, or the same directory
twice): each becomes an `invalid` row of the pipeline. Links to directories are followed, so a
fleet may gather folders kept elsewhere. Files that are not problem documents (another suffix, a
solution file) are not problems: they are listed in `not_read`, which the pipeline shows.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from optimizer.errors import InvalidInputError
from optimizer.model.ids import escape_unprintable
from optimizer.sources import LINES_SUFFIXES, PROBLEM_SUFFIXES, input_issue, suffix_of
from optimizer.sources.json_lines import line_records
from optimizer.sources.problem_file import file_record
from optimizer.sources.records import Record, unique_names

DOCUMENT_SUFFIXES = PROBLEM_SUFFIXES + LINES_SUFFIXES


@dataclass(frozen=True)
class DocumentDirectory:
    """A directory of problem documents given as the pipeline's input."""

    path: Path
    not_read: list[str] = field(default_factory=list, compare=False)
    """After `records()`: the entries that are not problem documents, in name order: their paths
    under the directory (a solution file's followed by ` (a solution file)`)."""

    def records(self) -> list[Record]:
        self.not_read.clear()
        walk = _Walk(self.path)
        walk.directory(self.path, Path())
        if not walk.records:
            raise InvalidInputError(str(self.path), [input_issue("the directory holds no problem or JSON Lines files")])
        self.not_read.extend(walk.not_read)
        return unique_names(walk.records)


class _Walk:
    """The entries of a directory tree, depth first in name order (as sorted paths are)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.records: list[Record] = []
        self.not_read: list[str] = []
        self._read: dict[tuple[int, int], Path] = {}  # directories listed: (device, inode) -> where first
        self._ancestors: list[tuple[int, int]] = []

    def directory(self, path: Path, relative: Path) -> None:
        shown = escape_unprintable(str(relative)) if relative.parts else "."
        try:
            status = path.stat()
            listing = sorted(os.scandir(path), key=lambda entry: entry.name)
        except OSError as error:
            self._unreadable(shown, f"cannot list the directory: {error.strerror or error}")
            return
        identity = (status.st_dev, status.st_ino)
        if identity in self._ancestors:
            self._unreadable(shown, f"a link to {os.readlink(path) if path.is_symlink() else path}, a directory that holds it: a loop, not followed")
            return
        if identity in self._read:
            first = escape_unprintable(str(self._read[identity])) or "."
            self._unreadable(shown, f"a link to {os.readlink(path) if path.is_symlink() else path}, the directory read as {first}: not read twice")
            return
        self._read[identity] = relative
        self._ancestors.append(identity)
        for entry in listing:
            self._entry(Path(entry.path), relative / entry.name)
        self._ancestors.pop()

    def _entry(self, path: Path, relative: Path) -> None:
        if _is_directory(path):  # a link to one too: followed
            self.directory(path, relative)
        elif suffix_of(path) not in DOCUMENT_SUFFIXES:
            self.not_read.append(escape_unprintable(str(relative)))
        elif ".solution." in path.name:
            self.not_read.append(f"{escape_unprintable(str(relative))} (a solution file)")
        elif suffix_of(path) in LINES_SUFFIXES:
            # A FIFO, a device or a link that leads nowhere or loops: a record that says why.
            self.records += line_records(path, self.root)
        else:
            self.records.append(file_record(path, self.root))

    def _unreadable(self, shown: str, why: str) -> None:
        self.records.append(Record(shown, "{}", shown, f"{shown}: {why}"))


def _is_directory(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.stat().st_mode)
    except OSError:  # a link that leads nowhere or loops: not a directory, and its record will say why
        return False
