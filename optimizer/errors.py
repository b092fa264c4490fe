"""The project's exceptions: one hierarchy under `KafkaAssignmentError`, declared here.

Outcomes such as infeasible or timed out are statuses in a result, not errors. Each error says
who sees it and what the command line exits with (`exit_code`, one of `ExitCode`); the command
line maps every error through that attribute alone. The engine's own control-flow signals (a
back-end that cannot take a sequence, a formulation that cannot be compressed) are private to
the engine and never reach a caller. The root, `UsageError` and `PluginError` are defined in
`plugins.errors`, the bottom layer, because the plugin manager raises them without importing
`optimizer` (with `ExitCode`, which they carry); import every error from here.

    KafkaAssignmentError
    ├── InvalidInputError        1  a problem, solution or table that cannot be used
    ├── UsageError               2  asked for something that cannot be done as asked
    │   ├── PluginError             plugins and goal names
    │   ├── GoalError               a goal's argument or kind, a tolerance
    │   ├── SolverUnavailableError  a solver or back-end that cannot take the request
    │   ├── PipelineError           pipeline options, input and output places
    │   └── KafkaUnavailableError   Kafka's jars cannot run here (Java, Maven, a cluster)
    ├── NoSolutionError          3  nothing found within the time limit
    │   └── TimeLimitReached        the time limit ran out (reading a file, a solver)
    └── SolverError              4  a bug: a solver's result failed the evaluator
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from plugins.errors import ExitCode, KafkaAssignmentError, PluginError, UsageError

if TYPE_CHECKING:
    from optimizer.model.issues import Issue

__all__ = [
    "ExitCode",
    "GoalError",
    "InvalidInputError",
    "KafkaAssignmentError",
    "KafkaUnavailableError",
    "NoSolutionError",
    "PipelineError",
    "PluginError",
    "SolverError",
    "SolverUnavailableError",
    "TimeLimitReached",
    "UsageError",
]


class InvalidInputError(KafkaAssignmentError):
    """An input document that cannot be used; `issues` names every problem and where it is.

    Who sees it: `load_problem`, `load_solution` and `problem_from_data` callers, the pipeline's
    readers (a whole input that cannot be read; single bad problems become rows instead).
    Exit code 1.
    """

    exit_code = ExitCode.INVALID_INPUT

    def __init__(self, source: str, issues: Iterable[Issue]):
        self.source = source
        self.issues = tuple(issues)
        count = len(self.issues)
        lines = [f"{source}: {count} problem{'s' if count != 1 else ''}"]
        lines += [f"  - {issue}" for issue in self.issues]
        super().__init__("\n".join(lines))


class GoalError(UsageError):
    """A goal cannot be used as asked: a wrong or missing argument (`movement_budget` without a
    number), a goal listed twice, a goal for another kind of problem, a malformed tolerance.

    Who sees it: `solve` and `compare` callers; goal classes raise it from `__init__`. Exit code 2.
    """


class SolverUnavailableError(UsageError):
    """A solver or back-end was asked for that cannot handle the request (an unknown name, the
    flow back-end on goals without a flow encoding, `kip925` on a consumer group).

    Who sees it: `solve` and `compare` callers. Exit code 2.
    """


class PipelineError(UsageError):
    """The fleet job itself failed, not one of its problems: unknown solvers or runner, an output
    directory that is not one of its outputs or cannot be written, a Spark job that failed as a
    whole, rows lost, executors with other plugins than the driver. Single problems that fail
    never raise: they get a row with the reason.

    Who sees it: `run_pipeline` callers and `kafka-assign pipeline`. Exit code 2.
    """


class KafkaUnavailableError(UsageError):
    """Kafka's own jars cannot run as asked: Java or Maven is missing, the JVM module (`jvm/`) does
    not build, or a Kafka process (a sandbox broker, an adapter) failed or did not start in time.
    Everything that needs no JVM works without them.

    Who sees it: `kafka-assign sandbox` and the code that runs Kafka's classes. Exit code 2.
    """


class NoSolutionError(KafkaAssignmentError):
    """Nothing to return: no solver produced an assignment within the time limit (the exact
    engine's own result, and Kafka's assignor as its fallback).

    Who sees it: `solve` and `compare` callers. Exit code 3.
    """

    exit_code = ExitCode.NO_SOLUTION


class TimeLimitReached(NoSolutionError):
    """The time limit ran out before the work asked for finished (`optimizer.deadline`).

    Who sees it: callers of `run_within`, such as the command line reading a problem file;
    `solve` turns it into its fallback or a NoSolutionError. Exit code 3.
    """

    def __init__(self, message: str = "the time limit was reached"):
        super().__init__(message)


class SolverError(KafkaAssignmentError):
    """A solver returned an assignment the evaluator rejects: a bug, reported with the
    violations, never a property of the problem.

    Who sees it: `solve`, `compare` and pipeline rows (as an error). Exit code 4 (internal).
    """

    exit_code = ExitCode.INTERNAL
