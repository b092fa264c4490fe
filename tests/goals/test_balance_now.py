"""`balance_now`: a cooperative group's first round as even as equally good targets allow. Every
back-end (the flow's own nodes for what a member takes now included) reaches the enumerated
lexicographic optimum; in the default sequence of cooperative groups only."""

from __future__ import annotations

import pytest

from optimizer.catalogue import default_goals, resolve_goals
from optimizer.generate import random_consumer_problem
from optimizer.model.normalize import normalize
from optimizer.testing import SOLVERS, brute_force, check

GOALS = ["balance", "cross_rack_traffic", "stickiness", "balance_now"]


def cooperative(seed: int):
    problem = random_consumer_problem(
        seed, members=3, topics=2, partitions=(1, 3), strategy="cooperative-sticky", churn=0.6, equal_subscriptions=seed % 2 == 0
    )
    return normalize(problem).problem


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(10))
def test_every_back_end_reaches_the_enumerated_optimum(seed, solver):
    problem = cooperative(seed)
    goals = resolve_goals(GOALS, problem)
    expected = brute_force(problem, goals)
    assert expected is not None
    check(solver, problem, goals, expected)


def test_only_cooperative_groups_rank_their_first_round():
    assert default_goals(random_consumer_problem(1, strategy="cooperative-sticky"))[-1] == "balance_now"
    assert "balance_now" not in default_goals(random_consumer_problem(1, strategy="sticky"))


@pytest.mark.parametrize("names", [["balance_now"], ["balance", "balance_now", "stickiness"], ["balance_now", "stickiness"]])
@pytest.mark.parametrize("seed", range(6))
def test_without_stickiness_first_the_flow_declines_and_the_engine_stays_exact(seed, names):
    """The flow prices a partition its holder takes back through a rack node as given away: only
    with stickiness ranked before `balance_now` is that path ruled out, else another back-end."""
    problem = cooperative(seed)
    goals = resolve_goals(names, problem)
    check("exact", problem, goals, brute_force(problem, goals))
