"""Fuzzing: valid problems mutated at every field path (tests/fuzzing.py), on a fixed budget.

Each mutant is either rejected with located messages (InvalidInputError, every message short and
printable), or solved by Kafka's assignor and the exact engine into solutions the evaluator
accepts (`solve` checks them); never an exception of another kind, never past the time limit.
`bench/fuzz.py` runs every mutant, not a sample, before a release (docs/validation.md).
"""

from __future__ import annotations

import functools
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optimizer.errors import InvalidInputError, NoSolutionError, SolverUnavailableError
from optimizer.model.problem import problem_from_data
from optimizer.solve import solve
from tests.fuzzing import base_documents, mutate, mutations_at, paths

TIME_LIMIT = 5.0


@functools.cache
def mutants() -> list[tuple[int, tuple, str, object]]:
    """(base document, path, label, how) for every mutation of every base document."""
    found = []
    for number, base in enumerate(base_documents()):
        for path in paths(base):
            node = base
            for key in path:
                node = node[key]
            found += [(number, path, label, how) for label, how in mutations_at(node)]
    return found


@settings(max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_mutated_problem_is_rejected_clearly_or_solved_validly(data):
    number, path, label, how = data.draw(st.sampled_from(mutants()), label="mutant")
    document = mutate(base_documents()[number], path, how)
    try:
        problem = problem_from_data(document, "fuzz")
    except InvalidInputError as error:
        assert error.issues
        for issue in error.issues:
            text = str(issue)
            assert len(text) < 1000, text[:200]
            assert text.isprintable(), text
        return
    for solver in ("kafka", "exact"):
        started = time.monotonic()
        try:
            solution = solve(problem, solver=solver, time_limit=TIME_LIMIT)
        except SolverUnavailableError:
            continue  # a usage answer (exit 2), not a crash
        except NoSolutionError:
            assert time.monotonic() - started < TIME_LIMIT + 4
            continue
        assert time.monotonic() - started < TIME_LIMIT + 4, (path, label, solver)
        assert solution.metrics is not None  # evaluated: solve raises SolverError for an invalid assignment
