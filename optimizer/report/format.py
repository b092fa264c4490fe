"""How the report writes its figures: one form per unit, the same in every table.

Counts with thousands separators, bytes per second in kB/s or MB/s (`optimizer.money.rate_text`),
money per month with its currency (`optimizer.money.money_text`), time to a target in minutes or
hours, load skews without trailing zeros (`1`, not `1.000`), and reductions as reductions
(`675 fewer`, never `+675`). Every cell that holds a figure also carries it unformatted in
`data-value`, which the page's sorting and the tests read.
"""

from __future__ import annotations

import html
from typing import Any

from optimizer.money import hours_text, money_text, rate_text

MISSING = "–"
"""A figure that does not exist (no row, no throughput, no price)."""


def e(value: Any) -> str:
    """`value` as HTML text (None: empty); every string from the data goes through it."""
    return html.escape("" if value is None else str(value), quote=True)


def count(value: Any) -> str:
    return MISSING if value is None else f"{int(value):,}"


def skew(value: Any) -> str:
    """A load skew or a mean of them: whole numbers as such, else two decimals at most."""
    if value is None:
        return MISSING
    number = float(value)
    if number.is_integer():
        return f"{int(number):,}"
    return f"{number:,.2f}".rstrip("0").rstrip(".")


def seconds(value: Any) -> str:
    """Solve time: two decimals under ten seconds (most solves take a fraction of one)."""
    if value is None:
        return MISSING
    number = float(value)
    return f"{number:,.2f} s" if number < 10 else f"{number:,.1f} s"


def duration(value_seconds: Any) -> str:
    """Time to a target: `none` at 0, minutes under an hour, else hours with one decimal."""
    if value_seconds is None:
        return MISSING
    total = float(value_seconds)
    return "none" if total <= 0 else hours_text(total)


def time_to_target(value_seconds: Any, rounds: Any) -> str:
    """Time to a target after `rounds` follow-up rebalances: `at once` when they take no time
    (a consumer group's members rejoin at once), `none` when there are none."""
    if value_seconds is not None and float(value_seconds) <= 0 and rounds:
        return "at once"
    return duration(value_seconds)


def hours(value_hours: Any) -> str:
    return MISSING if value_hours is None else duration(float(value_hours) * 3600)


def offsets(value: Any) -> str:
    """Changelog offsets, in millions from a million up (`49.1 M`)."""
    if value is None:
        return MISSING
    number = int(value)
    if abs(number) >= 1_000_000:
        return f"{number / 1e6:,.1f} M"
    return f"{number:,}"


def rate(value: Any) -> str:
    return MISSING if value is None else rate_text(value)


def money(value: Any, currency: str | None) -> str:
    return MISSING if value is None else money_text(value, currency)


def percent(value: Any) -> str:
    return MISSING if value is None else f"{float(value):.1f} %"


def reduction(difference: float | None, text: str, fewer: str = "less", more: str = "more") -> str:
    """`difference` (before − after) as a reduction: `675 fewer`, `12 more`, `none`; `text` is
    the difference's magnitude already formatted."""
    if difference is None:
        return MISSING
    if difference == 0:
        return "no change"
    return f"{text} {fewer if difference > 0 else more}"


def share(difference: float | None, before: float | None) -> str:
    """The reduction as a share of `before`: `22.0 % less`, `3.1 % more`."""
    if difference is None or not before:
        return MISSING
    value = 100.0 * difference / before
    if round(value, 1) == 0:
        return "no change"
    return f"{abs(value):.1f} % {'less' if value > 0 else 'more'}"


def cell(value: Any, text: str, field: str | None = None, numeric: bool = True, extra: str = "") -> str:
    """A table cell showing `text`, holding `value` for sorting (and the tests) in data-value."""
    attributes = ' class="num"' if numeric else ""
    if value is not None:
        attributes += f' data-value="{e(value)}"'
    if field is not None:  # last, right before the text: `data-field="saved">675 fewer</td>` reads as one
        attributes += f' data-field="{e(field)}"'
    return f"<td{attributes}{extra}>{text}</td>"
