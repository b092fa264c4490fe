"""Problem and solution documents as text: JSON, or YAML read as YAML 1.2, with duplicate keys and
sanity bounds refused (docs/validation.md).

The model (`optimizer.model`) validates a parsed document; this module is what turns a file's
text into one, and one back into text: every source of problem documents reads through it.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from optimizer.model.ids import shown
from optimizer.model.limits import MAX_DOCUMENT_BYTES, MAX_YAML_BYTES
from optimizer.model.problem import document_error

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
        if key in TEXT_KEYS and isinstance(value_node, yaml.ScalarNode) and value_node.tag in _NUMBER_TAGS:
            mapping[key] = value_node.value  # as written: 4.10 is not 4.1
        else:
            mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


TEXT_KEYS = frozenset({"kafka.version"})
"""Keys whose values are text, as in Kafka's properties, even when written as a number: read as
written (`kafka.version: 4.10` is 4.10, not the number 4.1)."""

_NUMBER_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})


_Yaml12Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _yaml_mapping_without_duplicates)


class _DuplicateKey(ValueError):
    pass


def _remember(seen: set[str], key: str) -> bool:
    """Adds `key` to `seen`; False, so that a search goes on."""
    seen.add(key)
    return False


class _WrittenFloat(float):
    """A JSON number with a fraction or exponent, with the text it was written as."""

    written: str


def _json_float(text: str) -> float:
    number = _WrittenFloat(text)
    number.written = text
    return number


def _json_object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # numbers under TEXT_KEYS as written; every other number a plain float again
    pairs = [(key, _json_value(key, value)) for key, value in pairs]
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or _remember(seen, key))
        raise _DuplicateKey(f"duplicate key {shown(repeated)}")
    return result


def _dict_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # `_json_object_without_duplicates` where no number is read as written (no TEXT_KEYS)
    result = dict(pairs)
    if len(result) != len(pairs):
        return _json_object_without_duplicates(pairs)
    return result


def _json_value(key: str | None, value: Any) -> Any:
    if isinstance(value, _WrittenFloat):
        return value.written if key in TEXT_KEYS else float(value)
    if isinstance(value, list):
        return [_json_value(None, v) for v in value]
    return value


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > 30:
        raise _DuplicateKey(f"number {text[:20]}... is too long")
    return int(text)


def parse_document(text: str, source: str) -> Any:
    """Parse JSON or YAML text (chosen by the source's suffix, else by content)."""
    text = text.removeprefix("\ufeff")  # a byte-order mark is not content
    if not text.strip():
        raise document_error(source, "the file is empty")
    suffix = Path(source).suffix.lower()
    as_yaml = suffix in (".yaml", ".yml") or (suffix != ".json" and not text.lstrip().startswith(("{", "[")))
    kind = "YAML" if as_yaml else "JSON"
    limit = MAX_YAML_BYTES if as_yaml else MAX_DOCUMENT_BYTES
    if len(text) > limit and len(text.encode("utf-8")) > limit:
        raise document_error(source, _too_large(len(text.encode("utf-8")), kind))
    try:
        if as_yaml:
            data = yaml.load(text, Loader=_Yaml12Loader)  # noqa: S506 - a SafeLoader subclass
            expanded = _expanded_bytes(data, {}, MAX_DOCUMENT_BYTES)
            if expanded > MAX_DOCUMENT_BYTES:
                raise document_error(
                    source,
                    f"the YAML document's aliases expand it to more than {MAX_DOCUMENT_BYTES // 2**20} MiB as JSON "
                    "(a sanity bound, docs/validation.md): write the repeated parts out, or fewer of them",
                )
            return data
        try:
            if "\\u" not in text and not any(f'"{key}"' in text for key in TEXT_KEYS):
                # no key read as written can be in it (none escaped): plain floats, in half the time
                return json.loads(text, object_pairs_hook=_dict_without_duplicates)
            return json.loads(text, object_pairs_hook=_json_object_without_duplicates, parse_float=_json_float)
        except ValueError as error:
            if isinstance(error, json.JSONDecodeError | _DuplicateKey):
                raise
            # Python refuses a number of over 4300 digits: parse again, number by number, to say which.
            return json.loads(text, object_pairs_hook=_json_object_without_duplicates, parse_int=_json_int, parse_float=_json_float)
    except json.JSONDecodeError as error:
        raise document_error(source, f"malformed JSON at line {error.lineno}, column {error.colno}: {error.msg}") from None
    except _DuplicateKey as error:
        raise document_error(source, f"malformed JSON: {error}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = getattr(error, "problem", None) or str(error)
        if "nesting depth" in what:  # PyYAML 6.0.4 stops deep nesting itself; earlier ones recurse
            what = f"nested too deeply ({what})"
        raise document_error(source, f"malformed YAML{where}: {what}") from None
    except RecursionError:
        raise document_error(source, f"malformed {kind}: nested too deeply") from None


def _expanded_bytes(value: Any, seen: dict[int, int], limit: int) -> int:
    """About how many bytes `value` takes as JSON, every alias written out (YAML's aliases make the
    parsed document a graph that shares its parts: a few hundred bytes can stand for gigabytes);
    each shared part is measured once. Stops counting past `limit`."""
    if isinstance(value, str):
        return len(value) + 2
    if not isinstance(value, dict | list):
        return len(str(value))
    known = seen.get(id(value))
    if known is not None:
        return known
    total = 2
    for key, item in value.items() if isinstance(value, dict) else enumerate(value):
        total += _expanded_bytes(item, seen, limit) + (len(str(key)) + 4 if isinstance(value, dict) else 1)
        if total > limit:
            break
    seen[id(value)] = total
    return total


def _too_large(size: int, kind: str) -> str:
    limit = MAX_YAML_BYTES if kind == "YAML" else MAX_DOCUMENT_BYTES
    return f"the {kind} document is {size / 2**20:,.1f} MiB: at most {limit // 2**20} MiB (a sanity bound, docs/validation.md)" + (
        "; JSON may be up to 64 MiB" if kind == "YAML" else ""
    )


def regular_file_problem(path: Path) -> str | None:
    """Why `path` cannot be read as a document file (it is a FIFO, a device, a socket or a
    directory: reading it could wait forever or never end), or None. Symbolic links are followed."""
    try:
        mode = path.stat().st_mode
    except OSError as error:
        return f"cannot read the file: {error.strerror or error}"
    if stat.S_ISREG(mode):
        return None
    what = ("a directory" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a file")  # fmt: skip
    return f"{what}, not a regular file: problem documents are read from regular files"


def read_document(path: str | Path) -> Any:
    """Read a JSON or YAML file (at most MAX_DOCUMENT_BYTES, YAML at most MAX_YAML_BYTES), a
    regular file only; reading stops past the bound, whatever the file claims its size is."""
    path = Path(path)
    yaml_suffix = path.suffix.lower() in (".yaml", ".yml")
    limit = MAX_YAML_BYTES if yaml_suffix else MAX_DOCUMENT_BYTES
    problem = regular_file_problem(path)
    if problem is not None:
        raise document_error(str(path), problem)
    try:
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)
            if len(raw) > limit:
                size = max(len(raw), os.fstat(handle.fileno()).st_size)
                raise document_error(str(path), _too_large(size, "YAML" if yaml_suffix else "JSON"))
        text = raw.decode("utf-8")
    except OSError as error:
        raise document_error(str(path), f"cannot read the file: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise document_error(str(path), "the file is not UTF-8 text") from None
    return parse_document(text, str(path))


def dump_document(data: Any, path: str | Path) -> None:
    """Write a document as JSON, or as YAML when the path ends in .yaml/.yml (strings quoted so
    that they read back as strings)."""
    path = Path(path)
    if path.suffix.lower() in (".yaml", ".yml"):
        text = yaml.dump(data, Dumper=_QuotingDumper, sort_keys=False, allow_unicode=True)
    else:
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
