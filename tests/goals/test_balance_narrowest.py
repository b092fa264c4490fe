"""Streams `balance` holds tasks per thread as even as the counts allow (decision 85): the exact
answer is never less balanced than Kafka's on the skew `compare` prints, now or at the target;
`balance=kip441` keeps KIP-441's one task per thread."""

from __future__ import annotations

import itertools
import random

import pytest

from optimizer.catalogue import resolve_goals
from optimizer.compare import compare
from optimizer.errors import GoalError
from optimizer.evaluate import evaluate
from optimizer.generate import random_streams_problem, thread_mix
from optimizer.model.normalize import normalize
from optimizer.model.problem import problem_from_data
from optimizer.model.solution import ClientAssignment
from optimizer.solve import solve
from optimizer.testing import streams_assignments

EVEN = {
    "kind": "streams",
    "clients": [{"id": f"c{k}", "threads": 2} for k in range(3)],
    "tasks": [{"id": f"0_{i}", "source_partitions": [{"topic": "in", "partition": i}]} for i in range(6)],
}
"""6 stateless tasks on 3 clients of 2 threads: 2 each is the only narrowest balance (width 0)."""


def holding(counts: list[int]) -> dict:
    tasks = iter(f"0_{i}" for i in range(6))
    return {f"c{k}": {"active": [next(tasks) for _ in range(n)]} for k, n in enumerate(counts)}


def test_counts_within_kip441_but_not_the_narrowest_balance_score_above_0():
    problem = normalize(problem_from_data(EVEN)).problem
    narrowest, kip441 = resolve_goals(["balance"], problem)[0], resolve_goals(["balance=kip441"], problem)[0]

    def value(goal, counts):
        return goal.evaluate(problem, {c: ClientAssignment(**held) for c, held in holding(counts).items()})

    assert value(narrowest, [2, 2, 2]) == value(kip441, [2, 2, 2]) == 0
    # 1.5, 1 and 0.5 tasks per thread: KIP-441 balanced (max - min 1), one task from the even 2, 2, 2
    assert value(kip441, [3, 2, 1]) == 0
    assert value(narrowest, [3, 2, 1]) == 1


@pytest.mark.parametrize("solver", ["exact", "milp", "cpsat", "flow"])
def test_every_back_end_reaches_the_narrowest_balance(solver):
    solution = solve(problem_from_data(EVEN), solver=solver, goals=["balance", "cross_rack_traffic"])
    assert sorted(len(held.active) for held in solution.assignment.values()) == [2, 2, 2]


def test_balance_takes_no_other_argument():
    with pytest.raises(GoalError, match="kip441"):
        resolve_goals(["balance=tight"], "streams")


@pytest.mark.parametrize("seed", range(6))
def test_the_exact_answer_is_never_less_balanced_than_kafkas(seed):
    """Random applications with lags, standbys and 1-4 threads per client: on the first goal and
    on the active skew per thread, applied now and at the target (bench/balance_rank.py does 100)."""
    problem = random_streams_problem(seed, tasks=60 + 17 * seed, clients=4 + seed, standby_replicas=1, churn=0.3)
    comparison = compare(problem)
    first = comparison.goals[0]
    assert first.name == "balance"
    assert first.exact is not None and first.exact <= first.kafka
    assert first.exact_now is not None and first.exact_now <= first.kafka_now
    skew = comparison.figures()["load_skew"]
    assert skew["exact"] <= skew["kafka"] + 1e-9
    assert skew["exact_now"] <= skew["kafka_now"] + 1e-9


def reachable(document: dict) -> bool:
    """Whether some valid assignment meets `balance` and `balance=kip441` (enumerated)."""
    problem = normalize(problem_from_data(document)).problem
    for name in ("balance", "balance=kip441"):
        goal = resolve_goals([name], problem)[0]
        if not any(goal.evaluate(problem, assignment) == 0 for assignment in streams_assignments(problem)):
            return False
    return True


def test_the_issue_49_application_is_assigned_balanced():
    """2 stateful tasks, clients of 3, 1, 1 and 1 threads, one standby: Kafka assigns it, and the
    exact engine said "hard goals in conflict: balance" (exit 3): the actives' narrowest counts
    (2, 0, 0, 0) and the copies' own (1, 1, 1, 1) cannot hold together."""
    raw = problem_from_data(thread_mix([3, 1, 1, 1], 2, 2, 1))
    assert solve(raw, solver="kafka").assignment
    solution = solve(raw)
    assert "fallback" not in solution.solver.options, solution.solver.options
    balance = solution.goals[0]
    assert (balance.name, balance.value, balance.status) == ("balance", 0, "optimal")
    assert reachable(thread_mix([3, 1, 1, 1], 2, 2, 1))


# Every mix of 3 to 5 clients of 1 to 5 threads with up to 4 tasks (1 or 2 standbys) where the
# copies' own narrowest width leaves the actives' narrowest counts no assignment: 3 of 4,620.
CONFLICTING_MIXES = [([1, 1, 1, 3], 2, 2, 1), ([2, 2, 2, 5], 2, 2, 1), ([1, 1, 1, 1, 4], 3, 3, 1)]


@pytest.mark.parametrize("mix", CONFLICTING_MIXES)
def test_balance_is_reachable_where_the_narrowest_widths_conflict(mix):
    """The exact engine finds an assignment at balance 0, valid by the evaluator."""
    raw = problem_from_data(thread_mix(*mix))
    for name in ("balance", "balance=kip441"):
        solution = solve(raw, goals=[name, "stickiness"])
        assert solution.goals[0].value == 0 and "fallback" not in solution.solver.options, (name, solution.solver.options)
        assert evaluate(raw, solution).valid


def test_balance_is_reachable_on_random_thread_mixes():
    """Seeded random mixes (2 to 5 clients of 1 to 4 threads, 1 to 5 tasks, 0 to 2 standbys) small
    enough to enumerate: each has an assignment at balance 0, narrowest and KIP-441's
    (bench/optimality.py checks many more through `varied_problem`)."""
    rng = random.Random(49)
    checked = 0
    while checked < 60:
        clients = rng.randint(2, 5)
        standbys = rng.randint(0, min(2, clients - 1))
        tasks = rng.randint(1, 5)
        stateful = rng.randint(0, tasks)
        copies = clients * len(list(itertools.combinations(range(clients - 1), standbys)))
        if copies**stateful * clients ** (tasks - stateful) > 600:
            continue
        threads = [rng.choice([1, 1, 2, 3, 4]) for _ in range(clients)]
        assert reachable(thread_mix(threads, tasks, stateful, standbys)), (threads, tasks, stateful, standbys)
        checked += 1
