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


@pytest.fixture(scope="session")
def kafka_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sandbox.Sandbox]:
    running = sandbox.start(
        3, ("a", "b", "c"), tmp_path_factory.mktemp("kafka") / "sandbox", tied=True,
        # streams groups (test_import_streams): task offsets every 2 s and heartbeats every 1 s (Kafka's floors: 15 s and 5 s)
        broker_configs={"group.streams.min.task.offset.interval.ms": "1000", "group.streams.task.offset.interval.ms": "2000",
                        "group.streams.min.heartbeat.interval.ms": "500", "group.streams.heartbeat.interval.ms": "1000"},
        sasl_users={"importer": "importer-secret"},  # a SASL_PLAINTEXT listener too (test_import: --command-config, a refused login)
    )  # fmt: skip
    try:
        yield running
    finally:
        sandbox.stop(running)
