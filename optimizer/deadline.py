"""Deadlines that stop Python work too, not only the solvers.

CP-SAT and HiGHS stop at the time limits they are given; the Python code around them (Kafka's
assignors used as a start or a fallback, building a model, planning warm-ups) has no such limit,
and on a large problem it can take longer than the whole time limit. `run_within(deadline, work)`
runs `work()` and stops it at the deadline: a SIGALRM timer raises inside the work, between two
Python bytecodes (a call into C, such as a solver's, finishes first: those have their own
limits), and `run_within` raises `TimeLimitReached` to its caller.

Timers exist only in the main thread of a process (the command line, the pipeline's local runner
and Spark's Python workers all solve there). In another thread, or when SIGALRM already has a
handler that is not ours, `work` runs to its end: the time limit then bounds the solvers only.
Deadlines nest: an inner one never extends an outer one, and an outer deadline that passes
inside an inner `run_within` is the outer caller's to handle. The first deadline installs the
SIGALRM handler (and a `sys.unraisablehook` that keeps quiet about an alarm that struck inside a
`__del__` or a gc callback, where Python cannot raise: the repeated alarm stops the work again)
for good; without a deadline under way both do nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import pickle
import resource
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from types import FrameType
from typing import Generic, NoReturn, TypeVar, cast

from optimizer.errors import SolverError, TimeLimitReached

T = TypeVar("T")


class _Expired(BaseException):
    """Raised by the timer inside the work; a BaseException, so that no `except Exception` in
    the work swallows it."""

    def __init__(self, token: object):
        super().__init__("deadline reached")
        self.token = token


_active: list[tuple[float, object]] = []
"""(deadline, token) of the `run_within` calls under way, outermost first."""


def now() -> float:
    """The clock deadlines are measured on (monotonic seconds)."""
    return time.monotonic()


def process_started() -> float:
    """When this process started, on `now()`'s clock: what a command's time limit counts from,
    so that the interpreter's start and the imports count too (Linux: the start time in
    /proc/self/stat, in clock ticks since boot, against CLOCK_BOOTTIME; elsewhere: now)."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        ticks = int(fields[19])  # field 22 of proc(5), counted after the command's name
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now()
    return now() - max(0.0, age)


def deadline_after(seconds: float | None, start: float | None = None) -> float | None:
    """The deadline `seconds` after `start` (default: now); None for no limit."""
    if seconds is None or math.isinf(seconds):
        return None
    return (now() if start is None else start) + seconds


def remaining(deadline: float | None) -> float | None:
    """Seconds left before `deadline` (never negative); None for no limit."""
    return None if deadline is None else max(0.0, deadline - now())


def can_interrupt() -> bool:
    """Whether `run_within` can stop work here (main thread, SIGALRM ours or unused)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.SIGALRM in signal.pthread_sigmask(signal.SIG_BLOCK, ()):  # held back by the caller
        return False
    handler = signal.getsignal(signal.SIGALRM)
    return handler in (signal.SIG_DFL, signal.SIG_IGN, None, _on_alarm)


def run_within(deadline: float | None, work: Callable[[], T]) -> T:
    """`work()`, stopped with `TimeLimitReached` once `deadline` (on `now()`'s clock) passes."""
    if deadline is None or not can_interrupt():
        return work()
    if deadline <= now():
        raise TimeLimitReached
    entry = (deadline, object())
    outer = signal.getsignal(signal.SIGALRM)
    passing: _Expired | None = None
    owner = None
    try:
        try:
            with _alarms_blocked():  # an outer deadline cannot strike half-way through this
                _install()
                _active.append(entry)
                _arm()
            return work()
        finally:
            # First of all: no alarm of this deadline from here on. An alarm already delivered
            # whose handler has not run yet can then only be an outer deadline's.
            signal.setitimer(signal.ITIMER_REAL, 0)
            _forget(entry)
    except _Expired as expired:
        passing = expired
        if expired.token is entry[1]:
            raise TimeLimitReached from None
        raise
    finally:
        with _alarms_blocked():
            _forget(entry)
            # The handler stays (it does nothing without a deadline under way): restoring the
            # default would let an alarm that is already on its way end the process, or have
            # Python report it as "ignored due to race condition".
            if outer not in (signal.SIG_DFL, _on_alarm):
                signal.signal(signal.SIGALRM, outer)
            if _active:
                earliest, token = min(_active, key=lambda item: item[0])
                if earliest > now():
                    _arm()
                elif passing is None or passing.token is entry[1]:
                    owner = token
        if owner is not None:
            raise _Expired(owner)  # an outer deadline passed while this work ran


def _forget(entry: tuple[float, object]) -> None:
    if entry in _active:
        _active.remove(entry)


@contextmanager
def _alarms_blocked():
    """SIGALRM held back (never nested). A handler already due may still run inside the calls
    that block and unblock (Python runs handlers after them): SIGALRM is unblocked in any case."""
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})


REPEAT = 0.1
"""Seconds between alarms once a deadline has passed: should the first stop be swallowed (work
can catch anything), the next one stops the work again."""


IMPORT_RETRY = 0.005
"""Seconds until the next alarm when one struck inside an import."""


def _arm() -> None:
    """Set the timer for the earliest deadline under way (at once if it has passed)."""
    earliest, _ = min(_active, key=lambda entry: entry[0])
    signal.setitimer(signal.ITIMER_REAL, max(earliest - now(), 1e-4), REPEAT)


def _install() -> None:
    """Our SIGALRM handler and unraisable hook, for good: both do nothing without a deadline."""
    global _reported_unraisable
    signal.signal(signal.SIGALRM, _on_alarm)
    if sys.unraisablehook is not _quiet_unraisable:
        _reported_unraisable, sys.unraisablehook = sys.unraisablehook, _quiet_unraisable


def _quiet_unraisable(unraisable) -> None:
    """An alarm that struck where Python cannot raise (a `__del__`, a gc callback) is dropped
    there; the repeated alarm stops the work again. Only that is kept quiet."""
    if not isinstance(unraisable.exc_value, _Expired):
        _reported_unraisable(unraisable)


_reported_unraisable = sys.unraisablehook


def _on_alarm(signum, frame) -> None:
    if not _active:
        return  # a late alarm: every deadline is over
    earliest, token = min(_active, key=lambda entry: entry[0])
    if earliest > now():  # early (a nested deadline was re-armed): wait for the right moment
        _arm()
        return
    if _importing(frame):  # never inside an import (a half-imported module fails every later import)
        signal.setitimer(signal.ITIMER_REAL, IMPORT_RETRY, REPEAT)
        return
    raise _Expired(token)


def _importing(frame: FrameType | None) -> bool:
    """Whether the interrupted code is inside Python's import machinery: an exception raised there
    leaves a module half initialised (a lazy import of a solver stopped by a deadline made every
    later import of it fail with "initialization failed")."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


class _Process:
    """A forked child process with a pipe to this one, from construction on: `child(pipe)` runs
    there (and never returns); `close` kills it if it still runs, and reaps it."""

    def __init__(self, child: Callable[[int], NoReturn]):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(read_end)
            child(write_end)
        os.close(write_end)
        self._pid: int | None = pid
        self._pipe = read_end

    def close(self) -> None:
        """Kill the child if it still runs, and reap it."""
        if self._pipe >= 0:
            os.close(self._pipe)
            self._pipe = -1
            if self._pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self._pid, signal.SIGKILL)
        if self._pid is not None:
            os.waitpid(self._pid, 0)
            self._pid = None


class Forked(_Process, Generic[T]):
    """`work()` running in a forked child process from construction on, beside this one: its
    result comes back pickled (`result`); `close` kills it if it still runs, and reaps it. The
    child shares this process's memory as it was (copy on write), runs only this thread, leaves
    without Python's exit handlers and dies with its parent (Linux). For C code that overruns its
    own limit (HiGHS, `optimizer.backends.milp`), which `run_within` cannot stop, and for work
    that can use the second core while this process solves (Kafka's assignor beside the exact
    engine, `optimizer.engine.policy`)."""

    def __init__(self, work: Callable[[], T]):
        super().__init__(lambda pipe: _child(work, pipe))
        self._chunks: list[bytes] = []

    def result(self, seconds: float | None = None) -> T:
        """Its result, waiting at most `seconds` (None: no limit): TimeLimitReached when it has
        not answered by then (it goes on until `close`), its exception when it raised one (or
        SolverError naming it, when it cannot be pickled)."""
        ended = None if seconds is None else time.monotonic() + seconds
        while self._pipe >= 0:
            left = None if ended is None else max(0.0, ended - time.monotonic())
            ready, _, _ = select.select([self._pipe], [], [], left)
            if not ready and left is not None:
                raise TimeLimitReached
            if ready:
                chunk = os.read(self._pipe, 1 << 20)
                if not chunk:
                    os.close(self._pipe)
                    self._pipe = -1
                    break
                self._chunks.append(chunk)
        self.close()
        if not self._chunks:
            raise SolverError("a child process ended without an answer")
        done, result = pickle.loads(b"".join(self._chunks))
        if done:
            return cast(T, result)
        if isinstance(result, BaseException):
            raise result
        raise SolverError(f"a child process failed: {result}")


def _child(work: Callable[[], object], pipe: int, framed: bool = False) -> NoReturn:
    """The forked child: `work()`'s result (or its exception) pickled into `pipe`, then exit.
    `framed`: as `Streamed` reads it, ("done", result) or ("failed", exception), length first."""
    code = 1
    try:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _active.clear()  # the parent's deadlines are the parent's: this child starts its own
        # Fresh stdio objects: a thread of the parent (the command's progress lines) may have held
        # the old ones' locks at the fork, and only this thread goes on here
        with contextlib.suppress(OSError):
            sys.stdout, sys.stderr = open(1, "w", closefd=False), open(2, "w", closefd=False)
        with contextlib.suppress(OSError):
            tie_to_parent()
        try:
            done, result = True, work()
        except BaseException as error:  # noqa: BLE001 - handed to the parent, which raises it
            done, result = False, error
        try:
            data = pickle.dumps((done, result), pickle.HIGHEST_PROTOCOL)
        except Exception as error:  # noqa: BLE001 - what does not pickle goes as its text
            shown = result if not done else error
            data = pickle.dumps((False, f"{type(shown).__name__}: {shown}"), pickle.HIGHEST_PROTOCOL)
        if framed:
            done, result = pickle.loads(data)
            _write_framed(pipe, ("done" if done else "failed", result))
        else:
            view = memoryview(data)
            while view:
                view = view[os.write(pipe, view) :]
        code = 0
    finally:
        os._exit(code)


def tie_to_parent() -> None:
    """In a child process (a `Forked` one, or before exec as `preexec_fn`): SIGKILL when its
    parent ends (Linux's prctl PR_SET_PDEATHSIG). Not SIGTERM: a Kafka broker whose controller
    ended at the same moment can wait half a minute and more in its controlled shutdown
    (`optimizer.kafka.sandbox`), and a tied child's work is thrown away anyway."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG


def in_child(work: Callable[[], T], seconds: float) -> tuple[bool, T | None]:
    """`work()` in a forked child process (`Forked`), killed once `seconds` have passed: (True,
    its result) or (False, None) when it was killed. A deadline of `run_within` that passes
    while waiting stops the wait and the child alike."""
    child = Forked(work)
    try:
        return True, child.result(seconds)
    except TimeLimitReached:
        return False, None
    finally:
        child.close()


Send = Callable[[object], None]
"""What a `Streamed` child's work calls to hand its parent a message at once."""


class Streamed(_Process):
    """`work(send)` running in a forked child process from construction on (as `Forked`), which
    hands its parent every message it `send`s as soon as it is sent, and its return value as the
    last one: the parent keeps the latest of them and stops waiting (and the child) when its own
    deadline comes, whatever the child is doing (a solver's C code included). What it gets is
    `messages`: (kind, value) pairs, kind "sent", then "done" (the return value) or "failed" (the
    exception, or its text when it does not pickle)."""

    HEADER = 8

    def __init__(self, work: Callable[[Send], object], memory: int | None = None):
        """`memory`: bytes of address space the child may take beyond what it starts with (its
        `RLIMIT_AS`): past it, an allocation fails in the child, which ends it, not the machine."""

        def child(pipe: int) -> NoReturn:
            if memory is not None:
                with contextlib.suppress(OSError, ValueError):
                    _limit_memory(memory)
            _child(lambda: work(_sender(pipe)), pipe, framed=True)

        super().__init__(child)
        self._buffer = bytearray()
        self.messages: list[tuple[str, object]] = []
        self.finished = False
        """The child has said its last (its return value or its failure), or has ended."""

    def wait(self, until: float | None) -> None:
        """Take the child's messages until it has finished or `until` (on `now()`'s clock) passes."""
        while not self.finished:
            left = None if until is None else until - now()
            if left is not None and left <= 0:
                return
            ready, _, _ = select.select([self._pipe], [], [], left)
            if not ready:
                return
            chunk = os.read(self._pipe, 1 << 20)
            if not chunk:
                self.finished = True
                self.close()
                return
            self._buffer += chunk
            self._take()

    def _take(self) -> None:
        while len(self._buffer) >= self.HEADER:
            size = int.from_bytes(self._buffer[: self.HEADER], "big")
            if len(self._buffer) < self.HEADER + size:
                return
            kind, value = pickle.loads(bytes(self._buffer[self.HEADER : self.HEADER + size]))
            del self._buffer[: self.HEADER + size]
            self.messages.append((kind, value))
            if kind != "sent":
                self.finished = True


def address_space() -> int:
    """Bytes of address space this process takes now (its VmSize; 0 when unknown)."""
    try:
        with open("/proc/self/status") as status:
            return next((int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:")), 0)
    except OSError:
        return 0


def _limit_memory(extra: int) -> None:
    """This process's address space capped at its size now plus `extra` bytes (never above a cap
    it already has)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = address_space() + extra
    if soft != resource.RLIM_INFINITY:
        cap = min(cap, soft)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def physical_memory() -> int:
    """Bytes of memory this machine has (0 when unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        return 0


def _sender(pipe: int) -> Send:
    def send(message: object) -> None:
        _write_framed(pipe, ("sent", message))

    return send


def _write_framed(pipe: int, message: tuple[str, object]) -> None:
    data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    view = memoryview(len(data).to_bytes(Streamed.HEADER, "big") + data)
    while view:
        view = view[os.write(pipe, view) :]


class WorkBudget:
    """Deterministic work a sequence's solver calls may still take, in units of CP-SAT's
    deterministic time (0.75 to 1.85 s each on this machine idle, by model, whatever its load): a
    limit under which the answer does not depend on how busy the machine is, as long as it binds
    before the clock does (`optimizer.backends.WorkLimited`)."""

    def __init__(self, units: float):
        self.left = max(0.0, units)

    def spend(self, units: float) -> None:
        self.left = max(0.0, self.left - units)
