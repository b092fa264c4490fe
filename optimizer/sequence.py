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

Active and standby tasks are decided together: they are variables of one model.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

import optimizer.compressed as compressed
from optimizer.backends import REGISTRY, Backend, named
from optimizer.catalogue import EXACT_SOLVERS
from optimizer.costs import StreamsIndex
from optimizer.errors import GoalError, SolverUnavailableError
from optimizer.formulation import UNBOUNDED, Formulation, LinExpr, formulate
from optimizer.goal import APART, Goal, stage_order
from optimizer.model.limits import MAX_MODEL_VARIABLES
from optimizer.model.problem import Problem
from optimizer.model.solution import GoalStatus
from optimizer.patterns import PatternStreamsFormulation, pattern_variables
from optimizer.results import SequenceResult, Stage, StageResult, Unsupported

if TYPE_CHECKING:  # mypy checks that the formulations the engine hands goals are what goals are promised
    from optimizer.formulation import ConsumerFormulation, StreamsFormulation
    from optimizer.protocols import ConsumerFormulationAPI, StreamsFormulationAPI, StreamsVariablesAPI

    def _full_model(formulation: StreamsFormulation) -> StreamsVariablesAPI:
        return formulation

    def _compressed_model(formulation: compressed.CompressedStreamsFormulation) -> StreamsFormulationAPI:
        return formulation

    def _consumer_model(formulation: ConsumerFormulation) -> ConsumerFormulationAPI:
        return formulation


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


@dataclass(frozen=True)
class Tolerance:
    """How far a later stage may let a frozen goal rise above its optimum."""

    absolute: int = 0
    relative: float = 0.0

    def limit(self, optimum: int) -> int:
        return optimum + max(self.absolute, math.floor(abs(optimum) * self.relative))

    @classmethod
    def parse(cls, text: str) -> Tolerance:
        text = text.strip()
        try:
            if text.endswith("%"):
                return cls(relative=float(text[:-1]) / 100)
            return cls(absolute=int(text))
        except ValueError:
            raise GoalError(f"tolerance {text!r}: expected a whole number or a percentage like 2%") from None


@dataclass
class Progress:
    """How far a sequence has got, kept up to date as it runs, for a caller that stops it at a
    deadline (`optimizer.solve`): the integer model in use, its latest solution and the stages
    done. `result()` turns that into the sequence's result, as if it had ended there."""

    formulation: Formulation | None = None
    solution: np.ndarray | None = None
    stages: list[Stage] = field(default_factory=list)

    def result(self, note: str) -> SequenceResult | None:
        """The assignment of the latest solution and the stages that led to it, or None when
        no stage has found one."""
        if self.solution is None or self.formulation is None:
            return None
        try:
            assignment = self.formulation.decode(self.solution)
        except Exception:  # noqa: BLE001 - a compressed model's counts that cannot be spread
            return None
        return SequenceResult(assignment, list(self.stages), [note])


def run_sequence(
    problem,
    goals: list[Goal],
    backend: str = "exact",
    time_limit: float | None = None,
    tolerances: dict[str, Tolerance] | None = None,
    hint: Callable[[], dict] | None = None,
    compress: bool | None = None,
    progress: Progress | None = None,
    patterns: bool = True,
) -> SequenceResult:
    """Solve `goals` (priority order) on the normalised `problem`; `hint()` gives a full
    assignment to start from (called only by back-ends that use one). Streams problems go to the
    compressed formulation when it is much smaller and every goal supports it (`compress`: True
    forces it, False never), and to the pattern formulation before it when nothing tells tasks of
    a subtopology apart (`patterns`: False never). `progress`, when given, follows the integer
    back-ends' stages."""
    if backend not in EXACT_SOLVERS:
        raise SolverUnavailableError(f"unknown back-end {backend!r}: expected one of {', '.join(EXACT_SOLVERS)}")
    tolerances = tolerances or {}
    started = time.perf_counter()
    for goal in goals:
        if not goal.applies_to(problem):
            raise GoalError(f"goal {goal.name!r} does not apply to {problem.kind} problems")

    declined = []  # notes: the flow-only back-ends `exact` tried that could not take the sequence
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
    linear = candidate

    told = told_apart(problem, goals) if problem.kind == "streams" else None
    small, full = model_variables(problem, goals, told)
    if full > MAX_MODEL_VARIABLES and not (small is not None and compress is not False):
        return _too_large(full, *declined)
    result, notes, start = None, [], None
    if small is not None and compress is not False:
        result, notes, start = _run_compressed(
            problem, goals, linear, time_limit, tolerances, hint, started, compress is True, progress, small, full, told, patterns
        )
    if result is None:
        if full > MAX_MODEL_VARIABLES:
            return _too_large(full, *declined, *notes)
        if start is not None:
            hint = lambda: start  # noqa: E731 - the compressed model's assignment is the best start
        result = _run_linear(problem, goals, linear, time_limit, tolerances, hint, started, formulate(problem), progress=progress)
        result.notes[:0] = notes
    result.notes[:0] = declined
    return result


def distinguished(problem, goals: list[Goal]) -> list[np.ndarray]:
    """The (task, client) pairs each goal prices apart from the client's class (`Goal.distinguished`)."""
    index = StreamsIndex.of(problem)
    return [mask for goal in goals if (mask := goal.distinguished(index)) is not None]


def apart(problem, goals: list[Goal] | None) -> frozenset[str]:
    """What the compressed model must tell clients apart by for `goals` (`Goal.apart`; None: all)."""
    if goals is None:
        return APART
    return frozenset().union(*(goal.apart(problem) for goal in goals))


def told_apart(problem, goals: list[Goal] | None) -> tuple[list[np.ndarray], frozenset[str]]:
    """Streams: (`distinguished`, `apart`) of `goals`, what the compressed model is built from."""
    return distinguished(problem, goals or []), apart(problem, goals)


def model_variables(problem, goals: list[Goal] | None = None, told: tuple[list[np.ndarray], frozenset[str]] | None = None) -> tuple[int | None, int]:
    """Assignment variables (before goals add theirs) of the compressed Streams model (None for
    consumers, which have none) and of the full integer model. `told`: `told_apart(problem, goals)`
    when the caller has it already."""
    if problem.kind == "streams":
        return compressed.sizes(problem, *(told or told_apart(problem, goals)))
    subscribers: dict[str, int] = {}
    for member in problem.members:
        for topic in member.subscriptions:
            subscribers[topic] = subscribers.get(topic, 0) + 1
    return None, sum(topic.partitions * subscribers.get(topic.name, 0) for topic in problem.topics)


def _too_large(variables: int, *notes: str | None) -> SequenceResult:
    """No model built: the caller falls back to Kafka's assignment."""
    said = [n for n in notes if n]
    return SequenceResult(
        None,
        [],
        said + [f"the integer model would have {variables:,} variables, more than {MAX_MODEL_VARIABLES:,}: not built"],
        True,
    )


def _run_compressed(problem, goals, backend, time_limit, tolerances, hint, started, force, progress, small, full, told, use_patterns):
    """The sequence on the pattern formulation (optimizer.patterns) when it applies and is no
    larger, else on the compressed one (optimizer.compressed), whose model has about `small`
    variables where the full one has `full`. Returns (result, [], None) when an assignment reaches
    every stage's value (the result's notes say which model), else (None, notes saying why not,
    the assignment to start the full model from, if any)."""
    variables = pattern_variables(problem, *told) if use_patterns else None
    if variables is not None and variables > small:
        variables = None
    smallest = small if variables is None else variables

    def worth(size: int) -> bool:
        """A merged model of `size` variables is used when forced, at most half the full one, or
        when the full one is too large to build."""
        return force or 2 * size <= full or full > MAX_MODEL_VARIABLES

    if smallest > MAX_MODEL_VARIABLES:
        return None, [f"compressed model not used: it would have {smallest:,} variables"], None
    if not worth(smallest):
        return None, [], None  # not worth it: nothing to report
    if tolerances:
        return None, ["compressed model not used: goals have tolerances"], None
    full_only = [g.name for g in goals if not g.compressible]
    if full_only:
        return None, [f"compressed model not used: goal {full_only[0]!r} is written for the full model"], None
    notes = []
    if variables is not None:
        # Nothing tells two tasks of a subtopology apart: the pattern model, if every goal can be
        # written on it, else the compressed model. If its counts cannot be spread, once more
        # with the classes a task's copies can fill split into single clients.
        size = variables
        for split in (False, True):
            if split:
                size = pattern_variables(problem, *told, split=True)
                if size is None or size == variables or size > small:
                    break  # no class to split, or the compressed model is smaller
            try:
                formulation: compressed.CompressedStreamsFormulation = PatternStreamsFormulation(problem, told[1], split)
                result = _run_linear(problem, goals, backend, time_limit, tolerances, hint, started, formulation, resolve_conflicts=False, progress=progress)
                checked, reason = _checked(problem, result)
            except compressed.NotCompressible as error:
                checked, reason = None, str(error)
                break
            except compressed.DecodeError as error:
                checked, reason = None, str(error)
                continue
            if checked is not None:
                rounds = " (second round, small classes split)" if split else ""
                checked.notes.append(f"pattern model: {size} variables instead of {full}{rounds}")
                return checked, [], None
            break
        notes.append(f"pattern model not used: {reason}")
        if not worth(small):
            return None, notes, None
    # First without the rows that keep counts spreadable (they slow the solver down, and are
    # rarely needed); if the counts cannot be spread, once more with them.
    reason = None
    for room in (False, True):
        try:
            formulation = compressed.CompressedStreamsFormulation(problem, room, *told)
            result = _run_linear(problem, goals, backend, time_limit, tolerances, hint, started, formulation, resolve_conflicts=False, progress=progress)
        except compressed.NotCompressible as error:
            return None, [*notes, f"compressed model not used: {error}"], None
        except compressed.DecodeError as error:
            reason = str(error)
            continue
        checked, reason = _checked(problem, result)
        if checked is None:
            start = result.assignment if reason and reason.endswith("(a bug)") else None
            return None, [*notes, f"compressed model not used: {reason}"], start
        rounds = " (second round, with spreading rows)" if room else ""
        checked.notes[:0] = notes
        checked.notes.append(f"compressed model: {small} variables instead of {full}{rounds}")
        return checked, [], None
    return None, [*notes, f"compressed model not used: {reason}"], None


def _checked(problem, result: SequenceResult) -> tuple[SequenceResult | None, str | None]:
    """(the result, None) when a merged model's assignment exists and reaches every stage's value
    on the problem itself; else (None, why not)."""
    if result.assignment is None or result.fallback:
        return None, "; ".join(result.notes[1:]) or "no assignment"
    for stage in result.stages:
        if stage.objective is None:
            continue
        value = stage.goal.evaluate(problem, result.assignment)
        if value > stage.objective:
            return None, f"its assignment misses the optimum of {stage.goal.name!r} (a bug)"
        if value < stage.objective and stage.status == GoalStatus.OPTIMAL:
            # below a proven optimum: the merged model's value is not the goal's (a bug)
            return None, f"its assignment has {stage.goal.name!r} below the optimum the model proved (a bug)"
    return result, None


def _run_linear(problem, goals, backend, time_limit, tolerances, hint, started, formulation, resolve_conflicts=True, progress=None) -> SequenceResult:
    expressions = {}
    for goal in goals:
        try:
            expressions[id(goal)] = goal.encode(formulation)
        except NotImplementedError:
            raise SolverUnavailableError(f"goal {goal.name!r} has no linear encoding: only a back-end it can express solves it") from None
    constrained, order = stage_order(problem, goals)
    engine = backend.name
    notes = [f"back-end: {engine}"]

    def remaining() -> float | None:
        if time_limit is None:
            return None
        return max(0.0, time_limit - (time.perf_counter() - started))

    session = backend.start(formulation.model)
    for goal in constrained:
        session.add_row(expressions[id(goal)], -UNBOUNDED, _limit(goal, problem, tolerances))
    current = formulation.encode(hint()) if hint is not None else None
    stages: list[Stage] = []
    fallback = False
    if progress is not None:
        progress.formulation, progress.solution, progress.stages = formulation, None, stages

    relaxed: tuple[list[Stage], np.ndarray, str] | None = None
    if getattr(session, "relax", None) is not None and not any(tolerances.get(g.name, Tolerance()) != Tolerance() for g in order):
        limits = [_limit(goal, problem, tolerances) for goal in constrained]
        relaxed = _relaxed_pass(session, list(zip(constrained, limits, strict=True)), order, expressions, remaining, current, engine)
        if relaxed is None:  # not even the hard goals' point: the usual path, from a clean session
            session = backend.start(formulation.model)
            for goal in constrained:
                session.add_row(expressions[id(goal)], -UNBOUNDED, _limit(goal, problem, tolerances))
    if relaxed is not None:
        stages, current, note = relaxed
        order = order[len(stages) - len(constrained) :]
        if progress is not None:
            progress.solution = current
            progress.stages[:] = stages
        notes.append(note)
        if not order:
            _held(stages, constrained, expressions, current)
            return SequenceResult(formulation.decode(current), stages, notes)
    elif constrained:
        # The hard constraints alone: is there an assignment at all?
        if current is not None:
            current = formulation.repair(current)
        first = session.minimize(LinExpr.zero(), remaining(), current)
        if first.status == GoalStatus.INFEASIBLE and not resolve_conflicts:
            return SequenceResult(None, [], notes + ["the hard goals conflict"], True)
        if first.status == GoalStatus.INFEASIBLE:
            conflict = _conflicting(problem, constrained, expressions, backend, remaining, tolerances)
            notes.append("hard goals in conflict: " + ", ".join(repr(g) for g in conflict) + "; they are minimised as soft goals instead")
            for goal in constrained:
                stages.append(Stage(goal, GoalStatus.INFEASIBLE, backend=engine))
            session = backend.start(formulation.model)
            order = constrained + order
            fallback = True
        elif first.has_solution:
            current = first.solution
            if progress is not None:
                progress.solution = current
            for goal in constrained:
                value = expressions[id(goal)].value(first.solution)
                stages.append(Stage(goal, GoalStatus.OPTIMAL, value, float(_limit(goal, problem, tolerances)), first.seconds, engine))
        else:
            stages += [Stage(goal, GoalStatus.TIME_LIMIT, backend=engine) for goal in constrained]
            return SequenceResult(None, stages, notes + ["no assignment found within the time limit"], True)

    for goal in order:
        expression = expressions[id(goal)]
        if current is not None:
            current = formulation.repair(current)
            if session.feasible(current) and expression.value(current) <= goal.lower_bound():
                # The start meets every row (a start that leaves partitions out, as a cooperative
                # group's assignment applied now does, is no point of the model) and already
                # reaches the goal's lower bound: proven optimal, no solve.
                value = expression.value(current)
                stages.append(Stage(goal, GoalStatus.OPTIMAL, value, float(goal.lower_bound()), 0.0, engine))
                tolerance = tolerances.get(goal.name, Tolerance())
                session.add_row(expression, -UNBOUNDED, tolerance.limit(value))
                continue
        if remaining() == 0.0:
            stages.append(Stage(goal, GoalStatus.TIME_LIMIT, backend=engine))
            notes.append(f"stage {goal.name!r} not started: the time limit was reached")
            break
        result: StageResult = session.minimize(expression, remaining(), current)
        stage = Stage(goal, result.status, result.objective, result.bound, result.seconds, engine)
        stages.append(stage)
        if not result.has_solution:
            notes.append(f"stage {goal.name!r} found no solution ({result.status})")
            break
        current = result.solution
        if progress is not None:
            progress.solution = current
        tolerance = tolerances.get(goal.name, Tolerance())
        session.add_row(expression, -UNBOUNDED, tolerance.limit(result.objective))
    if current is not None and not session.feasible(current):
        # the start, never replaced by a stage's point (the time ran out first) and no point of
        # the model: Kafka's assignment applied now can leave partitions out or break balance
        current = None
        notes.append("no stage found an assignment: the start meets not every row")
    if current is not None and not fallback:
        _held(stages, constrained, expressions, current)
    assignment = formulation.decode(current) if current is not None else None
    return SequenceResult(assignment, stages, notes, fallback)


def _held(stages: list[Stage], constrained: list[Goal], expressions, point: np.ndarray) -> None:
    """The stages of the hard goals with a bound, as the final `point` has them: a constraint
    is not minimised, so its value is `optimal` only at the goal's lower bound (where nothing
    can be lower), else `feasible` within its bound (a tolerance on `balance` lets it stray);
    the bound reported is the lower bound."""
    for i, stage in enumerate(stages):
        if stage.goal in constrained and stage.status != GoalStatus.INFEASIBLE:
            value = expressions[id(stage.goal)].value(point)
            status = GoalStatus.OPTIMAL if value <= stage.goal.lower_bound() else GoalStatus.FEASIBLE
            stages[i] = Stage(stage.goal, status, value, float(stage.goal.lower_bound()), stage.seconds, stage.backend)


def _relaxed_pass(session, constrained, order, expressions, remaining, start, engine) -> tuple[list[Stage], np.ndarray, str] | None:
    """The stages at once, as far as the relaxations are tight: each goal in turn is frozen at the
    ceiling of its linear relaxation's optimum (given the goals before it frozen so), then one
    integer point meeting every frozen row is searched for. At such a point each goal's value is
    its bound, and that bound is a lower bound on the goal given the earlier goals at theirs (a
    relaxation of the stage's own problem): every stage is proven optimal, by induction.

    Goals but the last are first guessed to reach their lower bound (`Goal.lower_bound`, usually
    0: no cross-rack standby, no spread excess) and frozen there without a relaxation. A guess is
    proven by the integer point, which cannot go below the lower bound; a wrong one shows as the
    next relaxation being infeasible (then the latest guessed goal gets its relaxation) or as no
    point being found (then the pass starts over without guesses).

    Failing a point, the last goal's row is dropped and the last goal minimised as a stage of its
    own, with the others frozen; its point proves the others the same way. Returns (the stages,
    the point, a note), None when neither works (the caller then starts over stage by stage)."""
    if not order and session.relax(LinExpr.zero(), remaining()) != 0:
        return None
    started = time.perf_counter()
    for guess in (True, False):
        frozen = _frozen_bounds(session, order, expressions, remaining, guess)
        if frozen is None:
            return None
        bounds, guessed = frozen
        point = session.find(remaining(), start)
        last: Stage | None = None
        if point is None and bounds:
            goal, _, seconds = bounds.pop()
            session.pop_row()
            # at most a quarter of the time left: if a bound before the last has no integer point,
            # this is a proof of infeasibility (4 s of a 10 s limit on a 20 x 20 application of the
            # sample fleet), and stage by stage needs the rest
            left = remaining()
            result = session.minimize(expressions[id(goal)], None if left is None else left / 4, start)
            if result.has_solution and result.status != GoalStatus.OPTIMAL and remaining() != 0.0:  # the rest, from its point
                more = session.minimize(expressions[id(goal)], remaining(), result.solution)
                result = StageResult(more.status, more.solution, more.objective, more.bound, result.seconds + more.seconds)
            if result.has_solution and result.status != GoalStatus.INFEASIBLE:
                point = result.solution
                last = Stage(goal, result.status, result.objective, result.bound, seconds + result.seconds, engine)
                session.add_row(expressions[id(goal)], -UNBOUNDED, result.objective)
        if point is not None:
            break
        if not guessed:
            return None
        for _ in bounds:  # a guess may be what no integer point meets: once more, without guesses
            session.pop_row()
    found = time.perf_counter() - started - sum(seconds for _, _, seconds in bounds) - (last.seconds if last else 0.0)
    if any(expressions[id(goal)].value(point) != bound for goal, bound, _ in bounds):
        return None  # below a proven lower bound: a relaxation off its tolerance, trust none
    stages = [Stage(goal, GoalStatus.OPTIMAL, expressions[id(goal)].value(point), float(limit), 0.0, engine) for goal, limit in constrained]
    for i, (goal, bound, seconds) in enumerate(bounds):
        stages.append(Stage(goal, GoalStatus.OPTIMAL, bound, float(bound), seconds + (found if i == len(bounds) - 1 and last is None else 0.0), engine))
    if last is None:
        return stages, point, "every stage proven by its relaxation's bound, one integer point for all"
    return stages + [last], point, "stages before the last proven by their relaxations' bounds; the last minimised on its own"


def _frozen_bounds(session, order, expressions, remaining, guess: bool) -> tuple[list[tuple[Goal, int, float]], bool] | None:
    """Freeze each goal of `order` with a row at its bound: the ceiling of its relaxation, or
    (`guess`, every goal but the last) its lower bound, guessed until a relaxation after it is
    infeasible (then the latest guess is undone and that goal relaxed, and so on back). Returns
    ([(goal, bound, seconds)], whether a guess stands), or None when a relaxation did not solve or
    is infeasible without guesses."""
    bounds: list[tuple[Goal, int, float]] = []
    guessed = 0  # goals frozen by a guess since the last relaxation (the last rows added)
    relaxed: set[int] = set()  # positions whose guess was undone
    stands = False
    i = 0
    while i < len(order):
        goal, expression = order[i], expressions[id(order[i])]
        if guess and i < len(order) - 1 and i not in relaxed:
            session.add_row(expression, -UNBOUNDED, goal.lower_bound())
            bounds.append((goal, goal.lower_bound(), 0.0))
            guessed += 1
            i += 1
            continue
        started = time.perf_counter()
        bound = session.relax(expression, remaining())
        if bound == math.inf and guessed:  # a guess is wrong: the latest one gets its relaxation
            session.pop_row()
            bounds.pop()
            guessed -= 1
            i -= 1
            relaxed.add(i)
            continue
        if bound is None or bound == math.inf:
            return None
        stands = stands or guessed > 0
        guessed = 0
        session.add_row(expression, -UNBOUNDED, bound)
        bounds.append((goal, int(bound), time.perf_counter() - started))
        i += 1
    return bounds, stands


def _limit(goal: Goal, problem: Problem, tolerances: dict[str, Tolerance] | None = None) -> int:
    """The value a constrained hard goal (one with a hard bound) must not exceed: its bound,
    raised by its tolerance (`--tolerance balance=1`: Streams counts one task beyond KIP-441's balance)."""
    bound = goal.hard_bound(problem)
    assert bound is not None, f"goal {goal.name!r} is not constrained"
    return (tolerances or {}).get(goal.name, Tolerance()).limit(bound)


def _conflicting(
    problem, constrained: list[Goal], expressions, backend: Backend, remaining: Callable[[], float | None], tolerances: dict[str, Tolerance]
) -> list[Goal]:
    """A small set of hard goals that cannot hold together: drop goals while the rest conflict
    (each trial within 10 s and the time left; when time runs out, the set found so far)."""
    formulation = formulate(problem)
    exprs = {id(g): g.encode(formulation) for g in constrained}
    kept = list(constrained)
    for goal in list(constrained):
        left = remaining()
        if left == 0.0:
            break
        trial = [g for g in kept if g is not goal]
        session = backend.start(formulation.model)
        for other in trial:
            session.add_row(exprs[id(other)], -UNBOUNDED, _limit(other, problem, tolerances))
        if session.minimize(LinExpr.zero(), 10.0 if left is None else min(10.0, left), None).status == GoalStatus.INFEASIBLE:
            kept = trial
    return kept
