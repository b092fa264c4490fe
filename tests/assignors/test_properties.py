"""Property tests over random problems: validity, balance, KIP-441 convergence, determinism."""

from __future__ import annotations

import math
from functools import partial

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model import RackAwareStrategy, problem_from_data, problem_to_data
from optimizer.rebalance import next_rebalance
from optimizer.solve import solve as solve_with
from tests.conftest import shuffled

solve = partial(solve_with, solver="kafka")  # these are properties of Kafka's own assignors

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

def streams_problems(max_tasks: int = 40, max_clients: int = 7, min_tasks: int = 1):
    """Every shape Kafka allows: with or without racks (or with some clients rackless), tags,
    standbys and stateful tasks (stateless only, too)."""
    return st.builds(
        lambda seed, tasks, clients, standbys, strategy, tagged, threads, stateful, racks, rackless: random_streams_problem(
            seed,
            tasks=tasks,
            clients=clients,
            standby_replicas=standbys,
            strategy=strategy,
            tags=("zone",) if tagged else (),
            threads=(1, threads),
            stateful_fraction=stateful,
            racks=racks,
            rackless_clients=rackless,
        ),
        seed=st.integers(0, 10**6),
        tasks=st.integers(min_tasks, max_tasks),
        clients=st.integers(1, max_clients),
        standbys=st.integers(0, 2),
        strategy=st.sampled_from(["none", "min_traffic", "balance_subtopology"]),
        tagged=st.booleans(),
        threads=st.integers(1, 4),
        stateful=st.sampled_from([0.0, 0.5, 0.7, 1.0]),
        racks=st.sampled_from([0, 1, 2, 3]),
        rackless=st.sampled_from([0, 0, 1]),
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams_problems(max_tasks=10, max_clients=5, min_tasks=0))
def test_the_exact_engine_solves_every_shape_validly_and_deterministically(problem):
    """The default `solve` (exact, default goals) on rackless, tagless, standby-less,
    stateless-only and task-less problems: a solution the evaluator accepts (solve checks it),
    balanced, the same whatever the order of the problem's lists."""
    solution = solve_with(problem, time_limit=30)
    assert {g.name: g.value for g in solution.goals}["balance"] == 0
    assert all(g.status == "optimal" for g in solution.goals)
    assert solve_with(shuffled(problem, 5), time_limit=30).assignment == solution.assignment


def test_the_generator_makes_every_shape():
    rackless = random_streams_problem(1, racks=0)
    assert all(c.rack is None for c in rackless.clients)
    assert all(not p.replica_racks for t in rackless.tasks for p in (*t.source_partitions, *t.changelog_partitions))
    partial = random_streams_problem(1, clients=4, rackless_clients=1)
    assert [c.rack is None for c in partial.clients] == [False, False, False, True]
    stateless = random_streams_problem(1, stateful_fraction=0.0, standby_replicas=0)
    assert not any(t.stateful for t in stateless.tasks) and not any(c.tags for c in stateless.clients)
    assert random_streams_problem(1, tasks=0).tasks == ()


def with_assignor(problem, assignor: str):
    data = problem_to_data(problem)
    data.setdefault("config", {})["task.assignor.class"] = assignor
    return problem_from_data(data)


@SETTINGS
@given(streams_problems(), st.sampled_from(["high_availability", "sticky"]))
def test_streams_results_are_valid_and_deterministic(problem, assignor):
    problem = with_assignor(problem, assignor)
    solution = solve(problem)  # solve re-checks validity with the evaluator
    assert solve(shuffled(problem, 1)).assignment == solution.assignment
    reference = solve_with(problem, solver="kip925")
    assert solve_with(shuffled(problem, 2), solver="kip925").assignment == reference.assignment


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams_problems(max_tasks=400, max_clients=12), st.sampled_from(["high_availability", "sticky"]))
def test_larger_streams_problems_use_the_contracted_solvers(problem, assignor):
    """Past the faithful graph's size, rack-aware optimisation and standby swaps take the fast
    paths; the results stay valid and deterministic."""
    problem = with_assignor(problem, assignor)
    solution = solve(problem)
    assert solve(shuffled(problem, 4)).assignment == solution.assignment
    solve_with(problem, solver="kip925")


@SETTINGS
@given(streams_problems())
# KIP-925's standby swaps leave a standby that could move to a less loaded client here (see below).
@example(
    random_streams_problem(
        1, tasks=14, clients=4, standby_replicas=2, strategy="balance_subtopology", threads=(1, 3), stateful_fraction=0.7, racks=3
    )
)
def test_high_availability_converges_to_a_balanced_fixed_point(problem):
    """KIP-441: feeding back each result with its warm-ups caught up, the assignment stops
    changing within a bounded number of rounds, and the balanced result is then never changed."""
    stateful = sum(t.stateful for t in problem.tasks)
    bound = 3 + math.ceil(stateful * (1 + problem.config.num_standby_replicas) / problem.config.max_warmup_replicas)
    solution = solve(problem)
    rounds = 0
    while solution.followup_rebalance:
        problem = next_rebalance(problem, solution)
        solution = solve(problem)
        rounds += 1
        assert rounds <= bound, "no convergence"
    assert solve(next_rebalance(problem, solution)).assignment == solution.assignment
    # No warm-ups pending: actives are balanced per thread (KIP-441) ...
    assert solution.metrics.warmup_tasks == 0
    assert solution.metrics.active_load_skew <= 1
    # ... and no standby could move to a less loaded client without a copy of it: Kafka's
    # balanceTasksOverThreads stops only when, for every client pair the move would not overturn,
    # the destination already holds every standby of the source.
    threads = {c.id: c.threads for c in problem.clients}
    tags = problem.config.rack_aware_assignment_tags
    # Kafka balances standbys before it places stateless tasks: the load is stateful copies.
    load = {c: (len(h.active) - _stateless(problem, h.active) + len(h.standby)) for c, h in solution.assignment.items()}
    swapped = _standbys_may_be_swapped(problem)
    if not tags:  # with tags, balancing only moves standbys between clients of equal tags
        for source, held in solution.assignment.items():
            for destination, other in solution.assignment.items():
                after = (load[source] - 1) / threads[source] - (load[destination] + 1) / threads[destination]
                if source == destination or after < 0:
                    continue
                if swapped:
                    # RackAwareTaskAssignor.optimizeStandbyTasks then swaps standbys between clients of
                    # different racks to cut traffic, keeping each client's count (validateAssignedTask in
                    # MinTrafficGraphConstructor.assignTaskFromMinCostFlow): a swapped-in standby may be
                    # missing on the destination, but the counts are still those of the balanced fixed
                    # point, where the source's standbys were a subset of the destination's copies.
                    assert len(held.standby) <= load[destination], (source, destination, load)
                else:
                    movable = [t for t in held.standby if t not in other.active and t not in other.standby]
                    assert not movable, (source, destination, movable, load)


def _stateless(problem, tasks) -> int:
    return sum(1 for t in tasks if not problem.task_by_id[t].stateful)


def _standbys_may_be_swapped(problem) -> bool:
    """Whether KIP-925's standby optimisation may run: a rack-aware strategy, a rack on every client
    (else canEnableRackAwareAssignor says no) and two racks at least (it swaps only across racks)."""
    racks = {c.rack for c in problem.clients}
    return problem.config.rack_aware_assignment_strategy != RackAwareStrategy.NONE and None not in racks and len(racks) > 1


consumer_problems = st.builds(
    lambda seed, members, topics, equal, strategy, racks: random_consumer_problem(
        seed, members=members, topics=topics, equal_subscriptions=equal, strategy=strategy, racks=racks
    ),
    seed=st.integers(0, 10**6),
    members=st.integers(1, 8),
    topics=st.integers(1, 5),
    equal=st.booleans(),
    strategy=st.sampled_from(["range", "roundrobin", "sticky", "cooperative-sticky"]),
    racks=st.sampled_from([0, 2, 3]),
)


@SETTINGS
@given(consumer_problems)
def test_consumer_results_are_valid_and_deterministic(problem):
    solution = solve(problem)
    assert solve(shuffled(problem, 3)).assignment == solution.assignment


@SETTINGS
@given(consumer_problems.filter(lambda p: p.config.partition_assignment_strategy in ("roundrobin", "sticky", "cooperative-sticky")))
def test_equal_subscriptions_differ_by_at_most_one_partition(problem):
    topics = [t.name for t in problem.topics]
    data = problem_to_data(problem)
    for member in data["members"]:
        member["subscriptions"] = topics
    problem = problem_from_data(data)
    solution = solve(problem)
    for _ in range(4):  # cooperative rebalancing hands withheld partitions over one round later
        if not solution.followup_rebalance:
            break
        problem = next_rebalance(problem, solution)
        solution = solve(problem)
    assert not solution.followup_rebalance
    assert solution.metrics.size_skew <= 1
