"""One local SparkSession for the whole test session (starting one costs seconds), started on a
thread of its own when the first test of this folder begins, if a test selected uses it: its
start-up overlaps the tests before its first user (the standalone cluster's test waits on its
JVMs most of its time)."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model.problem import problem_to_data


class _Starting:
    """`spark_session("local[2]")` on a thread: `get()` waits for it and gives it, or raises what starting raised."""

    def __init__(self) -> None:
        self.session: Any = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._start, name="spark-session", daemon=True)
        self._thread.start()

    def _start(self) -> None:
        try:
            from optimizer.pipeline.spark import spark_session

            self.session = spark_session("local[2]")
        except BaseException as error:  # noqa: BLE001 - raised again by the tests that ask for the session
            self.error = error

    def get(self) -> Any:
        self._thread.join()
        if self.error is not None:
            raise self.error
        return self.session

    def stop(self) -> None:
        """Stop the session, once (the fixture's end; the run's, when no test asked for it: a failure with -x)."""
        self._thread.join()
        session, self.session = self.session, None
        if session is not None:
            session.stop()


_wanted = False
_starting: _Starting | None = None


def pytest_collection_finish(session: pytest.Session) -> None:
    global _wanted
    _wanted = shutil.which("java") is not None and any("spark" in getattr(item, "fixturenames", ()) for item in session.items)


def pytest_runtest_setup(item: pytest.Item) -> None:
    global _starting
    if _wanted and _starting is None:
        _starting = _Starting()


@pytest.fixture(scope="session")
def spark():
    if shutil.which("java") is None:
        pytest.skip("Java is not installed: the Spark tests need Java 17 (the local runner tests still run)")
    global _starting
    if _starting is None:
        _starting = _Starting()
    starting = _starting
    yield starting.get()
    starting.stop()


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _starting is not None:
        _starting.stop()


def small_fleet(directory: Path, count: int) -> Path:
    """`count` small Streams applications and as many consumer groups, quick to solve with Kafka's
    assignor, as JSON Lines in `directory`."""
    documents = [problem_to_data(random_streams_problem(seed, tasks=4, clients=2, name=f"app-{seed}")) for seed in range(count)]
    documents += [
        problem_to_data(random_consumer_problem(seed, members=2, topics=1, partitions=(1, 3), name=f"group-{seed}")) for seed in range(count)
    ]
    path = directory / "fleet.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in documents))
    return path
