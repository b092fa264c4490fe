"""The JVM plug-ins (`kao.plugin`, from jvm/target/kao-plugins.jar) against a stand-in for
`kafka-assign serve`, without a group: `kao.jvm.PluginCalls` builds Kafka's real inputs from the
oracle adapters' case formats and calls each plug-in's assign() as Kafka does.

For each plug point (streams_task_assignor, consumer_group, streams_group, classic_consumer):
the request the plug-in sends is the one docs/service-protocol.md describes for the inputs given;
a valid exact answer is applied as it is; anything else (no service, a slow one, not JSON, JSON
of the wrong shape, an assignment Kafka could not have made, HTTP 500 or 401, an answer that is
the service's reproduction of Kafka's default, no kao.service.url) gives Kafka's default, the same
answer the oracle adapters get from Kafka's own assignor, within the budget. Broker side, an
answer that comes back after the budget is applied at the next call with the same inputs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import subprocess
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from optimizer.assignors.java import java_hash_map_order, java_string_hash
from optimizer.kafka import jvm
from optimizer.kafka.plugin_calls import plugin_calls, plugins_jar
from optimizer.oracle.batch import batch

pytestmark = pytest.mark.kafka

TOKEN = "s3cret-token"
BUDGET_MS = 400
"""The budget where the service is slow (the slow and the cache scenarios); elsewhere the default (deadline + 1000 client side)
or GENEROUS_MS, so that a cold JVM's first request is not a fallback."""
GENEROUS_MS = 3000
DEADLINE_MS = 300
SLOW_SECONDS = 1.5
SLACK_MS = 300
"""assign() returns within the budget and this much more, whatever the service does."""


# ---- the stand-in service


@dataclass
class Script:
    """What the stand-in answers on one path: a status, a body (JSON from the request, or bytes), after a sleep."""

    body: Callable[[dict[str, Any]], Any] | bytes
    status: int = 200
    sleep: float = 0.0


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class StandIn:
    """`kafka-assign serve` as the tests script it: records every request (path, headers, JSON
    body) and answers each path as told; a request without `Authorization: Bearer TOKEN` gets 401."""

    scripts: dict[str, Script] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    port: int = 0
    count: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    def sent(self, path: str) -> list[Recorded]:
        with self.lock:
            return [r for r in self.requests if r.path == f"/{path}/v1/assign"]


def _handler(stand_in: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            try:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                try:
                    parsed: Any = json.loads(raw)
                except ValueError:
                    parsed = raw
                with stand_in.lock:
                    stand_in.requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, parsed))
                    stand_in.count += 1
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    self._send(401, json.dumps({"error": "unauthorized", "problems": []}).encode())
                    return
                script = stand_in.scripts.get(self.path.removesuffix("/v1/assign").strip("/"))
                if script is None:
                    self._send(404, json.dumps({"error": "unknown path", "problems": []}).encode())
                    return
                time.sleep(script.sleep)
                body = script.body if isinstance(script.body, bytes) else json.dumps(script.body(parsed)).encode()
                self._send(script.status, body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the plug-in stopped waiting (a slow answer)

    return Handler


@pytest.fixture(scope="module")
def stand_in() -> Iterator[StandIn]:
    service = StandIn()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(service))
    server.daemon_threads = True
    service.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()


def _refused_url() -> str:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def answer(assignment: Any, source: str = "exact") -> Callable[[dict[str, Any]], Any]:
    """The service's answer envelope around `assignment`, for the request it answers."""

    def make(request: dict[str, Any]) -> Any:
        return {"version": 1, "request_id": "r-000042", "kind": request["kind"], "group": request["group"], "source": source,
                "reason": "exact assignment proven" if source == "exact" else "deadline: exact not ready after 0.3 s",
                "seconds": 0.01, "assignment": assignment}  # fmt: skip

    return make


# ---- each plug point's case


def topic_id(name: str) -> str:
    """`GroupAssignors.topicId(name)` as Kafka's Uuid.toString() writes it: UUID.nameUUIDFromBytes("topic:" + name), base64url."""
    digest = bytearray(hashlib.md5(f"topic:{name}".encode()).digest())  # Java's name-based UUID
    digest[6] = (digest[6] & 0x0F) | 0x30
    digest[8] = (digest[8] & 0x3F) | 0x80
    return base64.urlsafe_b64encode(bytes(digest)).decode().rstrip("=")


@dataclass
class Plug:
    """A plug point's case: Kafka's inputs, the request they make, a valid answer, invalid ones, Kafka's own answer."""

    kind: str
    broker: bool
    kafka: dict[str, Any]
    configs: dict[str, str]
    group: str | None
    expected_kafka: dict[str, Any]
    exact: dict[str, Any]
    applied: dict[str, Any]
    invalid: dict[str, tuple[dict[str, Any], str]]
    """Answers Kafka could not have made, each with a part of the reason the plug-in must give."""
    oracle: Callable[[], dict[str, Any]]


def _consumer_group() -> Plug:
    orders, audit = topic_id("orders"), topic_id("audit")
    kafka = {
        "assignor": "uniform", "homogeneous": False,
        "topics": [{"name": "orders", "partitions": 3, "racks": [["b", "a"], ["b", "c"], ["c", "a"]]},
                   {"name": "audit", "partitions": 2, "racks": [["a"], ["b"]]}],
        "members": [{"id": "m2", "rack": "b", "subscribed": ["orders"], "assigned": [["orders", [2]]]},
                    {"id": "m1", "rack": "a", "subscribed": ["orders", "audit"], "assigned": [["orders", [1, 0]]]}],
    }  # fmt: skip
    topics = sorted([{"id": orders, "partitions": 3, "racks": [["a", "b"], ["b", "c"], ["a", "c"]]},
                     {"id": audit, "partitions": 2, "racks": [["a"], ["b"]]}], key=lambda t: str(t["id"]))  # fmt: skip
    expected = {
        "subscription_type": "heterogeneous",
        "topics": topics,
        "members": [{"id": "m1", "instance_id": None, "rack": "a", "subscribed": sorted([orders, audit]), "assigned": [[orders, [0, 1]]]},
                    {"id": "m2", "instance_id": None, "rack": "b", "subscribed": [orders], "assigned": [[orders, [2]]]}],
    }  # fmt: skip
    exact: dict[str, Any] = {"members": {"m1": [[audit, 0], [audit, 1], [orders, 2]], "m2": [[orders, 0], [orders, 1]]}}
    applied = {"members": {"m1": sorted([[audit, 0], [audit, 1], [orders, 2]]), "m2": [[orders, 0], [orders, 1]]}}
    invalid: dict[str, tuple[dict[str, Any], str]] = {
        "twice": ({"members": {"m1": [[audit, 0], [audit, 1], [orders, 0]], "m2": [[orders, 0], [orders, 1], [orders, 2]]}}, "assigned twice"),
        "unknown_member": ({"members": {**exact["members"], "m9": []}}, "unknown member m9"),
        "missing_member": ({"members": {"m1": exact["members"]["m1"]}}, "member m2 is missing"),
        "missing_partition": ({"members": {"m1": [[audit, 0], [audit, 1]], "m2": [[orders, 0], [orders, 1]]}}, f"partition {orders}-2 is not assigned"),
        "unsubscribed": ({"members": {"m1": [[orders, 0], [orders, 1], [orders, 2]], "m2": [[audit, 0], [audit, 1]]}}, "does not subscribe"),
        "unknown_partition": ({"members": {"m1": [[audit, 0], [audit, 1], [orders, 2]], "m2": [[orders, 0], [orders, 1], [orders, 7]]}},
                              "unknown partition"),
        "wrong_shape": ({"members": [["m1", []]]}, "members: expected an object"),
        "pair_shape": ({"members": {"m1": [[audit, "0"]], "m2": []}}, "expected [topic, partition] pairs"),
    }  # fmt: skip

    def oracle() -> dict[str, Any]:
        ids = {"orders": orders, "audit": audit}
        ((kafka_answer, _),) = batch("kao.jvm.GroupAssignors", [kafka])
        return {"members": {m: sorted([ids[t], p] for t, p in parts) for m, parts in kafka_answer.items()}}

    return Plug("consumer_group", True, kafka, {}, None, expected, exact, applied, invalid, oracle)


def _classic_consumer() -> Plug:
    kafka = {
        "assignor": "cooperative-sticky",
        "topics": [{"name": "orders", "partitions": 4, "replica_racks": [["a", "b"], ["b", "c"], ["c", "a"], ["a", "b"]]}],
        "members": [{"id": "c2", "rack": "b", "subscriptions": ["orders"], "owned": [], "generation": -1},
                    {"id": "c1", "rack": "a", "subscriptions": ["orders"], "owned": [["orders", 2], ["orders", 0], ["orders", 1]], "generation": 3,
                     "instance_id": "static-1"}],
    }  # fmt: skip
    expected = {
        "rebalance_protocol": "cooperative",
        "topics": [{"name": "orders", "partitions": 4, "replica_racks": [["a", "b"], ["b", "c"], ["c", "a"], ["a", "b"]],
                    "leader_racks": ["a", "b", "c", "a"]}],
        # in the leader's HashMap order of member ids; owned partitions as each consumer lists them
        "members": sorted(
            [{"id": "c1", "instance_id": "static-1", "rack": "a", "subscriptions": ["orders"], "owned": [["orders", 2], ["orders", 0], ["orders", 1]],
              "generation": 3},
             {"id": "c2", "instance_id": None, "rack": "b", "subscriptions": ["orders"], "owned": [], "generation": None}],
            key=lambda m: java_hash_map_order(["c2", "c1"], java_string_hash).index(m["id"]),
        ),
    }  # fmt: skip
    # cooperative: orders-2 moves from c1 to c2, so it is withheld in this rebalance (revoked from c1)
    exact: dict[str, Any] = {"members": {"c1": [["orders", 1], ["orders", 0]], "c2": [["orders", 3]]}}
    applied = {"members": {"c1": [["orders", 1], ["orders", 0]], "c2": [["orders", 3]]}}
    invalid: dict[str, tuple[dict[str, Any], str]] = {
        "twice": ({"members": {"c1": [["orders", 0], ["orders", 1], ["orders", 2]], "c2": [["orders", 2], ["orders", 3]]}}, "assigned twice"),
        "unknown_member": ({"members": {**exact["members"], "c9": []}}, "unknown member c9"),
        "missing_member": ({"members": {"c1": [["orders", 0], ["orders", 1], ["orders", 2], ["orders", 3]]}}, "member c2 is missing"),
        "missing_partition": ({"members": {"c1": [["orders", 0], ["orders", 1]], "c2": []}}, "partition orders-3 is not assigned"),
        "moved": ({"members": {"c1": [["orders", 1], ["orders", 2]], "c2": [["orders", 0], ["orders", 3]]}}, "in one cooperative rebalance"),
        "unknown_topic": ({"members": {"c1": [["orders", 0], ["orders", 1]], "c2": [["orders", 3], ["payments", 0]]}}, "unknown topic payments"),
        "wrong_shape": ({"members": {"c1": "orders-0", "c2": []}}, "members.c1: expected a list"),
    }  # fmt: skip

    def oracle() -> dict[str, Any]:
        ((kafka_answer, _),) = batch("kao.jvm.ConsumerAssignors", [kafka])
        return {"members": {m: [list(tp) for tp in parts] for m, parts in kafka_answer.items()}}

    configs = {"group.id": "orders-app", "partition.assignment.strategy": "kao.plugin.OptimizerConsumerAssignor"}
    return Plug("classic_consumer", False, kafka, configs, "orders-app", expected, exact, applied, invalid, oracle)


def _streams_group() -> Plug:
    def member(mid: str, process: str, rack: str | None, active: list[str], standby: list[str], **more: Any) -> dict[str, Any]:
        return {"member_id": mid, "process_id": process, "rack": rack, "client_tags": more.get("tags", {}), "active": active, "standby": standby,
                "warmup": [], "task_offsets": more.get("offsets", {}), "task_end_offsets": more.get("end_offsets", {})}  # fmt: skip

    kafka = {
        "assignor": "sticky", "num_standby_replicas": 1, "rack_aware_assignment_tags": ["zone"],
        "subtopologies": [{"id": "0", "partitions": 3, "stateful": True}, {"id": "1", "partitions": 2, "stateful": False}],
        "members": [member("m-b2", "p-b", "b", ["0_2"], [], tags={"zone": "b"}),
                    member("m-a1", "p-a", "a", ["1_0", "0_0"], ["0_1"], tags={"zone": "a"}, offsets={"0_0": 100, "0_1": 40}, end_offsets={"0_0": 150}),
                    member("m-b1", "p-b", "b", ["0_1"], ["0_0"], tags={"zone": "b"})],
    }  # fmt: skip
    expected_members = [{"member_id": "m-a1", "process_id": "p-a", "instance_id": None, "rack": "a", "client_tags": {"zone": "a"}, "active": ["0_0", "1_0"],
                     "standby": ["0_1"], "warmup": [], "task_offsets": {"0_0": 100, "0_1": 40}, "task_end_offsets": {"0_0": 150}},
                    {"member_id": "m-b1", "process_id": "p-b", "instance_id": None, "rack": "b", "client_tags": {"zone": "b"}, "active": ["0_1"],
                     "standby": ["0_0"], "warmup": [], "task_offsets": {}, "task_end_offsets": {}},
                    {"member_id": "m-b2", "process_id": "p-b", "instance_id": None, "rack": "b", "client_tags": {"zone": "b"}, "active": ["0_2"],
                     "standby": [], "warmup": [], "task_offsets": {}, "task_end_offsets": {}}]  # fmt: skip
    # members in the order Kafka's GroupSpecImpl iterates them (its HashMap of member ids)
    order = java_hash_map_order([m["member_id"] for m in kafka["members"]], java_string_hash)
    expected = {
        "num_standby_replicas": 1, "rack_aware_assignment_tags": ["zone"],
        "subtopologies": [{"id": "0", "partitions": 3, "stateful": True}, {"id": "1", "partitions": 2, "stateful": False}],
        "members": sorted(expected_members, key=lambda m: order.index(m["member_id"])),
    }  # fmt: skip

    def tasks(active: list[str], standby: list[str], warmup: list[str] | None = None) -> dict[str, list[str]]:
        return {"active": active, "standby": standby, **({} if warmup is None else {"warmup": warmup})}

    exact: dict[str, Any] = {"members": {"m-a1": tasks(["1_0", "0_0"], ["0_1", "0_2"], []), "m-b1": tasks(["0_1", "1_1"], ["0_0"]), "m-b2": tasks(["0_2"], [])}}
    applied = {"members": {"m-a1": tasks(["0_0", "1_0"], ["0_1", "0_2"]), "m-b1": tasks(["0_1", "1_1"], ["0_0"]), "m-b2": tasks(["0_2"], [])}}
    invalid: dict[str, tuple[dict[str, Any], str]] = {
        "twice": ({"members": {**exact["members"], "m-b2": tasks(["0_2", "0_0"], [])}}, "active task 0_0 assigned twice"),
        "unknown_member": ({"members": {**exact["members"], "m-z": tasks([], [])}}, "unknown member m-z"),
        "missing_task": ({"members": {**exact["members"], "m-b1": tasks(["0_1"], ["0_0"])}}, "task 1_1 has no active member"),
        "unknown_task": ({"members": {**exact["members"], "m-b2": tasks(["0_2", "0_3"], [])}}, "unknown task 0_3"),
        "same_process": ({"members": {**exact["members"], "m-b2": tasks(["0_2"], ["0_1"])}}, "twice in one process"),
        "stateless_standby": ({"members": {**exact["members"], "m-b2": tasks(["0_2"], ["1_0"])}}, "standby of stateless task 1_0"),
        "warmup": ({"members": {**exact["members"], "m-b2": tasks(["0_2"], [], ["0_1"])}}, "warm-up"),
        "wrong_shape": ({"members": {**exact["members"], "m-b2": tasks("0_2", [])}}, "m-b2.active: expected a list"),  # type: ignore[arg-type]
    }  # fmt: skip

    def oracle() -> dict[str, Any]:
        ((kafka_answer, _),) = batch("kao.jvm.StreamsGroupAssignors", [kafka])
        return {"members": kafka_answer}

    return Plug("streams_group", True, kafka, {}, None, expected, exact, applied, invalid, oracle)


A = "00000000-0000-0000-0000-00000000000a"
B = "00000000-0000-0000-0000-00000000000b"


def _streams_task_assignor() -> Plug:
    kafka = {
        "assignor": "kip924_sticky", "task_sets": "grouper",
        # no standbys: the fallback's standby placement follows identity hashes (TaskAssignors' docstring), not comparable across JVMs
        "configs": {"acceptable_recovery_lag": 10000, "max_warmup_replicas": 2, "num_standby_replicas": 0, "probing_rebalance_interval_ms": 600000,
                    "tags": ["zone"], "strategy": "min_traffic", "traffic_cost": 10, "non_overlap_cost": 1},
        "tasks": [{"subtopology": 0, "partition": 0, "stateful": True, "source": [["input", 0, ["b", "a"]]],
                   "changelog": [["app-store-changelog", 0, ["b", "c"]]], "end_offset_sum": 1000},
                  {"subtopology": 0, "partition": 1, "stateful": True, "source": [["input", 1, ["b", "c"]]],
                   "changelog": [["app-store-changelog", 1, ["c", "a"]]], "end_offset_sum": 500},
                  {"subtopology": 1, "partition": 0, "stateful": False, "source": [["other", 0, ["a"]]], "changelog": []}],
        "clients": [{"process": B, "rack": "b", "threads": 1, "tags": {"zone": "b"}, "owned": [["input", 1]], "offset_sums": [[0, 1, 500], [0, 0, 100]]},
                    {"process": A, "rack": "a", "threads": 2, "tags": {"zone": "a"}, "owned": [["input", 0]], "offset_sums": [[0, 0, -2]]}],
    }  # fmt: skip
    expected = {
        "configs": {"num_standby_replicas": 0, "acceptable_recovery_lag": 10000, "max_warmup_replicas": 2, "probing_rebalance_interval_ms": 600000,
                    "rack_aware_assignment_tags": ["zone"], "rack_aware_assignment_strategy": "min_traffic",
                    "rack_aware_assignment_traffic_cost": 10, "rack_aware_assignment_non_overlap_cost": 1},
        "tasks": [{"id": "0_0", "stateful": True, "source": [{"topic": "input", "partition": 0, "racks": ["a", "b"]}],
                   "changelog": [{"topic": "app-store-changelog", "partition": 0, "racks": ["b", "c"]}]},
                  {"id": "0_1", "stateful": True, "source": [{"topic": "input", "partition": 1, "racks": ["b", "c"]}],
                   "changelog": [{"topic": "app-store-changelog", "partition": 1, "racks": ["a", "c"]}]},
                  {"id": "1_0", "stateful": False, "source": [{"topic": "other", "partition": 0, "racks": ["a"]}], "changelog": []}],
        "clients": [{"process_id": A, "rack": "a", "threads": 2, "consumers": [f"{A}-consumer-0", f"{A}-consumer-1"], "tags": {"zone": "a"},
                     "previous_active": ["0_0"], "previous_standby": [], "lags": {"0_0": -2, "0_1": 500}},
                    {"process_id": B, "rack": "b", "threads": 1, "consumers": [f"{B}-consumer-0"], "tags": {"zone": "b"},
                     "previous_active": ["0_1"], "previous_standby": ["0_0"], "lags": {"0_0": 900, "0_1": 0}}],
    }  # fmt: skip

    def tasks(active: list[str], standby: list[str]) -> dict[str, list[str]]:
        return {"active": active, "standby": standby}

    exact: dict[str, Any] = {"clients": {A: tasks(["1_0", "0_1"], ["0_0"]), B: tasks(["0_0"], ["0_1"])}, "followup_rebalance_ms": 60000}
    applied = {"clients": {A: tasks(["0_1", "1_0"], ["0_0"]), B: tasks(["0_0"], ["0_1"])}}
    c = "00000000-0000-0000-0000-00000000000c"
    invalid: dict[str, tuple[dict[str, Any], str]] = {
        "twice": ({"clients": {A: tasks(["1_0", "0_1", "0_0"], []), B: tasks(["0_0"], [])}}, "active task 0_0 assigned twice"),
        "unknown_client": ({"clients": {**exact["clients"], c: tasks([], [])}}, f"unknown client {c}"),
        "missing_client": ({"clients": {A: tasks(["1_0", "0_1", "0_0"], [])}}, f"client {B} is missing"),
        "missing_task": ({"clients": {A: tasks(["0_1"], []), B: tasks(["0_0"], [])}}, "task 1_0 has no active client"),
        "same_client": ({"clients": {A: tasks(["1_0", "0_1"], ["0_1"]), B: tasks(["0_0"], [])}}, "task 0_1 twice in one process"),
        "stateless_standby": ({"clients": {A: tasks(["1_0", "0_1"], []), B: tasks(["0_0"], ["1_0"])}}, "standby of stateless task 1_0"),
        "followup": ({**exact, "followup_rebalance_ms": "soon"}, "followup_rebalance_ms"),
        "wrong_shape": ({"clients": [A, B]}, "clients: expected an object"),
    }  # fmt: skip

    def oracle() -> dict[str, Any]:
        ((kafka_answer, _),) = batch("kao.jvm.TaskAssignors", [kafka])
        clients = {pid: {k: [f"{s}_{p}" for s, p in sorted(v[k])] for k in ("active", "standby")} for pid, v in kafka_answer["clients"].items()}
        return {"clients": clients}

    configs = {"application.id": "orders-app"}
    return Plug("streams_task_assignor", False, kafka, configs, "orders-app", expected, exact, applied, invalid, oracle)


PLUGS = {p.kind: p for p in (_streams_task_assignor(), _consumer_group(), _streams_group(), _classic_consumer())}

FALLBACKS: dict[str, tuple[Script | None, str]] = {
    "not_json": (Script(b"<html>busy</html>"), "not JSON"),
    "json_list": (Script(lambda request: [1, 2]), "not a JSON object"),
    "no_assignment": (Script(lambda request: {"version": 1, "kind": request["kind"], "source": "exact"}), "no assignment object"),
    "wrong_kind": (Script(lambda request: {"version": 1, "kind": "problem", "source": "exact", "assignment": {}}), "kind"),
    "http_500": (Script(lambda request: {"error": "internal error: boom", "problems": []}, status=500), "HTTP 500: internal error: boom"),
    "http_503": (Script(lambda request: {"error": "busy", "problems": []}, status=503), "HTTP 503"),
    "slow": (Script(lambda request: {}, sleep=SLOW_SECONDS), f"no answer within kao.budget.ms ({BUDGET_MS} ms)"),
}


@dataclass
class Run:
    plug: Plug
    results: dict[str, dict[str, Any] | str]
    oracle: dict[str, Any]
    logs: list[str]


@pytest.fixture(scope="module")
def token_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("tokens")
    (folder / "token").write_text(TOKEN + "\n", encoding="utf-8")
    (folder / "wrong").write_text("not-the-token\n", encoding="utf-8")
    # a header cannot carry a newline: the JDK's refusal would quote the whole value
    (folder / "two-lines").write_text(TOKEN + "\nsecond-line\n", encoding="utf-8")
    return folder / "token", folder / "wrong"


@pytest.fixture(scope="module", params=list(PLUGS))
def run(request: pytest.FixtureRequest, stand_in: StandIn, token_files: tuple[Path, Path]) -> Run:
    """Every scenario of one plug point in one JVM (in order), and Kafka's own answer on the same case."""
    plug = PLUGS[request.param]
    token, wrong = token_files

    def configs(path: str | None, token_file: Path | None = token, budget_ms: int = GENEROUS_MS) -> dict[str, str]:
        chosen = {**plug.configs, "kao.budget.ms": str(budget_ms), "kao.deadline.ms": str(DEADLINE_MS)}
        if path is not None:
            chosen["kao.service.url"] = path if "://" in path else stand_in.url(f"{plug.kind}/{path}")
        if token_file is not None:
            chosen["kao.service.token.file"] = str(token_file)
        return chosen

    scenarios: dict[str, dict[str, Any]] = {}
    stand_in.scripts[f"{plug.kind}/exact"] = Script(answer(plug.exact))
    scenarios["exact"] = {"configs": configs("exact")}
    stand_in.scripts[f"{plug.kind}/kafka_source"] = Script(answer(plug.exact, source="kafka"))
    scenarios["kafka_source"] = {"configs": configs("kafka_source")}
    for name, (bad, _) in plug.invalid.items():
        stand_in.scripts[f"{plug.kind}/{name}"] = Script(answer(bad))
        scenarios[name] = {"configs": configs(name)}
    for name, (script, _) in FALLBACKS.items():
        assert script is not None
        stand_in.scripts[f"{plug.kind}/{name}"] = script
        scenarios[name] = {"configs": configs(name, budget_ms=BUDGET_MS if name == "slow" else GENEROUS_MS)}
    scenarios["refused"] = {"configs": configs(_refused_url())}
    stand_in.scripts[f"{plug.kind}/unauthorized"] = Script(answer(plug.exact))
    scenarios["unauthorized"] = {"configs": configs("unauthorized", wrong)}
    scenarios["no_token_file"] = {"configs": configs("exact", token.parent / "absent")}
    scenarios["two_line_token"] = {"configs": configs("exact", token.parent / "two-lines")}
    scenarios["unconfigured"] = {"configs": configs(None)}
    if plug.broker:
        # the cache: an exact answer after the budget is Kafka's default now, and applied at the next call with the same inputs
        stand_in.scripts[f"{plug.kind}/slow_exact"] = Script(answer(plug.exact), sleep=1.0)
        scenarios["cache_first"] = {"configs": configs("slow_exact", budget_ms=BUDGET_MS), "instance": "cached"}
        scenarios["cache_joined"] = {"configs": {}, "instance": "cached"}  # while the first is in flight: waits for it, sends nothing
        scenarios["cache_second"] = {"configs": {}, "instance": "cached", "sleep_ms_before": 1000}
        scenarios["cache_third"] = {"configs": {}, "instance": "cached"}
    if plug.kind == "classic_consumer":
        eager = {**configs("eager"), "partition.assignment.strategy": "kao.plugin.OptimizerConsumerAssignor,org.apache.kafka.clients.consumer.RangeAssignor"}
        stand_in.scripts[f"{plug.kind}/eager"] = Script(answer(plug.exact))
        scenarios["eager"] = {"configs": eager}
    cases = [{"plug": plug.kind, "kafka": plug.kafka, **scenario} for scenario in scenarios.values()]
    logs: list[str] = []
    results = plugin_calls(cases, logs=logs)
    return Run(plug, dict(zip(scenarios, results, strict=True)), plug.oracle(), logs)


def _result(run: Run, scenario: str) -> dict[str, Any]:
    result = run.results[scenario]
    assert isinstance(result, dict), f"{run.plug.kind} {scenario}: assign() threw {result}"
    return result


def _normalised(assignment: dict[str, Any]) -> dict[str, Any]:
    """The assignment without what only one side lists: members with nothing (the streams-group oracle leaves them out), no follow-up."""
    if "clients" in assignment:
        return {"clients": assignment["clients"]}
    members = assignment["members"]
    if members and isinstance(next(iter(members.values())), dict):
        return {"members": {m: t for m, t in members.items() if t.get("active") or t.get("standby")}}
    return {"members": members}


# ---- (a) the request


def test_request_is_the_protocols(run: Run, stand_in: StandIn) -> None:
    plug = run.plug
    (sent,) = stand_in.sent(f"{plug.kind}/exact")
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["authorization"] == f"Bearer {TOKEN}"
    body = sent.body
    assert list(body) == ["version", "kind", "group", "deadline_ms", "kafka"]
    assert body["version"] == 1
    assert body["kind"] == plug.kind
    assert body["group"] == plug.group
    assert body["deadline_ms"] == DEADLINE_MS
    assert body["kafka"] == plug.expected_kafka
    # the same inputs, the same bytes (the broker-side cache's key)
    (again,) = stand_in.sent(f"{plug.kind}/kafka_source")
    assert again.body == body


def test_classic_protocol_follows_the_configured_assignors(run: Run, stand_in: StandIn) -> None:
    """The classic consumer's rebalance_protocol is the highest every configured assignor supports."""
    if run.plug.kind != "classic_consumer":
        assert "eager" not in run.results
        return
    (sent,) = stand_in.sent("classic_consumer/eager")
    assert sent.body["kafka"]["rebalance_protocol"] == "eager"
    # under eager, withholding orders-2 leaves it unassigned: not an assignment Kafka could make; the fallback is then
    # Kafka's RangeAssignor (the default strategy's first, what the service reproduces for eager), not the cooperative one
    result = _result(run, "eager")
    assert not result["applied"]
    assert "partition orders-2 is not assigned" in result["reason"]
    ((range_answer, _),) = batch("kao.jvm.ConsumerAssignors", [{**run.plug.kafka, "assignor": "range"}])
    assert result["assignment"] == {"members": {m: [list(tp) for tp in parts] for m, parts in range_answer.items()}}
    assert result["assignment"] != run.oracle, "the case should tell the range assignor from the cooperative sticky one"
    assert any("fell back to Kafka's RangeAssignor: invalid answer: partition orders-2 is not assigned" in line for line in run.logs), run.logs


# ---- (b) a valid answer is applied as it is


def test_exact_answer_is_applied(run: Run) -> None:
    result = _result(run, "exact")
    assert result["applied"], result["reason"]
    assert result["request_id"] == "r-000042"
    assert result["reason"] == "exact assignment proven"
    assert _normalised(result["assignment"]) == _normalised(run.plug.applied)
    if run.plug.kind == "streams_task_assignor":
        assert 59_000 <= result["assignment"]["followup_rebalance_ms"] <= 60_000
    assert _normalised(result["assignment"]) != _normalised(run.oracle), "the case's exact answer should differ from Kafka's, to tell them apart"


# ---- (c) anything else is Kafka's default, within the budget


def _fallback_scenarios() -> list[str]:
    return ["kafka_source", "refused", "unauthorized", "no_token_file", "two_line_token", "unconfigured", *FALLBACKS]


@pytest.mark.parametrize("scenario", _fallback_scenarios())
def test_fallback_is_kafkas_default(run: Run, scenario: str) -> None:
    result = _result(run, scenario)
    assert not result["applied"]
    assert _normalised(result["assignment"]) == _normalised(run.oracle)
    if scenario == "slow":
        assert result["millis"] <= BUDGET_MS + SLACK_MS
    reason = result["reason"]
    expected = {
        "kafka_source": "the service had no exact assignment (deadline: exact not ready",
        "refused": "cannot connect to",
        "unauthorized": "HTTP 401: unauthorized",
        "no_token_file": "kao.service.token.file",
        "two_line_token": "holds characters a header cannot carry",
        "unconfigured": "kao.service.url is not set",
    }.get(scenario) or FALLBACKS[scenario][1]
    assert expected in reason, reason
    assert TOKEN not in reason


def test_invalid_answers_fall_back(run: Run) -> None:
    for name, (_, why) in run.plug.invalid.items():
        result = _result(run, name)
        assert not result["applied"], name
        assert result["reason"].startswith("invalid answer: "), (name, result["reason"])
        assert why in result["reason"], (name, result["reason"])
        assert result["request_id"] == "r-000042"
        assert _normalised(result["assignment"]) == _normalised(run.oracle), name


# ---- (d) broker side: a late answer is applied at the next call with the same inputs


def test_broker_cache_applies_a_late_answer(run: Run, stand_in: StandIn) -> None:
    """Broker side, an answer not back within the budget is kept; a call with the same inputs while
    it is in flight sends nothing more, and once it is back the next call applies it at once.
    Client side there is no cache (the leader waits for its answer)."""
    if not run.plug.broker:
        assert "cache_first" not in run.results
        assert "kept" not in _result(run, "slow")["reason"]
        return
    first, joined, second, third = (_result(run, s) for s in ("cache_first", "cache_joined", "cache_second", "cache_third"))
    for early in (first, joined):
        assert not early["applied"]
        assert "the answer will be kept" in early["reason"]
        assert early["millis"] <= BUDGET_MS + SLACK_MS
        assert _normalised(early["assignment"]) == _normalised(run.oracle)
    for later in (second, third):
        assert later["applied"], later["reason"]
        assert later["cached"]
        assert later["millis"] < BUDGET_MS
        assert _normalised(later["assignment"]) == _normalised(run.plug.applied)
    assert len(stand_in.sent(f"{run.plug.kind}/slow_exact")) == 1, "one request for the same inputs"


# ---- the log


def test_one_log_line_per_assignment_and_never_the_token(run: Run) -> None:
    """One line per assign() (INFO when the service's answer was applied, WARN when Kafka's default
    was), naming the fallback and why; the token is never in the log."""
    lines = [line for line in run.logs if "kao: " in line and (": applied the service's" in line or ": fell back to Kafka's " in line)]
    assert len(lines) == len(run.results), "\n".join(run.logs)
    applied = [line for line in lines if ": applied the service's exact assignment (request r-000042" in line]
    assert len(applied) == sum(1 for r in run.results.values() if isinstance(r, dict) and r["applied"])
    assert all(" INFO " in line for line in applied)
    assert all(" WARN " in line for line in lines if line not in applied)
    fallback = {"streams_task_assignor": "StickyTaskAssignor", "consumer_group": "UniformAssignor",
                "streams_group": "streams-group StickyTaskAssignor", "classic_consumer": "CooperativeStickyAssignor"}[run.plug.kind]  # fmt: skip
    assert any(f"fell back to Kafka's {fallback}: cannot connect to" in line for line in lines)
    if run.plug.group is not None:
        assert all(f"kao: group {run.plug.group}: " in line for line in lines)
    assert not any(TOKEN in line for line in run.logs)


# ---- the jar


def test_plugins_jar_holds_only_the_plugins_and_needs_no_jackson() -> None:
    """kao-plugins.jar is kao/plugin/** alone; what the client-side plug-ins and the shared code
    use is the JDK's, Kafka's clients' or Streams', and slf4j's (a client application has no
    Jackson, nor the broker's classes)."""
    jar = plugins_jar()
    with zipfile.ZipFile(jar) as opened:
        listing = opened.namelist()
    assert all(name.startswith(("META-INF/", "kao/plugin/")) or name == "kao/" for name in listing), listing
    deps = subprocess.run(
        ["jdeps", "--multi-release", "17", "-verbose:class", "-cp", jvm.CLASSPATH.read_text(encoding="utf-8").strip(), str(jar)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    allowed = {
        "client": ("java.", "javax.", "kao.plugin.", "org.slf4j.", "org.apache.kafka.common.", "org.apache.kafka.clients.", "org.apache.kafka.streams."),
        "broker": ("java.", "javax.", "kao.plugin.", "org.slf4j.", "org.apache.kafka.common.", "org.apache.kafka.coordinator.group."),
    }
    broker_classes = ("kao.plugin.OptimizerConsumerGroupAssignor", "kao.plugin.OptimizerStreamsGroupAssignor")
    wrong = []
    for line in deps.splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[1] != "->" or not parts[0].startswith("kao.plugin."):
            continue
        side = "broker" if parts[0].startswith(broker_classes) else "client"
        if not parts[2].startswith(allowed[side]):
            wrong.append(line.strip())
    assert not wrong, wrong


CLIENT_ONLY = """
import java.util.*;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.*;
import org.apache.kafka.common.*;
import kao.plugin.OptimizerConsumerAssignor;

public class ClientOnly {
    public static void main(String[] args) {
        OptimizerConsumerAssignor assignor = new OptimizerConsumerAssignor();
        assignor.configure(Map.of("kao.service.url", args[0], "kao.service.token.file", args[1], "group.id", "orders-app"));
        Node node = new Node(0, "localhost", 9092);
        List<PartitionInfo> partitions = new ArrayList<>();
        for (int p = 0; p < 4; p++) {
            partitions.add(new PartitionInfo("orders", p, node, new Node[] {node}, new Node[] {node}));
        }
        Cluster cluster = new Cluster("c", List.of(node), partitions, Set.of(), Set.of());
        List<TopicPartition> owned = List.of(new TopicPartition("orders", 0), new TopicPartition("orders", 1), new TopicPartition("orders", 2));
        Map<String, Subscription> members = new HashMap<>();
        members.put("c1", new Subscription(List.of("orders"), assignor.subscriptionUserData(Set.of("orders")), owned, 3, Optional.of("a")));
        members.put("c2", new Subscription(List.of("orders"), null, List.of(), -1, Optional.of("b")));
        GroupAssignment answer = assignor.assign(cluster, new GroupSubscription(members));
        System.out.println(assignor.lastOutcome().applied + " " + new TreeMap<>(answer.groupAssignment()));
    }
}
"""


def test_client_side_plugin_runs_on_kafka_clients_alone(stand_in: StandIn, token_files: tuple[Path, Path], tmp_path: Path) -> None:
    """A consumer application's classpath: kao-plugins.jar, kafka-clients and slf4j-api only (no
    Jackson, no Streams, no broker): the classic consumer's plug-in asks the service and applies its answer."""
    jars = jvm.CLASSPATH.read_text(encoding="utf-8").strip().split(os.pathsep)
    kept = [j for j in jars if Path(j).name.startswith(("kafka-clients-", "slf4j-api-"))]
    assert len(kept) == 2, kept
    source = tmp_path / "ClientOnly.java"
    source.write_text(CLIENT_ONLY, encoding="utf-8")
    stand_in.scripts["client_only/exact"] = Script(answer(PLUGS["classic_consumer"].exact))
    java = jvm.java("ClientOnly")[0]
    done = subprocess.run([java, "-cp", os.pathsep.join([str(plugins_jar()), *kept]), str(source), stand_in.url("client_only/exact"), str(token_files[0])],
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "true {c1=Assignment(partitions=[orders-1, orders-0]), c2=Assignment(partitions=[orders-3])}", done.stdout + done.stderr
    (sent,) = stand_in.sent("client_only/exact")
    assert sent.body["group"] == "orders-app"
    assert sent.body["kafka"]["members"][0]["generation"] == 3
