"""Problem files (one JSON or YAML document each), and the solution files written beside them.

`load_problem` is how the command line and user code read a problem; `ProblemFile` is the same
file as a source of the fleet pipeline, which keeps the document unvalidated (the workers
validate it) and only needs its name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from optimizer.errors import InvalidInputError
from optimizer.model.ids import escape_unprintable
from optimizer.model.problem import Problem, problem_from_document, problem_to_data, solution_from_data, solution_to_data
from optimizer.model.solution import Solution
from optimizer.sources.documents import dump_document, read_document
from optimizer.sources.records import Record, name_problem


def load_problem(path: str | Path) -> Problem:
    """Read and validate a problem file (JSON or YAML)."""
    return problem_from_document(read_document(path), str(path))


def save_problem(problem: Problem, path: str | Path) -> None:
    """Write a problem as JSON, or YAML when the path ends in .yaml/.yml."""
    dump_document(problem_to_data(problem), path)


def load_solution(path: str | Path) -> Solution:
    """Read and validate a solution file."""
    return solution_from_data(read_document(path), str(path))


def save_solution(solution: Solution, path: str | Path) -> None:
    dump_document(solution_to_data(solution), path)


def file_record(file: Path, root: Path) -> Record:
    """The problem file `file` as a Record named by its `name`, else by its path under `root`
    (without the suffix and `.problem`); a file that cannot be parsed is an invalid Record."""
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
    unusable = name_problem(name) if isinstance(name, str) else None
    if unusable:
        return Record(default_name, json.dumps(data), str(relative), f"{relative}: name: {unusable}")
    return Record(name if isinstance(name, str) else default_name, json.dumps(data), str(relative))


@dataclass(frozen=True)
class ProblemFile:
    """A problem file given as the pipeline's input: a fleet of one."""

    path: Path

    def records(self) -> list[Record]:
        return [file_record(self.path, self.path.parent)]
