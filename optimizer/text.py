"""How figures and counts read in what the commands print: whole numbers as whole numbers, plural
forms right."""

from __future__ import annotations


def whole(value: float | None, missing: str = "-") -> str:
    """`value` for a person: `1,250,000` for a whole number (goal values are counts, whatever
    their float type), two decimals otherwise (`0.33`), `missing` for None."""
    if value is None:
        return missing
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 standby replica`, `2 standby replicas`: the count and the noun in the right form
    (`nouns`: an irregular plural)."""
    return f"{count:,} {noun if count == 1 else (nouns or noun + 's')}"
