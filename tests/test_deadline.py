"""`optimizer.deadline`: Python work stopped at its deadline, nested deadlines kept apart."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from optimizer import deadline as deadline_module
from optimizer.deadline import now, run_within
from optimizer.errors import TimeLimitReached
from tests.conftest import reaped


def spin(seconds: float) -> str:
    """Pure Python work that never yields to a solver's own time limit."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        pass
    return "done"


def test_work_is_stopped_at_its_deadline():
    started = now()
    with pytest.raises(TimeLimitReached):
        run_within(now() + 0.2, lambda: spin(5))
    assert now() - started < 0.5
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert deadline_module._active == []


def test_work_that_finishes_returns_its_result():
    assert run_within(now() + 2, lambda: spin(0.05)) == "done"
    assert run_within(None, lambda: 7) == 7
    with pytest.raises(TimeLimitReached):
        run_within(now() - 1, lambda: 7)  # already past


def test_an_inner_deadline_is_the_inner_callers_own():
    def inner():
        try:
            run_within(now() + 0.1, lambda: spin(5))
        except TimeLimitReached:
            return "inner stopped"
        return "not stopped"

    assert run_within(now() + 3, inner) == "inner stopped"


def test_an_outer_deadline_passes_through_the_inner_caller():
    def inner():
        try:
            run_within(now() + 10, lambda: spin(5))
        except TimeLimitReached:
            return "the inner caller swallowed the outer deadline"
        return "not stopped"

    started = now()
    with pytest.raises(TimeLimitReached):
        run_within(now() + 0.2, inner)
    assert now() - started < 0.5


def test_an_exception_inside_the_work_is_not_masked():
    def fail():
        raise KeyError("x")

    with pytest.raises(KeyError):
        run_within(now() + 1, fail)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_outside_the_main_thread_work_runs_to_its_end():
    results = []
    thread = threading.Thread(target=lambda: results.append(run_within(now() + 0.05, lambda: spin(0.2))))
    thread.start()
    thread.join()
    assert results == ["done"]


def test_nested_deadlines_under_a_tight_outer_one_leave_no_trace(capfd):
    """An outer deadline striking at any point of an inner run_within's set-up or clean-up:
    the outer caller always gets TimeLimitReached, and nothing stays registered or armed."""

    def work():
        while True:
            run_within(now() + 10, lambda: None)

    for _ in range(2000):
        with pytest.raises(TimeLimitReached):
            run_within(now() + 0.0005, work)
        assert deadline_module._active == []
    time.sleep(0.3)  # a late alarm, if any, arrives now: it must do nothing
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.SIGALRM not in signal.pthread_sigmask(signal.SIG_BLOCK, ())  # never left blocked
    with pytest.raises(TimeLimitReached):  # and the next deadline still stops its work
        run_within(now() + 0.1, lambda: spin(5))
    assert "race condition" not in capfd.readouterr().err


def test_work_in_a_child_process_returns_its_result_or_is_killed_at_its_limit(forks):
    """C code that overruns its own limit (a stand-in: a child that sleeps without looking at
    the clock) is killed; what finishes comes back whole, arrays included; an error is raised
    here, not swallowed. No child process is left behind."""
    import numpy as np

    from optimizer.deadline import in_child

    started = now()
    assert in_child(lambda: time.sleep(30), 0.3) == (False, None)
    assert now() - started < 2.0
    finished, values = in_child(lambda: np.arange(300_000, dtype=np.int64) * 2, 30.0)  # more than a pipe's buffer
    assert finished and values is not None and int(values.sum()) == 300_000 * 299_999
    with pytest.raises(ZeroDivisionError):
        in_child(lambda: 1 // 0, 30.0)
    assert len(forks) == 3 and all(reaped(pid) for pid in forks)


def test_a_deadline_that_passes_while_a_child_works_stops_both(forks):
    from optimizer.deadline import in_child

    started = now()
    with pytest.raises(TimeLimitReached):
        run_within(now() + 0.3, lambda: in_child(lambda: time.sleep(30), 60.0))
    assert now() - started < 2.0
    assert len(forks) == 1 and reaped(forks[0])


def test_a_forked_child_works_beside_this_process_and_is_killed_when_closed_unasked(forks):
    """`Forked` starts at once: work here and in the child overlap (two sleeps of 0.5 s take
    0.5 s, not 1); its answer is waited for only when asked, and an answer never asked for is
    killed by `close`."""
    from optimizer.deadline import Forked

    started = now()
    child = Forked(lambda: (time.sleep(0.5), "kafka")[1])
    time.sleep(0.5)
    assert child.result(5.0) == "kafka"
    assert now() - started < 0.9
    unasked = Forked(lambda: time.sleep(30))
    with pytest.raises(TimeLimitReached):
        unasked.result(0.1)
    unasked.close()
    assert now() - started < 2.0
    assert len(forks) == 2 and all(reaped(pid) for pid in forks)


def test_a_streamed_child_hands_each_message_over_as_it_comes_and_is_killed_at_the_deadline(forks):
    """`Streamed`: what the child sends arrives while it still works (the parent keeps the latest
    point of an engine it then kills), its return value last; a failure comes as one; a child
    that never ends is killed when the parent's deadline comes, whatever it is doing."""
    from optimizer.deadline import Streamed

    def work(send):
        for i in range(3):
            send(("point", i))
            time.sleep(0.05)
        return "done"

    child = Streamed(work)
    child.wait(None)
    child.close()
    assert child.messages == [("sent", ("point", 0)), ("sent", ("point", 1)), ("sent", ("point", 2)), ("done", "done")]
    assert child.finished

    def stuck(send):
        send("first point")
        time.sleep(60)  # a solver's C code that does not look at the clock

    started = now()
    child = Streamed(stuck)
    child.wait(now() + 0.5)
    child.close()
    assert now() - started < 2.0
    assert child.messages == [("sent", "first point")] and not child.finished

    child = Streamed(lambda send: 1 // 0)
    child.wait(None)
    child.close()
    assert [kind for kind, _ in child.messages] == ["failed"] and isinstance(child.messages[0][1], ZeroDivisionError)
    assert len(forks) == 3 and all(reaped(pid) for pid in forks)


def test_the_command_lines_clock_starts_with_the_process():
    """A command's time limit counts from the process's start (imports included): the start is
    in the past, on the deadlines' clock."""
    from optimizer.deadline import process_started

    started = process_started()
    assert started <= now()
    assert now() - started < time.time() - 946684800  # after 2000-01-01: a real start, not 0


def test_a_deadline_never_strikes_inside_an_import(tmp_path, monkeypatch):
    """The deadline passes while a module is being imported (a solver's lazy import): the
    import finishes, the work is stopped right after it, and the module is whole (an exception
    inside the import left it half-initialised: "initialization failed" on every later import)."""
    import importlib
    import sys

    (tmp_path / "kao_slow_import.py").write_text(
        "import time\nstarted = time.monotonic()\nwhile time.monotonic() - started < 0.4:\n    pass\nREADY = True\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("kao_slow_import", None)

    def work():
        importlib.import_module("kao_slow_import")
        spin(5)

    started = now()
    with pytest.raises(TimeLimitReached):
        run_within(now() + 0.05, work)
    assert 0.35 < now() - started < 1.5
    assert sys.modules["kao_slow_import"].READY
