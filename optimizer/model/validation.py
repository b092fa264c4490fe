"""Reusable field checks that report every violation, each with its place."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError, WrapValidator
from pydantic_core import InitErrorDetails, PydanticCustomError

from optimizer.model.ids import shown


def duplicates_in(values: Iterable[Any]) -> dict[Any, list[int]]:
    """Value -> every position it stands at, for the values that stand more than once."""
    values = list(values)
    if len(set(values)) == len(values):  # the usual case, at C speed
        return {}
    places: dict[Any, list[int]] = defaultdict(list)
    for position, value in enumerate(values):
        places[value].append(position)
    return {value: where for value, where in places.items() if len(where) > 1}


def unique_by(field: str, noun: str) -> WrapValidator:
    """A list validator rejecting items that share `field`, naming every repeated item.

    It looks at the raw items before they are validated, so a duplicate id is reported together
    with any error inside the items, rather than only once those are fixed.
    """

    def identity(item: Any) -> Any:
        value = item.get(field) if isinstance(item, dict) else getattr(item, field, None)
        return value if isinstance(value, str | int) else None

    def check(value: Any, handler: Any) -> Any:
        duplicates: list[InitErrorDetails] = []
        if isinstance(value, list | tuple):
            repeated = duplicates_in(identity(item) for item in value)
            repeated.pop(None, None)
            for ident, where in repeated.items():
                for later in where[1:]:
                    error = PydanticCustomError(
                        "duplicate_id",
                        "duplicate {noun} {field} {ident} (first at [{first}])",
                        {"noun": noun, "field": field, "ident": shown(ident), "first": where[0]},
                    )
                    duplicates.append(InitErrorDetails(type=error, loc=(later,), input=value[later]))
        try:
            result = handler(value)
        except ValidationError as error:
            if not duplicates:
                raise
            raise ValidationError.from_exception_data(
                error.title, [*_line_errors(error), *duplicates]
            ) from None
        if duplicates:
            raise ValidationError.from_exception_data(noun, duplicates)
        return result

    return WrapValidator(check)


def _line_errors(error: ValidationError) -> list[InitErrorDetails]:
    details = []
    for line in error.errors(include_url=False):
        if line["type"] in _CUSTOM:
            kind: Any = PydanticCustomError(line["type"], line["msg"])
        else:
            kind = line["type"]
        item = InitErrorDetails(type=kind, loc=tuple(line["loc"]), input=line["input"])
        if "ctx" in line and not isinstance(kind, PydanticCustomError):
            item["ctx"] = line["ctx"]
        details.append(item)
    return details


_CUSTOM = {"duplicate_id"}
