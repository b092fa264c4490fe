"""The root of the project's exceptions, the errors of the plugin layer, and the exit codes they
carry.

They are defined here, in the bottom layer, because the plugin manager raises them and must not
import `optimizer` (whose package imports the manager). `optimizer.errors` declares the whole
hierarchy, these included: import them from there.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The command line's exit codes (DESIGN.md section 3)."""

    OK = 0
    INVALID_INPUT = 1
    USAGE = 2
    NO_SOLUTION = 3
    INTERNAL = 4
    """A bug: a solver's result failed the evaluator, or an unexpected exception."""


class KafkaAssignmentError(Exception):
    """Base of every error this package raises on purpose (see `optimizer.errors`).

    `exit_code` is what the command line exits with when the error reaches it. Only subclasses
    are raised; the root's own code is the internal error's, 4.
    """

    exit_code: int = ExitCode.INTERNAL


class UsageError(KafkaAssignmentError):
    """Something was asked for that cannot be done as asked (the request, not the problem, is
    wrong): an unknown solver or goal, a bad option, an output that cannot be written.

    Who sees it: `solve`, `compare`, `run_pipeline` and `write_report` callers. Exit code 2.
    """

    exit_code = ExitCode.USAGE


class PluginError(UsageError):
    """A plugin cannot be loaded (a failed import, a misspelt hook, two plugins of one name), two
    plugins register the same goal, or a goal name is unknown.

    Who sees it: `solve`, `compare` and `kafka-assign goals` callers, and the pipeline before any
    work. Exit code 2.
    """
