"""The JVM plug-ins that call `kafka-assign serve` (`kao.plugin`, docs/service-protocol.md), called
without a group: `kao.jvm.PluginCalls` builds Kafka's real inputs from the oracle adapters' case
formats, configures a plug-in as Kafka would and calls its `assign()`, and reports the assignment
it returned and whether it applied the service's answer or fell back to Kafka's default (and why).

`plugins_jar()` is `jvm/target/kao-plugins.jar`, the plug-ins alone (a broker's `libs/`, a client
application's classpath). `plugin_calls(cases)` runs the harness with that jar first on the
classpath, so that the classes under test are the ones users deploy.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from optimizer.errors import KafkaUnavailableError
from optimizer.kafka.jvm import TARGET, build, java

MAIN = "kao.jvm.PluginCalls"
PLUGINS_JAR = TARGET / "kao-plugins.jar"

PLUG_POINTS = ("streams_task_assignor", "consumer_group", "streams_group", "classic_consumer")
"""The protocol's request kinds the plug-ins send, one per plug point."""


def plugins_jar() -> Path:
    """The plug-ins' jar (building the JVM module first when needed)."""
    build()
    if not PLUGINS_JAR.is_file():
        raise KafkaUnavailableError(f"{PLUGINS_JAR} is missing after the JVM module's build")
    return PLUGINS_JAR


def plugin_calls(cases: list[dict[str, Any]], timeout: float = 120.0, heap_mb: int = 256, logs: list[str] | None = None) -> list[dict[str, Any] | str]:
    """Each case's result, in order (one JVM for all: a case's `instance` reuses an earlier case's
    plug-in): `{"assignment", "applied", "reason", "request_id", "cached", "millis"}` (the module
    docstring of `kao.jvm.PluginCalls`), or the error assign() raised as a string. `logs`, when
    given, gets the JVM's log lines (stderr: the plug-ins' at INFO, Kafka's warnings)."""
    if not cases:
        return []
    command = java(MAIN, heap_mb=heap_mb)
    at = command.index("-cp") + 1
    command[at] = os.pathsep.join([str(plugins_jar()), command[at]])
    try:
        done = subprocess.run(command, input=json.dumps({"cases": cases}), capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise KafkaUnavailableError(f"{MAIN} did not end within {timeout:g} s") from None
    if logs is not None:
        logs.extend(done.stderr.splitlines())
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise KafkaUnavailableError(f"{MAIN} failed (exit {done.returncode}):\n{tail}")
    results: list[dict[str, Any] | str] = []
    for answer in json.loads(done.stdout)["answers"]:
        results.append(str(answer["error"]) if "error" in answer else dict(answer["assignment"]))
    return results
