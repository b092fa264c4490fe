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
NoSolutionError). Checking the result and planning warm-ups come on top; they grow with the
problem's size only, which validation bounds (docs/validation.md).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from optimizer.assignors.answers import KafkaAnswer, kafka_answer, reference_answer
from optimizer.catalogue import SOLVERS, goal_class, resolve_goals
from optimizer.deadline import deadline_after, now, remaining, run_within
from optimizer.errors import GoalError, NoSolutionError, SolverError, SolverUnavailableError, TimeLimitReached
from optimizer.evaluate import Evaluation, evaluate, record_evaluation
from optimizer.goal import Assignment, Goal, soft
from optimizer.model.consumer import AssignmentStrategy, ConsumerProblem
from optimizer.model.issues import Issue
from optimizer.model.metrics import ConsumerMetrics
from optimizer.model.normalize import normalize
from optimizer.model.problem import Problem
from optimizer.model.solution import (
    ClientAssignment,
    GoalResult,
    GoalStatus,
    PluginInfo,
    Solution,
    SolverInfo,
)
from optimizer.model.streams import StreamsProblem
from optimizer.results import SequenceResult
from optimizer.sequence import Progress, Tolerance, run_sequence
from optimizer.text import plural
from optimizer.transition import accepted_skew, consumer_plan, exact_now, exact_now_needed, plan_transition, withhold_transfers, worse_than
from optimizer.version import __version__
from plugins.manager import plugins

INTERRUPT_MARGIN = 1.0
"""Seconds past the time limit after which the exact engine's Python work is stopped (its
solvers stop at the limit itself; this leaves room to decode their last solution)."""

FALLBACK_SECONDS = 2.0
"""Seconds Kafka's assignor gets past the time limit (beyond what is left of it), as the exact
engine's fallback when it has not run yet."""


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
    if solver in ("kafka", "kip925"):
        try:
            answer = run_within(deadline, lambda: _heuristic(normalized.problem, solver, problem))
        except TimeLimitReached:
            what = "Kafka's assignor" if solver == "kafka" else "the kip925 reference goal"
            raise NoSolutionError(f"{what} did not finish within the time limit") from None
        assignment, followup, target = answer.assignment, answer.followup_rebalance, answer.target
        notes, options, solver_warnings = list(answer.notes), dict(answer.options), answer.warnings
        scored = resolve_goals(goals, problem) if goals is not None else []
        goal_results = tuple(
            GoalResult(name=g.name, value=float(g.evaluate(normalized.problem, target or assignment)), status=GoalStatus.HEURISTIC) for g in scored
        )
    else:
        goal_objects = resolve_goals(goals, problem)
        parsed = {name: (t if isinstance(t, Tolerance) else Tolerance.parse(t)) for name, t in (tolerances or {}).items()}
        unknown = sorted(set(parsed) - {g.name for g in goal_objects})
        if unknown:
            raise GoalError(f"tolerance for goal {unknown[0]!r}, which is not in the goal list")
        assignment, followup, notes, goal_results, options, target = _exact(
            normalized.problem, problem, solver, goal_objects, time_limit, deadline, parsed, warmups, kafka
        )
        scored = goal_objects
    plan = None
    if isinstance(normalized.problem, StreamsProblem):
        # Kafka's answer has its own warm-ups (also when the exact engine returns it as its fallback)
        own_warmups = warmups and solver not in ("kafka", "kip925") and options.get("fallback") != "kafka"
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


def _exact(
    problem: Problem,
    raw: Problem,
    solver: str,
    goals: list[Goal],
    time_limit: float | None,
    deadline: float | None,
    tolerances: dict[str, Tolerance],
    warmups: bool,
    kafka: Solution | None,
) -> tuple[Assignment, bool, list[str], tuple[GoalResult, ...], dict[str, Any], dict[str, ClientAssignment] | None]:
    backend = solver
    options: dict[str, Any] = {"goals": [repr(g) for g in goals], "time_limit": time_limit}
    if tolerances:
        options["tolerances"] = {name: vars(t) for name, t in tolerances.items()}
    started: list[bool] = []

    @functools.cache  # a start for each model tried, and the fallback: Kafka's assignor runs once
    def kafka_answer() -> tuple[Assignment, bool, dict[str, ClientAssignment] | None]:
        """Kafka's assignment applied now (warm-ups included), its follow-up flag, its target."""
        started.append(True)
        if kafka is not None:
            return kafka.assignment, kafka.followup_rebalance, kafka.target
        found = _heuristic(problem, "kafka", raw)
        return found.assignment, found.followup_rebalance, found.target

    def hint() -> dict[str, ClientAssignment]:
        return {c: held.model_copy(update={"warmup": (), "members": {}}) for c, held in kafka_answer()[0].items()}

    progress = Progress()

    def sequence() -> SequenceResult:
        return run_sequence(problem, goals, backend, remaining(deadline), tolerances, hint, progress=progress)

    try:
        result = run_within(None if deadline is None else deadline + INTERRUPT_MARGIN, sequence)
    except TimeLimitReached:  # what the stages done so far found is kept
        stopped = f"the exact engine was stopped {INTERRUPT_MARGIN:g} s past the time limit"
        result = progress.result(stopped) or SequenceResult(None, [], [stopped], True)
    if deadline is not None and result.assignment is None and kafka_answer.cache_info().currsize == 0:
        if started:  # it ran as the engine's start and was stopped: it will not finish now
            raise NoSolutionError("no assignment within the time limit: the exact engine found none, and Kafka's assignor, its fallback, did not finish either")
        # what is left of the time limit (the engine may have given up early), and a bit more
        _within(deadline, kafka_answer, "no assignment within the time limit: the exact engine found none, and Kafka's assignor, its fallback,")
    notes = list(result.notes)
    if result.assignment is None:  # Kafka's answer as it is: applied now, its target, its plan
        kafka_now, kafka_followup, kafka_target = kafka_answer()
        target = kafka_target if kafka_target is not None else {c: held.model_copy(update={"warmup": ()}) for c, held in kafka_now.items()}
    else:
        target = result.assignment
    last_stage = {stage.goal.name: stage for stage in result.stages}
    conflicted = {s.goal.name for s in result.stages if s.status == GoalStatus.INFEASIBLE}
    if result.assignment is None:
        notes.append("the exact engine has no assignment (see above): Kafka's assignment is returned instead")
        options["fallback"] = "kafka"
    elif result.fallback:
        options["fallback"] = "hard goals minimised as soft goals"
    results = []
    for goal in goals:
        stage = last_stage.get(goal.name)
        value = float(goal.evaluate(problem, target))
        if options.get("fallback") == "kafka":
            status, bound, gap, seconds = GoalStatus.HEURISTIC, None, None, 0.0
        elif stage is None:
            status, bound, gap, seconds = GoalStatus.TIME_LIMIT, None, None, 0.0
        else:
            status = GoalStatus.INFEASIBLE if goal.name in conflicted else stage.status
            bound, gap, seconds = stage.bound, stage.gap, round(stage.seconds, 6)
        results.append(GoalResult(name=goal.name, value=value, status=status, bound=bound, gap=gap, seconds=seconds))
    followup = False
    assignment = target
    if options.get("fallback") == "kafka":
        assignment, followup = dict(kafka_now), kafka_followup
    elif isinstance(problem, StreamsProblem) and warmups:
        # Balance counts now only when it is one of the goals: a user may have traded it away.
        balanced = any(g.name == "balance" for g in goals)
        balance_value = next((r.value for r in results if r.name == "balance"), None)
        # A tolerance on balance is skew the user accepted: the target keeps it, and the
        # assignment applied now is not judged less safe than Kafka's for it.
        loosened = "balance" in tolerances
        allowed = tolerances["balance"].limit(0) if loosened else 0
        if exact_now_needed(problem, target) or (balanced and balance_value is not None and balance_value > allowed):
            if deadline is not None and kafka_answer.cache_info().currsize == 0:  # the start of the step below
                what = "the exact target needs warm-ups first, and Kafka's assignor, which the assignment applied now is measured against,"
                _within(deadline, kafka_answer, what)
            soft_balance = soft(goal_class("balance"))() if balanced else None
            assignment, found = exact_now(problem, target, soft_balance, hint, backend, remaining(deadline))
            notes += found
            kafka_now = hint()
            why = worse_than(problem, assignment, kafka_now, balanced, accepted_skew(problem, target) if loosened else 1.0)
            if why is not None:
                notes.append(f"Kafka's assignment is applied now, with the plan to the exact target: the exact one had {why}")
                assignment = kafka_now
    elif isinstance(problem, ConsumerProblem) and isinstance(raw, ConsumerProblem) and problem.config.cooperative:
        assignment, followup, count = withhold_transfers(raw, target)
        if count:
            notes.append(f"{plural(count, 'partition')} withheld until their holders revoke them (cooperative)")
    return assignment, followup, notes, tuple(results), options, (None if assignment == target else target)


def _within(deadline: float, run: Callable[[], Any], what: str) -> None:
    """`run()` within what is left of the time limit and FALLBACK_SECONDS more; NoSolutionError
    saying `what` did not finish otherwise."""
    try:
        run_within(max(deadline, now()) + FALLBACK_SECONDS, run)
    except TimeLimitReached:
        raise NoSolutionError(f"{what} did not finish in {FALLBACK_SECONDS:g} s more") from None
