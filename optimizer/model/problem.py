"""The problem union, and problem and solution documents (parsed data) to models and back.

Reading and writing the files themselves is `optimizer.sources`' business (`documents`,
`problem_file`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from optimizer.errors import InvalidInputError
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import described, shown
from optimizer.model.issues import Issue, Severity, format_loc, issues_from_validation_error
from optimizer.model.solution import Solution
from optimizer.model.streams import Client, StreamsConfig, StreamsProblem, Task, cross_field_violations

Problem = StreamsProblem | ConsumerProblem
PROBLEM_KINDS: dict[str, type[StreamsProblem] | type[ConsumerProblem]] = {
    "streams": StreamsProblem,
    "consumer": ConsumerProblem,
}


def document_error(source: str, message: str) -> InvalidInputError:
    """An error about a document as a whole (not a mapping, empty, malformed): no field to point to."""
    return InvalidInputError(source, [Issue(severity=Severity.ERROR, message=message)])


def problem_from_data(data: Any, source: str = "<problem>") -> Problem:
    """Validate a parsed problem document; InvalidInputError lists every problem found."""
    if not isinstance(data, dict):
        raise document_error(source, f"a problem document is a mapping of fields, got {described(data)}")
    kind = data.get("kind")
    model = PROBLEM_KINDS.get(kind) if isinstance(kind, str) else None
    if model is None:
        message = (
            "missing required field 'kind' (streams or consumer)"
            if kind is None
            else f"unknown kind {shown(kind)}: expected 'streams' or 'consumer'"
        )
        raise InvalidInputError(source, [Issue(severity=Severity.ERROR, location="kind", message=message)])
    try:
        return model.model_validate(data)
    except ValidationError as error:
        issues = issues_from_validation_error(error, data, model)
        if model is StreamsProblem:
            issues += _streams_cross_field_of_valid_parts(data)
        # When only problem-wide checks failed, pydantic ran them already: report each once.
        raise InvalidInputError(source, list(dict.fromkeys(issues))) from None


# What every problem document lists, even when empty: a file without it is a mistake (a section
# cut off, or misnamed and reported as unknown), not an application without tasks.
_SECTIONS: dict[str, tuple[str, str]] = {
    "streams": ("tasks", "list the application's tasks (tasks: [] for an application without any)"),
    "consumer": ("topics", "list the topics the members may subscribe to (topics: [] when none exists)"),
}


def problem_from_document(data: Any, source: str = "<problem>") -> Problem:
    """Validate a problem document read from a file or a fleet's input (decision 100):
    `problem_from_data`, and what only a written document can miss. A missing `tasks` (Streams)
    or `topics` (consumer) section is an error, reported with any others; a missing `format`
    line is read as this version and said in a warning (`normalize`), since a file without it
    cannot say which format it was written for."""
    missing: list[Issue] = []
    if isinstance(data, dict) and isinstance(data.get("kind"), str) and data["kind"] in _SECTIONS:
        section, what = _SECTIONS[data["kind"]]
        if section not in data:
            missing.append(Issue(severity=Severity.ERROR, location=section, message=f"missing section {section!r}: {what}"))
    try:
        problem = problem_from_data(data, source)
    except InvalidInputError as error:
        raise InvalidInputError(source, [*missing, *error.issues]) from None
    if missing:
        raise InvalidInputError(source, missing)
    if "format" not in data:
        problem._read_warnings = (
            Issue(
                severity=Severity.WARNING,
                location="format",
                message=f"no format line: read as {problem.format}; write format: {problem.format} so the file says which format it is",
            ),
        )
    return problem


def _streams_cross_field_of_valid_parts(data: dict[str, Any]) -> list[Issue]:
    """Problem-wide checks over the clients and tasks that are valid on their own.

    pydantic runs the problem-wide validator only when every field is valid; running the same
    checks over the valid parts reports those problems in the same pass as the others.
    """

    def valid(model: type[BaseModel], items: Any) -> list[tuple[int, Any]]:
        parts = []
        for index, item in enumerate(items if isinstance(items, list) else []):
            try:
                parts.append((index, model.model_validate(item)))
            except ValidationError:
                continue
        return parts

    try:
        config = StreamsConfig.model_validate(data.get("config") or {})
    except ValidationError:
        config = StreamsConfig()
    raw_tasks = data["tasks"] if isinstance(data.get("tasks"), list) else []
    violations = cross_field_violations(
        valid(Client, data.get("clients")),
        valid(Task, data.get("tasks")),
        config.rack_aware_assignment_tags,
        {t["id"] for t in raw_tasks if isinstance(t, dict) and isinstance(t.get("id"), str)},
    )
    return [
        Issue(severity=Severity.ERROR, location=format_loc(loc, data), message=message)
        for loc, message in violations
    ]


def problem_to_data(problem: Problem) -> dict[str, Any]:
    """The problem as a plain document with Kafka's keys; defaults left out, format kept."""
    data = problem.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return {"format": problem.format, **data}


def solution_from_data(data: Any, source: str = "<solution>") -> Solution:
    if not isinstance(data, dict):
        raise document_error(source, f"a solution document is a mapping of fields, got {described(data)}")
    try:
        return Solution.model_validate(data)
    except ValidationError as error:
        raise InvalidInputError(source, issues_from_validation_error(error, data, Solution)) from None


def solution_to_data(solution: Solution) -> dict[str, Any]:
    data = solution.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return {"format": solution.format, **data}
