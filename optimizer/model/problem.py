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
