"""`probing_rebalances=N`: the exact target's plan needs at most N probing rebalances, traded
against the later goals; `=8h` counts them at the problem's probing.rebalance.interval.ms."""

from __future__ import annotations

import pytest

from optimizer.catalogue import DEFAULT_GOALS, resolve_goals
from optimizer.errors import GoalError
from optimizer.generate import random_streams_problem
from optimizer.solve import solve


@pytest.fixture(scope="module")
def application():
    return random_streams_problem(7, tasks=60, clients=6, standby_replicas=1, churn=0.3)


@pytest.fixture(scope="module")
def unbounded(application):
    return solve(application, time_limit=60)


def test_the_plan_is_cut_to_the_rounds_allowed_at_a_price(application, unbounded):
    assert unbounded.plan.followup_rebalances == 8  # the default goals' plan (docs/tutorial.md)
    for rounds in (1, 3, 6):
        bounded = solve(application, goals=[*DEFAULT_GOALS["streams"], f"probing_rebalances={rounds}"], time_limit=60)
        assert bounded.plan.followup_rebalances <= rounds
        values = {g.name: g for g in bounded.goals}
        assert values["probing_rebalances"].value == 0 and values["probing_rebalances"].status == "optimal"
        # the later goals pay: never better than without the bound, on the first one that differs
        ours = [g.value for g in bounded.goals][:-1]
        theirs = [g.value for g in unbounded.goals]
        assert ours >= theirs


def test_zero_rounds_puts_every_stateful_copy_on_a_most_caught_up_client(application):
    bounded = solve(application, goals=["balance=kip441", "probing_rebalances=0", "stickiness"], time_limit=60)
    assert bounded.plan.warmups == 0


def test_a_time_is_counted_in_probing_intervals(application):
    (hours,) = resolve_goals(["probing_rebalances=1h"], application)
    (minutes,) = resolve_goals(["probing_rebalances=25m"], application)
    assert hours.rounds(application) == 6 and minutes.rounds(application) == 2  # 10-minute intervals by default
    with pytest.raises(GoalError, match="probing_rebalances=8h"):
        resolve_goals(["probing_rebalances=soon"], "streams")
    with pytest.raises(GoalError, match="does not apply to consumer"):
        solve(random_consumer(), goals=["balance", "probing_rebalances=2"])


def random_consumer():
    from optimizer.generate import random_consumer_problem

    return random_consumer_problem(1)
