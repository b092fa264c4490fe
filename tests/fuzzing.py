"""Mutations of valid problem documents, for the fuzz test and `bench/fuzz.py`.

A mutation changes the document at one field path: it deletes the field, replaces its value
with one of `REPLACEMENTS` (wrong types, extremes, control characters, huge texts, nested
values), or, for lists and mappings, empties them, repeats an entry or adds an unknown key. The
promise checked on each mutant: either validation rejects it with located messages, or every
solver returns a solution the evaluator accepts; never an exception of another kind.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model.problem import problem_to_data

Path_ = tuple[str | int, ...]

REPLACEMENTS: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1,
    3,
    2**31 - 1,
    2**31,
    2**63 - 1,
    2**63,
    10**40,
    -(2**63),
    1.5,
    1e308,
    "",
    " ",
    "x",
    "0_0",
    "1_0",
    "t-0",
    "orders-0",
    "r1",
    "none",
    "min_traffic",
    "sticky",
    "cooperative-sticky",
    "\x1b[31mred\x1b[0m",
    "a\x00b",
    "\u202eevil",
    "[bold]markup[/bold]",
    "y" * 300,
    [],
    {},
    [{}],
    [None],
    ["x"],
    [[[]]],
    {"x": 1},
    {"id": "x"},
)


def paths(node: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every field path in a document, the root's children first, depth first."""
    if isinstance(node, dict):
        for key in node:
            yield (*prefix, key)
            yield from paths(node[key], (*prefix, key))
    elif isinstance(node, list):
        for position, item in enumerate(node):
            yield (*prefix, position)
            yield from paths(item, (*prefix, position))


def mutations_at(value: Any) -> list[tuple[str, Any]]:
    """(label, how) pairs for the value at a path; `how` is a replacement, or one of the
    markers DELETE, EMPTY, REPEAT_FIRST, EXTRA_KEY."""
    found: list[tuple[str, Any]] = [("delete", DELETE)]
    found += [(f"replace {_label(r)}", r) for r in REPLACEMENTS]
    if isinstance(value, list) and value:
        found += [("empty", EMPTY), ("repeat first", REPEAT_FIRST)]
    if isinstance(value, dict):
        found += [("empty", EMPTY), ("extra key", EXTRA_KEY)]
    if isinstance(value, str):
        found += [("control characters", value + "\x07\x1b[2J"), ("long", value * 200 if value else "z" * 5000)]
    if isinstance(value, int) and not isinstance(value, bool):
        found += [("plus one", value + 1), ("minus one", value - 1), ("negated", -value), ("as text", str(value))]
    return found


class _Marker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


DELETE, EMPTY, REPEAT_FIRST, EXTRA_KEY = (_Marker(n) for n in ("DELETE", "EMPTY", "REPEAT_FIRST", "EXTRA_KEY"))


def mutate(document: dict, path: Path_, how: Any) -> dict:
    """A copy of `document` with the value at `path` changed as `how` says."""
    data = copy.deepcopy(document)
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    if how is DELETE:
        del parent[key]
    elif how is EMPTY:
        parent[key] = type(parent[key])()
    elif how is REPEAT_FIRST:
        parent[key] = [parent[key][0], *parent[key]]
    elif how is EXTRA_KEY:
        parent[key] = {**parent[key], "unexpected": 1}
    else:
        parent[key] = copy.deepcopy(how)
    return data


def _label(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, float) or value == value else "nan"
    return text if len(text) <= 24 else text[:21] + "..."


def base_documents() -> list[dict]:
    """Small valid problems of every shape the fuzzers start from: racks or none, tags or none,
    standbys or none, stateless only, one client, consumer groups of every strategy."""
    documents = [
        problem_to_data(random_streams_problem(1, tasks=6, clients=3, tags=("zone",))),
        problem_to_data(random_streams_problem(2, tasks=5, clients=2, racks=0, standby_replicas=0)),
        problem_to_data(random_streams_problem(3, tasks=4, clients=3, stateful_fraction=0.0, standby_replicas=0)),
        problem_to_data(random_streams_problem(4, tasks=5, clients=3, racks=0, standby_replicas=1, strategy="balance_subtopology")),
        problem_to_data(random_streams_problem(5, tasks=3, clients=1, standby_replicas=2, strategy="none")),
    ]
    for seed, strategy in enumerate(("range", "roundrobin", "sticky", "cooperative-sticky")):
        documents.append(
            problem_to_data(
                random_consumer_problem(seed, members=3, topics=2, partitions=(1, 4), strategy=strategy, racks=seed % 2 * 2, equal_subscriptions=seed < 2)
            )
        )
    return documents
