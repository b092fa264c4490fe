"""Problems found in an input, each with where it is."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from optimizer.model.base import FrozenModel
from optimizer.model.ids import shown
from optimizer.model.suggest import did_you_mean, keys_at

Loc = tuple[str | int, ...]


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


class Issue(FrozenModel):
    """An error that makes an input unusable, or a warning about something Kafka tolerates."""

    severity: Severity
    """`error`: the input is rejected. `warning`: Kafka's tolerant behaviour is applied."""
    location: str = ""
    """Field path inside the document, such as `clients[2] (id 'c3').threads`; empty for the whole."""
    message: str
    """What is wrong, in Kafka's words."""

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class CrossFieldErrors(ValueError):
    """Several located violations found by one cross-field check.

    Raised from model validators; pydantic keeps the exception in the error's context, and
    `issues_from_validation_error` turns it back into one Issue per violation.
    """

    def __init__(self, violations: Sequence[tuple[Loc, str]]):
        self.violations = tuple(violations)
        super().__init__("; ".join(f"{format_loc(loc)}: {msg}" for loc, msg in self.violations))


def raise_if_any(violations: Sequence[tuple[Loc, str]]) -> None:
    if violations:
        raise CrossFieldErrors(violations)


def format_loc(loc: Loc, data: Any = None) -> str:
    """`("clients", 2, "threads")` -> `clients[2] (id 'c3').threads`, naming list items by id.

    `data` is the raw document; when given, list items that carry an `id` or `name` are named, so a
    user can find the entry without counting.
    """
    parts: list[str] = []
    node = data
    for key in loc:
        if isinstance(key, int) and not isinstance(node, dict):
            label = f"[{key}]"
            if isinstance(node, list) and 0 <= key < len(node):
                node = node[key]
                ident = _identity(node)
                if ident is not None:
                    label += f" ({ident})"
            else:
                node = None
            parts.append(label)
        else:
            text = str(key)
            parts.append(("." if parts else "") + (text if len(text) <= 60 and text.isprintable() else shown(text)))
            node = node.get(key) if isinstance(node, dict) else None
    return "".join(parts)


def _identity(node: Any) -> str | None:
    if isinstance(node, dict):
        for field in ("id", "name"):
            value = node.get(field)
            if isinstance(value, str | int):
                return f"{field} {shown(value, 24)}"
    return None


def issues_from_validation_error(error: Any, data: Any, model: type[BaseModel] | None = None) -> list[Issue]:
    """Every error of a pydantic ValidationError as an Issue, cross-field groups expanded.

    `model` is the model `data` was validated as; given, an unknown field's message suggests the
    closest key allowed there (`unknown field 'thread' (did you mean 'threads'?)`).
    """
    issues: list[Issue] = []
    details = error.errors(include_url=False)
    failed_items = {tuple(d["loc"][:i]) for d in details for i, key in enumerate(d["loc"]) if isinstance(key, int)}
    for detail in details:
        loc = tuple(detail["loc"])
        if detail["type"] == "too_short" and loc in failed_items:
            continue  # "0 items after validation" only because the items themselves failed
        cause = (detail.get("ctx") or {}).get("error")
        if isinstance(cause, CrossFieldErrors):
            for sub_loc, message in cause.violations:
                issues.append(_error(loc + tuple(sub_loc), message, data))
            continue
        message = detail["msg"]
        kind = detail["type"]
        if kind == "value_error":
            message = message.removeprefix("Value error, ")
        elif kind == "extra_forbidden":
            message = f"unknown field {shown(loc[-1])}{_closest_key(model, loc)}" if loc else "unknown field"
        elif kind == "missing":
            message = f"missing required field {shown(loc[-1])}" if loc else "missing required field"
        elif kind == "too_long":
            ctx = detail.get("ctx") or {}
            message = (
                f"has {ctx.get('actual_length', 'too many'):,} entries: at most {ctx.get('max_length'):,} "
                "(a sanity bound, docs/validation.md)"
            )
        elif kind == "too_short":
            least = (detail.get("ctx") or {}).get("min_length", 1)
            message = f"needs at least {least} entr{'y' if least == 1 else 'ies'}"
        elif kind not in _NO_INPUT_ECHO and isinstance(detail.get("input"), str | int | float | bool):
            message = f"{message}, got {shown(detail['input'])}"
        issues.append(_error(loc, message, data))
    return issues


# Error types whose message already says what the input was, or whose input is a whole object.
_NO_INPUT_ECHO = {"duplicate_id", "model_type", "dict_type", "list_type", "tuple_type"}


def _closest_key(model: type[BaseModel] | None, loc: Loc) -> str:
    """The did-you-mean hint for the unknown key `loc[-1]`: the closest key `model` allows beside it."""
    if model is None or not isinstance(loc[-1], str):
        return ""
    return did_you_mean(loc[-1], keys_at(model, loc[:-1]))


def _error(loc: Loc, message: str, data: Any) -> Issue:
    return Issue(severity=Severity.ERROR, location=format_loc(loc, data), message=message)


def warning(location: str, message: str) -> Issue:
    return Issue(severity=Severity.WARNING, location=location, message=message)
