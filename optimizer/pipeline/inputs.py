"""Reading a fleet: JSON Lines, a directory of problem files, or normalised tables.

Every input item becomes a `Record`, including the unusable ones (a line that is not JSON, a
document without a name, a name used twice): those carry `input_error` and come out of the
pipeline as `invalid` rows, so nothing is dropped.
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

from pydantic_core import from_json

from optimizer.errors import InvalidInputError
from optimizer.model.ids import check_name, escape_unprintable
from optimizer.model.issues import Issue, Severity
from optimizer.model.limits import MAX_DOCUMENT_BYTES
from optimizer.model.problem import read_document
from optimizer.pipeline.records import Record
from optimizer.pipeline.tables import is_table_directory, read_table_records

PROBLEM_SUFFIXES = (".json", ".yaml", ".yml")
LINES_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")


def read_records(path: str | Path) -> list[Record]:
    """The fleet at `path`: a JSON Lines file, or a directory of problem files and JSON Lines
    files (searched recursively, in name order; `*.solution.*` files skipped), or a directory of
    normalised tables (see `optimizer.pipeline.tables`)."""
    path = Path(path)
    try:
        return _read_records(path)
    except OSError as error:  # an unreadable directory or file: the input as a whole
        reason = error.strerror or str(error)
        where = f" ({error.filename})" if error.filename and str(error.filename) != str(path) else ""
        raise InvalidInputError(str(path), [_issue("input", f"cannot read the input: {reason}{where}")]) from None


def _read_records(path: Path) -> list[Record]:
    if not path.exists():
        raise InvalidInputError(str(path), [_issue("input", "no such file or directory")])
    if path.is_dir():
        if is_table_directory(path):
            return read_table_records(path)
        files = sorted(
            p for p in path.rglob("*")
            if p.is_file() and _suffix(p) in PROBLEM_SUFFIXES + LINES_SUFFIXES and ".solution." not in p.name
        )  # fmt: skip
        if not files:
            raise InvalidInputError(str(path), [_issue("input", "the directory holds no problem or JSON Lines files")])
        records = []
        for file in files:
            records += _lines(file, path) if _suffix(file) in LINES_SUFFIXES else [_file(file, path)]
        return unique_names(records)
    if _suffix(path) in LINES_SUFFIXES:
        return unique_names(_lines(path, path.parent))
    if path.suffix in PROBLEM_SUFFIXES:
        return unique_names([_file(path, path.parent)])
    raise InvalidInputError(
        str(path), [_issue("input", "expected a .jsonl (or .jsonl.gz) file of problem documents, a problem file or a directory")]
    )


def unique_names(records: list[Record]) -> list[Record]:
    """Records whose name was used before keep their row, renamed `name [source]`, as invalid."""
    first: dict[str, str] = {}
    result = []
    for record in records:
        if record.name in first:
            error = f"duplicate problem name {record.name!r} (first used at {first[record.name]})"
            record = Record(f"{record.name} [{record.source}]", record.document, record.source, error)
        else:
            first[record.name] = record.source
        result.append(record)
    return result


def _lines(file: Path, root: Path) -> list[Record]:
    """One record per non-blank line. A line that is not UTF-8, or longer than
    MAX_DOCUMENT_BYTES, or a compressed file that is cut off or corrupt, costs one record with
    the reason: the other lines are read as usual."""
    records = []
    name = escape_unprintable(str(file.relative_to(root) if file != root else file.name))
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
    unusable = _name_problem(name)
    if unusable:
        return Record(source, text, source, f"{source}: name: {unusable}")
    return Record(name, text, source)


def _name_problem(name: str) -> str | None:
    """Why `name` cannot key the output rows (it is printed in reports), or None."""
    try:
        check_name(name)
    except ValueError as error:
        return str(error)
    return None


def _file(file: Path, root: Path) -> Record:
    relative = escape_unprintable(str(file.relative_to(root)))
    default_name = escape_unprintable(str(file.relative_to(root).with_suffix(""))).removesuffix(".problem")
    try:
        data = read_document(file)
    except InvalidInputError as error:
        return Record(default_name, "{}", str(relative), str(error))
    name = data.get("name") if isinstance(data, dict) else None
    if isinstance(data, dict) and not (isinstance(name, str) and name.strip()):
        data = {**data, "name": default_name}
        name = default_name
    unusable = _name_problem(name) if isinstance(name, str) else None
    if unusable:
        return Record(default_name, json.dumps(data), str(relative), f"{relative}: name: {unusable}")
    return Record(name if isinstance(name, str) else default_name, json.dumps(data), str(relative))


def _suffix(path: Path) -> str:
    """`.jsonl.gz` for compressed lines, else the last suffix."""
    return "".join(path.suffixes[-2:]) if path.suffix == ".gz" else path.suffix


def _issue(location: str, message: str) -> Issue:
    return Issue(severity=Severity.ERROR, location=location, message=message)
