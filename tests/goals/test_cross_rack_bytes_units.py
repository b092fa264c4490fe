"""`cross_rack_bytes` at any throughput Kafka can carry: beyond `BYTES_LIMIT` in all it counts in
coarser units (each read rounded up), says so, and still solves, where it refused before."""

from __future__ import annotations

import pytest

from goals.cross_rack_traffic import BYTES_LIMIT, byte_unit
from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model.problem import problem_from_data, problem_to_data
from optimizer.solve import solve


def faster(problem, factor: int):
    """`problem` with every rate `factor` times higher."""
    data = problem_to_data(problem)
    if "topic_bytes_per_second" in data:
        data["topic_bytes_per_second"] = {topic: rate * factor for topic, rate in data["topic_bytes_per_second"].items()}
    for topic in data.get("topics", []):
        if topic.get("bytes_per_second") is not None:
            topic["bytes_per_second"] *= factor
    return problem_from_data(data)


def test_the_unit_is_the_smallest_power_of_two_under_the_limit():
    assert byte_unit(0) == byte_unit(BYTES_LIMIT - 1) == 1
    assert byte_unit(BYTES_LIMIT) == 2
    assert byte_unit(5 * BYTES_LIMIT) == 8
    assert all(most // byte_unit(most) < BYTES_LIMIT for most in (BYTES_LIMIT * 3 - 1, 10**15, 2**62))


@pytest.mark.parametrize("kind", ["consumer", "streams"])
def test_terabytes_per_second_are_solved_in_coarser_units(kind):
    if kind == "consumer":
        problem = random_consumer_problem(3, members=20, topics=4, partitions=(10, 50), rates=True)
    else:
        problem = random_streams_problem(3, tasks=60, clients=6, rates=True)
    normal = solve(problem, time_limit=60)
    assert not [n for n in normal.solver.options["notes"] if "units of" in n]
    big = faster(problem, 10**7)  # about a terabyte per second in all
    solution = solve(big, time_limit=60)
    (note,) = [n for n in solution.solver.options["notes"] if "units of" in n]
    assert note.startswith("goal 'cross_rack_bytes' counts in units of 2,048 bytes per second")
    goals = {g.name: g for g in solution.goals}
    assert goals["cross_rack_bytes"].status == "optimal"
    metrics = solution_metrics(big, solution)
    # each read rounded up to whole units of 2,048 bytes per second
    assert metrics <= goals["cross_rack_bytes"].value * 2048 <= metrics + 2048 * reads(big, solution)


def solution_metrics(problem, solution) -> float:
    """The evaluator's cross-rack bytes per second at the target, to the byte."""
    metrics = solution.target_metrics or solution.metrics
    if problem.kind == "consumer":
        return metrics.cross_rack_bytes
    return metrics.cross_rack_active_bytes + metrics.cross_rack_standby_bytes


def reads(problem, solution) -> int:
    """At most how many partitions the target reads (a generated task has at most 4 sources and 1 changelog)."""
    target = solution.target or solution.assignment
    return sum(len(held.active) + len(held.standby) for held in target.values()) * 5
