"""The drain goal against every back-end of the optimiser, with its shipped conformance kit."""

from __future__ import annotations

import pytest
from kao_drain import DrainClients

from optimizer import GoalError, Problem
from optimizer.testing import check_goal


def first_client(problem: Problem) -> str:
    """The client (or member) to drain in each small problem the kit generates."""
    holders = problem.clients if problem.kind == "streams" else problem.members
    return sorted(holder.id for holder in holders)[0]


def test_drain_agrees_with_every_back_end():
    # Alone, and between balance and stickiness: each back-end's optimum is the one enumeration
    # finds with the goal's own evaluate, on Streams applications and consumer groups.
    assert check_goal(lambda problem: DrainClients(first_client(problem)), cases=6) >= 12


def test_drain_needs_the_clients_to_drain():
    with pytest.raises(GoalError, match="needs the clients to drain"):
        DrainClients(None)
