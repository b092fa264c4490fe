"""What `kafka-assign pipeline` shows while it runs: a rich progress bar on a terminal, plain
lines for logs (CI, `| tee`, cron) otherwise.

Both take the callbacks of `run_pipeline`: `phase(text)` (starting Spark, reading, solving,
writing) and `progress(done, total)` (batches, that is Spark tasks, or problems with the local
runner), and `finish(problems)` once the run is done. The plain lines look like

    pipeline: starting Spark (local[*])
    pipeline: Spark started in 6.2 s
    pipeline: reading fleet.jsonl
    pipeline: solving 302 problems in 40 batches (Spark tasks)
    pipeline: 4/40 batches (10 %), 12.3 s elapsed, ETA 1 min 51 s
    ...
    pipeline: 40/40 batches (100 %), 70.2 s elapsed
    pipeline: writing the output
    pipeline: done, 302 problems in 80.1 s

one line per step of about a tenth of the total (`LINES`), but no more often than every
`MIN_INTERVAL` seconds, and one every `HEARTBEAT` seconds while nothing finishes. Elapsed time
and the rate behind the ETA count from the start of the phase (solving), the last line from the
start of the run. The clock and the stream are parameters, so the lines are testable exactly.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

Clock = Callable[[], float]

PREFIX = "pipeline"
LINES = 10
"""Progress lines per run, about: one per tenth of the total."""
MIN_INTERVAL = 2.0
"""Seconds at least between two progress lines (the last one, all done, always shows)."""
HEARTBEAT = 60.0
"""Seconds at most without a line while the run reports progress (Spark polls twice a second)."""


def duration(seconds: float, *, precise: bool = False) -> str:
    """`42 s` (`42.3 s` when precise) below 100 s, `3 min 20 s` below 100 min, else `2 h 5 min`."""
    seconds = max(0.0, seconds)
    if seconds < 100:
        return f"{seconds:.1f} s" if precise else f"{round(seconds)} s"
    whole = round(seconds)
    if whole < 6000:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


class PipelineProgress:
    """The callbacks of a run (`phase`, `progress`) and its end (`finish`); shows nothing.

    A context manager: a display that draws (the rich bar) starts and stops with it."""

    def phase(self, text: str) -> None:
        """The run enters a phase (`starting Spark (local[*])`, `solving 302 problems`, ...)."""

    def progress(self, done: int, total: int) -> None:
        """`done` of `total` units (batches or problems) are finished."""

    def finish(self, problems: int) -> None:
        """The run is done: `problems` were solved."""

    def __enter__(self) -> PipelineProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        return None


class PlainProgress(PipelineProgress):
    """Progress as plain lines (no colour, no cursor movement), each flushed as it is written."""

    def __init__(
        self,
        unit: str,
        stream: IO[str] | None = None,
        clock: Clock = time.monotonic,
        *,
        lines: int = LINES,
        min_interval: float = MIN_INTERVAL,
        heartbeat: float = HEARTBEAT,
        prefix: str = PREFIX,
    ) -> None:
        self.unit = unit
        self._stream = stream
        self._clock = clock
        self._lines = max(1, lines)
        self._min_interval = min_interval
        self._heartbeat = heartbeat
        self._prefix = prefix
        self._lock = threading.Lock()  # Spark reports from its polling thread
        self._started = self._phase_started = clock()
        self._last_line: float | None = None  # when the last progress line was written
        self._shown = 0  # units done at the last progress line
        self._finished_total: int | None = None  # the total whose last line is written

    def phase(self, text: str) -> None:
        with self._lock:
            self._phase_started = self._clock()
            self._last_line, self._shown, self._finished_total = None, 0, None
            self._write(text)

    def progress(self, done: int, total: int) -> None:
        if total <= 0:
            return
        with self._lock:
            now = self._clock()
            if done < self._shown:  # another Spark stage: start counting again
                self._shown = 0
            step = max(1, math.ceil(total / self._lines))
            since = now - (self._phase_started if self._last_line is None else self._last_line)
            if done >= total:
                due = self._finished_total != total
            else:
                due = (done - self._shown >= step and since >= self._min_interval) or since >= self._heartbeat
            if due:
                self._write(self.line(done, total, now - self._phase_started))
                self._last_line, self._shown = now, done
                self._finished_total = total if done >= total else None

    def line(self, done: int, total: int, elapsed: float) -> str:
        """`50/302 problems (17 %), 12.3 s elapsed, ETA 62 s` (no ETA when all or nothing is done)."""
        percent = min(round(100 * done / total), 99) if done < total else 100
        text = f"{done}/{total} {self.unit} ({percent} %), {duration(elapsed, precise=True)} elapsed"
        if 0 < done < total:
            text += f", ETA {duration(elapsed * (total - done) / done)}"
        elif done <= 0:
            text += ", ETA unknown"
        return text

    def finish(self, problems: int) -> None:
        with self._lock:
            self._write(f"done, {problems} problem{'' if problems == 1 else 's'} in {duration(self._clock() - self._started, precise=True)}")

    def _write(self, text: str) -> None:
        stream = self._stream or sys.stderr
        stream.write(f"{self._prefix}: {text}\n")
        stream.flush()


class BarProgress(PipelineProgress):
    """A rich progress bar on a terminal console; its description is the current phase."""

    def __init__(self, console: Console, unit: str) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn(unit), TimeElapsedColumn(),
            console=console, transient=False,
        )  # fmt: skip
        self._task = self._bar.add_task("starting...", total=None)

    def phase(self, text: str) -> None:
        # `starting Spark (local[*])...` while it starts; `solving ...` shows with its bar.
        under_way = text.split(" ", 1)[0].endswith("ing") and not text.startswith("solving")
        self._bar.update(self._task, description=f"{text}..." if under_way else text)

    def progress(self, done: int, total: int) -> None:
        self._bar.update(self._task, completed=done, total=total)

    def finish(self, problems: int) -> None:
        self._bar.update(self._task, description=f"done, {problems} problem{'' if problems == 1 else 's'}")

    def __enter__(self) -> BarProgress:
        self._bar.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self._bar.stop()


def pipeline_progress(console: Console, unit: str, clock: Clock = time.monotonic, plain: bool = False) -> PipelineProgress:
    """The bar when `console` is a terminal (not a dumb one), else plain lines on its file;
    plain lines too when `plain` (the command's output goes to a log: `> run.log`, `| tee`)."""
    if console.is_terminal and not console.is_dumb_terminal and not plain:
        return BarProgress(console, unit)
    return PlainProgress(unit, console.file, clock)
