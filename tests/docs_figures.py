"""Docs that cannot drift (issue 34, item 4): what every number in a page's prose must be.

`unchecked_numbers` lists the numbers of a page's prose (code blocks, inline code, links,
headings and KIP or KAFKA ids left out) that no checked claim covers; the page's test builds its
claims from the code's output, asserts each is in the page word for word, and that nothing is
left over: a figure added to the page without a check, or one the code no longer gives, fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_NUMBER = re.compile(r"(?<![\w.])(\d[\d,.]*\d|\d)(?![\w])")


def prose(markdown: str) -> str:
    """The page's running text, whitespace collapsed: no code, link targets, headings or KIP ids."""
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"^#+ .*$", " ", text, flags=re.M)
    text = re.sub(r"\b(KIP|KAFKA)-\d+", " ", text)
    return " ".join(text.split())


def unchecked_numbers(markdown: str, claims: Iterable[str], allowed: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """(claims missing from the page's prose, numbers of the prose outside every claim and every
    `allowed` phrase). Both empty when the page says exactly what the code gives."""
    text = prose(markdown)
    missing = [claim for claim in claims if " ".join(claim.split()) not in text]
    for phrase in (*claims, *allowed):
        text = text.replace(" ".join(phrase.split()), " ")
    return missing, _NUMBER.findall(text)
