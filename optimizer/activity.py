"""What a long command is doing now, for the progress lines it prints on stderr.

The steps of a solve say what they start (`doing`): Kafka's assignor, each goal of the exact
sequence on its back-end, the warm-up plan, the evaluator's checks. A command that may run long
(`solve`, `compare`) wraps its work in `Heartbeat`, which prints one line on stderr after
`FIRST_SECONDS` and then every `EVERY_SECONDS`: the time taken, the time left before the limit, and
the step under way. Short runs print nothing, and stdout (the result) is never touched.
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import TextIO

FIRST_SECONDS = 2.0
EVERY_SECONDS = 5.0

_doing: str | None = None


def doing(step: str) -> None:
    """Say which step starts now (the last said is what a progress line shows)."""
    global _doing
    _doing = step


def current() -> str | None:
    return _doing


class Heartbeat:
    """Progress lines for `command` on `stream` (stderr) while the `with` block runs: after
    `first` seconds, then every `every` seconds; `limit` is the command's time limit (None: none)."""

    def __init__(self, command: str, limit: float | None, stream: TextIO | None = None, first: float | None = None, every: float | None = None):
        self.command = command
        self.limit = limit
        self.stream = stream if stream is not None else sys.stderr
        self.first = FIRST_SECONDS if first is None else first
        self.every = EVERY_SECONDS if every is None else every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kao-progress", daemon=True)
        self._started = time.monotonic()

    def __enter__(self) -> Heartbeat:
        doing("reading the problem")
        self._started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join(1.0)
        doing("")

    def line(self) -> str:
        elapsed = time.monotonic() - self._started
        left = "no time limit" if self.limit is None else f"{max(0.0, self.limit - elapsed):.0f} s left of {self.limit:g} s"
        return f"{self.command}: {elapsed:.0f} s, {left}: {current() or 'working'}"

    def _run(self) -> None:
        wait = self.first
        while not self._stop.wait(wait):
            try:
                print(self.line(), file=self.stream, flush=True)
            except (OSError, ValueError):  # stderr closed: progress is a help, never a failure
                return
            wait = self.every
