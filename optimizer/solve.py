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

from optimizer.assignors.consumer.group import TP
from optimizer.assignors.consumer.strategy import kafka_consumer_assign
from optimizer.assignors.streams.group.assign import StreamsGroupResult, streams_group_assign
from optimizer.assignors.streams.high_availability import StreamsAssignorResult, high_availability_assign
from optimizer.assignors.streams.kip924_sticky import kip924_sticky_assign
from optimizer.assignors.streams.kip925_reference import kip925_reference
from optimizer.assignors.streams.sticky_task import sticky_task_assign
from optimizer.catalogue import SOLVERS, goal_class, resolve_goals
from optimizer.deadline import deadline_after, now, remaining, run_within
from optimizer.errors import GoalError, NoSolutionError, SolverError, SolverUnavailableError, TimeLimitReached
from optimizer.evaluate import Evaluation, evaluate, record_evaluation
from optimizer.goal import Assignment, Goal, soft
from optimizer.model.consumer import AssignmentStrategy, ConsumerProblem, GroupProtocol
from optimizer.model.ids import partition_id, task_id, task_key
from optimizer.model.issues import Issue, warning
from optimizer.model.metrics import ConsumerMetrics
from optimizer.model.normalize import normalize
from optimizer.model.problem import Problem
from optimizer.model.solution import (
    ClientAssignment,
    GoalResult,
    GoalStatus,
    MemberAssignment,
    PluginInfo,
    Solution,
    SolverInfo,
)
from optimizer.model.streams import StreamsGroupProtocol, StreamsProblem, TaskAssignor
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
    if solver in ("kafka", "kip925"):
        try:
            assignment, followup, notes, options, solver_warnings, target = run_within(
                deadline, lambda: _heuristic(normalized.problem, solver, problem)
            )
        except TimeLimitReached:
            what = "Kafka's assignor" if solver == "kafka" else "the kip925 reference goal"
            raise NoSolutionError(f"{what} did not finish within the time limit") from None
        scored = resolve_goals(goals, problem) if goals is not None else []
        goal_results = tuple(
            GoalResult(name=g.name, value=float(g.evaluate(normalized.problem, target or assignment)), status=GoalStatus.HEURISTIC)
            for g in scored
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
        result.model_copy(
            update={"value_now": result.value if target is None else float(goal.evaluate(normalized.problem, assignment))}
        )
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


def _heuristic(
    problem: Problem, solver: str, raw: Problem
) -> tuple[Assignment, bool, list[str], dict[str, Any], tuple[Issue, ...], dict[str, ClientAssignment] | None]:
    """Kafka's assignor (or the kip925 reference): (assignment applied now, follow-up rebalance,
    notes, options, warnings, the target it defers when that differs)."""
    if isinstance(problem, ConsumerProblem):
        assert isinstance(raw, ConsumerProblem)  # the problem as given, before normalising
        if solver == "kip925":
            raise SolverUnavailableError("the kip925 reference goal applies to Kafka Streams problems only")
        # Kafka's sticky assignors settle contested and stale claims themselves (KAFKA-12464):
        # they get the members' claims as reported; partitions that no longer exist are dropped.
        consumer = kafka_consumer_assign(raw)
        assignment = {
            member: ClientAssignment(active=tuple(partition_id(*tp) for tp in sorted(parts)))
            for member, parts in sorted(consumer.assignment.items())
        }
        warnings = tuple(warning(where, what) for where, what in consumer.warnings)
        if raw.config.group_protocol == GroupProtocol.CONSUMER:
            options = {"assignor": str(raw.config.remote_assignor), "protocol": "consumer"}
            if "partition_assignment_strategy" in raw.config.model_fields_set:
                warnings += (_not_read("partition.assignment.strategy", "consumer (KIP-848)"),)
        else:
            options = {"assignor": str(problem.config.partition_assignment_strategy)}
        target = _next_rounds(raw, consumer.assignment) if consumer.followup_rebalance else None
        return assignment, consumer.followup_rebalance, list(consumer.notes), options, warnings, target
    assert isinstance(problem, StreamsProblem) and isinstance(raw, StreamsProblem)
    if solver == "kafka" and problem.config.group_protocol == StreamsGroupProtocol.STREAMS:
        # The broker sees the members' history as reported, tasks that no longer exist included.
        group = streams_group_assign(raw)
        ignored = tuple(_not_read(key, "streams (KIP-1071)") for key in group.ignored)
        options = {"assignor": f"streams-group {group.assignor}", "protocol": "streams"}
        return _streams_group_assignment(problem, group), False, [], options, ignored, None
    run, options = _streams_solver(problem, solver)
    result = run(problem)
    unread: tuple[Issue, ...] = ()
    if solver == "kafka" and "streams_assignor_name" in raw.config.model_fields_set:
        unread = (_not_read("streams.assignor.name", "classic"),)
    target = None
    if result.target is not None:
        target = {
            client: ClientAssignment(
                active=tuple(task_id(*key) for key in sorted(active)),
                standby=tuple(task_id(*key) for key in sorted(standby)),
            )
            for client, (active, standby) in sorted(result.target.items())
        }
    return _streams_assignment(result), result.followup_rebalance, list(result.notes), options, unread, target


NEXT_ROUNDS = 50
"""Follow-up rebalances simulated to find where Kafka's cooperative assignor settles. Its general
sticky assignor (members with different subscriptions) can withhold partitions again in the
follow-up rounds: 4 and 6 rounds on two of Kafka's answers in the parity cases, 13 on
catalog-group-186 of the sample fleet (0.23 s in all), which 3 rounds left without a target (and
so with partitions no rebalance would assign, as the evaluator says)."""


def _next_rounds(problem: ConsumerProblem, assigned: Mapping[str, list[TP]]) -> dict[str, ClientAssignment] | None:
    """Kafka's target when its cooperative assignor withholds partitions: its answer in the
    follow-up rebalance, where every member owns what it was given now (one generation later),
    repeated while it still withholds (at most NEXT_ROUNDS); None when it does not settle."""
    generation = max(0, *(m.generation for m in problem.members)) + 1
    seen: set[tuple[tuple[str, tuple[TP, ...]], ...]] = set()
    for _ in range(NEXT_ROUNDS):
        state = tuple(sorted((member, tuple(sorted(parts))) for member, parts in assigned.items()))
        if state in seen:
            return None  # a round it has been in before: it would go round for ever
        seen.add(state)
        members = tuple(
            m.model_copy(
                update={"owned_partitions": tuple(partition_id(*tp) for tp in sorted(assigned.get(m.id, ()))), "generation": generation}
            )
            for m in problem.members
        )
        result = kafka_consumer_assign(problem.model_copy(update={"members": members}))
        assigned, generation = result.assignment, generation + 1
        if not result.followup_rebalance:
            return {m: ClientAssignment(active=tuple(partition_id(*tp) for tp in sorted(parts))) for m, parts in sorted(assigned.items())}
    return None


def _not_read(key: str, protocol: str) -> Issue:
    return warning(f"config.{key}", f"not read under group.protocol={protocol}: Kafka's assignor there ignores it")


def _exact(
    problem: Problem, raw: Problem, solver: str, goals: list[Goal], time_limit: float | None, deadline: float | None,
    tolerances: dict[str, Tolerance], warmups: bool, kafka: Solution | None,
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
        return found[0], found[1], found[5]

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
            raise NoSolutionError(
                "no assignment within the time limit: the exact engine found none, "
                "and Kafka's assignor, its fallback, did not finish either"
            )
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


def _streams_solver(
    problem: StreamsProblem, solver: str
) -> tuple[Callable[[StreamsProblem], StreamsAssignorResult], dict[str, Any]]:
    if solver == "kip925":
        return kip925_reference, {"goal": "kip925"}
    if problem.config.task_assignor_class == TaskAssignor.STICKY:
        return sticky_task_assign, {"assignor": "sticky"}
    if problem.config.task_assignor_class == TaskAssignor.KIP924_STICKY:
        return kip924_sticky_assign, {"assignor": "kip924_sticky"}
    return high_availability_assign, {"assignor": "high_availability"}


def _streams_group_assignment(problem: StreamsProblem, group: StreamsGroupResult) -> dict[str, ClientAssignment]:
    assignment = {}
    for client in sorted(problem.client_by_id):
        members = {
            member: MemberAssignment(
                active=tuple(sorted(tasks.active, key=task_key)),
                standby=tuple(sorted(tasks.standby, key=task_key)),
                warmup=tuple(sorted(tasks.warmup, key=task_key)),
            )
            for member, tasks in group.of_client(client).items()
        }
        assignment[client] = ClientAssignment(
            active=tuple(sorted((t for m in members.values() for t in m.active), key=task_key)),
            standby=tuple(sorted((t for m in members.values() for t in m.standby), key=task_key)),
            warmup=tuple(sorted((t for m in members.values() for t in m.warmup), key=task_key)),
            members=members,
        )
    return assignment


def _streams_assignment(result: StreamsAssignorResult) -> dict[str, ClientAssignment]:
    assignment = {}
    for client in sorted(result.clients, key=lambda c: c.id):
        warmups = result.warmups.get(client.id, set())
        assignment[client.id] = ClientAssignment(
            active=tuple(task_id(*key) for key in sorted(client.active)),
            standby=tuple(task_id(*key) for key in sorted(client.standby - warmups)),
            warmup=tuple(task_id(*key) for key in sorted(warmups)),
        )
    return assignment

