"""`kafka-assign serve`: the HTTP service the plug-ins call (docs/apply.md, the protocol in
docs/service-protocol.md).

One request is one group to assign. The service reads it within its limits (a length it states,
at most `max_request_bytes`; a token when one is configured, checked before the body is read),
maps it to a problem (`optimizer.service.protocol`), and solves it in a child process that is
killed at the caller's deadline (`optimizer.service.worker`): the exact assignment applied now if
it is ready, else the project's reproduction of Kafka's default, else 503. Requests run in
threads of their own, at most `workers` solving at once; a request that cannot get a worker while
it could still be solved in time gets 503 ("busy") then, before its deadline, and one that finds
`max_waiting` requests waiting already gets it at once.

Every request gives one log line (time, request id, HTTP status, kind, group, source, seconds,
why) and counts in `Stats` (`GET /v1/stats` as JSON, `GET /metrics` in Prometheus' text format).
With `record_dir`, every request that was understood is written as a problem file
(`problems/`), with what was answered (`answers/`), for replaying rebalances offline
(`kafka-assign solve`, `kafka-assign pipeline --input DIR/problems`).
"""

from __future__ import annotations

import collections
import dataclasses
import hmac
import json
import queue
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from optimizer.model.problem import solution_to_data
from optimizer.model.streams import StreamsProblem
from optimizer.service.metadata import ClusterMetadata, enrich, streams_group_of
from optimizer.service.protocol import Request, RequestError, answer_assignment, parse_request, request_to_problem_data
from optimizer.service.worker import MIN_SOLVE_SECONDS, Outcome, margin_seconds, solve_within, warm_up
from optimizer.version import __version__

DEFAULT_PORT = 8787
DEFAULT_DEADLINE_MS = 5_000
MAX_DEADLINE_MS = 600_000
"""A caller cannot hold a worker longer than this (ten minutes)."""
DEFAULT_MAX_REQUEST_BYTES = 32 * 1024 * 1024
READ_TIMEOUT_SECONDS = 30.0
"""How long a connection may take to send its request (a slow sender does not hold a thread)."""
RECORD_QUEUE = 1_000
"""Requests that may wait to be recorded; beyond, one is dropped with a log line."""
LATENCY_WINDOW = 1_000
"""Latency quantiles are over the last this many answered requests."""
LOOPBACK = ("127.0.0.1", "::1", "localhost")


@dataclass(frozen=True)
class ServiceConfig:
    """How the service runs (`kafka-assign serve`'s options)."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    """0: any free port (`AssignmentService.port` says which)."""
    token: str | None = field(default=None, repr=False)
    """When set, every request must carry `Authorization: Bearer <token>` (never shown)."""
    default_deadline_ms: int = DEFAULT_DEADLINE_MS
    """For requests that give none."""
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    workers: int = 2
    """Requests solved at once (each in a process of its own)."""
    max_waiting: int = 16
    """Requests that may wait for a worker; more are answered 503 at once."""
    goals: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Problem kind ("streams", "consumer") -> its goal sequence (absent: the kind's default)."""
    record_dir: Path | None = None


@dataclass
class Stats:
    """What the service did since it started; thread-safe."""

    started: float = field(default_factory=time.time)
    exact: int = 0
    """Answered with the exact assignment."""
    kafka: int = 0
    """Fell back: answered with the reproduction of Kafka's default."""
    unanswered: int = 0
    """503: no assignment within the deadline (busy, or even Kafka's did not finish)."""
    refused: int = 0
    """4xx: malformed, invalid, oversized, unauthorised."""
    failed: int = 0
    """500: the service's own error."""
    latencies: collections.deque[float] = field(default_factory=lambda: collections.deque(maxlen=LATENCY_WINDOW))
    seconds_total: float = 0.0
    seconds_max: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, outcome: str, seconds: float | None = None) -> None:
        with self.lock:
            setattr(self, outcome, getattr(self, outcome) + 1)
            if seconds is not None:
                self.latencies.append(seconds)
                self.seconds_total += seconds
                self.seconds_max = max(self.seconds_max, seconds)

    def as_data(self) -> dict[str, Any]:
        with self.lock:
            ordered = sorted(self.latencies)
            answered = self.exact + self.kafka
            return {
                "version": __version__,
                "uptime_seconds": round(time.time() - self.started, 3),
                "requests": {"exact": self.exact, "kafka": self.kafka, "unanswered": self.unanswered, "refused": self.refused, "failed": self.failed},
                "answered": answered,
                "fell_back": self.kafka,
                "latency_seconds": {
                    "count": answered + self.unanswered,
                    "sum": round(self.seconds_total, 6),
                    "max": round(self.seconds_max, 6),
                    **{f"p{q}": round(_quantile(ordered, q / 100), 6) for q in (50, 95, 99)},
                },
            }

    def prometheus(self) -> str:
        data = self.as_data()
        lines = [
            "# HELP kao_assign_requests_total Assignment requests by outcome: exact, kafka (fell back), unanswered (503), refused (4xx), failed (500).",
            "# TYPE kao_assign_requests_total counter",
            *(f'kao_assign_requests_total{{outcome="{name}"}} {value}' for name, value in data["requests"].items()),
            "# HELP kao_assign_seconds Time from a request read to its answer, over the recent window for the quantiles.",
            "# TYPE kao_assign_seconds summary",
            *(f'kao_assign_seconds{{quantile="0.{q[1:]}"}} {data["latency_seconds"][q]}' for q in ("p50", "p95", "p99")),
            f'kao_assign_seconds_sum {data["latency_seconds"]["sum"]}',
            f'kao_assign_seconds_count {data["latency_seconds"]["count"]}',
            "# HELP kao_assign_seconds_max The longest request so far.",
            "# TYPE kao_assign_seconds_max gauge",
            f'kao_assign_seconds_max {data["latency_seconds"]["max"]}',
        ]
        return "\n".join(lines) + "\n"


def _quantile(ordered: list[float], q: float) -> float:
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class _Refused(Exception):
    """A request answered with an error status, and why."""

    def __init__(self, status: HTTPStatus, error: str, problems: Sequence[str] = ()):
        super().__init__(error)
        self.status = status
        self.error = error
        self.problems = list(problems)


class _Slots:
    """The workers: a request takes a free one, or waits for one until it could no longer be solved
    in time, or is told at once that too many requests wait already."""

    def __init__(self, workers: int, max_waiting: int):
        self._condition = threading.Condition()
        self._free = max(1, workers)
        self._max_waiting = max_waiting
        self._waiting = 0
        self._held: dict[int, float] = {}
        """Slot token -> the deadline of the request holding it (its child is killed then)."""
        self._tokens = 0

    def take(self, deadline: float, needed: float) -> tuple[int | None, str]:
        """A slot token, or None and why (busy), for a request that must be answered by `deadline`
        and needs at least `needed` seconds of solving."""
        latest = deadline - needed
        with self._condition:
            while True:
                if self._free > 0:
                    self._free -= 1
                    self._tokens += 1
                    self._held[self._tokens] = deadline
                    return self._tokens, ""
                if self._waiting >= self._max_waiting:
                    return None, f"busy: {self._waiting} requests already wait for a worker"
                self._waiting += 1
                try:
                    self._condition.wait(timeout=max(0.0, latest - time.monotonic()))
                finally:
                    self._waiting -= 1
                if self._free == 0 and time.monotonic() >= latest:
                    return None, f"busy: no worker free within the deadline ({len(self._held)} solving)"

    def give_back(self, token: int) -> None:
        with self._condition:
            del self._held[token]
            self._free += 1
            self._condition.notify()


class AssignmentService:
    """The service: `start()` serves in a background thread (Python callers, tests),
    `serve_forever()` in this one (the command line); `stop()` ends both."""

    def __init__(self, config: ServiceConfig, log: Callable[[str], None] | None = None, metadata: ClusterMetadata | None = None):
        self.config = config
        self.metadata = metadata
        """The cluster's leaders and replica selector, added to each request's problem (`optimizer.service.metadata`)."""
        if metadata is not None:
            metadata.set_log(self.log)
        self.stats = Stats()
        self._log = log or _stderr
        self._sequence = 0
        self._sequence_lock = threading.Lock()
        self._slots = _Slots(config.workers, config.max_waiting)
        self._records: queue.Queue[tuple[Request, str, Outcome, dict[str, Any] | None] | None] = queue.Queue(maxsize=RECORD_QUEUE)
        self._recorder: threading.Thread | None = None
        self._thread: threading.Thread | None = None
        self._server = _Server((config.host, config.port), _Handler, self)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = self.config.host if ":" not in self.config.host else f"[{self.config.host}]"
        return f"http://{host}:{self.port}"

    def _begin(self) -> None:
        warm_up()
        if self.metadata is not None:
            self.metadata.start()
        if self.config.record_dir is not None:
            self._recorder = threading.Thread(target=self._record_all, name="kao-recorder", daemon=True)
            self._recorder.start()

    def start(self) -> AssignmentService:
        self._begin()
        self._thread = threading.Thread(target=self._server.serve_forever, name="kao-service", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._begin()
        self._server.serve_forever()

    def stop(self) -> None:
        """Stop serving; what is waiting to be recorded is written first."""
        if self.metadata is not None:
            self.metadata.stop()
        self._server.shutdown()
        self._server.server_close()
        self._server.close_all()
        if self._thread is not None:
            self._thread.join(10)
        if self._recorder is not None:
            self._records.put(None)
            self._recorder.join(60)

    def __enter__(self) -> AssignmentService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def next_id(self) -> str:
        with self._sequence_lock:
            self._sequence += 1
            return f"r-{self._sequence:06d}"

    def log(self, line: str) -> None:
        self._log(f"{datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')[:-4]}Z {line}")

    def with_cluster(self, request: Request) -> tuple[Request, int]:
        """`request` with the cluster's leaders and replica selector in its problem, when the
        service reads a cluster (`metadata`), and how many topics got them."""
        view = None if self.metadata is None else self.metadata.current()
        if view is None or self.metadata is None:
            return request, 0
        if request.kind == "streams_group":  # the plug point names neither the group nor its topics
            group = streams_group_of(request.problem, view)
            if group is None:  # a group the view has not seen yet (new, or all its members new): read again soon
                self.metadata.refresh_soon()
                return request, 0
            request = dataclasses.replace(request, group=request.group or group.group)
            problem, added = enrich(request.problem, view, group)
        else:
            problem, added = enrich(request.problem, view)
        return (dataclasses.replace(request, problem=problem), added) if added else (request, 0)

    def assign(self, request: Request, request_id: str, read_at: float) -> tuple[Outcome, dict[str, Any] | None]:
        """Solve `request` before its deadline (counted from `read_at`); the answer body, or None
        with the outcome saying why there is none."""
        deadline_ms = min(request.deadline_ms or self.config.default_deadline_ms, MAX_DEADLINE_MS)
        deadline = read_at + deadline_ms / 1000
        token, busy = self._slots.take(deadline, margin_seconds(request.problem) + MIN_SOLVE_SECONDS)
        if token is None:
            return Outcome(None, None, busy), None
        try:
            outcome = solve_within(request.problem, deadline, self.config.goals.get(request.problem.kind))
        finally:
            self._slots.give_back(token)
        if outcome.solution is None:
            return outcome, None
        return outcome, {
            "version": 1,
            "request_id": request_id,
            "kind": request.kind,
            "group": request.group,
            "source": outcome.source,
            "reason": outcome.reason,
            "seconds": round(time.monotonic() - read_at, 6),
            "assignment": answer_assignment(request, outcome.solution),
        }

    def record(self, request: Request, request_id: str, outcome: Outcome, answer: dict[str, Any] | None) -> None:
        """Queue the request to be recorded under `record_dir` (a thread of its own writes it: the
        connection's next request does not wait for it)."""
        if self._recorder is None:
            return
        try:
            self._records.put_nowait((request, request_id, outcome, answer))
        except queue.Full:
            self.log(f"{request_id} not recorded: {RECORD_QUEUE} requests already wait to be written to {self.config.record_dir}")

    def _record_all(self) -> None:
        while (item := self._records.get()) is not None:
            try:
                self._write_record(*item)
            except Exception as error:  # noqa: BLE001 - recording is a help, never a reason to stop serving
                self.log(f"{item[1]} could not be recorded: {type(error).__name__}: {error}")

    def _write_record(self, request: Request, request_id: str, outcome: Outcome, answer: dict[str, Any] | None) -> None:
        """The request as a problem file, and what was answered, under `record_dir`."""
        folder = self.config.record_dir
        assert folder is not None
        stem = f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}-{request_id}-{_safe(request.group or request.kind)}"
        written = {
            folder / "problems" / f"{stem}.json": request_to_problem_data(request),
            folder / "answers" / f"{stem}.json": {
                "request_id": request_id,
                "source": outcome.source,
                "reason": outcome.reason,
                "answer": answer,
                "solution": None if outcome.solution is None else solution_to_data(outcome.solution),
            },
        }
        try:
            for path, data in written.items():
                path.parent.mkdir(parents=True, exist_ok=True)
                partial = path.with_suffix(".json.partial")
                partial.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
                partial.replace(path)
        except OSError as error:  # recording is a help, never a reason to fail a rebalance
            self.log(f"{request_id} could not record the request in {folder}: {error.strerror or error}")


def _size(request: Request) -> str:
    problem = request.problem
    if isinstance(problem, StreamsProblem):
        return f"tasks={len(problem.tasks)} clients={len(problem.clients)}"
    return f"partitions={sum(t.partitions for t in problem.topics)} members={len(problem.members)}"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:80] or "group"


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], service: AssignmentService):
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.service = service
        self.open: set[socket.socket] = set()
        """The connections being served (closed by `close_all`: a stopped service answers nothing more)."""
        self.open_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.open_lock:
            self.open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.open_lock:
            self.open.discard(request)
        super().shutdown_request(request)

    def close_all(self) -> None:
        """End every open connection (keep-alive ones wait for their next request otherwise)."""
        with self.open_lock:
            connections = list(self.open)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a connection that broke (the caller gave up, a reset): one line, never a traceback
        self.service.log(f"connection from {client_address[0]} ended with an error: {sys.exc_info()[1]!r}")


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    enriched = 0
    """Topics of this request given the cluster's leaders."""
    protocol_version = "HTTP/1.1"
    server_version = f"kafka-assign/{__version__}"
    timeout = READ_TIMEOUT_SECONDS

    def log_message(self, format: str, *args: Any) -> None:
        return  # one line per request is written by `_done` instead

    @property
    def service(self) -> AssignmentService:
        return self.server.service

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        try:
            self._authorised()
            if path == "/v1/health":
                self._send(HTTPStatus.OK, {"status": "ok", "version": __version__})
            elif path == "/v1/stats":
                self._send(HTTPStatus.OK, self.service.stats.as_data())
            elif path == "/metrics":
                self._send_text(HTTPStatus.OK, self.service.stats.prometheus(), "text/plain; version=0.0.4")
            elif path == "/v1/assign":
                raise _Refused(HTTPStatus.METHOD_NOT_ALLOWED, "POST a request to /v1/assign")
            else:
                raise _Refused(HTTPStatus.NOT_FOUND, f"no such path {path!r}: POST /v1/assign, GET /v1/health, /v1/stats, /metrics")
        except _Refused as refused:
            self._refuse(refused, "-")

    def do_POST(self) -> None:
        request_id = self.service.next_id()
        started = time.monotonic()
        try:
            self._authorised()
            if self.path.split("?", 1)[0] != "/v1/assign":
                raise _Refused(HTTPStatus.NOT_FOUND, f"no such path {self.path!r}: POST /v1/assign")
            body = self._body()
            read_at = time.monotonic()
            request = self._parse(body)
        except _Refused as refused:
            self._refuse(refused, request_id)
            return
        except Exception as error:  # noqa: BLE001 - a bug reading a request: 500, never a dropped connection
            self.close_connection = True
            self.service.stats.count("failed")
            self.service.log(f"{request_id} 500 internal error reading the request: {type(error).__name__}: {error}")
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"internal error: {type(error).__name__}: {error}", "problems": []})
            return
        try:
            request, self.enriched = self.service.with_cluster(request)
            outcome, answer = self.service.assign(request, request_id, read_at)
        except Exception as error:  # noqa: BLE001 - the service's own error: 500, the plug-in falls back, the service goes on
            self.service.stats.count("failed")
            self._done(request_id, HTTPStatus.INTERNAL_SERVER_ERROR, request, None, f"internal error: {type(error).__name__}: {error}", started)
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"internal error: {type(error).__name__}: {error}", "problems": []})
            return
        seconds = time.monotonic() - started
        if answer is None:
            self.service.stats.count("unanswered", seconds)
            self._done(request_id, HTTPStatus.SERVICE_UNAVAILABLE, request, None, outcome.reason, started)
            self._send(HTTPStatus.SERVICE_UNAVAILABLE, {"error": outcome.reason, "problems": []})
        else:
            self.service.stats.count("exact" if outcome.source == "exact" else "kafka", seconds)
            self._done(request_id, HTTPStatus.OK, request, outcome.source, outcome.reason, started)
            self._send(HTTPStatus.OK, answer)
        self.service.record(request, request_id, outcome, answer)

    def _authorised(self) -> None:
        token = self.service.config.token
        if token is None:
            return
        given = self.headers.get("Authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
            self.close_connection = True  # the body, if any, is not read
            raise _Refused(HTTPStatus.UNAUTHORIZED, "a valid 'Authorization: Bearer <token>' header is required")

    def _body(self) -> bytes:
        length_text = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked" or length_text is None:
            self.close_connection = True
            raise _Refused(HTTPStatus.LENGTH_REQUIRED, "a request states its length (Content-Length)")
        try:
            length = int(length_text)
            if length < 0:
                raise ValueError
        except ValueError:
            self.close_connection = True
            raise _Refused(HTTPStatus.BAD_REQUEST, f"Content-Length {length_text[:40]!r} is not a length") from None
        limit = self.service.config.max_request_bytes
        if length > limit:
            self.close_connection = True
            too_large = f"the request has {length:,} bytes, more than this service takes ({limit:,}; serve --max-request-bytes)"
            raise _Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, too_large)
        body = self._read(length, time.monotonic() + READ_TIMEOUT_SECONDS)
        if len(body) != length:
            self.close_connection = True
            raise _Refused(HTTPStatus.BAD_REQUEST, f"the request's body ended after {len(body):,} of {length:,} bytes")
        return body

    def _read(self, length: int, until: float) -> bytes:
        """`length` bytes of body, all of them by `until` (a sender that trickles is cut off)."""
        chunks: list[bytes] = []
        got = 0
        try:
            while got < length:
                left = until - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{got:,} of {length:,} bytes after {READ_TIMEOUT_SECONDS:g} s")
                self.connection.settimeout(left)
                chunk = self.rfile.read1(min(length - got, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
        except OSError as error:  # TimeoutError included
            raise _Refused(HTTPStatus.REQUEST_TIMEOUT, f"the request's body did not arrive: {error}") from None
        finally:
            self.connection.settimeout(READ_TIMEOUT_SECONDS)
        return b"".join(chunks)

    def handle_expect_100(self) -> bool:
        """`Expect: 100-continue`: the token is checked before the client is told to send its body."""
        try:
            self._authorised()
        except _Refused as refused:
            self._refuse(refused, "-")
            return False
        return super().handle_expect_100()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a bad request line, an unsupported method) as JSON too."""
        self.close_connection = True
        try:
            status = HTTPStatus(code)
        except ValueError:
            status = HTTPStatus.BAD_REQUEST
        self.service.stats.count("refused")
        self._send(status, {"error": message or status.phrase, "problems": [explain] if explain else []})

    def _parse(self, body: bytes) -> Request:
        try:
            data = json.loads(body)
        except UnicodeDecodeError as error:
            raise _Refused(HTTPStatus.BAD_REQUEST, "the request is not UTF-8 JSON", [f"byte {error.start}: {error.reason}"]) from None
        except json.JSONDecodeError as error:
            raise _Refused(HTTPStatus.BAD_REQUEST, "the request is not JSON", [f"line {error.lineno} column {error.colno}: {error.msg}"]) from None
        except (RecursionError, ValueError) as error:  # nesting too deep, a number too long
            raise _Refused(HTTPStatus.BAD_REQUEST, "the request is JSON this service cannot read", [str(error)[:200]]) from None
        try:
            return parse_request(data)
        except RequestError as error:
            raise _Refused(HTTPStatus.BAD_REQUEST, str(error), error.problems) from None
        except RecursionError:
            raise _Refused(HTTPStatus.BAD_REQUEST, "the request is nested too deeply") from None

    def _refuse(self, refused: _Refused, request_id: str) -> None:
        self.close_connection = True  # a body it did not read must not be taken for the next request
        self.service.stats.count("refused")
        problems = f" ({len(refused.problems)} problems: {refused.problems[0]}{' ...' if len(refused.problems) > 1 else ''})" if refused.problems else ""
        self.service.log(f"{request_id} {refused.status.value} refused from {self.client_address[0]}: {refused.error}{problems}")
        self._send(refused.status, {"error": refused.error, "problems": refused.problems})

    def _done(self, request_id: str, status: HTTPStatus, request: Request, source: str | None, reason: str, started: float) -> None:
        self.service.log(
            f"{request_id} {status.value} {request.kind} group={request.group or '-'} {_size(request)}"
            f"{f' leaders-from-cluster={self.enriched}' if self.enriched else ''} "
            f"source={source or 'none'} {time.monotonic() - started:.3f}s: {reason}"
        )

    def _send(self, status: HTTPStatus, data: dict[str, Any]) -> None:
        self._send_text(status, json.dumps(data, separators=(",", ":")) + "\n", "application/json")

    def _send_text(self, status: HTTPStatus, text: str, content_type: str) -> None:
        body = text.encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # the caller is gone (it gave up at its deadline): nothing to tell it
            self.close_connection = True


def is_loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.")
