"""Running one of the JVM module's oracle adapters on a batch of cases (`kao.jvm.Batch`'s protocol)."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from optimizer.kafka.jvm import run_java
from optimizer.model.problem import Problem, problem_from_data, problem_to_data

Answer = dict[str, tuple[str, ...]] | str
"""Each member's (or client's) partitions or tasks, ids sorted as Kafka returned them, or the error
Kafka raised."""


def batch(main: str, cases: list[dict[str, Any]], repeat: int = 1, timeout: float = 300.0, release: str | None = None) -> list[tuple[Any, int | None]]:
    """Each case's answer from the adapter `main`, as the adapter wrote it (JSON), or the error
    Kafka's class raised as a string; with the microseconds of its fastest of `repeat` runs in one
    JVM (warm after the first: Kafka's inputs built and its assignor called), None for an error.
    `release`: run on that Kafka release's jars instead of the pinned ones (e.g. "4.0.0")."""
    if not cases:
        return []
    output = run_java(main, [], timeout=timeout, heap_mb=1024, stdin=json.dumps({"cases": cases, "repeat": repeat}), release=release)
    results: list[tuple[Any, int | None]] = []
    for answer in json.loads(output)["answers"]:
        if "error" in answer:
            results.append((str(answer["error"]), None))
        else:
            results.append((answer["assignment"], int(answer["micros"])))
    return results


P = TypeVar("P", bound=Problem)


def at_release(problem: P, release: str) -> P:
    """The same problem with `kafka.version: release`, to compare with that release's jars."""
    data = problem_to_data(problem)
    data["config"] = {**data.get("config", {}), "kafka.version": release}
    result = problem_from_data(data)
    assert isinstance(result, type(problem))
    return result
