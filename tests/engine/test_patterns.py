"""The pattern Streams model (optimizer.engine.patterns): tasks of a subtopology merged when no goal tells
them apart. Its optimum against enumeration and against the full and compressed models, its
patterns, its fall-backs, and the CP-SAT point search on models of counts."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

import optimizer.backends.cpsat as cpsat
import optimizer.backends.milp as milp
import optimizer.engine.patterns as patterns
from optimizer import solve
from optimizer.catalogue import resolve_goals
from optimizer.engine import models
from optimizer.engine.compressed import CompressedStreamsFormulation, DecodeError, client_classes
from optimizer.engine.patterns import PatternStreamsFormulation, _standby_patterns, split_classes
from optimizer.engine.sequence import run_sequence, told_apart
from optimizer.formulation import StreamsFormulation
from optimizer.generate import random_streams_problem
from optimizer.model.normalize import normalize
from optimizer.testing import check_backends, models_for, small_problem
from tests.conftest import shuffled

GOALS = ["balance", "standby_rack_diversity", "subtopology_spread"]
KIP441_GOALS = ["balance=kip441", *GOALS[1:]]
"""With KIP-441's balance (one task per thread), whose wider boxes leave the counts more room:
the cases below need that room."""


def tagged(seed: int, tasks: int = 40, clients: int = 8, standbys: int = 2, threads=(1, 1)):
    drawn = random_streams_problem(
        seed, tasks=tasks, clients=clients, standby_replicas=standbys, threads=threads, subtopologies=3, churn=0.1, tags=("zone", "cluster")
    )
    return normalize(drawn).problem


def uses_patterns(result) -> bool:
    return any(note.startswith("pattern model:") for note in result.notes)


def enumerable_cases(count: int) -> list[tuple[int, list]]:
    """The first `count` seeds of the kit's small problems (with two or three of GOALS) on which
    the engine takes the pattern model (it does not where that would be larger than the
    compressed one)."""
    cases = []
    for seed in range(2 * count):
        problem = small_problem("streams", seed)
        goals = resolve_goals(GOALS[: random.Random(seed).randint(2, 3)], "streams")
        if "patterns" in models_for("milp", problem, goals):
            cases.append((seed, goals))
    assert len(cases) >= count, "too few small problems take the pattern model"
    return cases[:count]


@pytest.mark.parametrize(("seed", "goals"), enumerable_cases(12))
def test_the_pattern_model_reaches_the_enumerated_optimum(seed, goals):
    """On the kit's small problems (racks, tags, thread counts, zero or one standby), every
    back-end on every model, the pattern one included, reaches the optimum found by enumeration."""
    check_backends(small_problem("streams", seed), goals)


@pytest.mark.parametrize("seed", [0, 1, 2, 4, 5, 6])
def test_the_pattern_model_proves_the_full_models_optimum(seed):
    """40 tasks x 8 clients, two standbys, two tag dimensions, one or two threads: the pattern
    model (forced: at this size it is no smaller than the full one) proves the same stage values as
    the full model, on an assignment that has them."""
    problem = tagged(seed, threads=(1, 2) if seed % 2 else (1, 1))
    goals = resolve_goals(GOALS, "streams")
    merged = run_sequence(problem, goals, "milp", compress=True)
    assert uses_patterns(merged), merged.notes
    full = run_sequence(problem, goals, "milp", compress=False)
    assert [s.objective for s in merged.stages] == [s.objective for s in full.stages]
    for stage in merged.stages:
        assert str(stage.status) == "optimal"
        assert stage.goal.evaluate(problem, merged.assignment) == stage.objective


def test_patterns_are_every_placement_of_a_tasks_copies_by_class():
    """A task's patterns: each active class with each multiset of standby classes, no class
    holding more copies than it has clients (copies of a task go to distinct clients)."""
    sizes = np.array([1, 2, 3, 1])
    active, standby = _standby_patterns(sizes, 2)
    found = {(int(a), tuple(s.tolist())) for a, s in zip(active, standby, strict=True)}
    expected = set()
    for a, pair in itertools.product(range(4), itertools.combinations_with_replacement(range(4), 2)):
        counts = np.bincount(pair, minlength=4)
        copies = counts + np.eye(4, dtype=np.int64)[a]
        if (copies <= sizes).all():
            expected.add((a, tuple(counts.tolist())))
    assert found == expected and len(found) == len(active)


def test_encoding_an_assignment_keeps_its_goal_values():
    """An assignment encoded on the pattern model meets its rows, and decoding gives an
    assignment with the same goal values (the patterns may go to other tasks of the subtopology)."""
    problem = tagged(3)
    kafka = solve(problem, solver="kafka").assignment
    formulation = PatternStreamsFormulation(problem, told_apart(problem, resolve_goals(GOALS, "streams"))[1])
    goals = resolve_goals(GOALS, "streams")
    expressions = [goal.encode(formulation) for goal in goals]
    values = formulation.repair(formulation.encode(kafka))
    assert milp.MilpSession(formulation.model).feasible(values)
    decoded = formulation.decode(values)
    for goal, expression in zip(goals, expressions, strict=True):
        assert expression.value(values) == goal.evaluate(problem, kafka) == goal.evaluate(problem, decoded)


def test_a_goal_that_tells_tasks_apart_gets_the_compressed_model():
    """cross_rack_traffic prices each task by its partitions' racks: the pattern model declines
    while the goals encode, and the compressed model proves the same values as the full one."""
    problem = tagged(1, standbys=1)
    goals = resolve_goals(["balance", "standby_rack_diversity", "cross_rack_traffic"], "streams")
    merged = run_sequence(problem, goals, "milp", compress=True)
    assert "pattern model not used: a goal prices tasks of one subtopology differently: no patterns" in merged.notes
    assert any(note.startswith("compressed model:") for note in merged.notes)
    full = run_sequence(problem, goals, "milp", compress=False)
    assert [s.objective for s in merged.stages] == [s.objective for s in full.stages]


def test_stickiness_leaves_no_patterns():
    """A goal that prices the clients that held a task makes them the task's own: no patterns."""
    problem = tagged(2)
    assert patterns.pattern_variables(problem, *told_apart(problem, resolve_goals(GOALS, "streams"))) is not None
    assert patterns.pattern_variables(problem, *told_apart(problem, resolve_goals([*GOALS, "stickiness"], "streams"))) is None


def test_counts_that_cannot_be_spread_fall_back_to_the_compressed_model():
    """40 x 8 with two threads, seed 3: a class of two clients, where a task's three copies can
    take both, gets counts that no spread meets (the second round, small classes split, would be
    larger than the compressed model): the compressed model proves the full model's values."""
    problem = tagged(3, threads=(1, 2))
    goals = resolve_goals(GOALS, "streams")
    merged = run_sequence(problem, goals, "milp", compress=True)
    assert "pattern model not used: the routed copies of a class do not fit its clients" in merged.notes
    assert any(n.startswith("compressed model:") for n in merged.notes)
    full = run_sequence(problem, goals, "milp", compress=False)
    assert [s.objective for s in merged.stages] == [s.objective for s in full.stages]


def test_a_second_round_splits_the_classes_a_task_can_fill(monkeypatch):
    """When the first round's counts cannot be spread, the second has every client of a class of
    at most 1 + standbys clients in a class of its own, where any count can be spread."""
    problem = tagged(0, tasks=400, clients=30)
    goals = resolve_goals(GOALS, "streams")
    told = told_apart(problem, goals)
    small, _ = models.model_variables(problem, goals, told)
    assert patterns.pattern_variables(problem, *told) < patterns.pattern_variables(problem, *told, split=True) < small
    decode = PatternStreamsFormulation.decode

    def first_round_fails(self, solution):
        if self.n_classes == len(set(client_classes(self.index, problem, told[1]).tolist())):
            raise DecodeError("the routed copies of a class do not fit its clients")
        return decode(self, solution)

    monkeypatch.setattr(PatternStreamsFormulation, "decode", first_round_fails)
    result = run_sequence(problem, goals, "milp", compress=True)
    assert any(n.startswith("pattern model:") and n.endswith("(second round, small classes split)") for n in result.notes), result.notes
    monkeypatch.undo()
    plain = run_sequence(problem, goals, "milp", compress=True)
    assert [s.objective for s in result.stages] == [s.objective for s in plain.stages]
    assert all(str(s.status) == "optimal" for s in result.stages)
    assert split_classes(np.array([0, 4, 2, 0, 5, 3, 3, 1, 0, 0]), 3).tolist() == [0, 1, 2, 0, 3, 4, 5, 6, 0, 0]


def test_standbys_are_spread_first_when_the_actives_leave_them_no_room(monkeypatch):
    """20 x 5, two standbys, threads 1 and 2, seed 3: spreading a class's actives first leaves a
    client only tasks whose active it holds for its standbys; spreading the standbys first fits,
    and the first round's counts are used. Without that, the first round would fail."""
    problem = normalize(random_streams_problem(3, tasks=20, clients=5, standby_replicas=2, threads=(1, 2), subtopologies=3, churn=0.1)).problem
    goals = resolve_goals(KIP441_GOALS, "streams")
    result = run_sequence(problem, goals, "milp", compress=True)
    assert any(n.startswith("pattern model:") and "second round" not in n for n in result.notes), result.notes
    spread = CompressedStreamsFormulation._spread_class

    def actives_first_only(self, *args, actives_first):
        if not actives_first:
            raise DecodeError("the routed copies of a class do not fit its clients")
        return spread(self, *args, actives_first=True)

    monkeypatch.setattr(CompressedStreamsFormulation, "_spread_class", actives_first_only)
    blind = run_sequence(problem, goals, "milp", compress=True)
    assert not any(n.startswith("pattern model:") and "second round" not in n for n in blind.notes), blind.notes


def test_counts_that_cannot_be_spread_twice_fall_back_to_the_compressed_model(monkeypatch):
    def fails(self, solution):
        raise DecodeError("the routed copies of a class do not fit its clients")

    monkeypatch.setattr(PatternStreamsFormulation, "decode", fails)
    problem = tagged(4)
    result = run_sequence(problem, resolve_goals(GOALS, "streams"), "milp", compress=True)
    assert "pattern model not used: the routed copies of a class do not fit its clients" in result.notes
    assert any(note.startswith("compressed model:") for note in result.notes)
    assert all(str(s.status) == "optimal" for s in result.stages)


def test_cpsat_finds_the_point_on_a_model_of_counts(monkeypatch):
    """The pattern model is a model of counts: the relaxed pass's point comes from CP-SAT, with
    HiGHS's restricted MIPs out of the way, and proves the stages; the answer does not depend on
    the order of the problem's lists."""
    problem = tagged(6, tasks=200, clients=20)
    goals = resolve_goals(KIP441_GOALS, "streams")
    sessions = []
    start = milp.MilpSession.__init__

    def spy(self, *args, **kwargs):
        start(self, *args, **kwargs)
        sessions.append(self)

    monkeypatch.setattr(milp.MilpSession, "__init__", spy)
    points = []
    point = cpsat.point

    def counted(*args, **kwargs):
        points.append(point(*args, **kwargs))
        return points[-1]

    monkeypatch.setattr(cpsat, "point", counted)
    monkeypatch.setattr(milp.MilpSession, "_support_mip", lambda self, costs, hint, deadline: None)
    monkeypatch.setattr(milp.MilpSession, "_face_mip", lambda self, costs, hint, deadline: None)
    result = run_sequence(problem, goals, "milp", compress=True)
    assert uses_patterns(result) and sessions[0].counts
    assert points and points[0] is not None  # the relaxation's vertex was not integral: CP-SAT found the point
    assert "every stage proven by its relaxation's bound, one integer point for all" in result.notes
    assert all(str(s.status) == "optimal" for s in result.stages)
    again = run_sequence(normalize(shuffled(problem, 7)).problem, goals, "milp", compress=True)
    assert again.assignment == result.assignment


@pytest.mark.parametrize("standbys", [0, 1, 2])
def test_only_the_pattern_model_is_a_model_of_counts(standbys):
    """The MILP back-end runs CP-SAT's point search on the pattern model only: the compressed and
    full models (whose 0/1 share varies with the goals and standbys) keep HiGHS's own search."""
    problem = tagged(0, standbys=standbys)
    goals = resolve_goals(GOALS, "streams")
    told = told_apart(problem, goals)
    models = {
        "patterns": PatternStreamsFormulation(problem, told[1]),
        "compressed": CompressedStreamsFormulation(problem, False, *told),
        "full": StreamsFormulation(problem),
    }
    for formulation in models.values():
        for goal in goals:
            goal.encode(formulation)
    assert {name: milp.MilpSession(f.model).counts for name, f in models.items()} == {"patterns": True, "compressed": False, "full": False}
