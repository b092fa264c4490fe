"""The lexicographic engine: tolerances, time limits, conflicts, the compressed Streams model,
determinism, and the exact optimum against Kafka's heuristic and the KIP-925 reference."""

from __future__ import annotations

import functools
import json
import math
import random
import subprocess
import sys

import pytest
from click.testing import CliRunner

from optimizer import GoalError, Tolerance, problem_from_data, solve
from optimizer.backends import REGISTRY, Backend, Capabilities
from optimizer.catalogue import SOLVERS, resolve_goals
from optimizer.cli import cli
from optimizer.engine import models
from optimizer.engine import relaxed as relaxed_module
from optimizer.engine.compressed import CompressedStreamsFormulation, DecodeError
from optimizer.engine.sequence import exact_backends, run_sequence
from optimizer.formulation import LinearModel
from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model.normalize import normalize
from tests.conftest import EXAMPLES, shuffled


def two_racks(previous: dict[str, list[str]]):
    """Clients a (r1) and b (r2); stateless tasks 0_0 and 0_1 read from r1."""
    return problem_from_data(
        {
            "kind": "streams",
            "clients": [{"id": c, "rack": r, "previous_active": previous.get(c, [])} for c, r in (("a", "r1"), ("b", "r2"))],
            "tasks": [
                {"id": f"0_{i}", "source_partitions": [{"topic": "t", "partition": i, "replica_racks": ["r1"]}]}
                for i in range(2)
            ],
        }
    )


def values(solution) -> dict[str, float]:
    return {g.name: g.value for g in solution.goals}


def test_a_tolerance_lets_later_goals_gain():
    problem = two_racks({"a": ["0_1"], "b": ["0_0"]})
    goals = ["stickiness", "cross_rack_traffic"]
    strict = solve(problem, goals=goals)
    assert values(strict) == {"stickiness": 0, "cross_rack_traffic": 1}
    loose = solve(problem, goals=goals, tolerances={"stickiness": "1"})
    assert values(loose) == {"stickiness": 1, "cross_rack_traffic": 0}
    assert loose.assignment["a"].active == ("0_0", "0_1")
    assert "tolerances" in loose.solver.options


@pytest.mark.parametrize("solver", SOLVERS[:4])
def test_a_constraint_let_stray_is_feasible_not_optimal(solver):
    """`balance` is a constraint (KIP-441's bound), not minimised: with a tolerance that lets it
    stray by one task for traffic, its value is not the least possible, so it is `feasible`,
    with its lower bound 0; at the bound it is `optimal`."""
    problem = two_racks({})
    strict = solve(problem, solver=solver, goals=["balance", "cross_rack_traffic"])
    assert [(g.value, g.status, g.bound) for g in strict.goals] == [(0, "optimal", 0), (1, "optimal", 1)]
    if solver == "flow":
        return  # the flow back-end takes no tolerances
    loose = solve(problem, solver=solver, goals=["balance", "cross_rack_traffic"], tolerances={"balance": "1"}, warmups=False)
    assert [(g.value, g.status, g.bound) for g in loose.goals] == [(1, "feasible", 0), (0, "optimal", 0)]


def test_tolerance_parsing_and_limits():
    assert Tolerance.parse("3").limit(10) == 13
    assert Tolerance.parse("10%").limit(45) == 49
    assert Tolerance.parse("10%").limit(0) == 0
    with pytest.raises(GoalError, match="whole number or a percentage"):
        Tolerance.parse("a lot")


def test_hard_goals_in_conflict_are_named_and_relaxed(tmp_path):
    # I3 joined; balance needs a move, movement_budget=0 forbids every move.
    path = EXAMPLES / "kip441" / "scaling-out-1.problem.yaml"
    from optimizer import load_problem

    problem = load_problem(path)
    solution = solve(problem, goals=["balance", "movement_budget=0", "stickiness"], warmups=False)
    statuses = {g.name: g.status for g in solution.goals}
    assert statuses["balance"] == "infeasible" and statuses["movement_budget"] == "infeasible"
    assert any("hard goals in conflict: balance, movement_budget=0" in n for n in solution.solver.options["notes"])
    # Minimised as soft goals in their order: balanced first, then as few moves as that allows.
    assert values(solution)["balance"] == 0 and values(solution)["movement_budget"] == 1
    result = CliRunner().invoke(cli, ["solve", str(path), "--goals", "balance,movement_budget=0", "--json"])
    assert result.exit_code == 3
    assert json.loads(result.output)["solver"]["options"]["fallback"] == "hard goals minimised as soft goals"


def test_a_time_limit_too_short_returns_the_engines_first_point_saying_so():
    problem = random_streams_problem(5, tasks=150, clients=15, standby_replicas=2)
    solution = solve(problem, solver="milp", time_limit=0.0)
    # The evaluator has passed it (solve checks every solution); the statuses tell the truth:
    # nothing is proven but what sits at a goal's lower bound (balance, a hard goal, at 0).
    statuses = {g.name: str(g.status) for g in solution.goals}
    assert statuses["balance"] == "optimal" and "time_limit" in statuses.values()
    assert all(g.status == "time_limit" for g in solution.goals if g.value > (g.bound or 0))
    assert "fallback" not in solution.solver.options
    # the first point, returned as such or as the point of the stages the time allowed (none, or
    # on a busy machine the first stage's, stopped before its proof): a note says the time cut it
    cut = ("the engine's first point", "the time limit was reached", "the exact engine was stopped")
    assert any(words in note for words in cut for note in solution.solver.options["notes"])


def test_exact_takes_min_cost_flow_then_milp_and_every_back_end_is_a_solver():
    assert [backend.name for backend in exact_backends()] == ["flow", "milp"]
    assert SOLVERS == ("exact", *(backend.name for backend in REGISTRY), "kafka", "kip925")


def test_a_back_end_whose_entry_points_do_not_match_its_capabilities_is_refused():
    linear = Capabilities(linear=True, proves_optimality=True, deterministic=True)
    with pytest.raises(ValueError, match=r"optimizer\.backends\.flow does not provide start"):
        Backend("broken", "broken", linear, "optimizer.backends.flow").start(LinearModel())
    for backend in REGISTRY:  # every registered module provides what its capabilities name
        assert backend.implementation().__name__ == backend.module


def test_every_linear_back_ends_session_has_what_its_capabilities_promise():
    """`relaxes`: the RelaxingSession methods; `work_limited`: a `work` attribute, unset until the
    engine hands it a budget (`Run.start`)."""
    model = LinearModel()
    model.add_vars(2, 0, 1)
    for backend in REGISTRY:
        if not backend.capabilities.linear:
            continue
        session = backend.start(model)
        if backend.capabilities.relaxes:
            assert all(callable(getattr(session, method, None)) for method in ("relax", "pop_row", "find"))
        assert hasattr(session, "work") == backend.capabilities.work_limited
        if backend.capabilities.work_limited:
            assert session.work is None


SOLVER_MODULES = ("ortools.sat", "highspy", "optimizer.backends.")


def test_the_command_line_starts_without_loading_a_solver():
    run = subprocess.run(
        [sys.executable, "-c", f"import sys, optimizer.cli; print(sorted(m for m in sys.modules if m.startswith({SOLVER_MODULES!r})))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert run.stdout.strip() == "[]"


@pytest.mark.parametrize("seed", range(4))
def test_the_compressed_model_reaches_the_full_models_optimum(seed):
    rng = random.Random(seed)
    problem = normalize(
        random_streams_problem(
            seed, tasks=40, clients=10, racks=rng.randint(1, 3), standby_replicas=rng.randint(1, 2),
            tags=("zone",) if seed % 2 else (), churn=0.3,
        )
    ).problem  # fmt: skip
    names = ["balance", "standby_rack_diversity", "subtopology_spread", "cross_rack_traffic", "stickiness", "caught_up"]
    goals = resolve_goals(names, "streams")
    compressed = run_sequence(problem, goals, "milp", compress=True)
    full = run_sequence(problem, goals, "milp", compress=False)
    assert any(n.startswith("compressed model:") for n in compressed.notes), compressed.notes
    assert [s.objective for s in compressed.stages] == [s.objective for s in full.stages]
    for stage in compressed.stages:
        assert stage.status == "optimal" and stage.goal.evaluate(problem, compressed.assignment) == stage.objective


def test_compressed_counts_that_cannot_be_spread_get_a_second_round_then_the_full_model(monkeypatch):
    problem = normalize(random_streams_problem(7, tasks=40, clients=12, standby_replicas=1)).problem
    goals = resolve_goals(["balance", "cross_rack_traffic", "stickiness"], "streams")
    expected = [s.objective for s in run_sequence(problem, goals, "milp", compress=False).stages]
    decode = CompressedStreamsFormulation.decode
    rounds = []

    def first_round_fails(self, solution):
        rounds.append(self)
        if len(rounds) == 1:
            raise DecodeError("the routed copies of a class do not fit its clients")
        return decode(self, solution)

    monkeypatch.setattr(CompressedStreamsFormulation, "decode", first_round_fails)
    result = run_sequence(problem, goals, "milp", compress=True)
    assert "compressed model: " in result.notes[-1] and "second round" in result.notes[-1]
    assert [s.objective for s in result.stages] == expected

    def always_fails(self, solution):
        raise DecodeError("the routed copies of a class do not fit its clients")

    monkeypatch.setattr(CompressedStreamsFormulation, "decode", always_fails)
    result = run_sequence(problem, goals, "milp", compress=True)
    assert "compressed model not used: the routed copies of a class do not fit its clients" in result.notes
    assert [s.objective for s in result.stages] == expected


@pytest.mark.parametrize("seed", range(3))
def test_exact_ignores_the_order_of_the_problems_lists(seed):
    streams = random_streams_problem(seed, tasks=24, clients=5, standby_replicas=1, tags=("zone",))
    assert solve(shuffled(streams, seed)).assignment == solve(streams).assignment
    group = random_consumer_problem(seed, members=6, equal_subscriptions=False)
    assert solve(shuffled(group, seed)).assignment == solve(group).assignment


def lexicographic(solution) -> list[float]:
    return [g.value for g in solution.goals]


@pytest.mark.parametrize("seed", range(8))
def test_exact_is_never_worse_than_kafka_on_the_first_goal_where_they_differ(seed):
    rng = random.Random(seed)
    streams = random_streams_problem(
        seed, tasks=rng.randint(5, 30), clients=rng.randint(2, 6), standby_replicas=rng.randint(0, 2),
        tags=("zone",) if seed % 3 == 0 else (), strategy=rng.choice(["none", "min_traffic", "balance_subtopology"]),
    )  # fmt: skip
    group = random_consumer_problem(seed, members=rng.randint(2, 6), equal_subscriptions=seed % 2 == 0)
    for problem in (streams, group):
        goals = None if problem.kind == "consumer" else [
            "balance", "standby_rack_diversity", "subtopology_spread", "cross_rack_traffic", "stickiness", "caught_up",
        ]  # fmt: skip
        exact = solve(problem, goals=goals)
        kafka = solve(problem, solver="kafka", goals=[g.name for g in exact.goals])
        assert lexicographic(exact) <= lexicographic(kafka), (problem.kind, lexicographic(exact), lexicographic(kafka))


@pytest.mark.parametrize(("tasks", "clients"), [(12, 3), (60, 6), (120, 12), (300, 20)])
def test_kip925_cost_under_balance_equals_the_kip925_reference(tasks, clients):
    # Equal threads, no churn and tasks a multiple of clients: balance keeps every client's task
    # count, exactly what the reference keeps, so the two optima must agree.
    problem = random_streams_problem(
        tasks + clients, tasks=tasks, clients=clients, threads=(1, 1), churn=0.0, standby_replicas=0, stateful_fraction=1.0
    )
    counts = {len(c.previous_active) for c in problem.clients}
    assert counts == {tasks // clients}
    reference = solve(problem, solver="kip925", goals=["kip925_cost"]).goals[0].value
    for backend in ("exact", "milp", "flow"):
        exact = solve(problem, solver=backend, goals=["balance", "kip925_cost"])
        assert exact.goals[1].value == reference, backend
        assert exact.goals[1].status == "optimal"


STREAMS_DEFAULT = ["balance", "standby_rack_diversity", "subtopology_spread", "cross_rack_traffic", "stickiness"]
STREAMS_KIP441 = ["balance=kip441", *STREAMS_DEFAULT[1:]]
"""With KIP-441's balance (one task per thread): relaxations with the gaps the tests below need."""


@pytest.mark.parametrize("seed", [2, 6])
def test_the_relaxed_pass_proves_every_stage_and_agrees_with_stage_by_stage(seed, monkeypatch):
    """On an application whose relaxations are tight, every stage is frozen at its relaxation's
    bound and one integer point meets them all (docs/engine.md, 'Relaxation first'); solving stage
    by stage (the relaxations unused) reaches the same value in every stage."""
    from optimizer.backends import milp

    problem = normalize(random_streams_problem(seed, tasks=200, clients=10, standby_replicas=1, threads=(1, 1), subtopologies=4, churn=0.1)).problem
    relaxed = run_sequence(problem, resolve_goals(STREAMS_DEFAULT, "streams"), "milp")
    assert "every stage proven by its relaxation's bound, one integer point for all" in relaxed.notes
    assert all(str(s.status) == "optimal" and s.bound == s.objective for s in relaxed.stages)
    monkeypatch.setattr(milp.MilpSession, "relax", lambda self, objective, time_limit: None)
    staged = run_sequence(problem, resolve_goals(STREAMS_DEFAULT, "streams"), "milp")
    assert "every stage proven by its relaxation's bound, one integer point for all" not in staged.notes
    assert [s.objective for s in staged.stages] == [s.objective for s in relaxed.stages]
    for stage in relaxed.stages:
        assert stage.goal.evaluate(problem, relaxed.assignment) == stage.objective


def test_a_gap_in_the_last_stage_minimises_it_on_its_own():
    """Where the last goal's integer optimum lies above its relaxation's bound (stickiness: 146
    against 145 here, threads 1 to 3 per client), no point meets every frozen bound: the last goal
    is minimised on its own with the others frozen, and every stage is still proven; CP-SAT,
    stage by stage, agrees."""
    problem = normalize(random_streams_problem(0, tasks=200, clients=10, standby_replicas=1, threads=(1, 3), subtopologies=4, churn=0.1)).problem
    result = run_sequence(problem, resolve_goals(STREAMS_KIP441, "streams"), "milp")
    assert "stages before the last proven by their relaxations' bounds; the last minimised on its own" in result.notes
    assert [s.objective for s in result.stages] == [0, 0, 0, 53, 146]
    assert all(str(s.status) == "optimal" for s in result.stages)
    for stage in result.stages:
        assert stage.goal.evaluate(problem, result.assignment) == stage.objective
    small = normalize(random_streams_problem(27, tasks=60, clients=6, standby_replicas=1, threads=(1, 4), subtopologies=3, churn=0.1)).problem
    milp = run_sequence(small, resolve_goals(STREAMS_KIP441, "streams"), "milp")
    assert "stages before the last proven by their relaxations' bounds; the last minimised on its own" in milp.notes
    cpsat = run_sequence(small, resolve_goals(STREAMS_KIP441, "streams"), "cpsat")
    assert [s.objective for s in milp.stages] == [s.objective for s in cpsat.stages] == [0, 0, 0, 33, 58]


def test_a_gap_before_the_last_stage_falls_back_to_stage_by_stage():
    """cross_rack_traffic's relaxation gives 12 where every assignment has 13 or more: frozen at
    12, no point exists and the last goal cannot be minimised either, with or without the guesses;
    stage by stage finds 13, as CP-SAT does."""
    problem = normalize(random_streams_problem(1, tasks=60, clients=6, standby_replicas=1, threads=(1, 4), subtopologies=3, churn=0.1)).problem
    result = run_sequence(problem, resolve_goals(STREAMS_KIP441, "streams"), "milp")
    assert result.notes == ["back-end: milp"]
    assert [s.objective for s in result.stages] == [0, 0, 0, 13, 34]
    assert all(str(s.status) == "optimal" for s in result.stages)
    cpsat = run_sequence(problem, resolve_goals(STREAMS_KIP441, "streams"), "cpsat")
    assert [s.objective for s in cpsat.stages] == [0, 0, 0, 13, 34]


def test_goals_guessed_at_their_lower_bound_are_proven_by_the_point_or_relaxed(monkeypatch):
    """Goals but the last are first frozen at their lower bound (0) without a relaxation. Here
    diversity and spread reach it (no relaxation solved for them, 0 seconds); traffic does not
    (stickiness's relaxation is then infeasible), so traffic alone gets its relaxation. The
    values are those of the pass without guesses."""
    from optimizer.backends import milp

    problem = normalize(random_streams_problem(6, tasks=200, clients=10, standby_replicas=1, threads=(1, 1), subtopologies=4, churn=0.1)).problem
    relaxed = []
    original = milp.MilpSession.relax

    def relax(self, objective, time_limit):
        bound = original(self, objective, time_limit)
        relaxed.append(bound)
        return bound

    monkeypatch.setattr(milp.MilpSession, "relax", relax)
    result = run_sequence(problem, resolve_goals(STREAMS_DEFAULT, "streams"), "milp")
    values = [s.objective for s in result.stages]
    assert "every stage proven by its relaxation's bound, one integer point for all" in result.notes
    assert values[1:3] == [0, 0] and values[3] > 0
    assert [s.seconds for s in result.stages[1:3]] == [0.0, 0.0]
    assert relaxed == [math.inf, values[3], values[4]]  # stickiness with traffic guessed at 0; traffic; stickiness
    monkeypatch.setattr(relaxed_module, "frozen_bounds", functools.partial(_no_guesses, relaxed_module.frozen_bounds))
    assert [s.objective for s in run_sequence(problem, resolve_goals(STREAMS_DEFAULT, "streams"), "milp").stages] == values


def test_balance_holds_each_count_to_its_levels_box_so_the_relaxation_is_tight(monkeypatch):
    """KIP-441's width (`balance=kip441`). 200 tasks on 10 equal clients: every balanced assignment has 20 per client, but the level
    rows alone let the relaxation mix the levels 19 and 20 (19.43 to 20.43 tasks per client) and
    bound stickiness at 22 where the optimum is 25. With each count held to the hull of the
    levels' boxes (here exactly 20) the bound is 25 and the pass proves it in one go."""
    from goals import balance

    problem = normalize(random_streams_problem(1, tasks=200, clients=10, standby_replicas=1, threads=(1, 1), subtopologies=4, churn=0.1)).problem
    goals = resolve_goals(["balance=kip441", "stickiness"], "streams")
    result = run_sequence(problem, goals, "milp")
    assert [s.objective for s in result.stages] == [0, 25]
    assert "every stage proven by its relaxation's bound, one integer point for all" in result.notes
    monkeypatch.setattr(balance, "_box_rows", lambda *args: None)
    loose = run_sequence(problem, goals, "milp")
    assert [s.objective for s in loose.stages] == [0, 25]
    assert "every stage proven by its relaxation's bound, one integer point for all" not in loose.notes


def test_the_point_on_the_relaxations_optimal_face_is_found_where_its_support_has_none(monkeypatch):
    """The last relaxation's vertex is fractional and no integer point uses only its support; the
    MIP on its optimal face (reduced-cost fixing) finds one, so every stage is proven in one pass.
    Without that MIP the last goal is minimised on its own, to the same values."""
    from optimizer.backends import milp

    problem = normalize(random_streams_problem(57, tasks=20, clients=5, standby_replicas=1, threads=(1, 1), subtopologies=3, churn=0.1)).problem
    found = []
    original = milp.MilpSession._face_mip

    def face_mip(self, costs, hint, deadline):
        point = original(self, costs, hint, deadline)
        found.append(point is not None)
        return point

    monkeypatch.setattr(milp.MilpSession, "_face_mip", face_mip)
    result = run_sequence(problem, resolve_goals(STREAMS_DEFAULT, "streams"), "milp")
    assert found == [True]
    assert "every stage proven by its relaxation's bound, one integer point for all" in result.notes
    assert [s.objective for s in result.stages] == [0, 0, 0, 5, 17]
    monkeypatch.setattr(milp.MilpSession, "_face_mip", lambda self, costs, hint, deadline: None)
    without = run_sequence(problem, resolve_goals(STREAMS_DEFAULT, "streams"), "milp")
    assert "every stage proven by its relaxation's bound, one integer point for all" not in without.notes
    assert [s.objective for s in without.stages] == [0, 0, 0, 5, 17]


def test_the_compressed_model_tells_clients_apart_only_by_what_the_goals_price():
    """balance and standby_rack_diversity with tags price neither racks nor the clients that held
    a task (Goal.apart): the compressed model's classes are the tag values alone and no pair is a
    direct variable, and it proves the same optimum as the full model (and as the pattern model,
    which the engine prefers here). With stickiness, the clients that held a task are told apart
    again."""
    from optimizer.costs import StreamsIndex
    from optimizer.engine.compressed import client_classes, special_clients

    tagged = random_streams_problem(2, tasks=60, clients=12, standby_replicas=2, threads=(1, 1), subtopologies=3, churn=0.1, tags=("zone", "cluster"))
    problem = normalize(tagged).problem
    goals = resolve_goals(["balance", "standby_rack_diversity"], "streams")
    index = StreamsIndex.of(problem)
    apart = models.apart(problem, goals)
    assert apart == {"tags"}
    tag_values = {(c.tags["zone"], c.tags["cluster"]) for c in problem.clients}
    assert client_classes(index, problem, apart).max() + 1 == len(tag_values) < client_classes(index, problem).max() + 1
    assert not special_clients(index, None, apart).any() and special_clients(index).any()
    merged = run_sequence(problem, goals, "milp", compress=True)
    assert any(n.startswith("pattern model:") for n in merged.notes)
    small = run_sequence(problem, goals, "milp", compress=True, patterns=False)
    assert any(n.startswith("compressed model") for n in small.notes)
    full = run_sequence(problem, goals, "milp", compress=False)
    assert [s.objective for s in merged.stages] == [s.objective for s in small.stages] == [s.objective for s in full.stages] == [0, 75]
    assert all(str(s.status) == "optimal" for s in [*small.stages, *merged.stages])
    assert models.apart(problem, resolve_goals(["balance", "standby_rack_diversity", "stickiness"], "streams")) == {"tags", "state"}


def test_a_goal_that_prices_more_than_it_says_gets_the_full_model():
    """A goal whose `apart` leaves out what it prices (racks here) is caught by the compressed
    model (its costs differ within a class): the full model solves it, to the same values."""
    from goals.cross_rack_traffic import CrossRackTraffic

    class Untold(CrossRackTraffic):
        def apart(self, problem):
            return frozenset()

    problem = normalize(random_streams_problem(4, tasks=60, clients=12, standby_replicas=1, threads=(1, 1), subtopologies=3, churn=0.1)).problem
    honest = run_sequence(problem, [*resolve_goals(["balance"], "streams"), CrossRackTraffic()], "milp", compress=True)
    untold = run_sequence(problem, [*resolve_goals(["balance"], "streams"), Untold()], "milp", compress=True)
    assert any(n.startswith("compressed model:") for n in honest.notes)
    assert "compressed model not used: a goal prices clients of one rack (and tag values) differently" in untold.notes
    assert [s.objective for s in untold.stages] == [s.objective for s in honest.stages]


class _NoPointSession:
    """A relaxing session whose relaxations bound every goal at its lower bound (0) and which
    finds no integer point on those rows: what the relaxed pass meets when a bound has no integer
    point (the assignment applied now of a 10,000 x 200 application)."""

    def __init__(self):
        self.rows, self.found, self.relaxed = 0, 0, 0

    def add_row(self, expr, lo, hi):
        self.rows += 1

    def pop_row(self):
        self.rows -= 1

    def relax(self, objective, time_limit):
        self.relaxed += 1
        return 0

    def find(self, time_limit, hint):
        self.found += 1
        return None

    def minimize(self, objective, time_limit, hint):
        from optimizer.model.solution import GoalStatus
        from optimizer.results import StageResult

        return StageResult(GoalStatus.TIME_LIMIT, None, None, None, 0.0)


def test_the_relaxed_pass_does_not_search_again_on_the_rows_its_guesses_already_gave():
    """Every guess (the lower bound) is also the relaxation's bound: the pass without guesses
    would freeze the same rows, where no point was found; it gives up as soon as its relaxations
    reach the guesses, without relaxing the goals after them again."""
    from optimizer.formulation import LinExpr

    goals = resolve_goals(["standby_rack_diversity", "subtopology_spread", "stickiness"], "streams")
    session = _NoPointSession()
    expressions = {id(goal): LinExpr.zero() for goal in goals}
    assert relaxed_module.relaxed_pass(session, [], goals, expressions, lambda: None, None, "milp") is None
    assert session.found == 1
    assert session.relaxed == 3  # stickiness after the two guesses; then the two guessed goals, not stickiness again


def _no_guesses(frozen_bounds, session, order, expressions, remaining, guess, repeat=None):
    return frozen_bounds(session, order, expressions, remaining, guess=False)


def test_the_assignment_applied_now_uses_the_compressed_model_with_the_target_clients_told_apart():
    """The distance to the target prices each task's target clients apart from their class: they
    become direct variables of the compressed model (Goal.distinguished) instead of forcing the full one."""
    from optimizer.costs import StreamsIndex
    from optimizer.engine.compressed import sizes
    from optimizer.engine.transition import TargetDistance, target_clients

    problem = normalize(random_streams_problem(6, tasks=200, clients=40, standby_replicas=1, threads=(1, 1), subtopologies=4, churn=0.3)).problem
    target = solve(problem, warmups=False).assignment
    goal = TargetDistance(target)
    index = StreamsIndex.of(problem)
    mask = goal.distinguished(index)
    assert mask.sum() == len(index.tasks) + int(index.stateful.sum())  # one active and one standby each
    assert (mask == target_clients(index, target)).all()
    assert sizes(problem, [mask])[0] > sizes(problem)[0]
    result = run_sequence(problem, [goal], "milp")
    assert any(n.startswith("compressed model") for n in result.notes)
    assert result.stages[0].objective == goal.evaluate(problem, result.assignment) == 0
