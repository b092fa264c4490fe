"""The frozen pydantic base every model of a problem or solution derives from."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

T = TypeVar("T")
R = TypeVar("R")


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

    def model_copy(self, *, update=None, deep: bool = False):  # type: ignore[override]
        """A copy without derived lookups: cached properties of the original may be stale."""
        copied = super().model_copy(update=update, deep=deep)
        fields = type(self).model_fields
        for key in [key for key in copied.__dict__ if key not in fields]:
            del copied.__dict__[key]
        return copied


def per_object(function: Callable[[T], R]) -> Callable[[T], R]:
    """`function(obj)` computed once per object, by identity, for the eight most recent objects.

    For what is derived from a frozen problem: solving, checking and printing one result ask for
    the same derivation several times, and a problem need not be hashable to be looked up."""
    recent: list[tuple[T, R]] = []

    @functools.wraps(function)
    def once(obj: T) -> R:
        for known, value in recent:
            if known is obj:
                return value
        value = function(obj)
        recent.insert(0, (obj, value))
        del recent[8:]
        return value

    return once
