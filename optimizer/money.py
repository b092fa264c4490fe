"""Cross-zone traffic in money: bytes per second to gigabytes and cost per month.

Cloud providers bill cross-zone traffic per gigabyte. A month here is 730 hours (the providers'
own convention for monthly prices) and a gigabyte 10^9 bytes; a provider that bills per GiB
(2^30 bytes) charges about 7 % more for the same bytes: give its price x 1.074.
"""

from __future__ import annotations

from typing import Any

SECONDS_PER_MONTH = 730 * 3600
"""A month of 730 hours."""
BYTES_PER_GB = 10**9


def gb_per_month(bytes_per_second: float) -> float:
    """Gigabytes a steady `bytes_per_second` adds up to in a month."""
    return bytes_per_second * SECONDS_PER_MONTH / BYTES_PER_GB


def monthly_cost(bytes_per_second: float | None, price_per_gb: float | None) -> float | None:
    """What a steady `bytes_per_second` of cross-zone traffic costs per month at `price_per_gb`
    (None when either is unknown)."""
    if bytes_per_second is None or price_per_gb is None:
        return None
    return gb_per_month(bytes_per_second) * price_per_gb


def rate_text(bytes_per_second: float | None) -> str:
    """Bytes per second in the largest decimal unit that keeps a whole part (`12.3 MB/s`)."""
    if bytes_per_second is None:
        return "-"
    value = float(bytes_per_second)
    for unit in ("B/s", "kB/s", "MB/s", "GB/s"):
        if abs(value) < 1000 or unit == "GB/s":
            return f"{value:,.0f} {unit}" if unit == "B/s" else f"{value:,.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


DEFAULT_CURRENCY = "USD"
"""The currency of a price that names none (neither the problem's `currency` nor `--currency`):
the cloud providers publish their cross-zone prices in US dollars."""


def money_text(amount: float | None, currency: str | None = DEFAULT_CURRENCY, *, monthly: bool = True) -> str:
    """An amount with its currency, per month unless `monthly` is false (`USD 1,234.56 / month`);
    `-` when unknown."""
    if amount is None:
        return "-"
    return f"{currency or DEFAULT_CURRENCY} {amount:,.2f}" + (" / month" if monthly else "")


def price_and_currency(
    own_price: float | None, own_currency: str | None, price_per_gb: float | None = None, currency: str | None = None
) -> tuple[float | None, str]:
    """The price per GB and its currency that count for a problem: its own (`price_per_gb`,
    `currency`), else those given for problems without (`--price-per-gb`, `--currency`), else no
    price and USD."""
    return (own_price if own_price is not None else price_per_gb), (own_currency or currency or DEFAULT_CURRENCY)


def hours_text(seconds: float | None) -> str:
    """A duration in hours for a person: `45 min` below an hour (at least `1 min` when not 0),
    else `3.2 h`; `-` when unknown."""
    if seconds is None:
        return "-"
    if seconds < 3600:
        minutes = round(seconds / 60)
        return f"{max(1, minutes) if seconds > 0 else 0} min"
    return f"{seconds / 3600:,.1f} h"


def cross_zone(bytes_per_second: float | None, price_per_gb: float | None, currency: str) -> dict[str, Any] | None:
    """Cross-zone traffic as `--json` gives it: `bytes_per_second`, `gb_per_month`, and with a
    price `price_per_gb`, `currency` and `per_month`; None without a rate."""
    if bytes_per_second is None:
        return None
    cost = monthly_cost(bytes_per_second, price_per_gb)
    return {
        "bytes_per_second": bytes_per_second,
        "gb_per_month": round(gb_per_month(bytes_per_second), 3),
        "price_per_gb": price_per_gb,
        "currency": currency,
        "per_month": None if cost is None else round(cost, 2),
    }
