"""The project's exceptions. Outcomes such as infeasible or timed out are statuses, not errors."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from optimizer.model.issues import Issue


class KafkaAssignmentError(Exception):
    """Base of every error this package raises on purpose."""


class InvalidInputError(KafkaAssignmentError):
    """An input document that cannot be used; `issues` names every problem and where it is."""

    def __init__(self, source: str, issues: Iterable[Issue]):
        self.source = source
        self.issues = tuple(issues)
        count = len(self.issues)
        lines = [f"{source}: {count} problem{'s' if count != 1 else ''}"]
        lines += [f"  - {issue}" for issue in self.issues]
        super().__init__("\n".join(lines))


class SolverUnavailableError(KafkaAssignmentError):
    """A solver or back-end was asked for that cannot handle the request."""


class SolverError(KafkaAssignmentError):
    """A solver returned an assignment the evaluator rejects: a bug, reported with the violations.
    The command line exits 4 (internal error), not 3 (no feasible solution)."""


class NoSolutionError(KafkaAssignmentError):
    """Nothing to return: no solver produced an assignment within the time limit (the exact
    engine's own result, and Kafka's assignor as its fallback). The command line exits 3."""
