"""The four JVM plug-ins (`kao.plugin`) in real groups on the sandbox cluster, against the real
`kafka-assign serve` and against its failures.

For each plug point, one group on two topics (or a Streams application on one) with two replicas
per partition over racks a, b and c, its members in racks a, b and c (Streams: one standby):

* KIP-848 consumer group: broker-side `OptimizerConsumerGroupAssignor`, chosen by the consumers
  with `group.remote.assignor=optimizer` (`kao.jvm.ConsumerGroupRunner`, protocol `consumer`);
* streams group (KIP-1071): broker-side `OptimizerStreamsGroupAssignor`, chosen with the group
  config `streams.assignor.name=optimizer` (`kao.jvm.StreamsAppRunner`, protocol `streams`);
* classic Kafka Streams (KIP-924): client-side `OptimizerTaskAssignor`, `task.assignor.class`;
* classic consumer group: client-side `OptimizerConsumerAssignor`, `partition.assignment.strategy`.

The service runs as `kafka-assign serve --record DIR` on the port the brokers' plug-ins were
configured with (tests/kafka/conftest.py), in a process of its own: stopping it closes its
connections, as a service that went away does (an `AssignmentService` stopped inside this process
would go on answering on the connections the plug-ins keep open for up to 30 s). Once the group is
settled, the assignment it runs is the last one the service answered for that kind (its recorded
answers), an exact one; client side, the plug-in logged that it applied that answer. (The brokers
log WARN and above, jvm/src/main/resources/log4j2.properties: broker side, "applied" is the
recorded answer running and no fallback logged.)

Then, for each plug point, a membership change with the service stopped (connection refused), with
a stand-in on its port that answers after the budget, and with one that answers garbage (HTTP 200:
an assignment giving a partition or task twice, or not JSON). Each time the group settles on a
valid assignment (every partition or task once), the plug-in logged that it fell back to Kafka's
default and why, and the group keeps consuming: records produced then are all consumed (every one
processed, for Streams). Last, the real service again: a change applies its answer again. The
runners' per-broker incoming bytes (their `metrics` command) grow while they consume.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from optimizer.kafka import sandbox, workload
from optimizer.kafka.jvm import MODULE

pytestmark = pytest.mark.kafka

SETTLE_MS = 90_000
"""How long a runner waits for its group to settle after a command before it answers with an error."""
ANSWER_SECONDS = 150.0
"""How long a runner may take to answer a command (it gives up settling itself after SETTLE_MS, Streams after 120 s)."""
RECORDS = 60
"""Records produced after each change: all must be consumed (processed)."""
TOPICS = {"orders": 6, "payments": 3}
"""A consumer group's topics (prefixed with the group's name) and their partitions."""
STREAMS_PARTITIONS = 4
RACKS = ("a", "b", "c")
CLIENT_DEADLINE_MS, CLIENT_BUDGET_MS = 2900, 3000
"""The client-side plug-ins' kao.deadline.ms and kao.budget.ms, as the brokers' (tests/kafka/conftest.py)."""
AGREE_SECONDS = 30.0
"""How long the running assignment may take to become the last recorded answer (a rebalance already under way)."""


# ---- the service, and what stands in for it


class Service:
    """`kafka-assign serve` on `port`, recording in `record_dir`, in a process of its own."""

    def __init__(self, port: int, record_dir: Path, log: Path, bootstrap: str | None = None):
        self.url = f"http://127.0.0.1:{port}"
        self.record_dir = record_dir
        self.log = log
        cluster = [] if bootstrap is None else ["--bootstrap-server", bootstrap]
        with log.open("a", encoding="utf-8") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "optimizer", "serve", "--port", str(port), "--record", str(record_dir), *cluster],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, preexec_fn=sandbox.tie_to_parent,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/v1/health", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"the service did not start: {log.read_text(encoding='utf-8')[-2000:]}")
            time.sleep(0.2)

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}/v1/stats", timeout=10) as answer:
            data: dict[str, Any] = json.loads(answer.read())
            return data

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def recorded_problems(record_dir: Path) -> list[dict[str, Any]]:
    """The problems the service recorded (after it added what it read from the cluster)."""
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted((record_dir / "problems").glob("*.json"))]


def answers(record_dir: Path, kind: str) -> list[dict[str, Any]]:
    """The service's recorded answers to requests of `kind`, in the order it numbered them."""
    found = []
    for path in (record_dir / "answers").glob("*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record["answer"] is not None and record["answer"]["kind"] == kind:
            found.append(record)
    return sorted(found, key=lambda r: r["request_id"])


def _stand_in_answer(request: dict[str, Any]) -> dict[str, Any] | None:
    """An answer in the protocol's envelope that looks exact, but gives the first partition (task) to two
    members (clients); None when the request has fewer than two."""
    kind, kafka = request["kind"], request["kafka"]
    if kind in ("consumer_group", "classic_consumer"):
        owners = [m["id"] for m in kafka["members"]]
        units: list[Any] = [[t["id" if kind == "consumer_group" else "name"], p] for t in kafka["topics"] for p in range(t["partitions"])]
    elif kind == "streams_group":
        owners = [m["member_id"] for m in kafka["members"]]
        units = [f"{s['id']}_{p}" for s in kafka["subtopologies"] for p in range(s["partitions"])]
    else:
        owners = [c["process_id"] for c in kafka["clients"]]
        units = [t["id"] for t in kafka["tasks"]]
    if len(owners) < 2 or not units:
        return None
    dealt: dict[str, list[Any]] = {owner: [] for owner in owners}
    for number, unit in enumerate(units):
        dealt[owners[number % len(owners)]].append(unit)
    dealt[owners[1]].insert(0, units[0])  # owners[0] has it too
    if kind in ("consumer_group", "classic_consumer"):
        assignment: dict[str, Any] = {"members": dealt}
    elif kind == "streams_group":
        assignment = {"members": {owner: {"active": held, "standby": []} for owner, held in dealt.items()}}
    else:
        assignment = {"clients": {owner: {"active": held, "standby": []} for owner, held in dealt.items()}, "followup_rebalance_ms": None}
    return {"version": 1, "request_id": "r-stand-in", "kind": kind, "group": request.get("group"), "source": "exact",
            "reason": "stand-in", "seconds": 0.01, "assignment": assignment}  # fmt: skip


@dataclass
class StandIn:
    """A server on the service's port that is not the service: `slow` answers 503 after `slow_seconds` (or when
    stopped), `duplicate` answers HTTP 200 with `_stand_in_answer`, `text` HTTP 200 with a body that is not JSON.
    Every answer closes its connection. `requests`: the kinds of the requests it was sent."""

    port: int
    mode: str
    slow_seconds: float = 0.0
    requests: list[str] = field(default_factory=list)
    wake: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                stand_in.requests.append(body["kind"])
                status, text = 200, b"kafka-assign is having a bad day"
                if stand_in.mode == "slow":
                    stand_in.wake.wait(stand_in.slow_seconds)
                    status, text = 503, json.dumps({"error": "stand-in: too late", "problems": []}).encode()
                elif stand_in.mode == "duplicate":
                    made = _stand_in_answer(body)
                    text = json.dumps(made).encode() if made is not None else text
                self.close_connection = True
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(text)))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(text)
                except OSError:
                    pass  # the plug-in stopped waiting

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.wake.set()
        self.server.shutdown()
        self.server.server_close()


# ---- the runners and the logs


class Runner(workload.Runner):
    """A workload runner JVM with the plug-ins' lines (kao.plugin at INFO) in its log; a missing or failed
    answer fails the test."""

    def __init__(self, main: str, spec: dict[str, Any], log: Path, log4j: Path):
        super().__init__(main, spec, log, properties={"log4j2.configurationFile": str(log4j)})

    def line(self, what: str = "its start", seconds: float = ANSWER_SECONDS) -> dict[str, Any]:
        try:
            return super().line(what, seconds)
        except workload.RunnerError as error:
            pytest.fail(str(error))

    def ask(self, command: dict[str, Any], seconds: float = ANSWER_SECONDS) -> dict[str, Any]:
        return super().ask(command, seconds)


@dataclass(frozen=True)
class Plug:
    """A plug point: its request kind, its class (the logger its lines carry), Kafka's default it falls back to,
    which side of Kafka runs it, and the garbage the stand-in answers it with."""

    kind: str
    logger: str
    fallback: str
    broker_side: bool
    garbage: str
    garbage_reason: str


CONSUMER_GROUP = Plug("consumer_group", "OptimizerConsumerGroupAssignor", "UniformAssignor", True, "duplicate", "invalid answer: partition ")
STREAMS_GROUP = Plug("streams_group", "OptimizerStreamsGroupAssignor", "streams-group StickyTaskAssignor", True, "duplicate", "invalid answer: active task ")
TASK_ASSIGNOR = Plug("streams_task_assignor", "OptimizerTaskAssignor", "StickyTaskAssignor", False, "duplicate", "invalid answer: active task ")
CLASSIC_CONSUMER = Plug("classic_consumer", "OptimizerConsumerAssignor", "CooperativeStickyAssignor", False, "text", "the answer is not JSON")


@dataclass
class Live:
    """What a plug point's test works with: the sandbox, the service's port and the brokers' budget, a place for
    files, the runner JVM's log4j2 configuration."""

    sandbox: sandbox.Sandbox
    port: int
    budget_ms: int
    directory: Path
    log4j: Path
    services: list[Service] = field(default_factory=list)
    stand_ins: list[StandIn] = field(default_factory=list)
    runners: list[Runner] = field(default_factory=list)

    def client_configs(self) -> dict[str, str]:
        return {"kao.service.url": f"http://127.0.0.1:{self.port}", "kao.deadline.ms": str(CLIENT_DEADLINE_MS), "kao.budget.ms": str(CLIENT_BUDGET_MS)}

    def runner(self, main: str, spec: dict[str, Any]) -> tuple[Runner, dict[str, Any]]:
        runner = Runner(main, spec, self.directory / f"{self.name(spec)}.log", self.log4j)
        self.runners.append(runner)
        return runner, runner.line("the spec")

    @staticmethod
    def name(spec: dict[str, Any]) -> str:
        return str(spec.get("group") or spec.get("application_id"))

    def service(self, record_dir: Path) -> Service:
        """The service as docs/apply.md runs it: reading the cluster (`--bootstrap-server`) for what plug points do not give."""
        running = Service(self.port, record_dir, self.directory / "service.log", self.sandbox.bootstrap)
        self.services.append(running)
        return running

    def stand_in(self, mode: str) -> StandIn:
        running = StandIn(self.port, mode, slow_seconds=self.budget_ms / 1000 + 3)
        self.stand_ins.append(running)
        return running

    def broker_logs(self) -> list[Path]:
        return [self.sandbox.directory / f"broker-{node}" / "kafka.log" for node in self.sandbox.racks]

    def mark(self, runner: Runner | None = None) -> dict[Path, int]:
        """Where each log that may hold the plug-in's lines ends now (a runner not started yet: its whole log)."""
        return {path: path.stat().st_size for path in [*self.broker_logs(), *([runner.log] if runner else [])]}

    def plugin_lines(self, plug: Plug, runner: Runner, since: dict[Path, int]) -> list[str]:
        """The plug-in's one-per-assignment lines ("applied" or "fell back") written since `since`."""
        paths = self.broker_logs() if plug.broker_side else [runner.log]
        found = []
        for path in paths:
            with path.open("rb") as log:
                log.seek(since.get(path, 0))
                text = log.read().decode("utf-8", errors="replace")
            found += [line for line in text.splitlines() if f"{plug.logger}: kao: " in line and ("applied the" in line or "fell back to" in line)]
        return found


@pytest.fixture
def live(kafka_sandbox: sandbox.Sandbox, kao_service_port: int, tmp_path: Path) -> Iterator[Live]:
    """The plug points' common ground; at the end every runner JVM, stand-in and service it started is stopped,
    whatever happened."""
    configs = dict(
        line.split("=", 1) for line in (kafka_sandbox.directory / "broker-1" / "server.properties").read_text(encoding="utf-8").splitlines() if "=" in line
    )
    assert configs["kao.service.url"] == f"http://127.0.0.1:{kao_service_port}"
    taken = {port for node in kafka_sandbox.nodes for port in (node.port, node.sasl_port)}
    assert kao_service_port not in taken, f"the sandbox listens on {kao_service_port}, the port chosen for the service before it started"
    log4j = tmp_path / "log4j2.properties"
    log4j.write_text(
        (MODULE / "src" / "main" / "resources" / "log4j2.properties").read_text(encoding="utf-8") + "logger.kao.name = kao.plugin\nlogger.kao.level = info\n",
        encoding="utf-8",
    )
    running = Live(kafka_sandbox, kao_service_port, int(configs["kao.budget.ms"]), tmp_path, log4j)
    try:
        yield running
    finally:
        for runner in running.runners:
            runner.end()
        for stand_in in running.stand_ins:
            stand_in.stop()
        for service in running.services:
            service.stop()


# ---- what each plug point runs, and the answer it should run


def _consumer_running(state: dict[str, Any]) -> dict[str, list[tuple[str, int]]]:
    return {m["member_id"]: sorted((t, p) for t, p in m["assignment"]) for m in state["members"]}


def _consumer_answered(answer: dict[str, Any], state: dict[str, Any]) -> dict[str, list[tuple[str, int]]]:
    names = {topic_id: name for name, topic_id in state["topic_ids"].items()}
    return {member: sorted((names.get(t, t), p) for t, p in held) for member, held in answer["assignment"]["members"].items()}


def _streams_group_running(state: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    return {m["member_id"]: {"active": sorted(m["active"]), "standby": sorted(m["standby"])} for m in state["members"]}


def _streams_group_answered(answer: dict[str, Any], state: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    members = answer["assignment"]["members"]
    assert all(not held.get("warmup") for held in members.values()), members  # the protocol's answer has none (4.4's API takes none)
    return {member: {"active": sorted(held["active"]), "standby": sorted(held["standby"])} for member, held in members.items()}


def _processes_running(state: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    return {i["process_id"]: {"active": sorted(i["active"]), "standby": sorted(i["standby"])} for i in state["instances"] if i["running"]}


def _processes_answered(answer: dict[str, Any], state: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    clients = answer["assignment"]["clients"]
    return {process: {"active": sorted(held["active"]), "standby": sorted(held["standby"])} for process, held in clients.items()}


# ---- the phases


def _applied(
    live: Live, plug: Plug, runner: Runner, service: Service, since: dict[Path, int],
    running: Callable[[dict[str, Any]], Any], answered: Callable[[dict[str, Any], dict[str, Any]], Any],
) -> dict[str, Any]:  # fmt: skip
    """The group runs the last answer the service recorded for this kind, an exact one, and the plug-in applied it
    (client side: its last line names the answer's request; broker side, where INFO is not logged: no fallback
    logged). The service counts no failure. The group's state."""
    deadline = time.monotonic() + AGREE_SECONDS
    while True:
        state = runner.ask({"command": "state"})
        recorded = answers(service.record_dir, plug.kind)
        last = recorded[-1] if recorded else None
        if last is not None and running(state) == answered(last["answer"], state):
            break
        if time.monotonic() > deadline:
            pytest.fail(
                f"{plug.kind}: the group runs {running(state)}; the service's last answer "
                f"({None if last is None else last['request_id']}, of {len(recorded)}) is {None if last is None else answered(last['answer'], state)}"
            )
        time.sleep(1.0)
    assert last["source"] == "exact" and last["answer"]["source"] == "exact", last["reason"]
    lines = live.plugin_lines(plug, runner, since)
    fell_back = [line for line in lines if "fell back to" in line]
    assert not fell_back, fell_back
    if not plug.broker_side:
        assert lines and "applied the service's exact assignment" in lines[-1] and f"(request {last['request_id']}" in lines[-1], lines
    stats = service.stats()
    assert stats["requests"]["failed"] == 0 and stats["requests"]["exact"] >= 1, stats
    return state


REASONS = {
    "stopped": "cannot connect to http://127.0.0.1:{port}/v1/assign (",
    "slow": "no answer within kao.budget.ms ({budget} ms)",
}


def _fell_back(live: Live, plug: Plug, runner: Runner, since: dict[Path, int], failure: str) -> None:
    """The plug-in logged, for every assignment since `since` (at least one), that it fell back to Kafka's default
    for the reason `failure` gives."""
    budget = live.budget_ms if plug.broker_side else CLIENT_BUDGET_MS
    reason = plug.garbage_reason if failure == "garbage" else REASONS[failure].format(port=live.port, budget=budget)
    lines = live.plugin_lines(plug, runner, since)
    assert lines, f"{plug.kind}: no plug-in line since the change ({failure})"
    wrong = [line for line in lines if f"fell back to Kafka's {plug.fallback}: {reason}" not in line]
    assert not wrong, f"{plug.kind} ({failure}): expected every line to say: fell back to Kafka's {plug.fallback}: {reason}...; got {wrong}"


def _incoming(metrics: dict[str, Any]) -> int:
    return sum(count for by_broker in metrics["metrics"].values() for count in by_broker.values())


def _grew(live: Live, before: dict[str, Any], after: dict[str, Any], at_least: int) -> None:
    """The runner's incoming bytes, by broker id ("1", "2", "3": every connection named by its broker), grew."""
    brokers = {str(node) for node in live.sandbox.racks}
    assert after["metrics"] and all(set(by_broker) <= brokers for by_broker in after["metrics"].values()), after
    assert _incoming(after) >= _incoming(before) + at_least, (before, after)


FAILURES = ("stopped", "slow", "garbage")


def _plug_point(
    live: Live, plug: Plug, main: str, spec: dict[str, Any], changes: dict[str, dict[str, Any]],
    running: Callable[[dict[str, Any]], Any], answered: Callable[[dict[str, Any], dict[str, Any]], Any],
    valid: Callable[[dict[str, Any]], None], keeps_consuming: Callable[[Runner, dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:  # fmt: skip
    """The real service applied; then each failure (`changes[failure]` the membership change made under it): Kafka's
    default, said, valid, consuming; then the real service applied again (`changes["again"]`). The last state."""
    service = live.service(live.directory / "record")
    since = live.mark()
    runner, state = live.runner(main, {**spec, "bootstrap": live.sandbox.bootstrap})
    state = _applied(live, plug, runner, service, since, running, answered)
    valid(state)
    state = keeps_consuming(runner, state)
    service.stop()
    for failure in FAILURES:
        server = None if failure == "stopped" else live.stand_in("slow" if failure == "slow" else plug.garbage)
        since = live.mark(runner)
        state = runner.ask(changes[failure])
        _fell_back(live, plug, runner, since, failure)
        assert server is None or plug.kind in server.requests, (failure, server.requests)
        valid(state)
        state = keeps_consuming(runner, state)
        if server is not None:
            server.stop()
    service = live.service(live.directory / "record-again")
    since = live.mark(runner)
    runner.ask(changes["again"])
    state = _applied(live, plug, runner, service, since, running, answered)
    valid(state)
    return keeps_consuming(runner, state)


def _consumer_spec(group: str, protocol: str, assignor: str | None, configs: dict[str, str]) -> tuple[dict[str, Any], dict[str, int]]:
    """A consumer group's runner spec (members in racks a, b and c, every record consumed) and its topics."""
    topics = {f"{group}-{name}": count for name, count in TOPICS.items()}
    spec = {
        "topics": topics, "replication_factor": 2, "group": group, "protocol": protocol, "assignor": assignor,
        "members": [{"rack": rack, "topics": sorted(topics)} for rack in RACKS], "settle_timeout_ms": SETTLE_MS,
        "configs": {"auto.offset.reset": "earliest", **configs},
    }  # fmt: skip
    return spec, topics


def _consumer_checks(live: Live, topics: dict[str, int]) -> tuple[Callable[[dict[str, Any]], None], Callable[[Runner, dict[str, Any]], dict[str, Any]]]:
    """A consumer group's checks: every partition held once; records produced now are all consumed, over connections to
    the sandbox's brokers."""

    def valid(state: dict[str, Any]) -> None:
        held = [(t, p) for m in state["members"] for t, p in m["assignment"]]
        assert sorted(held) == sorted((t, p) for t, count in topics.items() for p in range(count)), state["members"]

    def keeps_consuming(runner: Runner, state: dict[str, Any]) -> dict[str, Any]:
        before = runner.ask({"command": "metrics"})
        after = runner.ask({"command": "produce", "records": RECORDS})
        assert after["produced"] == state["produced"] + RECORDS and after["consumed"] >= state["consumed"] + RECORDS, (state, after)
        _grew(live, before, runner.ask({"command": "metrics"}), RECORDS * 200)
        return after

    return valid, keeps_consuming


def _consumer_test(live: Live, plug: Plug, group: str, protocol: str, assignor: str, configs: dict[str, str]) -> None:
    spec, topics = _consumer_spec(group, protocol, assignor, configs)
    valid, keeps_consuming = _consumer_checks(live, topics)
    changes: dict[str, dict[str, Any]] = {
        "stopped": {"command": "remove", "index": 2}, "slow": {"command": "add", "rack": "c", "topics": sorted(topics)},
        "garbage": {"command": "remove", "index": 0}, "again": {"command": "add", "rack": "a", "topics": sorted(topics)},
    }  # fmt: skip
    _plug_point(live, plug, "kao.jvm.ConsumerGroupRunner", spec, changes, _consumer_running, _consumer_answered, valid, keeps_consuming)


def _streams_test(
    live: Live, plug: Plug, application: str, protocol: str, configs: dict[str, str], group_configs: dict[str, str],
    running: Callable[[dict[str, Any]], Any], answered: Callable[[dict[str, Any], dict[str, Any]], Any], again: dict[str, str] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """`again`: the configs the last change starts instance 0 with (over the spec's `configs`)."""
    spec = {
        "application_id": application, "protocol": protocol, "input_topic": f"{application}-input", "partitions": STREAMS_PARTITIONS,
        "replication_factor": 2, "state_dir": str(live.directory / "state"), "num_standby_replicas": 1, "rack_aware_assignment_tags": ["zone"],
        "records": RECORDS, "keys": 12, "instances": [{"rack": rack, "tags": {"zone": rack}, "threads": 1} for rack in RACKS],
        "configs": configs, "group_configs": group_configs,
    }  # fmt: skip

    def valid(state: dict[str, Any]) -> None:
        """Every task active on one running instance; every stateful task (the store's subtopology) with one standby
        on another instance (two or more run)."""
        instances = [i for i in state["instances"] if i["running"]]
        tasks = sorted(f"{s}_{p}" for s in (0, 1) for p in range(STREAMS_PARTITIONS))
        assert sorted(t for i in instances for t in i["active"]) == tasks, instances
        stateful = sorted(f"{state['store_subtopology']}_{p}" for p in range(STREAMS_PARTITIONS))
        assert sorted(t for i in instances for t in i["standby"]) == stateful, instances
        assert all(not set(i["active"]) & set(i["standby"]) for i in instances), instances

    def keeps_consuming(runner: Runner, state: dict[str, Any]) -> dict[str, Any]:
        """Answered once every record produced is processed (committed at the input's and the repartition topic's ends)."""
        before = runner.ask({"command": "metrics"})
        after = runner.ask({"command": "produce", "records": RECORDS})
        assert after["produced"] == state["produced"] + RECORDS, (state["produced"], after["produced"])
        _grew(live, before, runner.ask({"command": "metrics"}), RECORDS)
        return after

    changes: dict[str, dict[str, Any]] = {
        "stopped": {"command": "stop", "instance": 2}, "slow": {"command": "start", "instance": 2},
        "garbage": {"command": "stop", "instance": 0}, "again": {"command": "start", "instance": 0, **({"configs": again} if again else {})},
    }  # fmt: skip
    return _plug_point(live, plug, "kao.jvm.StreamsAppRunner", spec, changes, running, answered, valid, keeps_consuming)


def test_consumer_group_plugin_kip848(live: Live) -> None:
    _consumer_test(live, CONSUMER_GROUP, "live-kip848", "consumer", "optimizer", {})


def test_streams_group_plugin_kip1071(live: Live) -> None:
    """Also: the plug point names neither the group nor its topics, and the service, reading the cluster, found the
    group by its members and solved the later requests on its real topics, with their racks."""
    _streams_test(live, STREAMS_GROUP, "live-streams-group", "streams", {}, {"streams.assignor.name": "optimizer"},
                  _streams_group_running, _streams_group_answered)  # fmt: skip
    # The last service read the cluster when it started, maybe after the group's first request to it: a request made
    # since (a change) finds the group. A miss makes it read again (at most every 5 s): then the next change does.
    real = {("live-streams-group-input", True), ("live-streams-group-counts-repartition", True)}  # the two subtopologies' inputs, with racks
    read: list[set[tuple[str, bool]]] = []
    for change in ({"command": "stop", "instance": 2}, {"command": "start", "instance": 2}):
        live.runners[-1].ask(change)
        problems = [p for p in recorded_problems(live.directory / "record-again") if p["kind"] == "streams"]
        read = [{(s["topic"], bool(s.get("replica_racks"))) for t in p["tasks"] for s in t["source_partitions"]} for p in problems]
        if real in read:
            break
        time.sleep(6)
    assert real in read, read


def test_task_assignor_plugin_kip924(live: Live) -> None:
    """The last change restarts instance 0 with the plug-in's configs given to that instance alone (as a rolling switch
    to the plug-in does; here the same as the spec's, which every instance has)."""
    configs = {"task.assignor.class": "kao.plugin.OptimizerTaskAssignor", **live.client_configs()}
    state = _streams_test(live, TASK_ASSIGNOR, "live-kip924", "classic", configs, {}, _processes_running, _processes_answered, again=configs)
    assert [i["configs"] for i in state["instances"]] == [configs, {}, {}]


def test_classic_consumer_plugin(live: Live) -> None:
    _consumer_test(live, CLASSIC_CONSUMER, "live-classic", "classic", "kao.plugin.OptimizerConsumerAssignor", live.client_configs())


def test_consumer_group_switched_member_by_member_kip848(live: Live) -> None:
    """The rollouts docs/apply.md gives for a KIP-848 group, under load: consumers that name an assignor (uniform here)
    first replaced one by one by consumers that name none, then those by consumers with
    `group.remote.assignor=optimizer` (each time the new one joins, then the old one leaves; records produced at every
    step). The group runs uniform through the first roll, the plug-in from the first member that names it; every step
    settles (one roll from uniform to the plug-in stalls on Kafka 4.4: tests/kafka/test_preferred_assignor.py); every
    record is consumed; at the end the group runs the service's last exact answer."""
    spec, topics = _consumer_spec("live-roll", "consumer", "uniform", {})
    valid, keeps_consuming = _consumer_checks(live, topics)
    service = live.service(live.directory / "record")
    since = live.mark()
    runner, state = live.runner("kao.jvm.ConsumerGroupRunner", {**spec, "bootstrap": live.sandbox.bootstrap})
    valid(state)
    state = keeps_consuming(runner, state)
    rolls: list[tuple[dict[str, str | None], list[str]]] = [
        ({"group.remote.assignor": None}, ["uniform"] * 6),  # the new members name none
        ({"group.remote.assignor": "optimizer"}, ["optimizer"] * 6),
    ]  # fmt: skip
    index = 0
    for configs, assignors in rolls:
        seen = []
        for rack in RACKS:
            for command in ({"command": "add", "rack": rack, "topics": sorted(topics), "configs": configs}, {"command": "remove", "index": index}):
                state = runner.ask(command)
                seen.append(state["coordinator"]["assignor"])
                valid(state)
                state = keeps_consuming(runner, state)
            index += 1
        assert seen == assignors, (configs, seen)
        if configs["group.remote.assignor"] != "optimizer":
            assert not answers(service.record_dir, CONSUMER_GROUP.kind), "the plug-in asked before a member named it"
    assert [m["index"] for m in state["members"]] == [6, 7, 8] and [m["rack"] for m in state["members"]] == list(RACKS), state["members"]
    assert state["consumed"] >= state["produced"] == RECORDS * 13, state
    state = _applied(live, CONSUMER_GROUP, runner, service, since, _consumer_running, _consumer_answered)
    assert state["coordinator"]["group_epoch"] == state["coordinator"]["target_assignment_epoch"], state["coordinator"]
    assert len(answers(service.record_dir, CONSUMER_GROUP.kind)) >= 6, "a request at each join and leave from the first new member on"
