"""The exact engine's policy: what `solve` returns for an exact solver within its deadline, whatever
the engine finds (docs/engine.md "Time limit", decisions 92 and 105). The deadline is the law:
when time runs out, the best assignment found is returned, labelled honestly, never nothing.

`run_exact` is a short sequence of named steps over one `_Answer`:

1. **start**: the engine's own first point (`optimizer.engine.start.fast_start`), balanced and
   rack-aware in milliseconds. The stages start from it and, when the time runs out before any
   stage has a point, it is the answer (statuses `time_limit`): a problem never ends empty because
   a linear relaxation or Kafka's assignor did not finish.
2. **exact**: the target's goal sequence, then for Kafka Streams the assignment applied now,
   optimised towards it (`exact_now`, started from `flow_now`: one min-cost flow keeping stateful
   actives on caught-up clients, as even per thread as that allows, then on their target
   clients). Under a time limit on a problem of `CHILD_PAIRS` pairs or more it runs in a forked
   child process (`optimizer.deadline.Streamed`) that hands back each stage's point as soon as it
   has it and is killed at the engine's deadline, whatever it is doing (a solver's C code, a
   relaxation that does not stop, a model that does not fit in memory); Kafka's assignor runs in
   another child beside it, on the second core. Smaller problems run in this process, their
   Python work stopped at the deadline (`run_within`).
3. **statuses**: each goal's value on the target, its stage's status and proven bound; goals
   whose stage was not reached say `time_limit`.
4. **applied now** (Streams): the optimised assignment, else `flow_now(target)`; either is kept
   only when it is at least as safe as Kafka's applied now (`worse_than`).
5. **withheld** (cooperative consumer groups): partitions that change hands wait a round.
6. **floor**: an answer the engine did not prove (a stage cut by the time) is compared with
   Kafka's on the figures a user compares (`figures`), and Kafka's is returned when it is better,
   meets the hard goals too, and was ready in time.

A sequence the min-cost-flow back-end takes (`_flow_takes`) needs neither: the flow proves it in
a fraction of a second and keeps its own time. The engine's deadline is the caller's less what
`solve` needs after it (`finish_seconds`: the plan to the target and the evaluator's checks,
growing with the problem's size, or with what the first point took on a busy machine).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from optimizer.activity import doing
from optimizer.backends import named
from optimizer.catalogue import goal_class
from optimizer.deadline import Forked, Streamed, WorkBudget, now, physical_memory, remaining, run_within
from optimizer.engine.sequence import Progress, Tolerance, run_sequence
from optimizer.engine.start import fast_start, meets_hard_goals
from optimizer.engine.transition import accepted_skew, exact_now, exact_now_needed, flow_now, withhold_transfers, worse_than
from optimizer.errors import NoSolutionError, SolverUnavailableError, TimeLimitReached
from optimizer.goal import Assignment, Goal, soft
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.problem import Problem
from optimizer.model.solution import ClientAssignment, GoalResult, GoalStatus
from optimizer.model.streams import StreamsProblem
from optimizer.results import SequenceResult, Stage
from optimizer.text import plural

INTERRUPT_MARGIN = 0.1
"""Seconds past the engine's deadline after which its Python work in this process is stopped
(its solvers stop at the deadline themselves; this leaves room to decode their last solution)."""

APPLIED_NOW_SECONDS = 0.1
APPLIED_NOW_SHARE = 0.25
SMALL_APPLIED_NOW_SECONDS = 10.0
"""Under a time limit, the optimised assignment applied now (`exact_now`) gets APPLIED_NOW_SHARE of
what the target's sequence took, and at least APPLIED_NOW_SECONDS, from `CHILD_PAIRS` pairs on;
below, at least SMALL_APPLIED_NOW_SECONDS (never past the engine's deadline); where it is not
done by then, `flow_now`'s stands (issue 33's option (a), decision 105). Within a rebalance the
whole answer is to take at most twice Kafka's (issue 49): at 1,000 x 50 with one standby the
target took 0.33 to 0.55 s, Kafka's whole answer 0.30 to 0.48 s, and the applied-now MILP 0.35
to 1.06 s when not cut: given as long again as the target, 5 of 16 seeds took 2.5 to 2.9 times
Kafka's, half as long 3 of 16 2.0 to 2.2 times, a quarter none (at most 1.95 times). A small
problem's takes milliseconds, and is not cut on a busy machine (the answer would depend on it).
It is ranked, not proven (the goals' statuses are the target's)."""

WORK_PER_SECOND = 0.3
"""Under a time limit, the CP-SAT solves of the target's sequence and then of the assignment
applied now (`--solver cpsat`) may take this much of CP-SAT's deterministic time per second of
the limit, in all (one `WorkBudget`). A unit took 0.75 to 1.85 s on this 2-core machine idle
(depending on the model), so the budget is a quarter to a half of the limit there: it binds
before the clock on a machine up to about twice as slow or busy, and the answer is the same on
every run. The clock stays the limit of last resort."""

CHILD_PAIRS = 20_000
"""From this many (task, client) or (partition, member) pairs on, under a time limit, the exact
steps run in a forked child killed at the engine's deadline, and Kafka's assignor in another
beside it; below, both run in this process (a fork and the answer's way back cost more than
such a problem's solvers can overrun)."""

ENGINE_MEMORY_SHARE = 0.5
"""The forked engine may take this share of the machine's memory beyond what it starts with (its
address space capped there): a model that does not fit ends the engine's process, whose last
point stands, not the machine (or a Spark job beside it)."""

FINISH_BASE = 0.05
FINISH_PER_COPY = 25e-6
FINISH_PER_PARTITION = 10e-6
FINISH_PER_START = 2.0
"""What `solve` needs after the engine (`finish_seconds`): seconds, and seconds per copy of a task
(active or standby) or per partition of a consumer group, or this many times what the first point
took when that is more (a busy machine is as slow at both): the assignment applied now by a
flow, the goals' values, the plan to the target and the evaluator's checks took 0.49 s at 10,000
tasks with two standbys (30,000 copies; 0.28 s at 15,000) on this project's 2-core machine, where
the first point took 0.39 s; 0.35 s at 50,000 partitions (2026-12-02, about 1.5 times as much
kept)."""


def _pairs(problem: Problem) -> int:
    if isinstance(problem, StreamsProblem):
        return len(problem.tasks) * len(problem.clients)
    assert isinstance(problem, ConsumerProblem)
    return sum(topic.partitions for topic in problem.topics) * len(problem.members)


def _copies(problem: Problem) -> int:
    if isinstance(problem, StreamsProblem):
        return len(problem.tasks) * (1 + problem.config.num_standby_replicas)
    assert isinstance(problem, ConsumerProblem)
    return sum(topic.partitions for topic in problem.topics)


def finish_seconds(problem: Problem, start_seconds: float = 0.0) -> float:
    """Seconds `solve` keeps for its work after the exact engine (`FINISH_PER_COPY`), where the
    first point took `start_seconds`."""
    per_copy = FINISH_PER_COPY if isinstance(problem, StreamsProblem) else FINISH_PER_PARTITION
    return max(FINISH_BASE + per_copy * _copies(problem), FINISH_PER_START * start_seconds)


def in_child(problem: Problem, deadline: float | None) -> bool:
    """Whether the exact steps run in a forked child (and Kafka's assignor in another beside
    them): under a time limit, from `CHILD_PAIRS` pairs on."""
    return deadline is not None and _pairs(problem) >= CHILD_PAIRS


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


# --------------------------------------------------------------------------- Kafka's answer


Kafkas = tuple[Assignment, bool, Assignment | None]
"""Kafka's assignment applied now (warm-ups included), its follow-up flag, its target."""


class _Reference:
    """Kafka's answer, computed once, when first needed: in this process within the deadline, or
    in a forked child beside the engine (`beside`), waited for within the deadline."""

    def __init__(self, kafka: Callable[[], KafkaAnswered], beside: Forked[Any] | None):
        self._kafka = kafka
        self._beside = beside
        self._answer: Kafkas | None = None
        self.refused: SolverUnavailableError | None = None
        self.late = False
        """It did not answer in time (it is not waited for again)."""

    def get(self, deadline: float | None) -> Kafkas | None:
        """Kafka's answer, or None when it gives none (`refused` says why) or did not answer by
        `deadline` (`late`)."""
        if self._answer is not None or self.refused is not None or self.late:
            return self._answer
        doing("Kafka's assignor (the yardstick of the exact answer)")
        try:
            if self._beside is not None:
                left = remaining(deadline)
                found = self._beside.result(None if left is None else left)
            else:
                found = run_within(deadline, self._kafka)
        except SolverUnavailableError as error:
            self.refused = error
            return None
        except TimeLimitReached:
            self.late = True
            return None
        self._answer = (found.assignment, found.followup_rebalance, found.target)
        return self._answer

    def ready(self) -> bool:
        return self._answer is not None

    def applied(self, deadline: float | None) -> dict[str, ClientAssignment] | None:
        """Kafka's assignment applied now without its warm-ups (None: none in time)."""
        answer = self.get(deadline)
        if answer is None:
            return None
        return {c: held.model_copy(update={"warmup": (), "members": {}}) for c, held in answer[0].items()}


# --------------------------------------------------------------------------- the exact steps


@dataclass
class _Found:
    """What the exact steps found, as they report it (`report`): the target's sequence when it
    ended, else its latest stage's point; the optimised assignment applied now when it ran."""

    result: SequenceResult | None = None
    point: SequenceResult | None = None
    now: tuple[Assignment | None, list[str]] | None = None
    target_seconds: float = 0.0
    stopped: str | None = None

    def report(self, kind: str, value: Any) -> None:
        if kind == "point":
            self.point = value
        elif kind == "target":
            self.result, self.target_seconds = value
        elif kind == "now":
            self.now = value

    def sequence(self) -> SequenceResult:
        if self.result is not None:
            return self.result
        stopped = self.stopped or "the exact engine was stopped at its deadline"
        if self.point is not None:
            notes = [*self.point.notes, *([stopped] if stopped not in self.point.notes else [])]
            return SequenceResult(self.point.assignment, list(self.point.stages), notes)
        return SequenceResult(None, [], [stopped], True)


@dataclass(frozen=True)
class _Steps:
    """The exact steps of one run (`run`): the target's sequence, then the assignment applied now."""

    problem: Problem
    goals: list[Goal]
    backend: str
    tolerances: dict[str, Tolerance]
    warmups: bool
    start: Assignment | None
    work: WorkBudget | None
    deadline: float | None

    def run(self, report: Callable[[str, Any], None], progress: Progress) -> None:
        """Each result handed to `report` as it comes: ("target", (the sequence's result, its
        seconds)), ("now", (assignment, notes)); `progress` follows the stages."""
        started = now()
        start = self.start
        hint = (lambda: dict(start)) if start is not None else None
        result = run_sequence(self.problem, self.goals, self.backend, remaining(self.deadline), self.tolerances, hint, progress=progress, work=self.work)
        seconds = now() - started
        report("target", (result, seconds))
        if result.assignment is not None and self.now_needed(result.assignment):
            report("now", self._applied_now(result.assignment, seconds))

    def now_needed(self, target: Assignment) -> bool:
        """Whether the target needs an assignment applied now of its own: it puts an active on a
        client that has not caught up, or is less balanced than `balance` asks."""
        problem = self.problem
        if not (isinstance(problem, StreamsProblem) and self.warmups):
            return False
        balance = next((g for g in self.goals if g.name == "balance"), None)
        allowed = self.tolerances["balance"].limit(0) if "balance" in self.tolerances else 0
        return exact_now_needed(problem, target) or (balance is not None and balance.evaluate(problem, target) > allowed)

    def _work_limited(self) -> bool:
        """Whether the back-end's solves stop on the run's deterministic work budget (CP-SAT's):
        then the assignment applied now is cut by that, the same on a busy machine, not by a
        share of the clock."""
        return self.work is not None and self.backend != "exact" and named(self.backend).capabilities.work_limited

    def _applied_now(self, target: Assignment, target_seconds: float) -> tuple[Assignment | None, list[str]]:
        problem = self.problem
        assert isinstance(problem, StreamsProblem)
        doing("the assignment applied now (warm-ups before the exact target)")
        balance = next((g for g in self.goals if g.name == "balance"), None)
        soft_balance = soft(goal_class("balance"))(balance.argument) if balance is not None else None
        bounded = any(g.name == "probing_rebalances" for g in self.goals)
        step = self.deadline
        if step is not None and not self._work_limited():  # a share of the clock, where no deterministic budget binds first
            floor = APPLIED_NOW_SECONDS if _pairs(problem) >= CHILD_PAIRS else SMALL_APPLIED_NOW_SECONDS
            share = APPLIED_NOW_SHARE if _pairs(problem) >= CHILD_PAIRS else 1.0
            step = min(step, now() + max(floor, share * target_seconds))
        start = flow_now(problem, target)
        return exact_now(problem, target, soft_balance, lambda: start, self.backend, remaining(step), bounded, work=self.work)


def _point(progress: Progress, report: Callable[[str, Any], None]) -> None:
    """A stage's new point, reported when it decodes (a merged model's counts may not spread)."""
    found = progress.result("the exact engine was stopped at its deadline")
    if found is not None:
        report("point", found)


def _to_parent(kind: str, value: Any, goals: list[Goal]) -> tuple[str, Any]:
    """A report as it crosses from the child: stages name their goal by position (a goal object
    need not pickle: a test's own class, a plugin's)."""
    if kind == "point":
        return kind, _stages_by(value, lambda goal: goals.index(goal))
    if kind == "target":
        return kind, (_stages_by(value[0], lambda goal: goals.index(goal)), value[1])
    return kind, value


def _from_child(kind: str, value: Any, goals: list[Goal]) -> tuple[str, Any]:
    """`_to_parent` undone."""
    if kind == "point":
        return kind, _stages_by(value, goals.__getitem__)
    if kind == "target":
        return kind, (_stages_by(value[0], goals.__getitem__), value[1])
    return kind, value


def _stages_by(result: SequenceResult | None, name: Callable[[Any], Any]) -> SequenceResult | None:
    if result is None:
        return None
    stages = [Stage(name(s.goal), s.status, s.objective, s.bound, s.seconds, s.backend) for s in result.stages]
    return SequenceResult(result.assignment, stages, result.notes, result.fallback)


def _exact(steps: _Steps, child: bool) -> _Found:
    """The exact steps in this process (Python work stopped at the deadline) or in a forked child
    killed at it; what they found by then."""
    found = _Found()
    if not child:
        progress = Progress()
        try:
            run_within(None if steps.deadline is None else steps.deadline + INTERRUPT_MARGIN, lambda: steps.run(found.report, progress))
        except TimeLimitReached:
            found.stopped = f"the exact engine was stopped {INTERRUPT_MARGIN:g} s past its deadline"
            found.point = progress.result(found.stopped)
        return found
    if steps.deadline is not None and now() >= steps.deadline:  # what is left is the rest's: no fork
        found.stopped = "the exact engine had no time left after the first point"
        return found
    goals = steps.goals

    def work(send: Callable[[object], None]) -> None:
        def report(kind: str, value: Any) -> None:
            send(_to_parent(kind, value, goals))

        steps.run(report, Progress(listener=lambda progress: _point(progress, report)))

    process = Streamed(work, memory=int(ENGINE_MEMORY_SHARE * physical_memory()) or None)
    doing("the exact engine's stages, in a process of their own")
    try:
        process.wait(steps.deadline)
    finally:
        process.close()
    for kind, message in process.messages:
        if kind == "sent":
            sent = cast(tuple[str, Any], message)
            found.report(*_from_child(sent[0], sent[1], goals))
        elif kind == "failed":
            found.stopped = f"the exact engine's process failed: {message}"
    if not process.finished and found.stopped is None:
        found.stopped = "the exact engine's process was stopped at its deadline"
    return found


# --------------------------------------------------------------------------- the answer


@dataclass
class _Answer:
    """What `run_exact` builds, step by step."""

    problem: Problem
    goals: list[Goal]
    options: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    target: Assignment | None = None
    assignment: Assignment | None = None
    followup: bool = False
    results: list[GoalResult] = field(default_factory=list)
    cut: bool = True
    """The time cut the engine short: its sequence did not end, or a goal's stage says
    `time_limit` (the floor applies)."""

    def result(self) -> ExactResult:
        assert self.assignment is not None
        target = None if self.assignment == self.target else self.target
        return ExactResult(self.assignment, self.followup, self.notes, tuple(self.results), self.options, target)


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
    beside: Forked[Any] | None = None,
) -> ExactResult:
    """The exact engine on the normalised `problem` (`raw`: as given) with `backend` (`exact` or a
    back-end's name), answering by `deadline` (`time_limit` seconds from the start; None: none)
    less `finish_seconds`. `kafka()` gives Kafka's answer, called at most once, when the answer
    is measured against it; `beside`: it is being computed in a forked child (`in_child`)."""
    options: dict[str, Any] = {"goals": [repr(g) for g in goals], "time_limit": time_limit}
    if tolerances:
        options["tolerances"] = {name: vars(t) for name, t in tolerances.items()}
    answer = _Answer(problem, goals, options)
    reference = _Reference(kafka, beside)
    started = now()
    by_flow = _flow_takes(problem, goals, backend, tolerances)
    start = None if by_flow else _start(problem, goals, deadline)
    engine_deadline = None if deadline is None else deadline - finish_seconds(problem, now() - started)
    work = None if time_limit is None else WorkBudget(time_limit * WORK_PER_SECOND)
    steps = _Steps(problem, goals, backend, tolerances, warmups, start, work, engine_deadline)
    found = _exact(steps, not by_flow and in_child(problem, engine_deadline))
    sequence = found.sequence()
    if sequence.assignment is None and by_flow:  # cut, or the flow declined after all (found only while building it)
        start = _start(problem, goals, engine_deadline)
    answer.notes = list(sequence.notes)
    if not _target(answer, sequence, start, reference, engine_deadline):
        return answer.result()
    complete = found.result is not None and answer.target is sequence.assignment
    if not complete and start is not None and answer.target is sequence.assignment and sequence.assignment == start:
        answer.notes.append("no stage improved on the engine's first point (balanced, rack-aware flows) in time: it is returned, unproven")
    _statuses(answer, sequence, complete)
    if answer.target is not None and steps.now_needed(answer.target):
        _applied_now(answer, found, reference, tolerances, engine_deadline)
    else:
        answer.assignment = answer.target
    if isinstance(problem, ConsumerProblem) and isinstance(raw, ConsumerProblem) and problem.config.cooperative:
        _withheld(answer, raw)
    if answer.cut:
        _floor(answer, reference, engine_deadline)
    return answer.result()


def _flow_takes(problem: Problem, goals: list[Goal], backend: str, tolerances: dict[str, Tolerance]) -> bool:
    """Whether the min-cost-flow back-end takes the whole sequence (`exact` tries it first): it
    solves in a fraction of a second, proven, within the time limit itself (its large consumer
    flows in a child of their own), so neither a first point nor a forked engine is needed."""
    return backend in ("exact", "flow") and named("flow").unsupported(problem, goals, tolerances) is None


def _start(problem: Problem, goals: list[Goal], deadline: float | None) -> Assignment | None:
    """Step 1: the engine's own first point, when it meets the hard goals (else None: the stages
    start from nothing, and Kafka's answer is the floor); a consumer group's flow within
    `deadline` (else a greedy one), a Streams application's trades for weighted balance while
    `deadline` leaves what the rest of the solve needs (`finish_seconds`)."""
    doing("the engine's first point (balanced, rack-aware flows)")
    found = fast_start(problem, goals, remaining(deadline), None if deadline is None else deadline - finish_seconds(problem))
    return found if found is not None and meets_hard_goals(problem, goals, found) else None


def _target(answer: _Answer, sequence: SequenceResult, start: Assignment | None, reference: _Reference, deadline: float | None) -> bool:
    """Step 2's outcome: the target is the sequence's assignment, else the first point, else
    Kafka's answer whole (False: nothing more to decide), else NoSolutionError."""
    if sequence.assignment is not None:
        answer.target = sequence.assignment
        if sequence.fallback:
            answer.options["fallback"] = "hard goals minimised as soft goals"
        return True
    if start is not None:
        answer.target = start
        answer.notes.append("no stage found an assignment in time: the engine's first point (balanced, rack-aware flows) is returned, unproven")
        return True
    kafkas = reference.get(deadline)
    if kafkas is None:
        why = f"gives no answer here: {reference.refused}" if reference.refused is not None else "did not finish in time either"
        none = "no assignment within the time limit: the exact engine found none" if deadline is not None else "the exact engine found no assignment"
        raise NoSolutionError(f"{none}, and Kafka's assignor, its fallback, {why}")
    kafka_now, kafka_followup, kafka_target = kafkas
    answer.notes.append("the exact engine has no assignment (see above): Kafka's assignment is returned instead")
    answer.options["fallback"] = "kafka"
    answer.assignment, answer.followup = dict(kafka_now), kafka_followup
    answer.target = kafka_target if kafka_target is not None else {c: held.model_copy(update={"warmup": ()}) for c, held in kafka_now.items()}
    answer.results = [
        GoalResult(name=goal.name, value=float(goal.evaluate(answer.problem, answer.target)), status=GoalStatus.HEURISTIC, unit=goal.value_unit)
        for goal in answer.goals
    ]
    return False


def _statuses(answer: _Answer, sequence: SequenceResult, complete: bool) -> None:
    """Step 3: each goal's value on the target, its stage's status, bound, gap and seconds; a goal
    whose stage was not reached says `time_limit` (`optimal` at its lower bound), and a stage's
    `optimal` is `feasible` where the value returned is not the stage's. `complete`: the sequence
    ended, and its assignment is the target."""
    assert answer.target is not None
    last_stage = {stage.goal.name: stage for stage in sequence.stages}
    conflicted = {s.goal.name for s in sequence.stages if s.status == GoalStatus.INFEASIBLE}
    cut = complete is False
    for goal in answer.goals:
        stage = last_stage.get(goal.name)
        value = goal.evaluate(answer.problem, answer.target)
        bound: float | None
        if stage is None:  # not reached: proven only where nothing is lower (a goal's lower bound)
            floor = goal.lower_bound()
            status, bound, seconds = GoalStatus.OPTIMAL if value <= floor else GoalStatus.TIME_LIMIT, float(floor), 0.0
        else:
            status = GoalStatus.INFEASIBLE if goal.name in conflicted else stage.status
            bound, seconds = stage.bound, round(stage.seconds, 6)
            if status == GoalStatus.OPTIMAL and stage.objective is not None and value != stage.objective:
                status = GoalStatus.FEASIBLE
        if bound is not None and bound > value:
            bound = float(value)  # never a bound above the value returned
        gap = None if bound is None else max(0.0, (value - bound) / max(1.0, abs(value)))
        cut = cut or status == GoalStatus.TIME_LIMIT
        answer.results.append(GoalResult(name=goal.name, value=float(value), status=status, bound=bound, gap=gap, seconds=seconds, unit=goal.value_unit))
    answer.cut = cut


def _applied_now(answer: _Answer, found: _Found, reference: _Reference, tolerances: dict[str, Tolerance], deadline: float | None) -> None:
    """Step 4 (Streams): the optimised assignment applied now, else `flow_now(target)`, kept when
    it is at least as safe as Kafka's applied now (else Kafka's, with the plan to the target)."""
    problem, target = answer.problem, answer.target
    assert isinstance(problem, StreamsProblem) and target is not None
    exact_assignment, said = found.now if found.now is not None else (None, ["the assignment applied now was not found within its time"])
    if exact_assignment is None:
        exact_assignment = flow_now(problem, target)
        said = [f"{said[0]}: one flow's is applied (stateful actives on caught-up clients, as even as that allows; warm-ups planned towards the target)"]
    answer.assignment = exact_assignment
    answer.notes += said
    kafka_start = reference.applied(deadline)
    if kafka_start is None:
        if reference.late:
            answer.notes.append("Kafka's assignor did not finish in time: the assignment applied now is not measured against it")
        return
    balanced = any(g.name == "balance" for g in answer.goals)
    bounded = any(g.name == "probing_rebalances" for g in answer.goals)
    loosened = "balance" in tolerances
    # A bound on the probing rebalances keeps target copies in place now, at a skew the user
    # chose: only caught-up actives are measured then.
    why = worse_than(problem, exact_assignment, kafka_start, balanced and not bounded, accepted_skew(problem, target) if loosened else 0.0)
    if why is not None:
        answer.notes.append(f"Kafka's assignment is applied now, with the plan to the exact target: the exact one had {why}")
        answer.assignment = kafka_start


def _withheld(answer: _Answer, raw: ConsumerProblem) -> None:
    """Step 5 (cooperative consumer groups): partitions that change hands wait for their holders."""
    assert answer.target is not None
    answer.assignment, answer.followup, count = withhold_transfers(raw, answer.target)
    if count:
        answer.notes.append(f"{plural(count, 'partition')} withheld until their holders revoke them (cooperative)")


def _floor(answer: _Answer, reference: _Reference, deadline: float | None) -> None:
    """Step 6: an answer the engine did not prove is replaced by Kafka's when Kafka's was ready in
    time, meets the hard goals too, and is better on the figures a user compares (`figures`)."""
    kafkas = reference.get(deadline) if reference.ready() or not reference.late else None
    if kafkas is None or answer.assignment is None or answer.target is None:
        return
    kafka_now, kafka_followup, kafka_target = kafkas
    kafka_target = kafka_target if kafka_target is not None else {c: held.model_copy(update={"warmup": ()}) for c, held in kafka_now.items()}
    if not meets_hard_goals(answer.problem, answer.goals, kafka_target):
        return  # the answer must meet the hard goals (a narrowest balance Kafka's does not have)
    ours, theirs = figures(answer.problem, answer.assignment, answer.target), figures(answer.problem, kafka_now, kafka_target)
    if theirs < ours:
        answer.notes.append(
            "the exact answer is unproven and Kafka's is better on the figures compared (unassigned now, "
            f"load spread now, at the target, cross-rack bytes: {_shown(theirs)} against {_shown(ours)}): Kafka's answer is returned"
        )
        answer.options["fallback"] = "kafka"
        answer.assignment, answer.followup, answer.target = dict(kafka_now), kafka_followup, kafka_target
        answer.results = [
            GoalResult(name=goal.name, value=float(goal.evaluate(answer.problem, kafka_target)), status=GoalStatus.HEURISTIC, unit=goal.value_unit)
            for goal in answer.goals
        ]


def _shown(values: tuple[float, ...]) -> str:
    return "(" + ", ".join(f"{v:g}" for v in values) + ")"


def figures(problem: Problem, now_assignment: Assignment, target: Assignment) -> tuple[float, ...]:
    """What a user compares between two answers, in this order (smaller is better; issue 49,
    decision 105): the tasks or partitions unassigned now; Streams: the stateful actives not on a
    caught-up client now; the spread of load now (active tasks per thread, or partitions per
    member, max - min); the same spread at the target; the target's cross-rack bytes per second."""
    from optimizer.evaluate import streams_now_figures

    safety: tuple[float, ...] = ()
    if isinstance(problem, StreamsProblem):
        not_caught_up, spread_now = streams_now_figures(problem, now_assignment)
        safety, spread_target = (float(not_caught_up),), streams_now_figures(problem, target)[1]
    else:
        spread_now, spread_target = _member_spread(now_assignment), _member_spread(target)
    traffic = goal_class("cross_rack_bytes")().evaluate(problem, target)
    return (float(_unassigned(problem, now_assignment)), *safety, float(spread_now), float(spread_target), float(traffic))


def _member_spread(assignment: Assignment) -> int:
    sizes = [len(held.active) for held in assignment.values()]
    return max(sizes, default=0) - min(sizes, default=0)


def _unassigned(problem: Problem, assignment: Assignment) -> int:
    if isinstance(problem, StreamsProblem):
        held = {task for client in assignment.values() for task in client.active}
        return sum(task.id not in held for task in problem.tasks)
    assert isinstance(problem, ConsumerProblem)
    held = {partition for member in assignment.values() for partition in member.active}
    subscribed = {topic for member in problem.members for topic in member.subscriptions}
    return sum(partition not in held for topic in problem.topics if topic.name in subscribed for partition in topic.partition_ids())
