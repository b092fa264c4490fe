"""A local KRaft cluster on loopback, from the JVM module's Kafka jars: one controller and several
brokers, each in its own rack (`broker.rack`), for the tests and for trying the project on a real
Kafka (`kafka-assign sandbox start|stop`).

Every process listens on 127.0.0.1 only, on free ports, with a small heap; the storage is
formatted in the sandbox's directory (a temporary one unless given). The directory's
`sandbox.json` lists the processes, so `stop` finds them from another process; `stop` ends every
process it lists (SIGTERM, then SIGKILL) and removes what the sandbox wrote. A sandbox started with
`tied=True` (the tests') also dies with the Python process that started it, even when that one is
killed: its JVMs get SIGKILL from the kernel when their parent ends (Linux's parent-death signal).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from optimizer.deadline import tie_to_parent  # also the tests' workload JVMs' `preexec_fn`
from optimizer.errors import KafkaUnavailableError
from optimizer.kafka.jvm import MODULE, java, run_java
from optimizer.model.ids import kafka_uuid_text

STATE = "sandbox.json"
READY_SECONDS = 120.0
"""How long a sandbox may take to have every broker registered (2 cores: about 15 s)."""
HEAP_MB = 384


@dataclass(frozen=True)
class Node:
    """One Kafka process of the sandbox."""

    node_id: int
    role: str
    """`controller` or `broker`."""
    port: int
    rack: str | None
    pid: int
    sasl_port: int | None = None
    """A broker's second client listener, SASL_PLAINTEXT with PLAIN, when the sandbox has users."""


@dataclass(frozen=True)
class Sandbox:
    """A running sandbox: where it lives, how to reach it, and its processes."""

    directory: Path
    cluster_id: str
    nodes: tuple[Node, ...]

    @property
    def bootstrap(self) -> str:
        """The brokers' addresses, as `bootstrap.servers` takes them."""
        return ",".join(f"127.0.0.1:{n.port}" for n in self.nodes if n.role == "broker")

    @property
    def sasl_bootstrap(self) -> str:
        """The brokers' SASL_PLAINTEXT addresses (PLAIN, the users the sandbox started with), or ""
        when it has none."""
        return ",".join(f"127.0.0.1:{n.sasl_port}" for n in self.nodes if n.role == "broker" and n.sasl_port is not None)

    @property
    def racks(self) -> dict[int, str | None]:
        return {n.node_id: n.rack for n in self.nodes if n.role == "broker"}


def free_port() -> int:
    """A port free on 127.0.0.1 now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cluster_id() -> str:
    """A random cluster id as Kafka writes them (16 bytes, URL-safe base64, no padding)."""
    while True:
        text = kafka_uuid_text(uuid.uuid4().bytes)
        if not text.startswith("-"):  # Kafka's own ids never start with '-'
            return text


def _properties(
    node_id: int, role: str, port: int, controller_port: int, rack: str | None, data: Path, brokers: int, broker_configs: dict[str, str] | None = None,
    sasl_port: int | None = None, sasl_users: dict[str, str] | None = None, controller_configs: dict[str, str] | None = None,
) -> str:
    replication = min(3, brokers)
    lines = {
        "process.roles": role,
        "node.id": node_id,
        "controller.quorum.voters": f"0@127.0.0.1:{controller_port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": data,
        "num.partitions": 1,
        "auto.create.topics.enable": "false",
        "offsets.topic.replication.factor": replication,
        "offsets.topic.num.partitions": 5,
        "transaction.state.log.replication.factor": replication,
        "transaction.state.log.min.isr": 1,
        "share.coordinator.state.topic.replication.factor": replication,
        "share.coordinator.state.topic.min.isr": 1,
        "group.initial.rebalance.delay.ms": 0,
    }
    if role == "controller":
        lines["listeners"] = f"CONTROLLER://127.0.0.1:{port}"
        lines |= controller_configs or {}
    else:
        lines |= {
            "listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "inter.broker.listener.name": "PLAINTEXT",
        }
        if sasl_port is not None and sasl_users:
            users = " ".join(f'user_{name}="{password}"' for name, password in sorted(sasl_users.items()))
            lines |= {
                "listeners": f"PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
                "sasl.enabled.mechanisms": "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config": f"org.apache.kafka.common.security.plain.PlainLoginModule required {users};",
            }
        if rack:
            lines["broker.rack"] = rack
        lines |= broker_configs or {}
    return "".join(f"{key}={value}\n" for key, value in lines.items())


def start(
    brokers: int = 3, racks: Sequence[str] = ("a", "b", "c"), directory: Path | None = None, tied: bool = False,
    broker_configs: dict[str, str] | None = None, sasl_users: dict[str, str] | None = None, controller_configs: dict[str, str] | None = None,
) -> Sandbox:
    """Start a controller and `brokers` brokers, broker i in rack `racks[i % len(racks)]` (no
    racks: none), each with `broker_configs` on top of the sandbox's own settings (static ones too,
    such as `replica.selector.class`, which a broker does not change at runtime) and the controller
    with `controller_configs` (it validates group configs against its own: a streams group's
    `streams.assignor.name` must be in the controller's `group.streams.assignors`), and wait until
    every broker is registered. With `sasl_users` (user name: password), every broker also listens
    for clients with SASL_PLAINTEXT and PLAIN, these users allowed (`Sandbox.sasl_bootstrap`); the
    plaintext listener stays for the brokers and the readiness check. KafkaUnavailableError (after
    stopping what started) when a process fails or the cluster is not ready within READY_SECONDS."""
    if brokers < 1:
        raise KafkaUnavailableError("a sandbox needs at least one broker")
    for name, password in (sasl_users or {}).items():
        if not name or not all(c.isalnum() or c in "_-" for c in name) or not password or any(c in password for c in '"\\;\n'):
            raise KafkaUnavailableError(
                f"sandbox SASL user {name!r}: names are letters, digits, '_' and '-'; passwords are not empty and hold no quote, backslash, ';' or newline"
            )
    home = Path(tempfile.mkdtemp(prefix="kafka-assign-sandbox-")) if directory is None else Path(directory)
    if (home / STATE).exists():
        raise KafkaUnavailableError(f"a sandbox is already running in {home} (kafka-assign sandbox stop --dir {home})")
    home.mkdir(parents=True, exist_ok=True)
    identity = cluster_id()
    controller_port = free_port()
    plan: list[tuple[int, str, int, str | None]] = [(0, "controller", controller_port, None)]
    plan += [(i, "broker", free_port(), racks[(i - 1) % len(racks)] if racks else None) for i in range(1, brokers + 1)]
    sasl_ports = {node_id: free_port() for node_id, role, _, _ in plan if role == "broker" and sasl_users}
    configs = []
    for node_id, role, port, rack in plan:
        node_dir = home / f"{role}-{node_id}"
        node_dir.mkdir(exist_ok=True)
        config = node_dir / "server.properties"
        text = _properties(
            node_id, role, port, controller_port, rack, node_dir / "data", brokers, broker_configs, sasl_ports.get(node_id), sasl_users, controller_configs,
        )  # fmt: skip
        config.write_text(text, encoding="utf-8")
        configs.append(config)
    nodes: list[Node] = []
    logging = {"log4j2.configurationFile": str(MODULE / "src" / "main" / "resources" / "log4j2.properties")}
    try:
        _format(identity, configs)
        for (node_id, role, port, rack), config in zip(plan, configs, strict=True):
            log = (config.parent / "kafka.log").open("w", encoding="utf-8")
            process = subprocess.Popen(
                java("kafka.Kafka", [str(config)], HEAP_MB, logging),
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=config.parent,
                start_new_session=not tied, preexec_fn=tie_to_parent if tied else None,
            )  # fmt: skip
            log.close()
            nodes.append(Node(node_id, role, port, rack, process.pid, sasl_ports.get(node_id)))
        sandbox = Sandbox(home, identity, tuple(nodes))
        (home / STATE).write_text(json.dumps({"cluster_id": identity, "nodes": [asdict(n) for n in nodes]}, indent=2), encoding="utf-8")
        _wait_ready(sandbox)
    except BaseException:  # end what started, remove what was written: the directory can start again
        stop(Sandbox(home, identity, tuple(nodes)), [f"{role}-{node_id}" for node_id, role, _, _ in plan])
        raise
    return sandbox


def _format(identity: str, configs: list[Path]) -> None:
    """Format every node's storage, in parallel (a JVM each)."""
    commands = [java("kafka.tools.StorageTool", ["format", "-t", identity, "-c", str(c), "--ignore-formatted"], 128) for c in configs]
    running = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for c in commands]
    failures = []
    for config, process in zip(configs, running, strict=True):
        output, _ = process.communicate(timeout=120)
        if process.returncode != 0:
            failures.append(f"{config.parent.name}: {output.strip()[-800:]}")
    if failures:
        raise KafkaUnavailableError("formatting the sandbox's storage failed: " + "; ".join(failures))


def _wait_ready(sandbox: Sandbox, seconds: float = READY_SECONDS) -> None:
    """Until every broker is registered with its rack (Kafka's Admin client, `kao.jvm.Nodes`)."""
    deadline = time.monotonic() + seconds
    expected = {node_id: rack or "" for node_id, rack in sandbox.racks.items()}
    seen: dict[int, str] = {}
    while time.monotonic() < deadline:
        dead = [n for n in sandbox.nodes if not _alive(n.pid)]
        if dead:
            log = sandbox.directory / f"{dead[0].role}-{dead[0].node_id}" / "kafka.log"
            tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]) if log.exists() else ""
            raise KafkaUnavailableError(f"sandbox {dead[0].role} {dead[0].node_id} ended while starting:\n{tail}")
        if all(_listening(n.port) for n in sandbox.nodes):
            try:
                found = json.loads(run_java("kao.jvm.Nodes", [sandbox.bootstrap, "5000"], timeout=30, heap_mb=128))
            except KafkaUnavailableError:
                found = {"brokers": []}
            seen = {b["id"]: b["rack"] for b in found["brokers"]}
            if seen == expected:
                return
        time.sleep(1.0)
    raise KafkaUnavailableError(f"the sandbox was not ready within {seconds:g} s: brokers registered {seen}, expected {expected}")


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a child that ended but was not reaped yet is no process either
        waited, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return waited == 0


def load(directory: Path) -> Sandbox:
    """The sandbox recorded in `directory` (KafkaUnavailableError when there is none)."""
    state = Path(directory) / STATE
    if not state.exists():
        raise KafkaUnavailableError(f"no sandbox in {directory}")
    data = json.loads(state.read_text(encoding="utf-8"))
    return Sandbox(Path(directory), data["cluster_id"], tuple(Node(**n) for n in data["nodes"]))


def stop(sandbox: Sandbox, folders: Sequence[str] | None = None) -> None:
    """End every process of the sandbox and remove what it wrote: each node's folder (storage,
    configuration, log; `folders`: these, when nodes were written but not all started) and its
    list of processes; the directory too when nothing else is in it (a directory the user gave
    keeps what was there before)."""
    _end(list(sandbox.nodes))
    for folder in folders if folders is not None else [f"{n.role}-{n.node_id}" for n in sandbox.nodes]:
        shutil.rmtree(sandbox.directory / folder, ignore_errors=True)
    (sandbox.directory / STATE).unlink(missing_ok=True)
    if sandbox.directory.is_dir() and not any(sandbox.directory.iterdir()):
        sandbox.directory.rmdir()


def _end(nodes: list[Node], grace: float = 20.0) -> None:
    """End the brokers, then the controller (a broker shuts down cleanly only while the controller
    answers): SIGTERM to each, SIGKILL to what is left after `grace` seconds; returns when none of
    `nodes` is alive."""
    for role in ("broker", "controller"):
        group = [n for n in nodes if n.role == role]
        for node in group:
            _signal(node.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while any(_alive(n.pid) for n in group) and time.monotonic() < deadline:
            time.sleep(0.2)
        for node in group:
            if _alive(node.pid):
                _signal(node.pid, signal.SIGKILL)
        while any(_alive(n.pid) for n in group):
            time.sleep(0.1)


def _signal(pid: int, number: signal.Signals) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass
