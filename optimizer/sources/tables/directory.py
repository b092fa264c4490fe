"""A table directory as both readers see it: which tables it holds, and what is wrong with them
as a whole.

`locate` finds each table of the layout (a file, a directory of part files, Parquet or CSV);
`layout_issues` and `application_reference_issues` name the problems that stop a run (a missing
table or column, an unknown column, a column of the wrong type, rows without an application or
naming one that is not in `applications`, an application listed twice). The readers raise
`InvalidInputError` with them; what is wrong with one application is `assembly`'s business.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optimizer.model.ids import shown as _quoted
from optimizer.model.issues import Issue
from optimizer.model.suggest import did_you_mean
from optimizer.sources.tables.layout import ACCEPTED, EXPECTED, KIND_PLURALS, KINDS, REQUIRED_TABLES, TABLES, error_issue

# ---------------------------------------------------------------------------------------------
# Finding the tables
# ---------------------------------------------------------------------------------------------

# pandas' DataFrame.to_parquet stores a non-default index as such columns: not data, skipped.
PANDAS_INDEX = re.compile(r"__index_level_[0-9]+__")


@dataclass(frozen=True)
class Located:
    """One table found in a directory: its files, and how messages name it."""

    name: str
    format: str  # "parquet" or "csv"
    files: tuple[Path, ...]
    shown: str  # the table as it is named in messages: tasks.csv, tasks/, ...


def _data_files(directory: Path) -> list[Path]:
    # Spark writes _SUCCESS and hidden .crc files beside its part files.
    return sorted(p for p in directory.iterdir() if p.is_file() and not p.name.startswith((".", "_")))


def candidates(root: Path, name: str) -> list[Path]:
    """Whatever in `root` could hold table `name`: `NAME.parquet`, `NAME.csv`, a directory `NAME/`."""
    found = [root / f"{name}.parquet", root / f"{name}.csv"]
    return [p for p in found if p.exists()] + ([root / name] if (root / name).is_dir() else [])


def is_table_directory(path: str | Path) -> bool:
    """Whether `path` is a directory holding an `applications` table (file or part files)."""
    path = Path(path)
    if not path.is_dir():
        return False
    for candidate in candidates(path, "applications"):
        if candidate.is_file():
            return True
        # A subdirectory called applications in a directory of problem files is not a table.
        if any(p.suffix in (".parquet", ".csv") for p in _data_files(candidate)):
            return True
    return False


def locate(root: Path) -> tuple[dict[str, Located], list[Issue], set[str]]:
    """The tables found in `root`; issues for those found but unusable (given twice, an empty
    directory), and their names, so that they are not reported as missing too."""
    located: dict[str, Located] = {}
    issues: list[Issue] = []
    unusable: set[str] = set()
    for name in TABLES:
        found = candidates(root, name)
        if len(found) > 1:
            shown = ", ".join(p.name + ("/" if p.is_dir() else "") for p in found)
            issues.append(error_issue(name, f"the table is given more than once ({shown}); keep one"))
            unusable.add(name)
            continue
        if not found:
            continue
        where = found[0]
        if where.is_file():
            fmt = "csv" if where.suffix == ".csv" else "parquet"
            located[name] = Located(name, fmt, (where,), where.name)
            continue
        files = _data_files(where)
        if not files:
            issues.append(error_issue(f"{where.name}/", "the directory holds no data files"))
            unusable.add(name)
            continue
        csv_parts = where.suffix == ".csv" or all(p.suffix == ".csv" for p in files)
        located[name] = Located(name, "csv" if csv_parts else "parquet", tuple(files), f"{where.name}/")
    return located, issues, unusable


# ---------------------------------------------------------------------------------------------
# Checks shared by both readers
# ---------------------------------------------------------------------------------------------

_BLANK = re.compile(r"[ \t\n\x0b\f\r]*")  # Java's \s, so that Spark's check agrees


def layout_issues(
    located: dict[str, Located],
    columns: dict[str, dict[str, tuple[str, str]]],
    kinds: set[str] | None,
    found_unusable: set[str],
) -> list[Issue]:
    """Missing tables and columns, unknown columns, wrong column types.

    `columns`: table -> column -> (storage class, type as the reader names it); `kinds`: the valid
    kinds in `applications` (None when they could not be read); `found_unusable`: tables that
    are there but cannot be used (reported already, not to be reported missing).
    """
    issues: list[Issue] = []
    if "applications" not in located and "applications" not in found_unusable:
        issues.append(
            error_issue(
                "applications",
                "missing table: the directory needs applications.parquet, applications/ or applications.csv",
            )
        )
    for kind in sorted(kinds or ()):
        for name in REQUIRED_TABLES[kind]:
            if name not in located and name not in found_unusable:
                issues.append(
                    error_issue(
                        name,
                        f"missing table: the directory has {kind} applications, which need "
                        f"{name}.parquet, {name}/ or {name}.csv (it may have no rows)",
                    )
                )
    for name, present in columns.items():
        spec = TABLES[name]
        shown = located[name].shown
        known = spec.column_names
        for column_name in present:
            if column_name not in known:
                hint = did_you_mean(column_name, known)
                issues.append(error_issue(f"{shown}.{column_name}", f"unknown column{hint}; {name} has {', '.join(known)}"))
        for column in spec.columns:
            if column.name not in present:
                if not column.optional:
                    issues.append(error_issue(f"{shown}.{column.name}", "missing required column"))
                elif needing := [kind for kind in column.needed_by if kind in (kinds or ())]:
                    holders = " and ".join(KIND_PLURALS[kind] for kind in needing)
                    issues.append(error_issue(f"{shown}.{column.name}", f"missing column: the directory has {holders}, which need it"))
                continue
            storage, shown_type = present[column.name]
            if storage not in ACCEPTED[column.type]:
                issues.append(
                    error_issue(
                        f"{shown}.{column.name}",
                        f"the column has type {shown_type}; expected {EXPECTED[column.type]}",
                    )
                )
    return issues


def usable_application_column(columns: dict[str, tuple[str, str]]) -> bool:
    """Whether a table's `application` column is text, so that its rows can be told apart by it."""
    return columns.get("application", ("",))[0] == "string"


def is_blank(value: Any) -> bool:
    """Whether a cell holds no application: empty, or white space only (as Spark's check sees it)."""
    return value is None or (isinstance(value, str) and _BLANK.fullmatch(value) is not None)


def _rows_text(rows: list[int] | None, count: int) -> str:
    """`rows 3, 8` when the reader knows row numbers (1-based), else `2 rows`."""
    if rows:
        listed = ", ".join(map(str, rows[:5])) + (f" and {len(rows) - 5} more" if len(rows) > 5 else "")
        return f"row{'s' if len(rows) > 1 else ''} {listed}"
    return f"{count} row{'s' if count != 1 else ''}"


def application_reference_issues(
    shown: str,
    is_applications: bool,
    bad: Iterable[tuple[str | None, int, list[int] | None]],
) -> list[Issue]:
    """Issues for (application, row count, row numbers) that are blank, unknown or duplicated."""
    issues = []
    for application, count, rows in bad:
        where = f"{shown}.application"
        if is_blank(application):
            issues.append(error_issue(where, f"{_rows_text(rows, count)}: no application"))
        elif is_applications:
            issues.append(
                error_issue(
                    where, f"application {_quoted(application)} is listed more than once ({_rows_text(rows, count)})"
                )
            )
        else:
            issues.append(
                error_issue(
                    where, f"application {_quoted(application)} is not in applications ({_rows_text(rows, count)})"
                )
            )
    return issues


def valid_kinds(values: Iterable[Any]) -> set[str]:
    """The kinds among `values` that are kinds of the layout (the others are one application's issue)."""
    return {value for value in values if value in KINDS}


def pure_bad_rows(
    rows: list[dict[str, Any]], known: set[str] | None, numbered: bool = True
) -> list[tuple[str | None, int, list[int] | None]]:
    """(application, count, row numbers) of rows without an application, or naming one not in
    `known`; with `known` None (the applications table itself), of applications listed twice.
    Without `numbered` (Spark, whose rows have no reliable file order) no row numbers."""
    numbers: dict[str | None, list[int]] = defaultdict(list)
    for number, row in enumerate(rows, 1):
        application = row.get("application")
        numbers[None if is_blank(application) else application].append(number)
    bad = []
    for application, where in numbers.items():
        if application is None or (len(where) > 1 if known is None else application not in known):
            bad.append((application, len(where), where if numbered else None))
    return sorted(bad, key=bad_order)


def bad_order(item: tuple[str | None, int, Any]) -> tuple[bool, str]:
    """Rows without an application first, then by application."""
    return (not is_blank(item[0]), item[0] or "")
