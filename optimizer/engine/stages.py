"""The stage loop on one integer model: hard goals with a bound as rows, then each goal minimised
and frozen at its optimum (within its tolerance) before the next.

* Hard goals with a bound (`hard_bound`, e.g. `balance` for Streams: 0) are rows in every stage;
  a start that already reaches a goal's lower bound proves that stage without a solve.
* On a back-end that solves relaxations, the relaxed pass (`optimizer.engine.relaxed`) is tried
  first: every stage at once when the relaxations are tight.
* If the hard goals cannot hold together, the goals in conflict are named (`conflicting`) and they
  become soft: their excess is minimised first, and the result says it fell back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np

from optimizer.activity import doing
from optimizer.backends import RelaxingSession, Session, search_limits
from optimizer.engine.compressed import CompressedStreamsFormulation
from optimizer.engine.relaxed import relaxed_pass
from optimizer.engine.run import NO_TOLERANCE, Run
from optimizer.errors import SolverUnavailableError
from optimizer.formulation import UNBOUNDED, ConsumerFormulation, LinExpr, StreamsFormulation, formulate
from optimizer.goal import Goal, stage_order
from optimizer.model.solution import GoalStatus
from optimizer.results import SequenceResult, Stage, StageResult

if TYPE_CHECKING:  # mypy checks that the formulations the engine hands goals are what goals are promised
    from optimizer.protocols import ConsumerFormulationAPI, StreamsFormulationAPI, StreamsVariablesAPI

    def _full_model(formulation: StreamsFormulation) -> StreamsVariablesAPI:
        return formulation

    def _compressed_model(formulation: CompressedStreamsFormulation) -> StreamsFormulationAPI:
        return formulation

    def _consumer_model(formulation: ConsumerFormulation) -> ConsumerFormulationAPI:
        return formulation


LOAD_SECONDS_PER_ENTRY = 5e-7
"""Seconds loading a model into a solver takes per row coefficient (checking the rows, HiGHS's
addRows: 6.5 s for 15 million on this project's 2-core machine), work that no time limit can
interrupt: a stage loop with less time left than that (and half a second) does not start."""

Expressions = dict[int, LinExpr]
"""Each goal's objective on the model, by the goal's `id`."""

Model = StreamsFormulation | ConsumerFormulation | CompressedStreamsFormulation
"""The integer models the stages run on: the full Streams and consumer ones, and the merged
Streams ones (the pattern model is a compressed one). mypy checks that each is what goals are
promised (`optimizer.protocols`) where `run_stages` hands it to `Goal.encode`."""


def run_stages(run: Run, formulation: Model, resolve_conflicts: bool = True) -> SequenceResult:
    """The sequence of `run` on `formulation`'s model. `resolve_conflicts`: False on the merged
    models, which leave a conflict of hard goals to the full one."""
    problem = run.problem
    expressions: Expressions = {}
    doing(f"building the integer model ({run.backend.name})")
    for goal in run.goals:
        try:
            expressions[id(goal)] = goal.encode(formulation)
        except NotImplementedError:
            raise SolverUnavailableError(f"goal {goal.name!r} has no linear encoding: only a back-end it can express solves it") from None
    constrained, order = stage_order(problem, run.goals)
    engine = run.backend.name
    notes = [f"back-end: {engine}"]
    left, entries = run.remaining(), formulation.model.entries
    seconds = entries * LOAD_SECONDS_PER_ENTRY
    if left is not None and seconds > max(left, 0.5):  # a small model is loaded in no time
        return SequenceResult(None, [], [*notes, f"no time to load the model ({entries:,} coefficients, about {seconds:.1f} s; {left:.1f} s left)"], True)
    progress = run.progress

    def fresh() -> Session:
        """A session on the model with the hard goals' rows."""
        session = run.start(formulation.model)
        for goal in constrained:
            session.add_row(expressions[id(goal)], -UNBOUNDED, run.limit(goal))
        return session

    session = fresh()
    start = run.hint() if run.hint is not None else None
    current = formulation.encode(start) if start is not None else None
    stages: list[Stage] = []
    fallback = False
    if progress is not None:
        progress.formulation, progress.solution, progress.stages = formulation, None, stages

    relaxed: tuple[list[Stage], np.ndarray, str] | None = None
    if run.backend.capabilities.relaxes and all(run.tolerance(goal) == NO_TOLERANCE for goal in order):
        limits = [run.limit(goal) for goal in constrained]
        doing(f"every goal's linear relaxation, for bounds ({engine})")
        relaxed = relaxed_pass(cast(RelaxingSession, session), list(zip(constrained, limits, strict=True)), order, expressions, run.remaining, current, engine)
        if relaxed is None:  # not even the hard goals' point: the usual path, from a clean session
            session = fresh()
    if relaxed is not None:
        stages, current, note = relaxed
        order = order[len(stages) - len(constrained) :]
        if progress is not None:
            progress.solution = current
            progress.stages[:] = stages
            progress.changed()
        notes.append(note)
        if not order:
            _held(stages, constrained, expressions, current)
            return SequenceResult(formulation.decode(current), stages, notes)
    elif constrained:
        # The hard constraints alone: is there an assignment at all?
        if current is not None:
            current = formulation.repair(current)
        doing(f"an assignment that meets the hard goals ({engine})")
        first = session.minimize(LinExpr.zero(), run.remaining(), current)
        if first.status == GoalStatus.INFEASIBLE and not resolve_conflicts:
            return SequenceResult(None, [], notes + ["the hard goals conflict"], True)
        if first.status == GoalStatus.INFEASIBLE:
            conflict = conflicting(run, constrained)
            notes.append("hard goals in conflict: " + ", ".join(repr(g) for g in conflict) + "; they are minimised as soft goals instead")
            for goal in constrained:
                stages.append(Stage(goal, GoalStatus.INFEASIBLE, backend=engine))
            session = run.start(formulation.model)
            order = constrained + order
            fallback = True
        elif first.solution is not None:
            current = first.solution
            if progress is not None:
                progress.solution = current
                progress.changed()
            for goal in constrained:
                value = expressions[id(goal)].value(first.solution)
                stages.append(Stage(goal, GoalStatus.OPTIMAL, value, float(run.limit(goal)), first.seconds, engine))
        else:
            stages += [Stage(goal, GoalStatus.TIME_LIMIT, backend=engine) for goal in constrained]
            return SequenceResult(None, stages, notes + ["no assignment found within the time limit"], True)

    for number, goal in enumerate(order, 1):
        expression = expressions[id(goal)]
        if current is not None:
            current = formulation.repair(current)
            if session.feasible(current) and expression.value(current) <= goal.lower_bound():
                # The start meets every row (a start that leaves partitions out, as a cooperative
                # group's assignment applied now does, is no point of the model) and already
                # reaches the goal's lower bound: proven optimal, no solve.
                value = expression.value(current)
                stages.append(Stage(goal, GoalStatus.OPTIMAL, value, float(goal.lower_bound()), 0.0, engine))
                session.add_row(expression, -UNBOUNDED, run.tolerance(goal).limit(value))
                continue
        doing(f"goal {goal.name!r}, stage {number} of {len(order)} ({engine})")
        if run.remaining() == 0.0:
            stages.append(Stage(goal, GoalStatus.TIME_LIMIT, backend=engine))
            notes.append(f"stage {goal.name!r} not started: the time limit was reached")
            break
        result: StageResult = session.minimize(expression, run.remaining(), current, **search_limits(goal))
        stages.append(Stage(goal, result.status, result.objective, result.bound, result.seconds, engine))
        if result.solution is None or result.objective is None:
            notes.append(f"stage {goal.name!r} found no solution ({result.status})")
            break
        current = result.solution
        if progress is not None:
            progress.solution = current
            progress.changed()
        session.add_row(expression, -UNBOUNDED, run.tolerance(goal).limit(result.objective))
    if current is not None and not session.feasible(current):
        # the start, never replaced by a stage's point (the time ran out first) and no point of
        # the model: Kafka's assignment applied now can leave partitions out or break balance
        current = None
        notes.append("no stage found an assignment: the start meets not every row")
    if current is not None and not fallback:
        _held(stages, constrained, expressions, current)
    assignment = formulation.decode(current) if current is not None else None
    return SequenceResult(assignment, stages, notes, fallback)


def _held(stages: list[Stage], constrained: list[Goal], expressions: Expressions, point: np.ndarray) -> None:
    """The stages of the hard goals with a bound, as the final `point` has them: a constraint
    is not minimised, so its value is `optimal` only at the goal's lower bound (where nothing
    can be lower), else `feasible` within its bound (a tolerance on `balance` lets it stray);
    the bound reported is the lower bound."""
    for i, stage in enumerate(stages):
        if stage.goal in constrained and stage.status != GoalStatus.INFEASIBLE:
            value = expressions[id(stage.goal)].value(point)
            status = GoalStatus.OPTIMAL if value <= stage.goal.lower_bound() else GoalStatus.FEASIBLE
            stages[i] = Stage(stage.goal, status, value, float(stage.goal.lower_bound()), stage.seconds, stage.backend)


CONFLICT_TRIAL_SECONDS = 10.0
"""Seconds each trial of `conflicting` gets at most (and never more than the time left)."""


def conflicting(run: Run, constrained: list[Goal]) -> list[Goal]:
    """A small set of hard goals that cannot hold together: drop goals while the rest conflict
    (each trial within 10 s and the time left; when time runs out, the set found so far)."""
    formulation = formulate(run.problem)
    expressions = {id(g): g.encode(formulation) for g in constrained}
    kept = list(constrained)
    for goal in list(constrained):
        left = run.remaining()
        if left == 0.0:
            break
        trial = [g for g in kept if g is not goal]
        session = run.start(formulation.model)
        for other in trial:
            session.add_row(expressions[id(other)], -UNBOUNDED, run.limit(other))
        seconds = CONFLICT_TRIAL_SECONDS if left is None else min(CONFLICT_TRIAL_SECONDS, left)
        if session.minimize(LinExpr.zero(), seconds, None).status == GoalStatus.INFEASIBLE:
            kept = trial
    return kept
