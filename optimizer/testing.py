"""The conformance kit: check a goal, built-in or a plugin's, against every back-end.

On problems small enough to enumerate every valid assignment, the lexicographic optimum of a goal
sequence is known without any solver: each goal's own `evaluate` ranks the assignments. Every
registered back-end (`optimizer.backends.REGISTRY`: linear ones on the full model and, for
Streams, the compressed one; flow-only ones where they take the sequence) and `exact` must then
reach that optimum stage by stage, prove it, and return an assignment on which each goal's
`evaluate` gives the stage's value. That is what a goal's `encode` and `flow` must agree with.

    from optimizer.testing import check_goal

    check_goal(MyGoal())                      # each kind it applies to, 8 small problems each
    check_goal(lambda problem: DrainClients(first_client(problem)), kinds=("streams",))

The checks raise `AssertionError` naming the back-end, the model and the goals, so they read well
under pytest; nothing here needs pytest. The project's own suite (tests/engine/test_conformance.py)
is built on the same functions.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Sequence

from optimizer.backends import named
from optimizer.costs import StreamsIndex
from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.goal import Assignment, Goal, stage_order
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import partition_id
from optimizer.model.normalize import normalize
from optimizer.model.problem import Problem
from optimizer.model.solution import ClientAssignment, GoalStatus
from optimizer.model.streams import StreamsProblem
from optimizer.patterns import pattern_variables
from optimizer.sequence import BACKENDS, model_variables, run_sequence, told_apart
from optimizer.solve import resolve_goals

SOLVERS: tuple[str, ...] = BACKENDS
"""The engine's choice and every registered back-end."""


def streams_assignments(problem: StreamsProblem) -> Iterator[Assignment]:
    """Every valid assignment: one active per task, min(standbys, clients - 1) standbys per
    stateful task on other clients."""
    index = StreamsIndex.of(problem)
    clients = [c.id for c in index.clients]
    standbys = problem.effective_standby_replicas
    for actives in itertools.product(range(len(clients)), repeat=len(index.tasks)):
        choices = [
            list(itertools.combinations([k for k in range(len(clients)) if k != a], standbys)) if task.stateful else [()]
            for task, a in zip(index.tasks, actives, strict=True)
        ]
        for standby_sets in itertools.product(*choices):
            held: dict[str, tuple[list[str], list[str]]] = {c: ([], []) for c in clients}
            for task, a, others in zip(index.tasks, actives, standby_sets, strict=True):
                held[clients[a]][0].append(task.id)
                for k in others:
                    held[clients[k]][1].append(task.id)
            yield {c: ClientAssignment(active=tuple(a), standby=tuple(s)) for c, (a, s) in held.items()}


def consumer_assignments(problem: ConsumerProblem) -> Iterator[Assignment]:
    """Every valid assignment: each partition of a subscribed topic on one of its subscribers."""
    members = {m.id: m for m in problem.members}
    partitions, owners = [], []
    for topic in problem.topics:
        subscribers = sorted(m for m in members if topic.name in members[m].subscriptions)
        for p in range(topic.partitions):
            if subscribers:
                partitions.append(partition_id(topic.name, p))
                owners.append(subscribers)
    for choice in itertools.product(*owners):
        held: dict[str, list[str]] = {m: [] for m in members}
        for partition, member in zip(partitions, choice, strict=True):
            held[member].append(partition)
        yield {m: ClientAssignment(active=tuple(h)) for m, h in held.items()}


def assignments(problem: Problem) -> Iterator[Assignment]:
    """Every valid assignment of a (small, normalised) problem."""
    if isinstance(problem, StreamsProblem):
        return streams_assignments(problem)
    return consumer_assignments(problem)


def brute_force(problem: Problem, goals: Sequence[Goal]) -> list[int] | None:
    """The lexicographic optimum (one value per goal, in the engine's stage order: hard goals
    with a bound first, then the others as listed), or None when the hard goals cannot hold
    together."""
    constrained, ordered = stage_order(problem, goals)
    bounds = [g.hard_bound(problem) for g in constrained]
    best = None
    for assignment in assignments(problem):
        if any(bound is not None and g.evaluate(problem, assignment) > bound for g, bound in zip(constrained, bounds, strict=True)):
            continue
        values = [g.evaluate(problem, assignment) for g in ordered]
        if best is None or values < best:
            best = values
    return None if best is None else [0] * len(constrained) + best


def models_for(solver: str, problem: Problem, goals: Sequence[Goal]) -> list[str]:
    """The models `solver` is checked on for this sequence: linear back-ends on the full model
    ("full": the engine's choice, the full one at these sizes) and, for Streams, the compressed
    one ("compressed") and the pattern one where the goals tell no task of a subtopology apart
    ("patterns"); flow-only back-ends only where they take the sequence ("full")."""
    if solver == "exact":
        return ["full"]
    backend = named(solver)
    if not backend.capabilities.linear:
        return ["full"] if backend.unsupported(problem, goals, {}) is None else []
    if problem.kind != "streams":
        return ["full"]
    told = told_apart(problem, list(goals))
    small, _ = model_variables(problem, list(goals), told)
    variables = pattern_variables(problem, *told)
    if variables is None or small is None or variables > small:  # the engine's rule: never larger
        return ["full", "compressed"]
    return ["full", "compressed", "patterns"]


MODELS: dict[str, tuple[bool | None, bool]] = {"full": (None, True), "compressed": (True, False), "patterns": (True, True)}
"""`run_sequence`'s (`compress`, `patterns`) for each model `models_for` names."""


def check(solver: str, problem: Problem, goals: Sequence[Goal], expected: list[int]) -> None:
    """`solver` reaches `expected` stage by stage, proven, with each stage's value the goal's
    `evaluate` on the assignment it returns."""
    names = [g.name for g in goals]
    for model in models_for(solver, problem, goals):
        compress, patterns = MODELS[model]
        result = run_sequence(problem, list(goals), solver, compress=compress, patterns=patterns)
        label = f"{solver}{'' if model == 'full' else f' ({model})'}"
        if model == "patterns":  # tried: used, or declined with its reason
            assert any(note.startswith("pattern model") for note in result.notes), (label, names, result.notes)
        assert not result.fallback, (label, names, result.notes)
        values = [stage.objective for stage in result.stages]
        assert values == expected, (label, names, values, expected, result.notes)
        assert all(stage.status == GoalStatus.OPTIMAL for stage in result.stages), (label, names)
        assert result.assignment is not None, (label, names)
        for stage in result.stages:
            assert stage.goal.evaluate(problem, result.assignment) == stage.objective, (label, stage.goal.name)
            assert stage.bound is not None and stage.bound <= (stage.objective or 0) + 1e-6, (label, stage.goal.name)


def check_backends(problem: Problem, goals: Sequence[Goal], expected: list[int] | None = None) -> None:
    """Every back-end and `exact` reach the lexicographic optimum of `goals` on `problem`
    (`expected`, or found by enumeration). `problem` must be normalised and small."""
    if expected is None:
        expected = brute_force(problem, goals)
        assert expected is not None, ("the hard goals cannot hold together", [g.name for g in goals])
    for solver in SOLVERS:
        check(solver, problem, goals, expected)


def small_problem(kind: str, seed: int, weighted: bool = False) -> Problem:
    """A random normalised problem small enough to enumerate (3-4 tasks on 3 clients with racks,
    standbys, tags, thread counts and history; or 2-3 members reading 2 topics); `weighted` adds
    skewed bytes per second, task weights and capacities."""
    rng = random.Random(seed)
    if kind == "streams":
        problem: Problem = random_streams_problem(
            seed, tasks=rng.randint(3, 4), clients=3, racks=rng.randint(2, 3), standby_replicas=rng.randint(0, 1),
            threads=(1, rng.randint(1, 2)), stateful_fraction=0.5 + rng.random() / 2, churn=0.2 + rng.random() * 0.4,
            tags=("zone",) if rng.random() < 0.3 else (), rates=weighted, weights=weighted,
        )  # fmt: skip
    else:
        problem = random_consumer_problem(
            seed, members=rng.randint(2, 3), topics=2, partitions=(1, 3), equal_subscriptions=seed % 3 == 0, churn=0.3,
            rates=weighted, weights=weighted,
        )  # fmt: skip
    return normalize(problem).problem


def check_goal(
    goal: Goal | Callable[[Problem], Goal],
    kinds: Sequence[str] | None = None,
    cases: int = 8,
    before: Sequence[str] = ("balance",),
    after: Sequence[str] = ("stickiness",),
    seed: int = 0,
    weighted: bool = False,
) -> int:
    """Check `goal` against every back-end on `cases` small random problems of each kind it
    applies to (`kinds`: those of them only): alone, and between the goals `before` and `after`
    (so that its encoding is checked both as the objective and frozen as a constraint). `goal` may
    be a function of the problem (a goal whose argument names clients, say). `weighted`: problems
    with bytes per second, task weights and capacities (`small_problem`). Returns the number of
    sequences checked."""
    checked = 0
    for kind in kinds if kinds is not None else ("streams", "consumer"):
        for case in range(cases):
            problem = small_problem(kind, seed + case, weighted)
            made = goal(problem) if callable(goal) and not isinstance(goal, Goal) else goal
            if kind not in made.kinds:
                assert kinds is None, f"goal {made.name!r} does not apply to {kind} problems"
                break
            others_before = [g for g in resolve_goals(list(before), kind) if g.name != made.name]
            others_after = [g for g in resolve_goals(list(after), kind) if g.name != made.name]
            for goals in ([made], [*others_before, made, *others_after]):
                expected = brute_force(problem, goals)
                if expected is None:  # hard goals in conflict on this problem: nothing to compare
                    continue
                for solver in SOLVERS:
                    check(solver, problem, goals, expected)
                checked += 1
    return checked
