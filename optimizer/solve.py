"""`solve(problem, solver=..., goals=...)`: run a solver, check its result, return a Solution.

Solvers:
* `exact` (default): the lexicographic goal engine, choosing the fastest exact back-end (one
  min-cost flow when every goal has a flow encoding and the problem allows it, else MILP);
  `cpsat`, `milp` and `flow` force a back-end.
* `kafka`: the Kafka-faithful assignor the problem's config selects.
* `kip925`: the KIP-925 reference goal (Streams only).

Every solution passes the evaluator before it is returned (else SolverError, a bug), records the
plugins loaded, the warnings about the problem and, for exact solvers, each goal's value, status,
bound, gap and seconds. For Streams, the exact target is followed by KIP-441 warm-up planning
unless `warmups=False`.

`time_limit` bounds the solving, Python work included (`optimizer.deadline`): Kafka's assignor
under `kafka`/`kip925` must finish within it (else NoSolutionError); the exact engine's stages
share it, and what Python work runs past it by more than `INTERRUPT_MARGIN` is stopped. When the
exact engine has no assignment at the limit, Kafka's assignor is the fallback: its assignment
if it already ran as the engine's start, else it gets `FALLBACK_SECONDS` more (else
NoSolutionError; both in `optimizer.engine.policy`). On a problem of 50,000 pairs or more under a
time limit it runs from the start in a forked child beside the engine (`kafka_beside`), on the
second core. Checking the result and planning warm-ups
come on top; they grow with the problem's size only, which validation bounds (docs/validation.md).

This module is the façade: Kafka's answers come from `optimizer.assignors.answers`, the exact
engine's from `optimizer.engine.policy`, the names from `optimizer.catalogue`; here they are
planned, measured and checked.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from optimizer.activity import doing
from optimizer.assignors.answers import KafkaAnswer, kafka_answer, reference_answer
from optimizer.catalogue import KAFKA_SOLVERS, SOLVERS, resolve_goals
from optimizer.deadline import Forked, deadline_after, run_within
from optimizer.engine.policy import in_child, run_exact
from optimizer.engine.run import Tolerance
from optimizer.engine.transition import consumer_plan, plan_transition
from optimizer.errors import GoalError, NoSolutionError, SolverError, SolverUnavailableError, TimeLimitReached
from optimizer.evaluate import Evaluation, evaluate, record_evaluation
from optimizer.goal import Assignment, Goal
from optimizer.model.consumer import AssignmentStrategy, ConsumerProblem
from optimizer.model.issues import Issue
from optimizer.model.metrics import ConsumerMetrics
from optimizer.model.normalize import normalize
from optimizer.model.problem import Problem
from optimizer.model.solution import GoalResult, GoalStatus, PluginInfo, Solution, SolverInfo
from optimizer.model.streams import StreamsProblem
from optimizer.version import __version__
from plugins.manager import plugins


def solve(
    problem: Problem,
    solver: str = "exact",
    goals: Sequence[str | Goal] | None = None,
    time_limit: float | None = None,
    tolerances: Mapping[str, Tolerance | str] | None = None,
    warmups: bool = True,
    kafka: Solution | None = None,
) -> Solution:
    """Assign `problem` with `solver`; the result is re-checked by the evaluator.

    `kafka`: Kafka's solution of this problem when it is already at hand (as in `compare`); the
    exact engine then starts from it and falls back to it instead of running Kafka's assignor
    again."""
    if solver not in SOLVERS:
        raise SolverUnavailableError(f"unknown solver {solver!r}: expected one of {', '.join(SOLVERS)}")
    normalized = normalize(problem)
    started = time.perf_counter()
    loaded = plugins()
    plugin_info = tuple(PluginInfo(name=p.name, version=p.version) for p in loaded.loaded)
    goal_results: tuple[GoalResult, ...] = ()
    options: dict[str, Any] = {}
    solver_warnings: tuple[Issue, ...] = ()  # where Kafka's own answer is knowingly not reproduced
    deadline = deadline_after(time_limit)
    assignment: Assignment
    target: Assignment | None
    if solver in KAFKA_SOLVERS:
        doing("Kafka's assignor" if solver == "kafka" else "KIP-925's reference goal")
        try:
            answer = run_within(deadline, lambda: _heuristic(normalized.problem, solver, problem))
        except TimeLimitReached:
            what = "Kafka's assignor" if solver == "kafka" else "the kip925 reference goal"
            raise NoSolutionError(f"{what} did not finish within the time limit") from None
        assignment, followup, target = answer.assignment, answer.followup_rebalance, answer.target
        notes, options, solver_warnings = list(answer.notes), dict(answer.options), answer.warnings
        scored = resolve_goals(goals, problem) if goals is not None else []
        goal_results = tuple(
            GoalResult(name=g.name, value=float(g.evaluate(normalized.problem, target or assignment)), status=GoalStatus.HEURISTIC, unit=g.value_unit)
            for g in scored
        )
    else:
        goal_objects = resolve_goals(goals, problem)
        parsed = {name: (t if isinstance(t, Tolerance) else Tolerance.parse(t)) for name, t in (tolerances or {}).items()}
        unknown = sorted(set(parsed) - {g.name for g in goal_objects})
        if unknown:
            raise GoalError(f"tolerance for goal {unknown[0]!r}, which is not in the goal list")
        kafkas: Callable[[], KafkaAnswer] = functools.partial(_heuristic, normalized.problem, "kafka", problem)
        # Kafka's answer on a large problem: computed on the second core while the engine runs in a child of its own
        beside = Forked(kafkas) if kafka is None and in_child(normalized.problem, deadline) else None
        try:
            exact = run_exact(
                normalized.problem, problem, solver, goal_objects, time_limit, deadline, parsed, warmups,
                (lambda: kafka) if kafka is not None else kafkas, beside,
            )  # fmt: skip
        finally:
            if beside is not None:
                beside.close()
        assignment, followup, target = exact.assignment, exact.followup_rebalance, exact.target
        notes, goal_results, options = exact.notes, exact.goals, exact.options
        scored = goal_objects
    notes = [*notes, *(note for goal in scored for note in goal.notes(normalized.problem))]
    plan = None
    if isinstance(normalized.problem, StreamsProblem):
        # Kafka's answer has its own warm-ups (also when the exact engine returns it as its fallback)
        own_warmups = warmups and solver not in KAFKA_SOLVERS and options.get("fallback") != "kafka"
        doing("the plan to the target (warm-ups, probing rebalances)")
        assignment, plan = plan_transition(normalized.problem, assignment, target or assignment, own_warmups)
        followup = followup or plan.followup_rebalances > 0
    # Goal values are the target's (where the plan ends); value_now is the assignment's applied now
    # (the same value when the assignment is its own target: warm-ups do not count for goals).
    goal_results = tuple(
        result.model_copy(update={"value_now": result.value if target is None else float(goal.evaluate(normalized.problem, assignment))})
        for goal, result in zip(scored, goal_results, strict=True)
    )
    seconds = time.perf_counter() - started
    solution = Solution(
        problem=problem.name,
        kind=problem.kind,
        assignment=assignment,
        followup_rebalance=followup,
        target=target,
        plan=plan,
        goals=goal_results,
        solver=SolverInfo(
            name=solver,
            version=__version__,
            options={**options, "seconds": round(seconds, 6), "notes": notes},
            plugins=plugin_info,
        ),
    )
    doing("checking the result (the evaluator)")
    evaluation = evaluate(problem, solution)
    _check_valid(evaluation, solver, "assignment")
    if target is not None:  # the target is checked and measured as well: a complete assignment
        reached = evaluate(_at_target(problem), target)
        _check_valid(reached, solver, "target assignment")
        solution = solution.model_copy(update={"target_metrics": reached.metrics})
    if isinstance(evaluation.metrics, ConsumerMetrics):
        plan = consumer_plan(assignment, target, evaluation.metrics.owned_moved, followup)
        solution = solution.model_copy(update={"plan": plan})
    return record_evaluation(solution, evaluation, problem, solver_warnings)


def _at_target(problem: Problem) -> Problem:
    """`problem` as its target is checked: a cooperative group's target is the assignment after
    the follow-up rebalance, complete, with moves counted from the owners before this one."""
    if isinstance(problem, ConsumerProblem) and problem.config.cooperative:
        eager = problem.config.model_copy(update={"partition_assignment_strategy": AssignmentStrategy.STICKY})
        return problem.model_copy(update={"config": eager})
    return problem


def _check_valid(evaluation: Evaluation, solver: str, what: str) -> None:
    if not evaluation.valid:
        details = "; ".join(f"{v.code.value}: {v.message}" for v in evaluation.violations[:10])
        raise SolverError(f"solver {solver!r} produced an invalid {what} (a bug): {details}")


def _heuristic(problem: Problem, solver: str, raw: Problem) -> KafkaAnswer:
    """Kafka's answer (`kafka`) or the KIP-925 reference's (`kip925`) for the normalised `problem`."""
    return reference_answer(problem) if solver == "kip925" else kafka_answer(problem, raw)
