"""Hints for names a user typed that are not known (fields, config keys, goals): "did you mean ...".

`did_you_mean` is the one place the wording and the closeness are decided; `plugins.registry` (the
layer below, which cannot import this) keeps a copy of the same few lines.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import AliasChoices, BaseModel
from pydantic.fields import FieldInfo

from optimizer.model.ids import shown

CUTOFF = 0.6
"""`difflib.get_close_matches`'s similarity ratio a choice needs to be suggested."""


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The choice closest to `name` (letter case ignored) when it is close enough, else None."""
    by_folded: dict[str, str] = {}
    for choice in choices:
        by_folded.setdefault(choice.casefold(), choice)
    found = difflib.get_close_matches(name.casefold(), by_folded, n=1, cutoff=CUTOFF)
    return by_folded[found[0]] if found else None


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`" (did you mean 'x'?)"` for the choice closest to `name`, or `""` when none is close.

    Put right after the unknown name: `f"unknown goal {name!r}{did_you_mean(name, known)}; known
    goals: ..."`.
    """
    match = closest(name, choices)
    return f" (did you mean {shown(match)}?)" if match is not None else ""


def keys_at(model: type[BaseModel], loc: Sequence[str | int]) -> tuple[str, ...]:
    """The keys a document may use in the mapping at `loc` (a pydantic error location) inside a
    `model` document, as a file writes them (Kafka's dotted config keys, not attribute names);
    empty when `loc` does not lead to a model."""
    annotation: Any = model
    for key in loc:
        annotation = _step(annotation, key)
        if annotation is None:
            return ()
    found = _model_in(annotation)
    return _file_keys(found) if found is not None else ()


def _file_keys(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(key for name, field in model.model_fields.items() for key in _file_keys_of(field) or (name,))


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model `annotation` is, or the only model among a union's (`Config | None`) types."""
    annotation = _unannotated(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    models = [found for member in _union_members(annotation) if (found := _model_in(member)) is not None]
    return models[0] if len(models) == 1 else None


def _step(annotation: Any, key: str | int) -> Any:
    """The type of the value at `key` inside a value of type `annotation`; None when unknown."""
    annotation = _unannotated(annotation)
    members = _union_members(annotation)
    if members:
        for member in members:  # pydantic names the union member it tried by its class name
            if isinstance(member, type) and member.__name__ == key:
                return member
        steps = [found for member in members if (found := _step(member, key)) is not None]
        return steps[0] if len(steps) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if not isinstance(key, str):
            return None
        for name, field in annotation.model_fields.items():
            if key == name or key in _file_keys_of(field):
                return field.annotation
        return None
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if isinstance(origin, type) and issubclass(origin, Mapping):
        return args[1] if len(args) == 2 else None
    if isinstance(origin, type) and issubclass(origin, Sequence) and not issubclass(origin, str) and isinstance(key, int):
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return args[key] if 0 <= key < len(args) else None
        return args[0] if args else None
    return None


def _file_keys_of(field: FieldInfo) -> tuple[str, ...]:
    """The keys a file writes `field` under: its aliases; empty when it has none (its name is the key)."""
    alias = field.validation_alias if field.validation_alias is not None else field.alias
    if isinstance(alias, str):
        return (alias,)
    if isinstance(alias, AliasChoices):
        return tuple(choice for choice in alias.choices if isinstance(choice, str))
    return ()


def _unannotated(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _union_members(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return tuple(member for member in typing.get_args(annotation) if member is not type(None))
    return ()
