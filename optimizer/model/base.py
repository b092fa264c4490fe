"""The frozen pydantic base every model of a problem or solution derives from."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Self, TypeVar, cast

from pydantic import BaseModel, ConfigDict


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

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy without derived lookups: cached properties of the original may be stale."""
        copied = super().model_copy(update=update, deep=deep)
        fields = type(self).model_fields
        for key in [key for key in copied.__dict__ if key not in fields]:
            del copied.__dict__[key]
        return copied


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


def one_name_each(data: Any, *names: tuple[str, ...]) -> Any:
    """`data` as it is, for a model's before-validator, unless a mapping gives one setting under two
    of its names (ours and Kafka's: `threads` and `num.stream.threads`): then a ValueError naming
    both, where pydantic would call the second an unknown field."""
    if isinstance(data, dict):
        for keys in names:
            given = [key for key in keys if key in data]
            if len(given) > 1:
                raise ValueError(f"{' and '.join(repr(key) for key in given)} name the same setting: give one of them")
    return data
