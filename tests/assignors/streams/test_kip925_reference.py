"""The reference goal (`--solver kip925`) reaches the exact optimum of KIP-925's problem."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from optimizer.assignors.streams.kip925.optimize import subtopology_caps
from optimizer.generate import random_streams_problem
from optimizer.model.normalize import normalize
from optimizer.solve import solve
from tests.assignors.streams.kip925.test_cycle_canceling import capped_optimum


def independent_optimum(problem) -> int:
    """KIP-925's cost at its optimum, each client keeping its stateful and stateless counts:
    an assignment problem on client slots, with costs computed here from the problem alone."""
    problem = normalize(problem).problem
    clients = [c.id for c in problem.clients]
    owner = problem.previous_active_client
    traffic = problem.config.rack_aware_assignment_traffic_cost
    non_overlap = problem.config.rack_aware_assignment_non_overlap_cost
    traffic = 10 if traffic is None else traffic
    non_overlap = 1 if non_overlap is None else non_overlap
    total = 0
    for stateful in (True, False):
        tasks = [t for t in problem.tasks if t.stateful == stateful]
        if not tasks:
            continue
        costs = (traffic, non_overlap) if stateful else (1, 0)
        cost = np.array(
            [
                [
                    costs[0] * sum(1 for p in t.source_partitions if problem.client_by_id[c].rack not in p.replica_racks)
                    + costs[1] * (owner.get(t.id) != c)
                    for c in clients
                ]
                for t in tasks
            ]
        )
        slots = [clients.index(owner[t.id]) for t in tasks]
        rows, cols = linear_sum_assignment(cost[:, slots])
        total += int(cost[rows, np.array(slots)[cols]].sum())
    return total


@pytest.mark.parametrize("seed", range(25))
def test_kip925_reaches_the_independent_optimum(seed):
    problem = random_streams_problem(
        seed, tasks=20 + 12 * seed, clients=2 + seed % 9, churn=0.0, standby_replicas=seed % 2, threads=(1, 3)
    )
    assert len(problem.tasks) <= 320
    solution = solve(problem, solver="kip925")
    assert solution.metrics.kip925_cost == independent_optimum(problem)
    # Every client keeps its number of actives.
    before = {c.id: len(c.previous_active) for c in problem.clients}
    assert {c: len(h.active) for c, h in solution.assignment.items()} == before


def test_kip925_never_worse_than_the_previous_assignment():
    from optimizer import evaluate
    from optimizer.model import ClientAssignment

    for seed in range(10):
        problem = random_streams_problem(seed, tasks=60, clients=6, churn=0.0, standby_replicas=0)
        previous = {c.id: ClientAssignment(active=c.previous_active) for c in problem.clients}
        assert solve(problem, solver="kip925").metrics.kip925_cost <= evaluate(problem, previous).metrics.kip925_cost


def test_tasks_without_previous_owner_go_to_the_least_loaded_client():
    from optimizer.model import problem_from_data

    problem = problem_from_data({
        "kind": "streams",
        "clients": [{"id": "A", "previous_active": ["0_0", "0_1", "0_2", "0_3"]}, {"id": "B"}],
        "tasks": [{"id": f"0_{p}", "stateful": True, "source_partitions": [{"topic": "t", "partition": p}]} for p in range(5)],
    })  # fmt: skip
    solution = solve(problem, solver="kip925")
    assert list(solution.assignment["B"].active) == ["0_4"]


def test_kip925_balance_subtopology_reaches_the_linear_programme_optimum():
    for seed in range(6):
        problem = random_streams_problem(seed, tasks=40, clients=4, churn=0.0, standby_replicas=0,
                                         strategy="balance_subtopology", stateful_fraction=1.0, subtopologies=3)  # fmt: skip
        problem = normalize(problem).problem
        clients = [c.id for c in problem.clients]
        owner = problem.previous_active_client
        tasks = sorted(problem.tasks, key=lambda t: (t.subtopology, t.partition))
        cost = np.array([
            [10 * sum(1 for p in t.source_partitions if problem.client_by_id[c].rack not in p.replica_racks) + (owner[t.id] != c)
             for c in clients] for t in tasks
        ])  # fmt: skip
        current = np.array([clients.index(owner[t.id]) for t in tasks])
        groups = np.unique([t.subtopology for t in tasks], return_inverse=True)[1]
        caps = subtopology_caps(groups, np.bincount(current, minlength=len(clients)))
        assert solve(problem, solver="kip925").metrics.kip925_cost == capped_optimum(cost, current, groups, caps)
