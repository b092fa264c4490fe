"""The frozen pydantic base every model of a problem or solution derives from."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Self, TypeVar, cast

from pydantic import AliasChoices, BaseModel, ConfigDict, model_validator


class FrozenModel(BaseModel):
    """Immutable, strict about unknown fields, with field docstrings as descriptions.

    `populate_by_name` lets Python code use attribute names (`num_standby_replicas`) while files
    use Kafka's own keys (`num.standby.replicas`).
    """

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        populate_by_name=True,
        use_attribute_docstrings=True,
        validate_default=False,
    )

    @model_validator(mode="before")
    @classmethod
    def _one_name_each(cls, data: Any) -> Any:
        """A mapping that gives one field under two of its names (ours and Kafka's key: `threads`
        and `num.stream.threads`, `num_standby_replicas` and `num.standby.replicas`) is one error
        naming both, where pydantic would take one and call the other an unknown field."""
        if isinstance(data, dict):
            for names in _names_of_fields(cls):
                given = [name for name in names if name in data]
                if len(given) > 1:
                    raise ValueError(f"{' and '.join(repr(name) for name in given)} name the same setting: give one of them")
        return data

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy without derived lookups: cached properties of the original may be stale."""
        copied = super().model_copy(update=update, deep=deep)
        fields = type(self).model_fields
        for key in [key for key in copied.__dict__ if key not in fields]:
            del copied.__dict__[key]
        return copied


@functools.cache
def _names_of_fields(model: type[BaseModel]) -> tuple[tuple[str, ...], ...]:
    """Per field of `model` with an alias: every name a document may give it under (the field's
    own, which `populate_by_name` accepts, and its aliases)."""
    found = []
    for name, field in model.model_fields.items():
        alias = field.validation_alias if field.validation_alias is not None else field.alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
        names = tuple(dict.fromkeys([name, *(choice for choice in choices if isinstance(choice, str))]))
        if len(names) > 1:
            found.append(names)
    return tuple(found)


F = TypeVar("F", bound=Callable[[Any], Any])


def derived(function: F) -> F:
    """`function(model)` computed once per frozen model and kept on the model itself, as
    `functools.cached_property` does, for derivations defined outside the model's module (the
    normalised problem, the problem's index). `model_copy` drops it with the cached properties.

    What it returns must compare by identity (`eq=False` on a dataclass): pydantic's `==` first
    compares the models' `__dict__`, derivations included, and a derivation that compares its own
    problem field by field would recurse."""
    key = f"{function.__module__}.{function.__qualname__}"

    @functools.wraps(function)
    def once(model: FrozenModel) -> Any:
        cache = model.__dict__
        if key not in cache:
            cache[key] = function(model)
        return cache[key]

    return cast(F, once)

