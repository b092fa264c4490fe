"""Where problems come from: one module per kind of location (a *form*), chosen by the
location's form and imported on first use.

The forms, in `FORMS`:

* a problem file (`.json`, `.yaml`, `.yml`): `problem_file`, a fleet of one;
* a JSON Lines file (`.jsonl`, `.ndjson`, gzip-compressed as `.gz` too): `json_lines`;
* a directory of both, searched recursively: `directory`;
* a directory of normalised tables (it holds an `applications` table): `tables`;
* a live Kafka cluster, `kafka://HOST:PORT[,HOST:PORT]`: `kafka_cluster` (its consumer groups,
  read through `optimizer.kafka`'s JVM adapter when the source is read).

`open_source(location)` gives the location's `Source`; `read_records(location)` its Records, as
the pipeline reads its input. The command line reads single problem files through
`problem_file.load_problem`. A new kind of location is one more module with a `Source` class, one
more `Form`, and its recognition in `form_of`; a location with a scheme that no form knows is
refused with the list of forms.

Shared by the forms: `documents` (JSON and YAML 1.2 text to data and back) and `records`
(`Record`). This package sits just above `optimizer.model`: it imports neither the pipeline,
nor the command line, nor the solvers.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from optimizer.errors import InvalidInputError
from optimizer.model.issues import Issue, Severity
from optimizer.sources.records import Record
from optimizer.sources.tables.directory import is_table_directory

PROBLEM_SUFFIXES = (".json", ".yaml", ".yml")
LINES_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


class Source(Protocol):
    """One location problems are read from, in one of the `FORMS`."""

    def records(self) -> list[Record]:
        """Every problem at the location, the unusable ones too (with `input_error`), with unique
        names. InvalidInputError when the location as a whole cannot be read."""
        ...


@dataclass(frozen=True)
class Form:
    """One kind of location, and the module that reads it (imported when a location of the form
    is first opened, so that reading a problem file loads no Parquet library)."""

    what: str
    """The form as the error for an unknown location lists it."""
    module: str
    reader: str
    """The `Source` class in `module`; it takes the location's path (its text for a `scheme`)."""
    scheme: str | None = None
    """The URL scheme of the form's locations (`kafka`), None for files and directories."""

    def open(self, location: str | Path) -> Source:
        source: Source = getattr(importlib.import_module(self.module), self.reader)(str(location) if self.scheme else Path(location))
        return source


PROBLEM_FILE = Form("a problem file (.json, .yaml or .yml)", "optimizer.sources.problem_file", "ProblemFile")
JSON_LINES = Form(
    "a JSON Lines file of problem documents (.jsonl or .ndjson, gzip-compressed as .gz too)",
    "optimizer.sources.json_lines",
    "JsonLines",
)
DOCUMENT_DIRECTORY = Form("a directory of those files", "optimizer.sources.directory", "DocumentDirectory")
TABLE_DIRECTORY = Form("a directory of normalised tables (docs/pipeline-tables.md)", "optimizer.sources.tables.reader", "TableDirectory")
KAFKA_CLUSTER = Form(
    "a live Kafka cluster (kafka://HOST:PORT[,HOST:PORT]: its consumer groups, docs/import.md)",
    "optimizer.sources.kafka_cluster",
    "KafkaCluster",
    scheme="kafka",
)
FORMS = (PROBLEM_FILE, JSON_LINES, DOCUMENT_DIRECTORY, TABLE_DIRECTORY, KAFKA_CLUSTER)


def suffix_of(path: Path) -> str:
    """`.jsonl.gz` for compressed lines, else the last suffix."""
    return "".join(path.suffixes[-2:]) if path.suffix == ".gz" else path.suffix


def form_of(location: str | Path) -> Form | None:
    """The form of `location`, or None when it has none (`open_source` says why)."""
    scheme = _SCHEME.match(str(location))
    if scheme:
        return next((form for form in FORMS if form.scheme == scheme[1].lower()), None)
    path = Path(location)
    if not path.exists():
        return None
    if path.is_dir():
        return TABLE_DIRECTORY if is_table_directory(path) else DOCUMENT_DIRECTORY
    if suffix_of(path) in LINES_SUFFIXES:
        return JSON_LINES
    return PROBLEM_FILE if path.suffix in PROBLEM_SUFFIXES else None


def open_source(location: str | Path) -> Source:
    """The source at `location`, read by its form's module; InvalidInputError when the location
    has no form (missing, an unknown scheme, a file of another kind)."""
    form = form_of(location)
    if form is None:
        raise _unrecognised(location)
    return form.open(location)


def read_records(location: str | Path, not_read: list[str] | None = None) -> list[Record]:
    """The fleet at `location`: a JSON Lines file, a problem file, a directory of problem files
    and JSON Lines files (searched recursively, in name order; `*.solution.*` files skipped), or
    a directory of normalised tables (see `optimizer.sources.tables`).

    `not_read`, when given, gets the entries of a directory that are not problem documents, each
    with why (a source's `not_read`, read after its records); entries that are documents but
    cannot be read are records with an `input_error`."""
    path = Path(location)
    try:
        source = open_source(location)
        records = source.records()
        if not_read is not None:
            not_read.extend(getattr(source, "not_read", ()))
        return records
    except OSError as error:  # an unreadable directory or file: the input as a whole
        reason = error.strerror or str(error)
        where = f" ({error.filename})" if error.filename and str(error.filename) != str(path) else ""
        raise InvalidInputError(str(path), [input_issue(f"cannot read the input: {reason}{where}")]) from None


def _unrecognised(location: str | Path) -> InvalidInputError:
    path = Path(location)
    scheme = _SCHEME.match(str(location))
    if scheme and not path.exists():  # Path() reads kafka://host as kafka:/host: name it as given
        forms = ", ".join(form.what for form in FORMS)
        return InvalidInputError(str(location), [input_issue(f"unknown scheme {scheme[1]!r}: an input is {forms}")])
    if not path.exists():
        return InvalidInputError(str(path), [input_issue("no such file or directory")])
    return InvalidInputError(str(path), [input_issue("expected a .jsonl (or .jsonl.gz) file of problem documents, a problem file or a directory")])


def shown_location(location: str | Path) -> str:
    """`location` as outputs may show it: a URL without its query (`kafka://HOST:PORT?command-config=FILE`
    names a file whose path may hold a user name), anything else as it is."""
    text = str(location)
    return text.partition("?")[0] if _SCHEME.match(text) else text


def input_issue(message: str) -> Issue:
    """What is wrong with the input as a whole."""
    return Issue(severity=Severity.ERROR, location="input", message=message)


__all__ = [
    "DOCUMENT_DIRECTORY",
    "FORMS",
    "JSON_LINES",
    "KAFKA_CLUSTER",
    "LINES_SUFFIXES",
    "PROBLEM_FILE",
    "PROBLEM_SUFFIXES",
    "TABLE_DIRECTORY",
    "Form",
    "Record",
    "Source",
    "form_of",
    "input_issue",
    "open_source",
    "read_records",
    "shown_location",
    "suffix_of",
]
