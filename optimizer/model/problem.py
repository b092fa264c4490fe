"""The problem union and the documents it is read from and written to."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from optimizer.errors import InvalidInputError
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import described, shown
from optimizer.model.issues import Issue, Severity, format_loc, issues_from_validation_error
from optimizer.model.limits import MAX_DOCUMENT_BYTES, MAX_YAML_BYTES
from optimizer.model.solution import Solution
from optimizer.model.streams import Client, StreamsConfig, StreamsProblem, Task, cross_field_violations

Problem = StreamsProblem | ConsumerProblem
PROBLEM_KINDS: dict[str, type[StreamsProblem] | type[ConsumerProblem]] = {
    "streams": StreamsProblem,
    "consumer": ConsumerProblem,
}


# YAML 1.1 (PyYAML's default) reads the task id 1_3 as the number 13, 0_1 as an octal 1, the
# rack name "no" as false and 2024-01-01 as a date. Problems are data, so scalars follow YAML
# 1.2's core schema instead: only true/false, plain numbers and null are not text.
_YAML11_SCALAR_TAGS = {
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp",
}
_YAML12_RESOLVERS = [
    ("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")),
    ("tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9]+$"), list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        re.compile(
            r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
        ),
        list("-+.0123456789"),
    ),
]


# libyaml's parser (C) when PyYAML has it: the pure-Python scanner reads about 0.2 MB/s (a 12 MB
# file took three minutes); the resolvers and constructors below are the same for both.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Yaml12Loader(_SafeLoader):  # type: ignore[valid-type,misc]  # chosen at import: C or pure Python
    pass


_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _YAML11_SCALAR_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _tag, _regexp, _first in _YAML12_RESOLVERS:
    _Yaml12Loader.add_implicit_resolver(_tag, _regexp, _first)


class _QuotingDumper(yaml.SafeDumper):
    """Quotes every string that YAML 1.1 or 1.2 would read as something else ("0_1", "1e3", "no"),
    so files we write read back the same here and in other YAML tools."""


for _tag, _regexp, _first in _YAML12_RESOLVERS:
    _QuotingDumper.add_implicit_resolver(_tag, _regexp, _first)


def _yaml_error(node: yaml.Node, message: str) -> yaml.constructor.ConstructorError:
    return yaml.constructor.ConstructorError(None, None, message, node.start_mark)


def _yaml12_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    # YAML 1.2: "010" is ten, not PyYAML's octal eight.
    text = loader.construct_scalar(node)
    if len(text.lstrip("+-")) > 30:
        raise _yaml_error(node, f"number {text[:20]}... is too long")
    try:
        return int(text)
    except ValueError:
        raise _yaml_error(node, f"{shown(text)} is not a whole number") from None


def _unsupported_tag(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    raise _yaml_error(node, f"YAML tag {node.tag} is not supported in problem files")


_Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _yaml12_int)
for _tag in ("binary", "set", "omap", "pairs", "timestamp"):
    _Yaml12Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _unsupported_tag)


def _yaml_mapping_without_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    explicit = sum(1 for key_node, _ in node.value if key_node.tag != "tag:yaml.org,2002:merge")
    loader.flatten_mapping(node)
    merged = len(node.value) - explicit  # merged pairs come first; explicit keys override them
    mapping: dict[Any, Any] = {}
    explicit_keys = set()
    for position, (key_node, value_node) in enumerate(node.value):
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str | int | float | bool | None):
            raise _yaml_error(key_node, f"unsupported mapping key {shown(key)}")
        if position >= merged:
            if key in explicit_keys:
                raise _yaml_error(key_node, f"duplicate key {shown(key)}")
            explicit_keys.add(key)
        mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


_Yaml12Loader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _yaml_mapping_without_duplicates
)


class _DuplicateKey(ValueError):
    pass


def _remember(seen: set[str], key: str) -> bool:
    """Adds `key` to `seen`; False, so that a search goes on."""
    seen.add(key)
    return False


def _json_object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or _remember(seen, key))
        raise _DuplicateKey(f"duplicate key {shown(repeated)}")
    return result


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > 30:
        raise _DuplicateKey(f"number {text[:20]}... is too long")
    return int(text)


def parse_document(text: str, source: str) -> Any:
    """Parse JSON or YAML text (chosen by the source's suffix, else by content)."""
    text = text.removeprefix("\ufeff")  # a byte-order mark is not content
    if not text.strip():
        raise _parse_error(source, "the file is empty")
    suffix = Path(source).suffix.lower()
    as_yaml = suffix in (".yaml", ".yml") or (suffix != ".json" and not text.lstrip().startswith(("{", "[")))
    kind = "YAML" if as_yaml else "JSON"
    limit = MAX_YAML_BYTES if as_yaml else MAX_DOCUMENT_BYTES
    if len(text) > limit and len(text.encode("utf-8")) > limit:
        raise _parse_error(source, _too_large(len(text.encode("utf-8")), kind))
    try:
        if as_yaml:
            return yaml.load(text, Loader=_Yaml12Loader)  # noqa: S506 - a SafeLoader subclass
        try:
            return json.loads(text, object_pairs_hook=_json_object_without_duplicates)
        except ValueError as error:
            if isinstance(error, json.JSONDecodeError | _DuplicateKey):
                raise
            # Python refuses a number of over 4300 digits: parse again, number by number, to say which.
            return json.loads(text, object_pairs_hook=_json_object_without_duplicates, parse_int=_json_int)
    except json.JSONDecodeError as error:
        raise _parse_error(source, f"malformed JSON at line {error.lineno}, column {error.colno}: {error.msg}") from None
    except _DuplicateKey as error:
        raise _parse_error(source, f"malformed JSON: {error}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = getattr(error, "problem", None) or str(error)
        if "nesting depth" in what:  # PyYAML 6.0.4 stops deep nesting itself; earlier ones recurse
            what = f"nested too deeply ({what})"
        raise _parse_error(source, f"malformed YAML{where}: {what}") from None
    except RecursionError:
        raise _parse_error(source, f"malformed {kind}: nested too deeply") from None


def _parse_error(source: str, message: str) -> InvalidInputError:
    return InvalidInputError(source, [Issue(severity=Severity.ERROR, message=message)])


def _too_large(size: int, kind: str) -> str:
    limit = MAX_YAML_BYTES if kind == "YAML" else MAX_DOCUMENT_BYTES
    return (
        f"the {kind} document is {size / 2**20:,.1f} MiB: at most {limit // 2**20} MiB "
        "(a sanity bound, docs/validation.md)" + ("; JSON may be up to 64 MiB" if kind == "YAML" else "")
    )


def read_document(path: str | Path) -> Any:
    """Read a JSON or YAML file (at most MAX_DOCUMENT_BYTES, YAML at most MAX_YAML_BYTES)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_DOCUMENT_BYTES or (size > MAX_YAML_BYTES and path.suffix.lower() in (".yaml", ".yml")):
            kind = "YAML" if path.suffix.lower() in (".yaml", ".yml") else "JSON"
            raise _parse_error(str(path), _too_large(size, kind))
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise _parse_error(str(path), f"cannot read the file: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise _parse_error(str(path), "the file is not UTF-8 text") from None
    return parse_document(text, str(path))


def problem_from_data(data: Any, source: str = "<problem>") -> Problem:
    """Validate a parsed problem document; InvalidInputError lists every problem found."""
    if not isinstance(data, dict):
        raise _parse_error(source, f"a problem document is a mapping of fields, got {described(data)}")
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
        text = yaml.dump(data, Dumper=_QuotingDumper, sort_keys=False, allow_unicode=True)
    else:
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")


def save_problem(problem: Problem, path: str | Path) -> None:
    """Write a problem as JSON, or YAML when the path ends in .yaml/.yml."""
    dump_document(problem_to_data(problem), path)


def solution_from_data(data: Any, source: str = "<solution>") -> Solution:
    if not isinstance(data, dict):
        raise _parse_error(source, f"a solution document is a mapping of fields, got {described(data)}")
    try:
        return Solution.model_validate(data)
    except ValidationError as error:
        raise InvalidInputError(source, issues_from_validation_error(error, data, Solution)) from None


def load_solution(path: str | Path) -> Solution:
    """Read and validate a solution file."""
    return solution_from_data(read_document(path), str(path))


def solution_to_data(solution: Solution) -> dict[str, Any]:
    data = solution.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return {"format": solution.format, **data}


def save_solution(solution: Solution, path: str | Path) -> None:
    dump_document(solution_to_data(solution), path)
