"""JSON Lines files of problem documents (`.jsonl`, `.ndjson`, gzip-compressed as `.gz` too):
one document per line, as a fleet is exported in bulk.

Every line becomes a `Record`, the unusable ones too (not UTF-8, not JSON, no name, too long):
those carry `input_error` and come out of the pipeline as `invalid` rows, so nothing is dropped.
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass
from pathlib import Path

from pydantic_core import from_json

from optimizer.model.ids import escape_unprintable
from optimizer.model.limits import MAX_DOCUMENT_BYTES
from optimizer.sources.documents import regular_file_problem
from optimizer.sources.records import Record, name_problem, unique_names


def line_records(file: Path, root: Path) -> list[Record]:
    """One record per non-blank line. A line that is not UTF-8, or longer than
    MAX_DOCUMENT_BYTES, or a compressed file that is cut off or corrupt, costs one record with
    the reason: the other lines are read as usual."""
    records = []
    name = escape_unprintable(str(file.relative_to(root) if file != root else file.name))
    unreadable = regular_file_problem(file)
    if unreadable is not None:  # a FIFO would keep the reader waiting, a device reading forever
        return [Record(f"{name}:1", "{}", f"{name}:1", f"{name}: {unreadable}")]
    opener = gzip.open if file.suffix == ".gz" else open
    number = 0
    try:
        with opener(file, "rb") as lines:
            while True:
                line = lines.readline(MAX_DOCUMENT_BYTES + 1)
                if not line:
                    break
                number += 1
                source = f"{name}:{number}"
                if len(line) > MAX_DOCUMENT_BYTES and not line.endswith(b"\n"):
                    while (rest := lines.readline(2**20)) and not rest.endswith(b"\n"):
                        pass  # skip the rest of the line
                    message = f"{source}: the line is longer than {MAX_DOCUMENT_BYTES // 2**20} MiB (a sanity bound, docs/validation.md)"
                    records.append(Record(source, "{}", source, message))
                    continue
                try:
                    text = line.decode("utf-8")
                except UnicodeDecodeError as error:
                    message = f"{source}: the line is not UTF-8 text (byte 0x{line[error.start]:02x} at position {error.start})"
                    records.append(Record(source, "{}", source, message))
                    continue
                if text.strip():
                    records.append(_record(text.strip(), source))
    except (OSError, EOFError, zlib.error) as error:  # gzip: BadGzipFile is an OSError
        source = f"{name}:{number + 1}"
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error) or type(error).__name__
        records.append(Record(source, "{}", source, f"{source}: the file cannot be read from here on: {reason}"))
    return records


def _record(text: str, source: str) -> Record:
    # Only the name is needed here (the worker parses the document strictly): pydantic's JSON
    # parser takes half the time of the json module, which still words the message on an error.
    try:
        data = from_json(text)
    except ValueError:
        try:
            data = json.loads(text)
        except ValueError as error:
            return Record(source, text, source, f"{source}: not a JSON document: {error}")
        except RecursionError:
            return Record(source, "{}", source, f"{source}: not a JSON document: nested too deeply")
    if not isinstance(data, dict):
        return Record(source, text, source, f"{source}: a problem document is a JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        return Record(source, text, source, f"{source}: the document has no 'name' (the pipeline keys results by it)")
    unusable = name_problem(name)
    if unusable:
        return Record(source, text, source, f"{source}: name: {unusable}")
    return Record(name, text, source)


@dataclass(frozen=True)
class JsonLines:
    """A JSON Lines file given as the pipeline's input."""

    path: Path

    def records(self) -> list[Record]:
        return unique_names(line_records(self.path, self.path.parent))
