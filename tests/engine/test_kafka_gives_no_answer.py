"""Where Kafka's assignor gives no answer (it raises, or answers with no valid assignment), the
exact engine still solves: Kafka's answer is only its start and its yardstick, never a must."""

from __future__ import annotations

import pytest

from optimizer import evaluate, problem_from_data, solve
from optimizer.catalogue import resolve_goals
from optimizer.deadline import now
from optimizer.engine import policy
from optimizer.engine.policy import run_exact
from optimizer.errors import NoSolutionError, SolverUnavailableError
from optimizer.model.normalize import normalize
from optimizer.results import SequenceResult

# Kafka 4.4.0's StickyAssignor raises IllegalStateException on this group: member-1 claims two
# partitions beyond topic-0's one (checked against the jars: tests/kafka/test_live_oracle.py).
REFUSED = {
    "format": "kafka-assignment-problem/v1",
    "kind": "consumer",
    "name": "stale-claims",
    "config": {"partition.assignment.strategy": "sticky"},
    "topics": [{"name": "topic-0", "partitions": 1, "replica_racks": [["r1"]]}],
    "members": [
        {"id": "member-0", "rack": "r1", "subscriptions": ["topic-0"], "generation": 5},
        {"id": "member-1", "rack": "r2", "subscriptions": ["topic-0"], "owned_partitions": ["topic-0-1", "topic-0-2"], "generation": 5},
    ],
}


def test_kafka_says_why_it_gives_no_answer():
    with pytest.raises(SolverUnavailableError, match=r"Kafka 4\.4\.0's StickyAssignor raises IllegalStateException"):
        solve(problem_from_data(REFUSED), solver="kafka")


@pytest.mark.parametrize("solver", ["exact", "milp", "cpsat"])
def test_the_exact_engine_solves_without_kafkas_start(solver):
    problem = problem_from_data(REFUSED)
    solution = solve(problem, solver=solver)
    assert solution.assignment["member-0"].active == ("topic-0-0",) or solution.assignment["member-1"].active == ("topic-0-0",)
    assert evaluate(problem, solution).valid


def test_out_of_time_the_engine_answers_with_its_first_point_and_else_says_kafka_gives_no_answer(monkeypatch):
    problem = problem_from_data(REFUSED)
    normalised = normalize(problem).problem

    def kafka():
        raise SolverUnavailableError("Kafka 4.4.0's StickyAssignor raises IllegalStateException")

    goals = resolve_goals(None, normalised)
    found = run_exact(normalised, problem, "milp", goals, 0.0, now() - 1, {}, False, kafka)
    assert any("the engine's first point" in note for note in found.notes) and "fallback" not in found.options
    # No first point, and a sequence that finds nothing: Kafka's answer would be the fallback
    monkeypatch.setattr(policy, "fast_start", lambda *args: None)
    monkeypatch.setattr(policy, "run_sequence", lambda *args, **kwargs: SequenceResult(None, [], ["nothing"], True))
    with pytest.raises(NoSolutionError, match=r"found none, and Kafka's assignor, its fallback, gives no answer here: Kafka 4\.4\.0's StickyAssignor raises"):
        run_exact(normalised, problem, "milp", goals, 5.0, now() + 5, {}, False, kafka)
