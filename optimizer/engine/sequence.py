"""The lexicographic goal engine: goals in priority order, each solved to proven optimality and
frozen before the next.

* Hard goals with a bound (`hard_bound`, e.g. `balance` for Streams: 0) are constraints in every
  stage. Hard goals without one (consumer `balance`) are minimised first and frozen exactly.
* Soft goals are then minimised one after another; each is frozen at its optimum, within its
  tolerance (absolute, or relative to the optimum), before the next.
* Every stage records its status (optimal, feasible, time_limit, infeasible), objective, proven
  bound, gap and seconds. One time limit covers the whole sequence.
* If the hard goals cannot hold together, the goals in conflict are named and they become soft
  (their excess minimised first); if even that finds nothing in time, the result is the Kafka
  heuristic's assignment, and the statuses say so.
* A sequence of goals that all have flow encodings (and no tolerance) is solved at once by
  the min-cost-flow back-end with lexicographic weights, when the problem allows it.
* `exact` chooses back-ends by their capabilities, in the registry's order of preference
  (`exact_backends`, `optimizer.backends.REGISTRY`): today min-cost flow, else MILP.

This module chooses the back-end; `optimizer.engine.models` the integer model (full, compressed or
pattern), `optimizer.engine.stages` runs the stages on it (`optimizer.engine.relaxed`: the relaxed
pass), and `optimizer.engine.run` holds what a run carries.

Active and standby tasks are decided together: they are variables of one model.
"""

from __future__ import annotations

import functools
import time

from optimizer.backends import REGISTRY, Backend, named
from optimizer.catalogue import EXACT_SOLVERS
from optimizer.deadline import WorkBudget
from optimizer.engine.models import model_limit, model_variables, run_merged, told_apart, too_large
from optimizer.engine.run import Hint, Progress, Run, Tolerance
from optimizer.engine.stages import run_stages
from optimizer.errors import GoalError, SolverUnavailableError
from optimizer.formulation import formulate
from optimizer.goal import Assignment, Goal
from optimizer.model.problem import Problem
from optimizer.model.streams import StreamsProblem
from optimizer.results import SequenceResult, Unsupported

__all__ = ["Progress", "Tolerance", "exact_backends", "model_variables", "run_sequence", "told_apart"]


def exact_backends() -> list[Backend]:
    """What `exact` tries, in registry order: the back-ends that prove optimality and are
    deterministic, the flow-only ones while they decline the sequence, then the first linear one."""
    chosen = []
    for backend in REGISTRY:
        if backend.capabilities.proves_optimality and backend.capabilities.deterministic:
            chosen.append(backend)
            if backend.capabilities.linear:
                break
    return chosen


def run_sequence(
    problem: Problem,
    goals: list[Goal],
    backend: str = "exact",
    time_limit: float | None = None,
    tolerances: dict[str, Tolerance] | None = None,
    hint: Hint | None = None,
    compress: bool | None = None,
    progress: Progress | None = None,
    patterns: bool = True,
    work: WorkBudget | None = None,
) -> SequenceResult:
    """Solve `goals` (priority order) on the normalised `problem`; `hint()` gives a full
    assignment to start from (called only by back-ends that use one). Streams problems go to the
    compressed formulation when it is much smaller and every goal supports it (`compress`: True
    forces it, False never), and to the pattern formulation before it when nothing tells tasks of
    a subtopology apart (`patterns`: False never). `progress`, when given, follows the integer
    back-ends' stages. `work`: the deterministic work the sequence's CP-SAT solves may take in
    all, besides `time_limit` (shared with whoever else holds it)."""
    if backend not in EXACT_SOLVERS:
        raise SolverUnavailableError(f"unknown back-end {backend!r}: expected one of {', '.join(EXACT_SOLVERS)}")
    tolerances = tolerances or {}
    started = time.perf_counter()
    for goal in goals:
        if not goal.applies_to(problem):
            raise GoalError(f"goal {goal.name!r} does not apply to {problem.kind} problems")

    declined: list[str] = []  # notes: the flow-only back-ends `exact` tried that could not take the sequence
    for candidate in exact_backends() if backend == "exact" else [named(backend)]:
        if candidate.capabilities.linear:
            break
        reason = candidate.unsupported(problem, goals, tolerances)
        if reason is None:
            try:
                return candidate.solve_sequence(problem, goals, time_limit)
            except Unsupported as error:  # found only while building or solving
                reason = str(error)
        if backend != "exact":
            raise SolverUnavailableError(f"the {candidate.name} back-end cannot solve this: {reason}")
        declined.append(f"{candidate.summary} not used: {reason}")
    else:
        raise SolverUnavailableError("no linear back-end is registered to solve this")
    run = Run(problem, goals, candidate, tolerances, hint, time_limit, started, progress, work)

    told = told_apart(problem, goals) if isinstance(problem, StreamsProblem) else None
    small, full = model_variables(problem, goals, told)
    limit = model_limit()
    if full > limit and not (small is not None and compress is not False):
        return too_large(full, *declined)
    result: SequenceResult | None = None
    notes: list[str] = []
    start: Assignment | None = None
    if small is not None and compress is not False:
        assert isinstance(problem, StreamsProblem) and told is not None  # only Streams models merge
        result, notes, start = run_merged(run, problem, compress is True, small, full, told, patterns)
    if result is None:
        if full > limit:
            return too_large(full, *declined, *notes)
        if start is not None:
            run.hint = functools.partial(dict, start)  # the compressed model's assignment is the best start
        result = run_stages(run, formulate(problem))
        result.notes[:0] = notes
    result.notes[:0] = declined
    return result
