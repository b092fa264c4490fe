"""Solving one request within its deadline, in a process of its own.

The service must answer before the caller's deadline whatever the problem does: a solver call in
C (HiGHS, CP-SAT) cannot be interrupted from Python, and a large model can take gigabytes. So each
request is solved in a child process, which the service kills at the deadline: nothing it does
outlives its request. Children are forked from a multiprocessing *forkserver* that has imported
the solvers once (`warm_up`): starting one costs milliseconds, not the seconds of importing
OR-Tools, and the forkserver is single-threaded, so forking it is safe (forking the service
itself, whose HTTP threads may hold locks, is not).

The child sends two results through its pipe, each as soon as it has it:

1. Kafka's answer: the project's reproduction of the plug point's default assignor
   (`solve(problem, solver="kafka")`), the fallback;
2. the exact assignment applied now (`solve(problem, goals=..., time_limit=...)`, started from
   Kafka's answer), with the time the deadline leaves, minus a margin for sending it back.

`solve_within` returns the exact result if it arrived in time, else Kafka's, else no answer,
and says why. Both passed the evaluator in the child (`solve` checks every solution it returns).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.context import ForkServerContext
from typing import Any

from optimizer.model.problem import Problem
from optimizer.model.solution import GoalStatus, Solution

EXACT_SHARE = 0.8
"""The share of the time left after Kafka's answer that the exact engine is given as its time
limit; the rest covers sending the solution back and the engine overrunning its limit a little."""
MARGIN_SECONDS = 0.05
"""Taken off the caller's deadline for the service's own work (reading the answer, sending it)."""

_context: ForkServerContext | None = None
_context_lock = threading.Lock()


@dataclass(frozen=True)
class Outcome:
    """What one request got."""

    source: str | None
    """"exact", "kafka" (the reproduction of the plug point's default) or None (no answer)."""
    solution: Solution | None
    reason: str
    """Why this source, in a line (for the answer and the log)."""
    kafka_seconds: float | None = None
    """How long Kafka's answer took in the child (None: it did not arrive)."""


def warm_up() -> None:
    """Start the forkserver (it imports the solvers once) and fork one child through it, so the
    first request does not pay for either."""
    process = _forkserver().Process(target=_noop, daemon=True)
    process.start()
    process.join(60)


def _forkserver() -> ForkServerContext:
    global _context
    with _context_lock:
        if _context is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["optimizer.service.worker", "optimizer.solve", "goals"])
            _context = context
        return _context


def _noop() -> None:
    return None


def _solve_child(problem: Problem, goals: Sequence[str] | None, seconds: float, connection: multiprocessing.connection.Connection) -> None:
    """In the child: Kafka's answer, then the exact one, each sent as soon as it exists."""
    from optimizer.errors import KafkaAssignmentError
    from optimizer.solve import solve

    started = time.monotonic()
    try:
        kafka = solve(problem, solver="kafka")
    except KafkaAssignmentError as error:
        connection.send(("kafka-error", str(error), time.monotonic() - started))
        kafka = None
    else:
        connection.send(("kafka", kafka, time.monotonic() - started))
    left = seconds - (time.monotonic() - started)
    if left <= 0:
        return
    try:
        exact = solve(problem, goals=goals, time_limit=max(0.05, left * EXACT_SHARE), kafka=kafka)
    except KafkaAssignmentError as error:
        connection.send(("exact-error", str(error), time.monotonic() - started))
    else:
        connection.send(("exact", exact, time.monotonic() - started))


def solve_within(problem: Problem, seconds: float, goals: Sequence[str] | None = None) -> Outcome:
    """The best answer for `problem` available `seconds` from now (module docstring)."""
    deadline = time.monotonic() + seconds - MARGIN_SECONDS
    receiver, sender = _forkserver().Pipe(duplex=False)
    process = _forkserver().Process(target=_solve_child, args=(problem, goals, seconds - MARGIN_SECONDS, sender), daemon=True)
    try:
        process.start()
    finally:
        sender.close()
    kafka: Solution | None = None
    kafka_seconds: float | None = None
    why_no_kafka = "Kafka's reproduction did not finish within the deadline"
    why_no_exact = f"deadline: the exact assignment was not ready after {seconds:.2f} s"
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not receiver.poll(left):
                break
            try:
                tag, payload, took = receiver.recv()
            except (EOFError, OSError):
                why_no_exact = "the exact engine's process ended without an answer"
                if kafka is None:
                    why_no_kafka = "the solving process ended without an answer"
                break
            if tag == "kafka":
                kafka, kafka_seconds = payload, took
            elif tag == "kafka-error":
                why_no_kafka = f"Kafka's reproduction gives no answer: {payload}"
            elif tag == "exact":
                return _exact_outcome(payload, kafka, kafka_seconds)
            else:
                why_no_exact = f"the exact engine gives no answer: {payload}"
                break
    finally:
        receiver.close()
        _stop(process)
    if kafka is not None:
        return Outcome("kafka", kafka, why_no_exact, kafka_seconds)
    return Outcome(None, None, why_no_kafka if "deadline" in why_no_exact else f"{why_no_exact}; {why_no_kafka}", kafka_seconds)


def _exact_outcome(exact: Solution, kafka: Solution | None, kafka_seconds: float | None) -> Outcome:
    options: dict[str, Any] = dict(exact.solver.options) if exact.solver is not None else {}
    if options.get("fallback") == "kafka":
        notes = [str(n) for n in options.get("notes", ())]
        why = next((n for n in reversed(notes) if "Kafka" in n), "the exact engine returned Kafka's assignment")
        return Outcome("kafka", kafka if kafka is not None else exact, f"the model says so: {why}", kafka_seconds)
    proven = all(goal.status == GoalStatus.OPTIMAL for goal in exact.goals)
    return Outcome("exact", exact, "exact assignment, every goal proven" if proven else "exact assignment (not every goal proven in time)", kafka_seconds)


def _stop(process: multiprocessing.process.BaseProcess) -> None:
    """End the child now: it has answered, or its time is up."""
    if process.pid is None:
        return
    if process.is_alive():
        try:
            os.kill(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.join(5)
