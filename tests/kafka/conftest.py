"""A real Kafka for the tests marked `kafka`: one sandbox cluster per test session (3 brokers in
racks a, b, c on 127.0.0.1), stopped at the end, also when tests fail or the run is interrupted;
its JVMs are tied to this process, so they end with it even when it is killed.

Without Java or Maven these tests are skipped, except where KAO_REQUIRE_KAFKA=1 says they must run
(CI sets it: there a missing JVM is a failure, never a skip).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from optimizer.kafka import sandbox


def _kafka_can_run() -> str | None:
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not found: the Kafka-backed tests need Java 17 and Maven" if missing else None


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


@pytest.fixture(scope="session")
def kao_service_port() -> int:
    """The port the sandbox's broker-side plug-ins call the assignment service on (`kao.service.url`), chosen once per
    session: tests/kafka/test_plugins_live.py serves there (the real service, or stand-ins); nothing listens otherwise."""
    return sandbox.free_port()


STREAMS_GROUP_ASSIGNORS = "sticky,kao.plugin.OptimizerStreamsGroupAssignor"
"""`group.streams.assignors`, the brokers' and the controller's: a group config is validated by the KRaft controller
against its own configuration (ControllerConfigurationValidator -> GroupConfig.validate), so `streams.assignor.name=optimizer`
is refused ("not a registered task assignor") unless the controller lists the plug-in too (it instantiates the class: it
needs the jar as well)."""


@pytest.fixture(scope="session")
def kafka_sandbox(tmp_path_factory: pytest.TempPathFactory, kao_service_port: int) -> Iterator[sandbox.Sandbox]:
    running = _start(tmp_path_factory, kao_service_port)
    try:
        yield running
    finally:
        sandbox.stop(running)


def _start(tmp_path_factory: pytest.TempPathFactory, kao_service_port: int) -> sandbox.Sandbox:
    return sandbox.start(
        3, ("a", "b", "c"), tmp_path_factory.mktemp("kafka") / "sandbox", tied=True,
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
