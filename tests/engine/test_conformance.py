"""The conformance suite every back-end must pass (its machinery is the shipped kit,
`optimizer.testing`, which plugin authors run on their own goals).

Small problems whose lexicographic optimum is known: by hand for a few, by enumerating every
valid assignment for the rest (each goal's solver-free `evaluate`, no encoding involved). Every
registered back-end (`optimizer.backends.REGISTRY`: linear ones on the full and, for Streams, the
compressed model; flow-only ones where they take the sequence) and `exact` must reach that optimum
stage by stage, its stage values must be the goals' values on the assignment it returns, and
`solve` re-checks every solution with the evaluator.
"""

from __future__ import annotations

import functools
import random

import pytest

from optimizer import problem_from_data, solve
from optimizer.backends import named
from optimizer.catalogue import resolve_goals
from optimizer.engine.sequence import Tolerance, run_sequence
from optimizer.errors import SolverUnavailableError
from optimizer.generate import random_streams_problem
from optimizer.model.normalize import normalize
from optimizer.testing import SOLVERS, brute_force, check, check_backends, check_goal, small_problem

STREAMS_GOALS = ["standby_rack_diversity", "subtopology_spread", "cross_rack_traffic", "stickiness", "caught_up", "kip925_cost"]


def streams_case(seed: int):
    """The kit's small problem, with two or three goals drawn (balance first, most of the time;
    sometimes a movement budget or a bound on the probing rebalances last)."""
    rng = random.Random(f"goals-{seed}")
    names = rng.sample(STREAMS_GOALS, rng.randint(2, 3))
    if rng.random() < 0.7:
        names.insert(0, "balance")
    if rng.random() < 0.2:
        names.append(f"movement_budget={rng.randint(0, 2)}")
    if rng.random() < 0.25:
        names.append(f"probing_rebalances={rng.randint(0, 1)}")
    return small_problem("streams", seed), resolve_goals(names, "streams")


@functools.cache
def consumer_case(seed: int):
    rng = random.Random(f"goals-{seed}")
    names = ["balance", *rng.sample(["stickiness", "cross_rack_traffic"], rng.randint(1, 2))]
    problem = small_problem("consumer", seed)
    goals = resolve_goals(names, "consumer")
    return problem, goals, brute_force(problem, goals)


@functools.cache
def streams_expected(seed: int):
    problem, goals = streams_case(seed)
    return problem, goals, brute_force(problem, goals)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(32))
def test_streams_backends_reach_the_enumerated_optimum(seed, solver):
    problem, goals, expected = streams_expected(seed)
    if expected is None:
        if solver == "exact" or named(solver).capabilities.linear:
            result = run_sequence(problem, goals, solver)
            assert result.fallback and any("in conflict" in n for n in result.notes)
        return
    check(solver, problem, goals, expected)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(12))
def test_consumer_backends_reach_the_enumerated_optimum(seed, solver):
    check(solver, *consumer_case(seed))


@functools.cache
def weighted_case(kind: str, seed: int):
    """A small problem with bytes per second, task weights and capacities, and a sequence drawn
    from the goals that read them (balance first, most of the time)."""
    rng = random.Random(f"weighted-{kind}-{seed}")
    others = ["standby_rack_diversity", "stickiness"] if kind == "streams" else ["stickiness"]
    names = rng.sample(["weighted_balance", "cross_rack_bytes", *others], rng.randint(2, 3))
    if rng.random() < 0.7:
        names.insert(0, "balance")
    problem = small_problem(kind, seed, weighted=True)
    goals = resolve_goals(names, kind)
    return problem, goals, brute_force(problem, goals)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("kind", ["streams", "consumer"])
def test_weighted_goals_reach_the_enumerated_optimum(kind, seed, solver):
    problem, goals, expected = weighted_case(kind, seed)
    assert problem.weighted
    if expected is None:
        return  # hard goals in conflict: covered by the unweighted cases
    check(solver, problem, goals, expected)


@pytest.mark.parametrize("name", ["cross_rack_bytes", "weighted_balance"])
def test_the_kit_checks_the_weighted_goals_on_every_back_end(name):
    assert check_goal(resolve_goals([name], "streams")[0], cases=3, weighted=True) >= 6


@pytest.mark.parametrize("name", ["balance", "weighted_balance", "cross_rack_traffic", "cross_rack_bytes", "stickiness", "caught_up", "restore_volume"])
def test_the_kit_checks_the_goals_on_problems_of_every_shape(name):
    """The kit's varied problems: every assignor and protocol, contested claims, two standbys,
    rates up to 1.5 GB/s (what the first problems did not have, and issue 28's probe found)."""
    goal = resolve_goals([name], "streams" if name in ("caught_up", "restore_volume") else "consumer")[0]
    assert check_goal(goal, cases=4, varied=True, seed=100) >= 4


def racks_problem(source_racks: list[str], **config):
    """Stateless tasks 0_i reading one partition with replicas in source_racks[i]; clients a (r1), b (r2)."""
    return normalize(
        problem_from_data(
            {
                "kind": "streams",
                "config": config,
                "clients": [{"id": "a", "rack": "r1"}, {"id": "b", "rack": "r2"}],
                "tasks": [
                    {"id": f"0_{i}", "source_partitions": [{"topic": "t", "partition": i, "replica_racks": [rack]}]}
                    for i, rack in enumerate(source_racks)
                ],
            }
        )
    ).problem


def test_hand_computed_traffic_under_balance():
    # Three of four tasks read from r1, but balance gives each client two: one crosses racks.
    problem = racks_problem(["r1", "r1", "r1", "r2"])
    check_backends(problem, resolve_goals(["balance", "cross_rack_traffic"], "streams"), [0, 1])
    # Without balance every task reads in its own rack.
    check_backends(problem, resolve_goals(["cross_rack_traffic"], "streams"), [0])


def test_hand_computed_standby_diversity():
    # Two stateful tasks, clients a and b in r1, c in r2, one standby: each task keeps one copy on
    # c, so no task has both copies in one rack.
    problem = normalize(
        problem_from_data(
            {
                "kind": "streams",
                "config": {"num.standby.replicas": 1},
                "clients": [{"id": "a", "rack": "r1"}, {"id": "b", "rack": "r1"}, {"id": "c", "rack": "r2"}],
                "tasks": [
                    {
                        "id": f"0_{i}",
                        "stateful": True,
                        "source_partitions": [{"topic": "t", "partition": i}],
                        "changelog_partitions": [{"topic": "cl", "partition": i}],
                    }
                    for i in range(2)
                ],
            }
        )
    ).problem
    goals = resolve_goals(["balance", "standby_rack_diversity"], "streams")
    check_backends(problem, goals, [0, 0])
    held = solve(problem, goals=["balance", "standby_rack_diversity"]).assignment["c"]
    assert sorted(held.active + held.standby) == ["0_0", "0_1"]


def test_hand_computed_consumer_balance():
    # t1 (4 partitions) read by m1 and m2, t2 (2 partitions) only by m2: sizes 3 and 3, sum of
    # squares 18 (m2 cannot drop t2, so m1 takes three of t1).
    problem = normalize(
        problem_from_data(
            {
                "kind": "consumer",
                "topics": [{"name": "t1", "partitions": 4}, {"name": "t2", "partitions": 2}],
                "members": [{"id": "m1", "subscriptions": ["t1"]}, {"id": "m2", "subscriptions": ["t1", "t2"]}],
            }
        )
    ).problem
    check_backends(problem, resolve_goals(["balance"], "consumer"), [18])


def test_the_flow_back_end_refuses_what_it_cannot_express():
    problem = normalize(random_streams_problem(3, tasks=6, clients=3, standby_replicas=1)).problem
    with pytest.raises(SolverUnavailableError, match="flow back-end cannot solve this: standbys"):
        run_sequence(problem, resolve_goals(["balance"], "streams"), "flow")
    problem = normalize(random_streams_problem(3, tasks=6, clients=3, standby_replicas=0)).problem
    goals = resolve_goals(["balance", "cross_rack_traffic"], "streams")
    with pytest.raises(SolverUnavailableError, match="goals have tolerances"):
        run_sequence(problem, goals, "flow", tolerances={"balance": Tolerance(absolute=1)})


@pytest.mark.parametrize("seed", range(8))
def test_balance_with_thread_counts_too_varied_for_one_level_grid(seed, monkeypatch):
    """Past `_MAX_LEVEL_SCALE` the balance rows compare thread-count classes pairwise; forced
    here on small problems, every back-end must still reach the enumerated optimum."""
    import goals.balance

    monkeypatch.setattr(goals.balance, "_MAX_LEVEL_SCALE", 1)
    rng = random.Random(seed)
    problem = random_streams_problem(
        seed, tasks=rng.randint(3, 4), clients=3, standby_replicas=rng.randint(0, 1), threads=(1, 3), stateful_fraction=0.7
    )
    problem = normalize(problem).problem
    goals_ = resolve_goals(["balance", *rng.sample(["cross_rack_traffic", "stickiness", "subtopology_spread"], 2)], "streams")
    check_backends(problem, goals_, brute_force(problem, goals_))


@pytest.mark.parametrize("seed", range(8))
def test_soft_balance_compares_counts_pairwise_and_reaches_the_enumerated_optimum(seed):
    """The soft balance (the assignment applied now's) uses the pairwise rows rather than a level
    variable (decision 97), where the caught-up rule leaves an excess above 0: every back-end
    must reach the enumerated optimum of its excess, and the later goal's, with it."""
    from optimizer.catalogue import goal_class
    from optimizer.goal import soft

    rng = random.Random(seed)
    problem = random_streams_problem(
        seed, tasks=rng.randint(3, 4), clients=3, standby_replicas=rng.randint(0, 1), threads=(1, 3), stateful_fraction=0.7
    )
    problem = normalize(problem).problem
    goals_ = [soft(goal_class("balance"))(), *resolve_goals([rng.choice(["cross_rack_traffic", "stickiness", "subtopology_spread"])], "streams")]
    check_backends(problem, goals_, brute_force(problem, goals_))


def test_balance_with_large_prime_thread_counts():
    """Thread counts whose least common multiple is about 10^9: no level grid, no overflow."""
    data = {
        "kind": "streams",
        "clients": [{"id": "a", "threads": 997}, {"id": "b", "threads": 991}, {"id": "c", "threads": 1}],
        "tasks": [{"id": f"0_{p}", "stateful": True, "source_partitions": [{"topic": "t", "partition": p}]} for p in range(4)],
        "config": {"num.standby.replicas": 1},
    }
    problem = normalize(problem_from_data(data)).problem
    goals_ = resolve_goals(["balance", "stickiness"], "streams")
    check_backends(problem, goals_, brute_force(problem, goals_))


def test_the_shipped_kit_checks_a_goal_on_every_back_end():
    # What a plugin author runs (docs/goals.md): a built-in goal passes ...
    assert check_goal(resolve_goals(["caught_up"], "streams")[0], kinds=("streams",), cases=3) >= 3

    # ... and an encoding that disagrees with the goal's own evaluate is caught.
    class Miscounted(type(resolve_goals(["stickiness"], "consumer")[0])):
        name = "miscounted_stickiness"
        compressible = False

        def encode(self, formulation):
            return super().encode(formulation).scaled(2)

        def flow(self, terms):
            return False

    with pytest.raises(AssertionError, match="miscounted_stickiness"):
        check_goal(Miscounted(), kinds=("consumer",), cases=4)
