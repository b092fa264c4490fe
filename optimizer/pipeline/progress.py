"""What `kafka-assign pipeline` shows while it runs: a rich progress bar on a terminal, plain
lines for logs (CI, `| tee`, cron) otherwise.

Both take the callbacks of `run_pipeline`: `phase(text)` (starting Spark, reading, solving,
writing) and `progress(done, total, work)` (problems solved, on Spark as with the local runner,
and the share of the estimated work they hold), and `finish(problems)` once the run is done. The
plain lines look like

    pipeline: starting Spark (local[*])
    pipeline: Spark started in 6.2 s
    pipeline: reading fleet.jsonl
    pipeline: solving 302 problems in 40 batches (Spark tasks)
    pipeline: 31/302 problems (10 %), 12.3 s elapsed, ETA 1 min 51 s
    ...
    pipeline: 302/302 problems (100 %), 70.2 s elapsed
    pipeline: writing the output
    pipeline: done, 302 problems in 80.1 s

one line per step of about a tenth of the total (`LINES`), but no more often than every
`MIN_INTERVAL` seconds; one as soon as there is an ETA (`Eta`: some 20 s into the run, so that a
long run gives one early), and one at least every `HEARTBEAT` seconds. Elapsed time counts from
the start of the phase (solving), the last line's from the start of the run. The clock and the
stream are parameters, so the lines are testable exactly.

The ETA (`Eta`) counts the *work* left, not the problems: the runner weighs each problem by an
estimate of its solve time (its document's size, `optimizer.pipeline.run.problem_weight`) and
solves them in an order whose every stretch is a fair sample of the fleet (`solving_order`), so
the rate of the first minute is that of the run even when a few large problems hold most of the
work. The rate is measured from the first problem solved, not from the start of the phase: Spark
spends its first seconds starting Python workers, which a rate from the start would spread over
the whole run.
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
HEARTBEAT = 30.0
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

    def progress(self, done: int, total: int, work: float | None = None) -> None:
        """`done` of `total` problems are solved; `work`: the share of the estimated work they
        hold (0 to 1; None: as many as their count)."""

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
        self._eta = Eta(self._started)
        self._last_line: float | None = None  # when the last progress line was written
        self._shown = 0  # units done at the last progress line
        self._finished_total: int | None = None  # the total whose last line is written
        self._eta_shown = False  # whether a line of this phase gave an ETA

    def phase(self, text: str) -> None:
        with self._lock:
            self._phase_started = self._clock()
            self._eta = Eta(self._phase_started)
            self._last_line, self._shown, self._finished_total, self._eta_shown = None, 0, None, False
            self._write(text)

    def progress(self, done: int, total: int, work: float | None = None) -> None:
        if total <= 0:
            return
        with self._lock:
            now = self._clock()
            if done < self._shown:  # another Spark stage: start counting again
                self._shown = 0
                self._eta = Eta(now)
            eta = self._eta.seconds(now, done, total, work)
            step = max(1, math.ceil(total / self._lines))
            since = now - (self._phase_started if self._last_line is None else self._last_line)
            if done >= total:
                due = self._finished_total != total
            else:
                first = not self._eta_shown and eta is not None and since >= self._min_interval  # the first ETA, at once
                due = (done - self._shown >= step and since >= self._min_interval) or since >= self._heartbeat or first
            if due:
                self._write(self.line(done, total, now - self._phase_started, eta))
                self._last_line, self._shown = now, done
                self._eta_shown = self._eta_shown or eta is not None
                self._finished_total = total if done >= total else None

    def line(self, done: int, total: int, elapsed: float, eta: float | None = None) -> str:
        """`50/302 problems (17 %), 12.3 s elapsed, ETA 62 s` (`ETA unknown` while `Eta` has none,
        no ETA when all is done)."""
        percent = min(round(100 * done / total), 99) if done < total else 100
        text = f"{done}/{total} {self.unit} ({percent} %), {duration(elapsed, precise=True)} elapsed"
        if done < total:
            text += f", ETA {'unknown' if eta is None else duration(eta)}"
        return text

    def finish(self, problems: int) -> None:
        with self._lock:
            self._write(f"done, {problems} problem{'' if problems == 1 else 's'} in {duration(self._clock() - self._started, precise=True)}")

    def _write(self, text: str) -> None:
        stream = self._stream or sys.stderr
        stream.write(f"{self._prefix}: {text}\n")
        stream.flush()


class BarProgress(PipelineProgress):
    """A rich progress bar on a terminal console; its description is the current phase, its length
    the share of the work done, then `done/total problems`, the time elapsed and the ETA."""

    def __init__(self, console: Console, unit: str = "problems", clock: Clock = time.monotonic) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self._clock = clock
        self._eta = Eta(clock())
        self._bar = Progress(
            TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[count]}"), TimeElapsedColumn(),
            TextColumn("{task.fields[eta]}"), console=console, transient=False,
        )  # fmt: skip
        self._unit = unit
        self._task = self._bar.add_task("starting...", total=None, count="", eta="")

    def phase(self, text: str) -> None:
        # `starting Spark (local[*])...` while it starts; `solving ...` shows with its bar.
        self._eta = Eta(self._clock())
        activity = text.split(" ", 1)[0].endswith("ing")
        under_way = activity and not text.startswith("solving")
        if not activity:  # a statement (`Spark started in 6.2 s`, entries not read) stays above the bar
            self._bar.console.print(text, markup=False, highlight=False)
        self._bar.update(self._task, description=f"{text}..." if under_way else text)

    def progress(self, done: int, total: int, work: float | None = None) -> None:
        if total <= 0:
            return
        seconds = self._eta.seconds(self._clock(), done, total, work)
        eta = "" if done >= total else "ETA unknown" if seconds is None else f"ETA {duration(seconds)}"
        share = done / total if work is None else work
        self._bar.update(self._task, completed=share * total, total=total, count=f"{done}/{total} {self._unit}", eta=eta)

    def finish(self, problems: int) -> None:
        self._bar.update(self._task, description=f"done, {problems} problem{'' if problems == 1 else 's'}", eta="")

    def __enter__(self) -> BarProgress:
        self._bar.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self._bar.stop()


RATE_WINDOW = 20.0
"""Seconds the rate is measured over before an ETA is given (unless the ETA is short, below three
times the seconds measured): a few problems cost a hundred times the median (a time limit
reached), and one of them in the first seconds made the first ETA of a 4,000-problem run 1.6
times the truth (docs/benchmarks.md)."""


class Eta:
    """The seconds left of a phase that started at `started`, from what is done (`seconds`).

    The first report of a problem solved is the anchor: from then on, the work done since it (the
    share of the estimated work, or of the problems when no weights are given) over the time
    since it is the rate the work left is done at. Unknown (None) until the rate is measured over
    `window` seconds, or over a third of the time it predicts. Problems under way count as not
    started, so the estimate errs long while few are done."""

    def __init__(self, started: float, window: float = RATE_WINDOW) -> None:
        self.started = started
        self.window = window
        self._anchor: tuple[float, float] | None = None  # (time, share done) at the first report

    def seconds(self, now: float, done: int, total: int, work: float | None = None) -> float | None:
        """Seconds left when `done` of `total` problems, holding the share `work` (0 to 1; None:
        `done / total`) of the estimated work, are done at `now`: None while it is not known."""
        if total <= 0 or done >= total:
            return 0.0
        if done <= 0:
            return None
        share = min(1.0, work if work is not None and work > 0 else done / total)
        if self._anchor is None:
            self._anchor = (now, share)
        since, before = self._anchor
        if share <= before or now <= since:
            return None
        measured = now - since
        left = measured * (1.0 - share) / (share - before)
        return left if measured >= self.window or left <= 3 * measured else None


def pipeline_progress(console: Console, unit: str = "problems", clock: Clock = time.monotonic, plain: bool = False) -> PipelineProgress:
    """The bar when `console` is a terminal (not a dumb one), else plain lines on its file;
    plain lines too when `plain` (the command's output goes to a log: `> run.log`, `| tee`).

    Both runners count problems (issue 34, item 5): `unit` is the word shown after the counts."""
    if console.is_terminal and not console.is_dumb_terminal and not plain:
        return BarProgress(console, unit, clock)
    return PlainProgress(unit, console.file, clock)
