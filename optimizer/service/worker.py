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
   Kafka's answer), with the time the deadline leaves, minus a margin for sending it back; or,
   when Kafka's reproduction took all that time, that it has none (so the reason names the
   deadline, not a child that ended without an answer).

`solve_within` returns the exact result if it arrived in time, else Kafka's, else no answer,
and says why. The deadline is absolute, on the monotonic clock the child shares: what the service
spent reading the request counts, and the child stops to leave the service the margin it needs to
read the answer and send it (`margin_seconds`, growing with the problem's size). Both passed the
evaluator in the child (`solve` checks every solution it returns).
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
from optimizer.model.streams import StreamsProblem

EXACT_SHARE = 0.8
"""The share of the time left after Kafka's answer that the exact engine is given as its time
limit; the rest covers sending the solution back and the engine overrunning its limit a little."""
MARGIN_SECONDS = 0.05
"""Taken off the caller's deadline for the service's own work (reading the answer, sending it),
plus `SECONDS_PER_ITEM` per task or partition (`margin_seconds`)."""
SECONDS_PER_ITEM = 60e-6
MIN_SOLVE_SECONDS = 0.01
"""Below this, no child is started: the request is answered 503 at once."""

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


def _solve_child(problem: Problem, goals: Sequence[str] | None, answer_by: float, connection: multiprocessing.connection.Connection) -> None:
    """In the child: Kafka's answer, then the exact one, each sent as soon as it exists. `answer_by`
    is on the monotonic clock, which every process of the machine shares (Linux CLOCK_MONOTONIC):
    the time the child took to start and to read the problem counts."""
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
    left = answer_by - time.monotonic()
    if left <= 0:  # Kafka's reproduction took the time: said, so that the service names the deadline
        connection.send(("no-time", None, time.monotonic() - started))
        return
    try:
        exact = solve(problem, goals=goals, time_limit=max(0.02, left * EXACT_SHARE), kafka=kafka)
    except KafkaAssignmentError as error:
        connection.send(("exact-error", str(error), time.monotonic() - started))
    else:
        connection.send(("exact", exact, time.monotonic() - started))


def margin_seconds(problem: Problem) -> float:
    """What the service keeps for itself out of a deadline: reading the child's answer (a pickled
    solution), building and sending the reply. It grows with the problem's size (about 60 µs per
    task or partition measured on a 2-core machine for the pickling alone)."""
    if isinstance(problem, StreamsProblem):
        size = len(problem.tasks) * (1 + problem.config.num_standby_replicas)
    else:
        size = sum(topic.partitions for topic in problem.topics)
    return MARGIN_SECONDS + SECONDS_PER_ITEM * size


def solve_within(problem: Problem, deadline: float, goals: Sequence[str] | None = None) -> Outcome:
    """The best answer for `problem` available by `deadline` (monotonic seconds; module docstring)."""
    answer_by = deadline - margin_seconds(problem)
    seconds = deadline - time.monotonic()
    if answer_by - time.monotonic() < MIN_SOLVE_SECONDS:
        return Outcome(None, None, f"deadline: {max(0.0, seconds) * 1000:.0f} ms left, too little to solve a problem of this size")
    receiver, sender = _forkserver().Pipe(duplex=False)
    process = _forkserver().Process(target=_solve_child, args=(problem, goals, answer_by, sender), daemon=True)
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
            left = answer_by - time.monotonic()
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
            elif tag == "no-time":
                break  # the deadline came during Kafka's reproduction
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
        # The last note says Kafka's assignment is returned and points "above": the reason carries
        # what is above (why the engine found nothing), not the back-end's informational notes.
        causes = [n for n in notes[:-1] if not n.startswith("back-end:") and " not used" not in n]
        why = "; ".join(causes) or (notes[-1] if notes else "the exact engine returned Kafka's assignment")
        if options.get("time_limit") is not None:
            reason = f"deadline: the exact engine found no assignment in the time it had ({why}); Kafka's assignment instead"
        else:
            reason = f"the model says so: {why}"
        return Outcome("kafka", kafka if kafka is not None else exact, reason, kafka_seconds)
    proven = all(goal.status == GoalStatus.OPTIMAL for goal in exact.goals)
    return Outcome("exact", exact, "exact assignment, every goal proven" if proven else "exact assignment (not every goal proven in time)", kafka_seconds)


def _stop(process: multiprocessing.process.BaseProcess) -> None:
    """End the child now (it has answered, or its time is up); it is reaped in the background, so
    that the answer does not wait for the kernel to tear a large process down."""
    if process.pid is None:
        return
    try:
        os.kill(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    threading.Thread(target=process.join, args=(30,), name="kao-reaper", daemon=True).start()
