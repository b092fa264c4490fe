"""Which integer model a Streams sequence runs on, and how large each would be.

Three models of one problem: the full one (a variable per task and client, `optimizer.formulation`),
the compressed one (clients with the same rack and the same history merged into classes,
`optimizer.engine.compressed`) and the pattern one (tasks of a subtopology merged too, when no goal
tells them apart, `optimizer.engine.patterns`). A merged model is used when it is at most half the
full one (or the full one is too large to build) and every goal can be written on it; its
assignment must reach every stage's value on the problem itself (`_checked`), else the full model
runs, from the merged model's assignment when there is one (`run_merged`).
"""

from __future__ import annotations

import resource

import numpy as np

import optimizer.engine.compressed as compressed
from optimizer.costs import StreamsIndex
from optimizer.deadline import address_space, physical_memory
from optimizer.engine.patterns import PatternStreamsFormulation, pattern_variables
from optimizer.engine.run import Run
from optimizer.engine.stages import run_stages
from optimizer.goal import APART, Assignment, Goal
from optimizer.model import limits
from optimizer.model.problem import Problem
from optimizer.model.solution import GoalStatus
from optimizer.model.streams import StreamsProblem
from optimizer.results import SequenceResult

ToldApart = tuple[list[np.ndarray], frozenset[str]]
"""What the merged models are built from (`told_apart`): the (task, client) pairs the goals price
apart from a client's class, and the client features they tell clients apart by."""


def distinguished(problem: StreamsProblem, goals: list[Goal]) -> list[np.ndarray]:
    """The (task, client) pairs each goal prices apart from the client's class (`Goal.distinguished`)."""
    index = StreamsIndex.of(problem)
    return [mask for goal in goals if (mask := goal.distinguished(index)) is not None]


def apart(problem: StreamsProblem, goals: list[Goal] | None) -> frozenset[str]:
    """What the compressed model must tell clients apart by for `goals` (`Goal.apart`; None: all)."""
    if goals is None:
        return APART
    return frozenset().union(*(goal.apart(problem) for goal in goals))


def told_apart(problem: StreamsProblem, goals: list[Goal] | None) -> ToldApart:
    """Streams: (`distinguished`, `apart`) of `goals`, what the compressed model is built from."""
    return distinguished(problem, goals or []), apart(problem, goals)


def model_variables(problem: Problem, goals: list[Goal] | None = None, told: ToldApart | None = None) -> tuple[int | None, int]:
    """Assignment variables (before goals add theirs) of the compressed Streams model (None for
    consumers, which have none) and of the full integer model. `told`: `told_apart(problem, goals)`
    when the caller has it already."""
    if isinstance(problem, StreamsProblem):
        return compressed.sizes(problem, *(told or told_apart(problem, goals)))
    subscribers: dict[str, int] = {}
    for member in problem.members:
        for topic in member.subscriptions:
            subscribers[topic] = subscribers.get(topic, 0) + 1
    return None, sum(topic.partitions * subscribers.get(topic.name, 0) for topic in problem.topics)


MODEL_BYTES_PER_VARIABLE = 2048
"""What a variable of an integer model takes, built, loaded into HiGHS and solved (0.4 KB loaded in
a consumer group's model, 1.5 KB in a Streams one, measured at a million variables; solving
copies the model again)."""


def model_limit() -> int:
    """The most variables of an integer model built here: `limits.MAX_MODEL_VARIABLES`, and no more
    than fit at `MODEL_BYTES_PER_VARIABLE` in half the machine's memory and in the address space
    this process may still take (`prlimit --as`)."""
    limit = limits.MAX_MODEL_VARIABLES
    machine = physical_memory()
    if machine:
        limit = min(limit, machine // 2 // MODEL_BYTES_PER_VARIABLE)
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        limit = min(limit, max(0, soft - address_space()) // MODEL_BYTES_PER_VARIABLE)
    return limit


def too_large(variables: int, *notes: str | None) -> SequenceResult:
    """No model built: the caller falls back to the engine's first point."""
    said = [n for n in notes if n]
    return SequenceResult(None, [], [*said, f"the integer model would have {variables:,} variables, more than the {model_limit():,} that fit: not built"], True)


def run_merged(
    run: Run, problem: StreamsProblem, force: bool, small: int, full: int, told: ToldApart, use_patterns: bool
) -> tuple[SequenceResult | None, list[str], Assignment | None]:
    """The sequence on the pattern formulation (optimizer.engine.patterns) when it applies and is no
    larger, else on the compressed one (optimizer.engine.compressed), whose model has about `small`
    variables where the full one has `full`. Returns (result, [], None) when an assignment reaches
    every stage's value (the result's notes say which model), else (None, notes saying why not,
    the assignment to start the full model from, if any). `problem` is `run.problem`."""
    variables = pattern_variables(problem, *told) if use_patterns else None
    if variables is not None and variables > small:
        variables = None
    smallest = small if variables is None else variables

    def worth(size: int) -> bool:
        """A merged model of `size` variables is used when forced, at most half the full one, or
        when the full one is too large to build."""
        return force or 2 * size <= full or full > model_limit()

    if smallest > model_limit():
        return None, [f"compressed model not used: it would have {smallest:,} variables"], None
    if not worth(smallest):
        return None, [], None  # not worth it: nothing to report
    if run.tolerances:
        return None, ["compressed model not used: goals have tolerances"], None
    full_only = [g.name for g in run.goals if not g.compressible]
    if full_only:
        return None, [f"compressed model not used: goal {full_only[0]!r} is written for the full model"], None
    notes: list[str] = []
    if variables is not None:
        # Nothing tells two tasks of a subtopology apart: the pattern model, if every goal can be
        # written on it, else the compressed model. If its counts cannot be spread, once more
        # with the classes a task's copies can fill split into single clients.
        size: int | None = variables
        for split in (False, True):
            if split:
                size = pattern_variables(problem, *told, split=True)
                if size is None or size == variables or size > small:
                    break  # no class to split, or the compressed model is smaller
            try:
                formulation: compressed.CompressedStreamsFormulation = PatternStreamsFormulation(problem, told[1], split)
                result = run_stages(run, formulation, resolve_conflicts=False)
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
            result = run_stages(run, formulation, resolve_conflicts=False)
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


def _checked(problem: Problem, result: SequenceResult) -> tuple[SequenceResult | None, str | None]:
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
