"""The problem union and the documents it is read from and written to."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from optimizer.errors import InvalidInputError
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.issues import Issue, Severity, format_loc, issues_from_validation_error
from optimizer.model.solution import Solution
from optimizer.model.streams import Client, StreamsConfig, StreamsProblem, Task, cross_field_violations

Problem = StreamsProblem | ConsumerProblem
PROBLEM_KINDS: dict[str, type[StreamsProblem] | type[ConsumerProblem]] = {
    "streams": StreamsProblem,
    "consumer": ConsumerProblem,
}


# YAML 1.1 (PyYAML's default) reads the task id 1_3 as the number 13, 0_1 as an octal 1, and the
# rack name "no" as false. Problems are data, so scalars follow YAML 1.2's core schema instead.
class _Yaml12Loader(yaml.SafeLoader):
    pass


_YAML11_SCALAR_TAGS = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _YAML11_SCALAR_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9]+$"), list("-+0123456789")
)
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+.0123456789"),
)


def _yaml12_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    # YAML 1.2: "010" is ten, not PyYAML's octal eight.
    text = loader.construct_scalar(node)
    try:
        return int(text)
    except ValueError:
        raise yaml.constructor.ConstructorError(
            None, None, f"{text!r} is not a whole number", node.start_mark
        ) from None


_Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _yaml12_int)


def _yaml_mapping_without_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict:
    loader.flatten_mapping(node)
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str | int | float | bool | None):
            raise yaml.constructor.ConstructorError(
                None, None, f"unsupported mapping key {key!r}", key_node.start_mark
            )
        if key in mapping:
            mark = key_node.start_mark
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", mark
            )
        mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


_Yaml12Loader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _yaml_mapping_without_duplicates
)


class _DuplicateKey(ValueError):
    pass


def _json_object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(f"duplicate key {key!r}")
        result[key] = value
    return result


def parse_document(text: str, source: str) -> Any:
    """Parse JSON or YAML text (chosen by the source's suffix, else by content)."""
    suffix = Path(source).suffix.lower()
    as_yaml = suffix in (".yaml", ".yml") or (suffix != ".json" and not text.lstrip().startswith(("{", "[")))
    try:
        if as_yaml:
            return yaml.load(text, Loader=_Yaml12Loader)  # noqa: S506 - a SafeLoader subclass
        return json.loads(text, object_pairs_hook=_json_object_without_duplicates)
    except json.JSONDecodeError as error:
        raise _parse_error(source, f"malformed JSON at line {error.lineno}, column {error.colno}: {error.msg}")
    except _DuplicateKey as error:
        raise _parse_error(source, f"malformed JSON: {error}")
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = getattr(error, "problem", None) or str(error)
        raise _parse_error(source, f"malformed YAML{where}: {what}")


def _parse_error(source: str, message: str) -> InvalidInputError:
    return InvalidInputError(source, [Issue(severity=Severity.ERROR, message=message)])


def read_document(path: str | Path) -> Any:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise _parse_error(str(path), f"cannot read the file: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise _parse_error(str(path), "the file is not UTF-8 text") from None
    return parse_document(text, str(path))


def problem_from_data(data: Any, source: str = "<problem>") -> Problem:
    """Validate a parsed problem document; InvalidInputError lists every problem found."""
    if not isinstance(data, dict):
        raise _parse_error(source, f"a problem document is a mapping, got {type(data).__name__}")
    kind = data.get("kind")
    model = PROBLEM_KINDS.get(kind) if isinstance(kind, str) else None
    if model is None:
        message = (
            "missing required field 'kind' (streams or consumer)"
            if kind is None
            else f"unknown kind {kind!r}: expected 'streams' or 'consumer'"
        )
        raise InvalidInputError(source, [Issue(severity=Severity.ERROR, location="kind", message=message)])
    try:
        return model.model_validate(data)
    except ValidationError as error:
        issues = issues_from_validation_error(error, data)
        if model is StreamsProblem:
            issues += _streams_cross_field_of_valid_parts(data)
        raise InvalidInputError(source, issues) from None


def _streams_cross_field_of_valid_parts(data: dict[str, Any]) -> list[Issue]:
    """Problem-wide checks over the clients and tasks that are valid on their own.

    pydantic runs the problem-wide validator only when every field is valid; running the same
    checks over the valid parts reports those problems in the same pass as the others.
    """

    def valid(model: type, items: Any) -> list[tuple[int, Any]]:
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
    violations = cross_field_violations(
        valid(Client, data.get("clients")),
        valid(Task, data.get("tasks")),
        config.rack_aware_assignment_tags,
    )
    return [
        Issue(severity=Severity.ERROR, location=format_loc(loc, data), message=message)
        for loc, message in violations
    ]


def load_problem(path: str | Path) -> Problem:
    """Read and validate a problem file (JSON or YAML)."""
    return problem_from_data(read_document(path), str(path))


def problem_to_data(problem: Problem) -> dict[str, Any]:
    """The problem as a plain document with Kafka's keys; defaults left out, format kept."""
    data = problem.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return {"format": problem.format, **data}


def dump_document(data: Any, path: str | Path) -> None:
    path = Path(path)
    if path.suffix.lower() in (".yaml", ".yml"):
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    else:
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")


def save_problem(problem: Problem, path: str | Path) -> None:
    """Write a problem as JSON, or YAML when the path ends in .yaml/.yml."""
    dump_document(problem_to_data(problem), path)


def solution_from_data(data: Any, source: str = "<solution>") -> Solution:
    if not isinstance(data, dict):
        raise _parse_error(source, f"a solution document is a mapping, got {type(data).__name__}")
    try:
        return Solution.model_validate(data)
    except ValidationError as error:
        raise InvalidInputError(source, issues_from_validation_error(error, data)) from None


def load_solution(path: str | Path) -> Solution:
    """Read and validate a solution file."""
    return solution_from_data(read_document(path), str(path))


def solution_to_data(solution: Solution) -> dict[str, Any]:
    data = solution.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return {"format": solution.format, **data}


def save_solution(solution: Solution, path: str | Path) -> None:
    dump_document(solution_to_data(solution), path)
