"""The exact engine's policy: what `solve` returns for an exact solver, whatever the engine finds.

* The sequence runs within the time limit; Python work past it by more than `INTERRUPT_MARGIN` is
  stopped, and what the stages done so far found is kept.
* When the engine has no assignment, Kafka's is returned (its assignment applied now, its target,
  its plan): the fallback. Kafka's answer is handed in (`kafka`), computed once, when the engine
  first needs it: as the stages' start, as the fallback (with `FALLBACK_SECONDS` more when it has
  not run yet), or as what the assignment applied now is measured against.
* For Kafka Streams, an exact target that needs warm-ups first gets an assignment applied now of
  its own (`optimizer.engine.transition.exact_now`; under a time limit within its share,
  `APPLIED_NOW_SECONDS`), kept only when it is at least as safe as Kafka's; for cooperative consumer groups, the partitions that change hands are withheld until
  their holders revoke them.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from optimizer.activity import doing
from optimizer.catalogue import goal_class
from optimizer.deadline import WorkBudget, now, remaining, run_within
from optimizer.engine.sequence import Progress, Tolerance, run_sequence
from optimizer.engine.transition import accepted_skew, exact_now, exact_now_needed, withhold_transfers, worse_than
from optimizer.errors import NoSolutionError, SolverUnavailableError, TimeLimitReached
from optimizer.goal import Assignment, Goal, soft
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.problem import Problem
from optimizer.model.solution import ClientAssignment, GoalResult, GoalStatus
from optimizer.model.streams import StreamsProblem
from optimizer.results import SequenceResult
from optimizer.text import plural

INTERRUPT_MARGIN = 0.5
"""Seconds past the time limit after which the exact engine's Python work is stopped (its
solvers stop at the limit itself; this leaves room to decode their last solution)."""

FALLBACK_SECONDS = 2.0
"""Seconds Kafka's assignor gets past the time limit (beyond what is left of it), as the exact
engine's fallback when it has not run yet."""

APPLIED_NOW_SECONDS = 10.0
"""Under a time limit, the assignment applied now (`exact_now`) gets as long as the target's
sequence took, and at least this many seconds (never past the limit). It is ranked, not proven
(the goals' statuses are the target's), and where it is stopped the best point found so far, or
Kafka's assignment applied now, is used: without this share it took whatever the target left,
96 s of a 120 s limit on a 10,000 x 200 application whose target took 13 s."""

WORK_PER_SECOND = 0.3
"""Under a time limit, the CP-SAT solves of the target's sequence and then of the assignment
applied now (`--solver cpsat`) may take this much of CP-SAT's deterministic time per second of
the limit, in all (one `WorkBudget`). A unit took 0.75 to 1.85 s on this 2-core machine idle
(depending on the model), so the budget is a quarter to a half of the limit there: it binds
before the clock on a machine up to about twice as slow or busy, and the answer is the same on
every run. The clock stays the limit of last resort."""

EAGER_FALLBACK_PAIRS = 50_000
"""From this many (task, client) or (partition, member) pairs on, a run with a time limit computes
Kafka's answer before the engine, so that the fallback costs no time past the limit; below, only
when the engine needs it (a start, a fallback that then takes milliseconds, or to measure the
assignment applied now against)."""


def _pairs(problem: Problem) -> int:
    if isinstance(problem, StreamsProblem):
        return len(problem.tasks) * len(problem.clients)
    assert isinstance(problem, ConsumerProblem)
    return sum(topic.partitions for topic in problem.topics) * len(problem.members)


class KafkaAnswered(Protocol):
    """Kafka's answer as the engine reads it: a solution of `--solver kafka`, or the answer of
    Kafka's assignor (`optimizer.assignors.answers.KafkaAnswer`)."""

    @property
    def assignment(self) -> Assignment: ...

    @property
    def followup_rebalance(self) -> bool: ...

    @property
    def target(self) -> Assignment | None: ...


@dataclass(frozen=True)
class ExactResult:
    """What the exact solvers answer, before the transition plan and the evaluator."""

    assignment: Assignment
    """Applied at this rebalance."""
    followup_rebalance: bool
    notes: list[str]
    goals: tuple[GoalResult, ...]
    """Each goal's value at the target, status, bound, gap and seconds."""
    options: dict[str, Any]
    """The solver options the solution reports (`goals`, `time_limit`, `fallback`, ...)."""
    target: Assignment | None
    """Where the plan ends, when it differs from `assignment`."""


def kafka_beside(problem: Problem, deadline: float | None) -> bool:
    """Whether Kafka's assignor runs beside the exact engine, in a forked child from the start
    (`Forked`: the second core), where the engine would wait for it first: on a problem of
    EAGER_FALLBACK_PAIRS or more under a time limit (`solve` forks it; `run_exact(beside=True)`)."""
    return deadline is not None and _pairs(problem) >= EAGER_FALLBACK_PAIRS


def run_exact(
    problem: Problem,
    raw: Problem,
    backend: str,
    goals: list[Goal],
    time_limit: float | None,
    deadline: float | None,
    tolerances: dict[str, Tolerance],
    warmups: bool,
    kafka: Callable[[], KafkaAnswered],
    beside: bool = False,
) -> ExactResult:
    """The exact engine on the normalised `problem` (`raw`: as given) with `backend` (`exact` or a
    back-end's name), within `deadline` (`time_limit` seconds from the start; None: none).
    `kafka()` gives Kafka's answer; it is called at most once, only when the engine needs a
    start, a fallback or the assignment applied now to measure against. `beside`: it is being
    computed in a child process (`kafka_beside`; `kafka()` waits for it): not first, and neither
    the target's stages nor the assignment applied now start from it (the latter is measured
    against it afterwards), so that the answer does not depend on which process finishes first."""
    options: dict[str, Any] = {"goals": [repr(g) for g in goals], "time_limit": time_limit}
    if tolerances:
        options["tolerances"] = {name: vars(t) for name, t in tolerances.items()}
    started: list[bool] = []
    refused: list[SolverUnavailableError] = []

    @functools.cache  # a start for each model tried, and the fallback: Kafka's assignor runs once
    def kafka_answer() -> tuple[Assignment, bool, Assignment | None]:
        """Kafka's assignment applied now (warm-ups included), its follow-up flag, its target;
        SolverUnavailableError where Kafka gives none (remembered: the cache keeps no errors)."""
        if refused:
            raise refused[0]
        started.append(True)
        doing("Kafka's assignor (the exact engine's start and fallback)")
        try:
            found = kafka()
        except SolverUnavailableError as error:
            refused.append(error)
            raise
        return found.assignment, found.followup_rebalance, found.target

    def hint() -> dict[str, ClientAssignment] | None:
        """Kafka's assignment applied now as the engine's start; None where Kafka gives none (its
        assignor raises, or answers with no valid assignment, in the release asked for)."""
        try:
            now = kafka_answer()[0]
        except SolverUnavailableError:
            return None
        return {c: held.model_copy(update={"warmup": (), "members": {}}) for c, held in now.items()}

    if not beside and deadline is not None and _pairs(problem) >= EAGER_FALLBACK_PAIRS:
        # The fallback first on a large problem: once the engine is stopped, Kafka's answer is
        # there at once (computed after it, it ran 2 s past a 3 s limit on 50,000 partitions)
        with contextlib.suppress(TimeLimitReached, SolverUnavailableError):
            run_within(deadline + FALLBACK_SECONDS, kafka_answer)
    progress = Progress()
    work = None if time_limit is None else WorkBudget(time_limit * WORK_PER_SECOND)

    def sequence() -> SequenceResult:
        return run_sequence(problem, goals, backend, remaining(deadline), tolerances, None if beside else hint, progress=progress, work=work)

    sequence_started = now()
    try:
        result = run_within(None if deadline is None else deadline + INTERRUPT_MARGIN, sequence)
    except TimeLimitReached:  # what the stages done so far found is kept
        stopped = f"the exact engine was stopped {INTERRUPT_MARGIN:g} s past the time limit"
        result = progress.result(stopped) or SequenceResult(None, [], [stopped], True)
    none_in_time = "no assignment within the time limit: the exact engine found none, and Kafka's assignor, its fallback,"
    if deadline is not None and result.assignment is None and kafka_answer.cache_info().currsize == 0 and not refused:
        if started:  # it ran as the engine's start and was stopped: it will not finish now
            raise NoSolutionError(f"{none_in_time} did not finish either")
        # what is left of the time limit (the engine may have given up early), and a bit more
        _within(deadline, hint, none_in_time)
    if result.assignment is None and (refused or hint() is None):
        none = "no assignment within the time limit: the exact engine found none" if deadline is not None else "the exact engine found no assignment"
        raise NoSolutionError(f"{none}, and Kafka's assignor, its fallback, gives no answer here: {refused[0]}")
    notes = list(result.notes)
    if result.assignment is None:  # Kafka's answer as it is: applied now, its target, its plan
        kafka_now, kafka_followup, kafka_target = kafka_answer()
        target = kafka_target if kafka_target is not None else {c: held.model_copy(update={"warmup": ()}) for c, held in kafka_now.items()}
    else:
        target = result.assignment
    target_seconds = now() - sequence_started
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
        results.append(GoalResult(name=goal.name, value=value, status=status, bound=bound, gap=gap, seconds=seconds, unit=goal.value_unit))
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
            what = "the exact target needs warm-ups first, and Kafka's assignor, which the assignment applied now is measured against,"
            late = f"Kafka's assignor did not finish within the time limit and {FALLBACK_SECONDS:g} s more"

            def kafka_applied() -> dict[str, ClientAssignment] | None:
                """Kafka's assignment applied now (None where it gives none), within the time limit."""
                if deadline is not None and kafka_answer.cache_info().currsize == 0:
                    _within(deadline, hint, what)
                return hint()

            if not beside:  # the start of the step below; beside, it is still running (measured against afterwards)
                kafka_applied()
            balance_goal = next((g for g in goals if g.name == "balance"), None)
            soft_balance = soft(goal_class("balance"))(balance_goal.argument) if balance_goal is not None else None
            doing("the assignment applied now (warm-ups before the exact target)")
            bounded = any(g.name == "probing_rebalances" for g in goals)
            step = None if deadline is None else min(deadline, now() + max(APPLIED_NOW_SECONDS, target_seconds))

            def applied_now() -> tuple[dict[str, ClientAssignment] | None, list[str]]:
                return exact_now(problem, target, soft_balance, hint, backend, remaining(step), bounded, hinted=not beside, work=work)

            try:  # its Python work (decoding, spreading counts) is stopped too, as the engine's is
                exact_assignment, found = run_within(None if step is None else step + INTERRUPT_MARGIN, applied_now)
            except TimeLimitReached:
                exact_assignment, found = None, [f"the assignment applied now was stopped {INTERRUPT_MARGIN:g} s past its share of the time limit"]
            if exact_assignment is None:
                # Kafka's, waited for here, outside the step's share: a slow Kafka is not the step's overrun
                try:
                    kafkas = kafka_applied()
                    none = "Kafka's assignor gives none"
                except NoSolutionError:  # beside, and still running: as when it gives none
                    kafkas, none = None, late
                if kafkas is None:
                    assignment, found = dict(target), [f"{found[0]}, and {none}: the exact target is applied"]
                else:
                    assignment, found = kafkas, [f"{found[0]}: Kafka's is applied (warm-ups planned towards the exact target)"]
                notes += found
            else:  # the exact step's assignment, measured against Kafka's
                assignment = exact_assignment
                notes += found
                try:
                    kafka_start = kafka_applied()
                except NoSolutionError:  # beside: the exact step stands, unmeasured (it needs no start)
                    kafka_start = None
                    notes.append(f"{late}: the assignment applied now is not measured against it")
                if kafka_start is not None:  # else Kafka gives no assignment to measure against
                    # A bound on the probing rebalances keeps target copies in place now, at a skew
                    # the user chose: only caught-up actives are measured then.
                    why = worse_than(problem, assignment, kafka_start, balanced and not bounded, accepted_skew(problem, target) if loosened else 0.0)
                    if why is not None:
                        notes.append(f"Kafka's assignment is applied now, with the plan to the exact target: the exact one had {why}")
                        assignment = kafka_start
    elif isinstance(problem, ConsumerProblem) and isinstance(raw, ConsumerProblem) and problem.config.cooperative:
        assignment, followup, count = withhold_transfers(raw, target)
        if count:
            notes.append(f"{plural(count, 'partition')} withheld until their holders revoke them (cooperative)")
    return ExactResult(assignment, followup, notes, tuple(results), options, None if assignment == target else target)


def _within(deadline: float, run: Callable[[], Any], what: str) -> None:
    """`run()` within what is left of the time limit and FALLBACK_SECONDS more; NoSolutionError
    saying `what` did not finish otherwise."""
    try:
        run_within(max(deadline, now()) + FALLBACK_SECONDS, run)
    except TimeLimitReached:
        raise NoSolutionError(f"{what} did not finish in {FALLBACK_SECONDS:g} s more") from None
