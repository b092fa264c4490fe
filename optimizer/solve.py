"""`solve(problem, solver=...)`: run a solver, check its result independently, return a Solution.

Solvers: `kafka` (the Kafka-faithful assignor the problem's config selects) and `kip925` (the
KIP-925 reference goal, Streams only). Every solution passes the evaluator before it is returned;
one that does not is a bug and raises SolverError naming the violations.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from optimizer import __version__
from optimizer.assignors.consumer import kafka_consumer_assign
from optimizer.assignors.high_availability import StreamsAssignorResult, high_availability_assign
from optimizer.assignors.sticky_task import sticky_task_assign
from optimizer.errors import SolverError, SolverUnavailableError
from optimizer.evaluate import evaluate, record_evaluation
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import TaskKey
from optimizer.model.normalize import normalize
from optimizer.model.problem import Problem
from optimizer.model.solution import ClientAssignment, Solution, SolverInfo
from optimizer.model.streams import StreamsProblem, TaskAssignor

SOLVERS = ("kafka", "kip925")
"""Solver names `solve` accepts (exact back-ends arrive with the goal engine)."""


def solve(problem: Problem, solver: str = "kafka") -> Solution:
    """Assign `problem` with `solver`; the result is re-checked by the evaluator."""
    if solver not in SOLVERS:
        raise SolverUnavailableError(f"unknown solver {solver!r}: expected one of {', '.join(SOLVERS)}")
    normalized = normalize(problem)
    started = time.perf_counter()
    if isinstance(normalized.problem, ConsumerProblem):
        if solver == "kip925":
            raise SolverUnavailableError("the kip925 reference goal applies to Kafka Streams problems only")
        result = kafka_consumer_assign(normalized.problem)
        assignment = {
            member: ClientAssignment(active=tuple(f"{t}-{p}" for t, p in sorted(parts)))
            for member, parts in sorted(result.assignment.items())
        }
        options = {"assignor": str(normalized.problem.config.partition_assignment_strategy)}
        followup, notes = result.followup_rebalance, result.notes
    else:
        run, options = _streams_solver(normalized.problem, solver)
        result = run(normalized.problem)
        assignment = _streams_assignment(result)
        followup, notes = result.followup_rebalance, result.notes
    seconds = time.perf_counter() - started
    solution = Solution(
        problem=problem.name,
        kind=problem.kind,
        assignment=assignment,
        followup_rebalance=followup,
        solver=SolverInfo(
            name=solver,
            version=__version__,
            options={**options, "seconds": round(seconds, 6), "notes": notes},
        ),
    )
    evaluation = evaluate(problem, solution)
    if not evaluation.valid:
        details = "; ".join(f"{v.code.value}: {v.message}" for v in evaluation.violations[:10])
        raise SolverError(f"solver {solver!r} produced an invalid assignment (a bug): {details}")
    return record_evaluation(solution, evaluation, problem)


def _streams_solver(
    problem: StreamsProblem, solver: str
) -> tuple[Callable[[StreamsProblem], StreamsAssignorResult], dict]:
    if solver == "kip925":
        from goals.kip925.reference import kip925_reference

        return kip925_reference, {"goal": "kip925"}
    if problem.config.task_assignor_class == TaskAssignor.STICKY:
        return sticky_task_assign, {"assignor": "sticky"}
    return high_availability_assign, {"assignor": "high_availability"}


def _task(key: TaskKey) -> str:
    return f"{key[0]}_{key[1]}"


def _streams_assignment(result: StreamsAssignorResult) -> dict[str, ClientAssignment]:
    assignment = {}
    for client in sorted(result.clients, key=lambda c: c.id):
        warmups = result.warmups.get(client.id, set())
        assignment[client.id] = ClientAssignment(
            active=tuple(map(_task, sorted(client.active))),
            standby=tuple(map(_task, sorted(client.standby - warmups))),
            warmup=tuple(map(_task, sorted(warmups))),
        )
    return assignment
