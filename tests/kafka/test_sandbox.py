"""The sandbox: a KRaft cluster from the project's Kafka jars, brokers in racks, and nothing left
running once it is stopped, or once the process that started it is gone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from optimizer.errors import KafkaUnavailableError
from optimizer.kafka import sandbox
from optimizer.kafka.jvm import KAFKA_VERSION, run_java

pytestmark = pytest.mark.kafka


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


def _gone(pids: list[int], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while any(_alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def test_the_brokers_are_registered_in_their_racks(kafka_sandbox):
    """Kafka's own Admin client (the adapter `kao.jvm.Nodes`) sees three brokers, in racks a, b, c."""
    found = json.loads(run_java("kao.jvm.Nodes", [kafka_sandbox.bootstrap]))
    assert found["cluster_id"] == kafka_sandbox.cluster_id
    assert [(b["id"], b["rack"]) for b in found["brokers"]] == [(1, "a"), (2, "b"), (3, "c")]
    assert {f"{b['host']}:{b['port']}" for b in found["brokers"]} == set(kafka_sandbox.bootstrap.split(","))
    assert KAFKA_VERSION == "4.4.0"


RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


def test_the_command_line_starts_and_stops_a_sandbox_leaving_nothing(tmp_path):
    """`kafka-assign sandbox start` prints the bootstrap address and leaves the cluster running,
    its broker with the `--broker-config` settings (a static one: the broker reports it through
    describeConfigs); `sandbox stop` ends every process it started and removes what it wrote."""
    from optimizer.kafka.describe import broker_configs

    directory = tmp_path / "cli-sandbox"
    command = [sys.executable, "-m", "optimizer", "sandbox"]
    try:
        started = subprocess.run(
            [*command, "start", "--brokers", "1", "--racks", "r1", "--dir", str(directory),
             "--broker-config", f"replica.selector.class={RACK_AWARE}", "--broker-config", "num.partitions=7"],
            capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert started.returncode == 0, started.stderr
        running = sandbox.load(directory)
        bootstrap = running.bootstrap
        assert f"bootstrap: {bootstrap}" in started.stdout and "1 (rack r1)" in started.stdout
        reported = broker_configs(bootstrap, timeout=20)
        assert list(reported) == [1]
        assert reported[1]["replica.selector.class"] == RACK_AWARE and reported[1]["num.partitions"] == "7"
        pids = [n.pid for n in running.nodes]
        assert len(pids) == 2 and all(_alive(pid) for pid in pids)  # a controller and a broker
        stopped = subprocess.run([*command, "stop", "--dir", str(directory)], capture_output=True, text=True, timeout=120)
        assert stopped.returncode == 0, stopped.stderr
        assert _gone(pids, seconds=5)
        assert not directory.exists()
    finally:
        if (directory / sandbox.STATE).exists():
            sandbox.stop(sandbox.load(directory))


_TIED = """
import sys
from pathlib import Path
from optimizer.errors import KafkaUnavailableError
from optimizer.kafka import sandbox
started = sandbox.start(1, ("a",), Path(sys.argv[1]), tied=True)
print(" ".join(str(n.pid) for n in started.nodes), flush=True)
sys.stdin.read()  # until killed
"""


def test_a_tied_sandbox_ends_with_the_process_that_started_it(tmp_path):
    """The tests' sandbox is tied to the test process: killed with SIGKILL (no cleanup runs), its
    Kafka processes still end."""
    owner = subprocess.Popen([sys.executable, "-c", _TIED, str(tmp_path / "tied")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    pids: list[int] = []
    try:
        assert owner.stdout is not None
        pids = [int(pid) for pid in owner.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(pid) for pid in pids)
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(timeout=10)
        assert _gone(pids)
    finally:
        owner.kill()
        for pid in pids:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_sandbox_that_fails_to_start_leaves_nothing_behind(tmp_path, monkeypatch):
    """A broker JVM that cannot start (a heap too small for Java): the error names it, every
    process started is ended and what was written is removed, so the directory starts again."""
    monkeypatch.setattr(sandbox, "HEAP_MB", 1)
    directory = tmp_path / "failing"
    with pytest.raises(KafkaUnavailableError, match="ended while starting") as failed:
        sandbox.start(1, ("a",), directory, tied=True)
    assert "heap" in str(failed.value).lower()
    assert not directory.exists()


def test_a_broker_config_without_a_value_is_refused_before_anything_starts(tmp_path):
    """`--broker-config KEY` (no `=`): exit 2, saying what is expected, nothing started or written."""
    directory = tmp_path / "refused"
    done = subprocess.run(
        [sys.executable, "-m", "optimizer", "sandbox", "start", "--dir", str(directory), "--broker-config", "replica.selector.class"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "expected KEY=VALUE" in done.stderr and "Traceback" not in done.stderr
    assert not directory.exists()


def test_broker_configs_go_into_every_broker_s_properties_only(tmp_path):
    """The settings are written on top of the sandbox's own (they win) in brokers, not the controller."""
    settings = {"replica.selector.class": RACK_AWARE, "num.partitions": "7"}
    broker = sandbox._properties(1, "broker", 9092, 9093, "a", tmp_path, 3, settings)
    controller = sandbox._properties(0, "controller", 9093, 9093, None, tmp_path, 3, settings)
    assert f"replica.selector.class={RACK_AWARE}\n" in broker and "num.partitions=7\n" in broker and "num.partitions=1\n" not in broker
    assert "replica.selector.class" not in controller
