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

The audit goes further than a goal's own check: `Enumeration(problem, goals).audit(claims)`
checks what a result claims stage by stage (statuses, bounds, values) against every valid
assignment, and `audit_problem(problem)` runs that on every back-end, model and `solve` path
(docs/engine.md, "How optimality is certified"; bench/optimality.py runs it on 10,000 problems).

    from optimizer.testing import audit_problem
    from optimizer.generate import varied_problem

    assert not audit_problem(varied_problem(7)).findings
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from optimizer.backends import named
from optimizer.catalogue import EXACT_SOLVERS, goal_class, resolve_goals
from optimizer.costs import StreamsIndex
from optimizer.engine.patterns import pattern_variables
from optimizer.engine.sequence import Tolerance, model_variables, run_sequence, told_apart
from optimizer.engine.transition import CaughtUpNow, TargetDistance
from optimizer.errors import NoSolutionError, SolverUnavailableError
from optimizer.generate import random_consumer_problem, random_streams_problem, varied_problem
from optimizer.goal import Assignment, Goal, soft, stage_order
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import partition_id
from optimizer.model.normalize import normalize
from optimizer.model.problem import Problem
from optimizer.model.solution import ClientAssignment, GoalStatus, Solution
from optimizer.model.streams import StreamsProblem
from optimizer.solve import solve

SOLVERS: tuple[str, ...] = EXACT_SOLVERS
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
    varied: bool = False,
) -> int:
    """Check `goal` against every back-end on `cases` small random problems of each kind it
    applies to (`kinds`: those of them only): alone, and between the goals `before` and `after`
    (so that its encoding is checked both as the objective and frozen as a constraint). `goal` may
    be a function of the problem (a goal whose argument names clients, say). `weighted`: problems
    with bytes per second, task weights and capacities (`small_problem`); `varied`: problems of
    every shape instead (`optimizer.generate.varied_problem`: every assignor and protocol, owned
    partitions and contested claims, lags, tags, up to two standbys, rates up to 1.5 GB/s).
    Returns the number of sequences checked."""
    checked = 0
    for kind in kinds if kinds is not None else ("streams", "consumer"):
        for case in range(cases):
            problem = normalize(varied_problem(seed + case, kind)).problem if varied else small_problem(kind, seed + case, weighted)
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


# ---------------------------------------------------------------------------- auditing claims


class Flaw(StrEnum):
    """What enumeration can find wrong with a stage's claim."""

    FALSE_OPTIMAL = "false optimal"
    """`optimal`, with a value above the least any assignment reaches given the stages before."""
    BETTER_THAN_POSSIBLE = "better than possible"
    """A value below that least value: the goal's encoding and its `evaluate` disagree."""
    BOUND_ABOVE_OPTIMUM = "bound above the optimum"
    """A proven lower bound above the least value: a proof that is false."""
    FALSE_INFEASIBLE = "false infeasible"
    """`infeasible` where assignments meet every row the stage had."""
    NOT_THE_GOALS_VALUE = "not the goal's value"
    """The returned assignment's value (the goal's `evaluate`) is not what the stage says:
    above a frozen value, or other than an optimal one."""
    BOUND_BROKEN = "hard bound broken"
    """A hard goal with a bound exceeds it, although the stages say it holds."""
    BOUND_ABOVE_VALUE = "bound above its value"
    """A stage's proven bound above the stage's own value: a proof that its own point refutes."""
    UNREACHABLE_BOUND = "hard bound unreachable"
    """A hard goal whose bound every valid problem must reach (`ALWAYS_REACHABLE`) is met by no
    valid assignment: the engine would say the problem's hard goals conflict, where Kafka
    assigns it."""
    RAISED = "raised"
    """The run raised instead of returning a result."""


@dataclass(frozen=True)
class Claim:
    """One stage as a result reports it, in the order the stages ran."""

    goal: Goal
    status: GoalStatus
    objective: float | None
    bound: float | None


@dataclass(frozen=True)
class Finding:
    """A claim that enumeration contradicts."""

    goal: str
    flaw: Flaw
    claimed: float | None
    enumerated: float | None
    detail: str = ""

    def __str__(self) -> str:
        if self.flaw == Flaw.RAISED:
            return f"raised {self.detail}"
        return f"{self.goal}: {self.flaw} (claimed {self.claimed}, enumerated {self.enumerated})"


ALWAYS_REACHABLE = frozenset({"balance"})
"""Hard goals whose bound comes from the problem alone, not from the user (as `movement_budget=N`'s
does), and that some valid assignment of every problem must reach: Kafka assigns every valid
problem, and the engine must not call such a goal in conflict."""


class Enumeration:
    """Every valid assignment of a small normalised problem with each goal's value on it (the
    goals' own `evaluate`: no encoding, no solver), to check what a result claims stage by stage."""

    def __init__(self, problem: Problem, goals: Sequence[Goal]):
        self.problem = problem
        self.goals = list(goals)
        rows = [[goal.evaluate(problem, assignment) for goal in self.goals] for assignment in assignments(problem)]
        self.values = np.array(rows, dtype=np.int64).reshape(len(rows), len(self.goals))
        self.column = {goal.name: j for j, goal in enumerate(self.goals)}

    def __len__(self) -> int:
        return len(self.values)

    def lexicographic(self) -> list[int] | None:
        """What `brute_force` gives: the optimum stage by stage, None when the hard goals conflict."""
        constrained, ordered = stage_order(self.problem, self.goals)
        mask = self._within_bounds(constrained)
        if not mask.any():
            return None
        values = [0] * len(constrained)
        for goal in ordered:
            column = self.values[:, self.column[goal.name]]
            best = int(column[mask].min())
            values.append(best)
            mask &= column <= best
        return values

    def unreachable(self) -> list[Finding]:
        """A finding for each goal of `ALWAYS_REACHABLE` with a bound that no assignment meets."""
        findings = []
        for goal in self.goals:
            bound = goal.hard_bound(self.problem) if goal.hard else None
            if goal.name in ALWAYS_REACHABLE and bound is not None and len(self.values):
                least = int(self.values[:, self.column[goal.name]].min())
                if least > bound:
                    findings.append(Finding(goal.name, Flaw.UNREACHABLE_BOUND, float(bound), float(least)))
        return findings

    def _within_bounds(self, constrained: Sequence[Goal], tolerances: Mapping[str, Tolerance] | None = None) -> np.ndarray:
        mask = np.ones(len(self.values), dtype=bool)
        for goal in constrained:
            bound = goal.hard_bound(self.problem)
            assert bound is not None
            limit = (tolerances or {}).get(goal.name, Tolerance()).limit(bound)
            mask &= self.values[:, self.column[goal.name]] <= limit
        return mask

    def audit(self, claims: Sequence[Claim], assignment: Mapping[str, ClientAssignment] | None = None,
              tolerances: Mapping[str, Tolerance] | None = None) -> list[Finding]:  # fmt: skip
        """What is wrong with `claims` (the stages of one result, in the order they ran, the
        engine's `stage_order`) and with `assignment`, the result's: each stage's value, status
        and bound against the least value over the assignments that meet the hard bounds and
        every earlier stage's value (within its tolerance), as the engine freezes them. Hard
        goals said to conflict (`infeasible`) are checked to conflict and then count as soft
        goals, as the engine minimises them. A result whose values are `heuristic` (Kafka's
        assignment, the fallback when nothing was found in time) claims nothing. Empty when every
        claim holds."""
        if any(claim.status == GoalStatus.HEURISTIC for claim in claims):
            return []
        constrained, _ = stage_order(self.problem, self.goals)
        hard = {goal.name for goal in constrained}
        conflict = any(c.status == GoalStatus.INFEASIBLE and c.goal.name in hard for c in claims)
        findings: list[Finding] = []
        if conflict and self._within_bounds(constrained, tolerances).any():
            findings.append(Finding(", ".join(sorted(hard)), Flaw.FALSE_INFEASIBLE, None, None))
        mask = np.ones(len(self.values), dtype=bool) if conflict else self._within_bounds(constrained, tolerances)
        frozen: dict[str, int] = {}
        for claim in claims:
            name = claim.goal.name
            column = self.values[:, self.column[name]]
            if claim.bound is not None and claim.objective is not None and claim.bound > claim.objective + 1e-9:
                findings.append(Finding(name, Flaw.BOUND_ABOVE_VALUE, claim.bound, claim.objective))
            if name in hard and not conflict:
                # a constraint, not minimised: within its bound, `optimal` only at the least value
                limit = (tolerances or {}).get(name, Tolerance()).limit(claim.goal.hard_bound(self.problem) or 0)
                least = float(column[mask].min()) if mask.any() else None
                if claim.objective is not None and claim.objective > limit:
                    findings.append(Finding(name, Flaw.BOUND_BROKEN, claim.objective, limit))
                elif least is not None and claim.objective is not None and claim.objective < least:
                    findings.append(Finding(name, Flaw.BETTER_THAN_POSSIBLE, claim.objective, least))
                elif least is not None and claim.status == GoalStatus.OPTIMAL and claim.objective is not None and claim.objective > least:
                    findings.append(Finding(name, Flaw.FALSE_OPTIMAL, claim.objective, least))
                if least is not None and claim.bound is not None and claim.bound > least + 1e-9:
                    findings.append(Finding(name, Flaw.BOUND_ABOVE_OPTIMUM, claim.bound, least))
                frozen[name] = limit
                continue
            if claim.status == GoalStatus.INFEASIBLE and not (name in hard and conflict and claim.objective is not None):
                if name in hard and conflict:
                    continue  # the conflict itself, checked above; minimised as a soft goal later
                if mask.any():
                    findings.append(Finding(name, Flaw.FALSE_INFEASIBLE, None, float(column[mask].min())))
                break
            if claim.objective is None or not mask.any():
                break  # nothing claimed from here on
            best = float(column[mask].min())
            if claim.objective < best:
                findings.append(Finding(name, Flaw.BETTER_THAN_POSSIBLE, claim.objective, best))
            elif claim.status == GoalStatus.OPTIMAL and claim.objective > best:
                findings.append(Finding(name, Flaw.FALSE_OPTIMAL, claim.objective, best))
            if claim.bound is not None and claim.bound > best + 1e-9:
                findings.append(Finding(name, Flaw.BOUND_ABOVE_OPTIMUM, claim.bound, best))
            limit = (tolerances or {}).get(name, Tolerance()).limit(int(claim.objective))
            frozen[name] = limit
            mask &= column <= limit
        if assignment is not None:
            by_name = {c.goal.name: c for c in claims}
            for name, limit in frozen.items():
                claim = by_name[name]
                value = claim.goal.evaluate(self.problem, assignment)
                # a hard goal's stage states the final assignment's value; an optimal one, the value
                exact = claim.objective is not None and (claim.status == GoalStatus.OPTIMAL or (name in hard and not conflict))
                if value > limit or (exact and value != claim.objective):
                    findings.append(Finding(name, Flaw.NOT_THE_GOALS_VALUE, claim.objective, value))
        return findings


def claims_of(problem: Problem, goals: Sequence[Goal], solution: Solution) -> list[Claim]:
    """The stages of a `solve` result, in the engine's stage order (`stage_order`): its goal
    results are listed in the order the goals were given."""
    results = {result.name: result for result in solution.goals}
    constrained, ordered = stage_order(problem, goals)
    return [
        Claim(goal, results[goal.name].status, results[goal.name].value, results[goal.name].bound)
        for goal in [*constrained, *ordered]
        if goal.name in results
    ]


@dataclass
class Audit:
    """What `audit_problem` checked on one problem and what it found."""

    shape: str
    """The problem's kind and what sets its default sequence and Kafka's assignor, e.g.
    "consumer/cooperative-sticky/weighted"."""
    assignments: int
    """How many valid assignments enumeration listed."""
    runs: dict[str, tuple[int, int]]
    """Per run ("milp (compressed)", "solve cpsat", "applied now exact", ...): (stages checked,
    of which claimed optimal)."""
    findings: list[tuple[str, Finding]]
    """(run, finding) for every claim that enumeration contradicts, and ("run", error) for a run
    that raised."""


def shape_of(problem: Problem) -> str:
    """A problem's kind, protocol or assignor, and whether it is weighted: the shapes an audit
    campaign counts by."""
    if isinstance(problem, StreamsProblem):
        streams = problem.config
        assignor = f"streams-group-{streams.streams_assignor_name}" if streams.group_protocol == "streams" else str(streams.task_assignor_class)
        extra = [f"standbys-{streams.num_standby_replicas}", *(["tags"] if streams.rack_aware_assignment_tags else [])]
    else:
        assert isinstance(problem, ConsumerProblem)
        group = problem.config
        assignor = f"kip848-{group.remote_assignor}" if group.group_protocol == "consumer" else str(group.partition_assignment_strategy)
        extra = ["owned"] if any(m.owned_partitions for m in problem.members) else []
    return "/".join([problem.kind, assignor, *extra, *(["weighted"] if problem.weighted else [])])


DRAWN_GOALS = {
    "streams": ("balance", "weighted_balance", "standby_rack_diversity", "subtopology_spread", "cross_rack_traffic", "cross_rack_bytes",
                "stickiness", "caught_up", "kip925_cost", "restore_volume"),
    "consumer": ("balance", "weighted_balance", "cross_rack_traffic", "cross_rack_bytes", "stickiness"),
}  # fmt: skip
"""The built-in goals `drawn_sequence` draws from, by kind."""


def drawn_sequence(kind: str, seed: int) -> list[str]:
    """A goal sequence other than the default, for an audit: 1 to 4 goals of `kind` in any
    order (a hard goal listed late is still solved first, as the engine orders stages),
    sometimes a movement budget after them."""
    rng = random.Random(f"drawn-{seed}")
    names = rng.sample(DRAWN_GOALS[kind], rng.randint(1, 4))
    if rng.random() < 0.25:
        names.append(f"movement_budget={rng.randint(0, 3)}")
    return names


def audit_problem(
    raw: Problem, solvers: Sequence[str] = SOLVERS, public: bool = True, sequence: Sequence[str] | None = None,
    time_limits: Sequence[float] = (),
) -> Audit:  # fmt: skip
    """Every claim the engine makes on `raw` (small enough to enumerate), against enumeration:
    the goal sequence (`sequence`, names as `solve` takes them; None: the default one) on every
    back-end and model `models_for` names (`run_sequence`); for Streams, the sequence of the
    assignment applied now towards that target (caught-up actives, a soft balance, the distance
    to the target) where the target needs one; with `public`, `solve` itself with each solver
    (its goal results and both of its assignments, which `solve` checks with the evaluator); and
    `solve` with the default solver cut short by each of `time_limits` (seconds), where stages
    end `time_limit` or `feasible` and their bounds, or Kafka's fallback, are checked the same way
    (which of them a run reaches depends on the machine's load)."""
    problem = normalize(raw).problem
    goals = resolve_goals(sequence, raw)
    enumeration = Enumeration(problem, goals)
    audit = Audit(shape_of(raw), len(enumeration), {}, [("enumeration", finding) for finding in enumeration.unreachable()])

    def record(run: str, claims: Sequence[Claim], assignment: Mapping[str, ClientAssignment] | None, against: Enumeration) -> None:
        audit.runs[run] = (len(claims), sum(c.status == GoalStatus.OPTIMAL for c in claims))
        audit.findings += [(run, finding) for finding in against.audit(claims, assignment)]

    def failed(run: str, error: Exception) -> None:
        audit.findings.append((run, Finding("", Flaw.RAISED, None, None, f"{type(error).__name__}: {error}")))

    def sequences(sequence_goals: list[Goal], against: Enumeration, label: str) -> Mapping[str, ClientAssignment] | None:
        """`sequence_goals` on each of `solvers` that can take them and each model `models_for`
        names; returns the assignment of `exact` on the full model."""
        found = None
        for solver in solvers:
            if label and solver != "exact" and not named(solver).capabilities.linear:
                continue  # the applied-now step runs on linear back-ends only (optimizer.engine.transition)
            for model in models_for(solver, problem, sequence_goals):
                compress, patterns = MODELS[model]
                run = f"{label}{solver}{'' if model == 'full' else f' ({model})'}"
                try:
                    result = run_sequence(problem, sequence_goals, solver, compress=compress, patterns=patterns)
                except Exception as error:  # noqa: BLE001 - a run that raises is a finding, reported with the rest
                    failed(run, error)
                    continue
                record(run, [Claim(s.goal, s.status, s.objective, s.bound) for s in result.stages], result.assignment, against)
                if solver == "exact" and model == "full":
                    found = result.assignment
        return found

    target = sequences(goals, enumeration, "")
    if isinstance(problem, StreamsProblem) and target is not None and CaughtUpNow(target).evaluate(problem, target) > 0:
        towards: list[Goal] = [CaughtUpNow(target), soft(goal_class("balance"))(), TargetDistance(target)]
        sequences(towards, Enumeration(problem, towards), "applied now ")
    if public:
        for solver in solvers:
            run = f"solve {solver}"
            try:
                solution = solve(raw, solver=solver, goals=sequence)
            except SolverUnavailableError:
                continue  # a back-end that cannot take this sequence says so: nothing claimed
            except Exception as error:  # noqa: BLE001 - as above
                failed(run, error)
                continue
            record(run, claims_of(problem, goals, solution), solution.target or solution.assignment, enumeration)
    for limit in time_limits:
        run = f"solve exact, {limit:g} s"
        try:
            solution = solve(raw, goals=sequence, time_limit=limit)
        except NoSolutionError:
            continue  # nothing within the limit, said so: nothing claimed
        except Exception as error:  # noqa: BLE001 - as above
            failed(run, error)
            continue
        record(run, claims_of(problem, goals, solution), solution.target or solution.assignment, enumeration)
    return audit
