"""`optimizer.deadline`: Python work stopped at its deadline, nested deadlines kept apart."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from optimizer import deadline as deadline_module
from optimizer.deadline import now, run_within
from optimizer.errors import TimeLimitReached


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
