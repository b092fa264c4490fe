"""A real Kafka for the tests marked `kafka`: one sandbox cluster per test session (3 brokers in
racks a, b, c on 127.0.0.1), stopped at the end, also when tests fail or the run is interrupted;
its JVMs are tied to this process, so they end with it even when it is killed.

The cluster starts as soon as the run is collected, when a test selected uses it, on a thread of
its own (`_Early`): its half a minute of JVM start-ups overlaps the tests that come before the
Kafka ones, which use one core of the machine. It stops, on that thread too, once the last test
that uses it is done (the rest of the run does not share the cores with idle brokers), and the run
waits for that stop before it ends.

Without Java or Maven these tests are skipped, except where KAO_REQUIRE_KAFKA=1 says they must run
(CI sets it: there a missing JVM is a failure, never a skip).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from optimizer.kafka import sandbox


def _kafka_can_run() -> str | None:
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not found: the Kafka-backed tests need Java 17 and Maven" if missing else None


def _uses_the_sandbox(item: pytest.Item) -> bool:
    return "kafka_sandbox" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = _kafka_can_run()
    if reason is None:
        return
    if os.environ.get("KAO_REQUIRE_KAFKA") == "1":
        raise pytest.UsageError(f"KAO_REQUIRE_KAFKA=1, but {reason}")
    for item in items:
        if item.get_closest_marker("kafka") is not None:
            item.add_marker(pytest.mark.skip(reason=reason))


PLUGIN_BUDGET_MS = 3000
"""The brokers' `kao.budget.ms`: how long the broker-side plug-ins wait for the service (their `kao.deadline.ms` is 100 ms
less). Generous: on a loaded 2-core machine the service's exact answer takes a second or two, and the coordinator's
offloaded assignor thread, not its event loop, is what waits."""


class _Early:
    """The session's sandbox, started and stopped on a thread of its own. The thread lives as long as the
    cluster: the JVMs are tied to the thread that started them (Linux's parent-death signal follows the
    thread, not the process), so it starts them, waits for `stop()`, and stops them itself."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sandbox: sandbox.Sandbox | None = None
        self.error: BaseException | None = None
        self.stopped = False
        self._ready = threading.Event()
        self._stop = threading.Event()
        # Processes start by fork, not vfork, for the rest of the session: this thread's JVM
        # start-ups overlap the main thread's tests, which fork and exec too, and one CI run's
        # first `java` (StorageTool) failed to exec with EFAULT ("Bad address") from its vfork child.
        subprocess._USE_VFORK = False  # CPython 3.11 documents this switch
        self._thread = threading.Thread(target=self._keep, name="kafka-sandbox", daemon=True)
        self._thread.start()

    def _keep(self) -> None:
        directory = Path(tempfile.mkdtemp(prefix="kao-kafka-"))
        try:
            self.sandbox = _start(directory / "sandbox", self.port)
        except BaseException as error:  # noqa: BLE001 - raised again by every test that asks for the sandbox
            self.error = error
        finally:
            self._ready.set()
        try:
            if self.sandbox is not None:
                self._stop.wait()
                sandbox.stop(self.sandbox)
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def wait(self) -> None:
        """Until the cluster runs or failed to start."""
        self._ready.wait()

    def get(self) -> sandbox.Sandbox:
        self._ready.wait()
        if self.error is not None:
            raise self.error
        assert self.sandbox is not None and not self.stopped, "the session's sandbox was stopped after the last test that uses it"
        return self.sandbox

    def stop(self) -> None:
        """Stop the cluster (on its thread); `join()` waits for that."""
        self.stopped = True
        self._stop.set()

    def join(self) -> None:
        self._thread.join()


_early: _Early | None = None
_stop_after: pytest.Item | None = None
"""The last test of the last module that uses the sandbox: its module's fixtures (runner JVMs, groups) end before it stops."""


def pytest_collection_finish(session: pytest.Session) -> None:
    global _early, _stop_after
    items = session.items
    users = [number for number, item in enumerate(items) if _uses_the_sandbox(item) and item.get_closest_marker("skip") is None]
    if not users or _kafka_can_run() is not None or session.config.option.collectonly:
        return
    last = users[-1]
    while last + 1 < len(items) and items[last + 1].path == items[users[-1]].path:
        last += 1
    _stop_after = items[last]
    _early = _Early(sandbox.free_port())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    try:
        return (yield)
    finally:
        if _early is not None and item is _stop_after:
            _early.stop()


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _early is not None:
        _early.stop()
        _early.join()


@pytest.fixture(autouse=True)
def _sandbox_started() -> None:
    """Every test here begins once the session's sandbox is up (or failed to start), whether it uses it or not: none
    runs beside its start-up (the JVMs of a test's own sandbox, a monkeypatched `sandbox.HEAP_MB`)."""
    if _early is not None:
        _early.wait()


@pytest.fixture(scope="session")
def kao_service_port() -> int:
    """The port the sandbox's broker-side plug-ins call the assignment service on (`kao.service.url`), chosen once per
    session: tests/kafka/test_plugins_live.py serves there (the real service, or stand-ins); nothing listens otherwise."""
    return _early.port if _early is not None else sandbox.free_port()


STREAMS_GROUP_ASSIGNORS = "sticky,kao.plugin.OptimizerStreamsGroupAssignor"
"""`group.streams.assignors`, the brokers' and the controller's: a group config is validated by the KRaft controller
against its own configuration (ControllerConfigurationValidator -> GroupConfig.validate), so `streams.assignor.name=optimizer`
is refused ("not a registered task assignor") unless the controller lists the plug-in too (it instantiates the class: it
needs the jar as well)."""


@pytest.fixture(scope="session")
def kafka_sandbox(kao_service_port: int) -> sandbox.Sandbox:
    """The session's cluster (`_Early`: started once the run is collected, stopped after its last user)."""
    assert _early is not None and _early.port == kao_service_port, "the sandbox starts when a collected test uses it"
    return _early.get()


def _start(directory: Path, kao_service_port: int) -> sandbox.Sandbox:
    return sandbox.start(
        3, ("a", "b", "c"), directory, tied=True,
        broker_configs={
            # streams groups (test_import_streams): task offsets every 2 s and heartbeats every 1 s (Kafka's floors: 15 s and 5 s)
            "group.streams.min.task.offset.interval.ms": "1000", "group.streams.task.offset.interval.ms": "2000",
            "group.streams.min.heartbeat.interval.ms": "500", "group.streams.heartbeat.interval.ms": "1000",
            # consumer groups (KIP-848) heartbeat every second too (Kafka's default and floor: 5 s), so that they settle quickly
            "group.consumer.min.heartbeat.interval.ms": "500", "group.consumer.heartbeat.interval.ms": "1000",
            # the broker-side plug-ins (test_plugins_live), chosen only by the groups that ask for them: a consumer with
            # group.remote.assignor=optimizer, a streams group with streams.assignor.name=optimizer; the first of each
            # list stays every other group's default
            "group.consumer.assignors": "uniform,range,kao.plugin.OptimizerConsumerGroupAssignor",
            "group.streams.assignors": STREAMS_GROUP_ASSIGNORS,
            "kao.service.url": f"http://127.0.0.1:{kao_service_port}", "kao.budget.ms": str(PLUGIN_BUDGET_MS),
        },
        sasl_users={"importer": "importer-secret"},  # a SASL_PLAINTEXT listener too (test_import: --command-config, a refused login)
        controller_configs={"group.streams.assignors": STREAMS_GROUP_ASSIGNORS},
    )  # fmt: skip
