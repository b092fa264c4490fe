"""The assignment service over HTTP (`optimizer.service.server`), without Kafka: answers within
the deadline, falls back to Kafka's reproduction, refuses what it cannot take with a clear error,
survives malformed and concurrent requests, records what it answered. The plug-ins against it,
on the sandbox cluster: tests/kafka/test_plugins_live.py."""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from optimizer.evaluate import evaluate
from optimizer.generate import random_streams_problem
from optimizer.model.problem import problem_to_data, solution_from_data
from optimizer.service.server import AssignmentService, ServiceConfig
from optimizer.sources.problem_file import load_problem

TOKEN = "s3cret-token-value"


class Lines:
    """The service's log lines, kept for the assertions."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self.lock:
            self.lines.append(line)


def _post(service: AssignmentService, body: bytes | dict[str, Any], headers: dict[str, str] | None = None, timeout: float = 60) -> tuple[int, dict[str, Any]]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    connection = http.client.HTTPConnection("127.0.0.1", service.port, timeout=timeout)
    try:
        connection.request("POST", "/v1/assign", body=data, headers={"Content-Type": "application/json", **(headers or {})})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def _reply(port: int, head: bytes) -> str:
    """What the service sends back to a raw request `head`, until it closes the connection."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        connection.sendall(head)
        chunks = []
        while chunk := connection.recv(4096):
            chunks.append(chunk)
    finally:
        connection.close()
    return b"".join(chunks).decode()


def _get(service: AssignmentService, path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", service.port, timeout=30)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def _request(problem_data: dict[str, Any], group: str | None = None, deadline_ms: int | None = 20_000) -> dict[str, Any]:
    request: dict[str, Any] = {"version": 1, "kind": "problem", "group": group, "problem": problem_data}
    if deadline_ms is not None:
        request["deadline_ms"] = deadline_ms
    return request


BUSY = 2.0
"""Seconds past a deadline these tests allow for a loaded machine (a CI run once answered a
100 ms request's 503 after 0.61 s): less than what the alternatives take (solving the large
problem, waiting for the slow request), so an answer that waits for them still fails.
Within the deadline + 100 ms is issue 51's benchmark, not an assertion here."""

SMALL = problem_to_data(random_streams_problem(3, tasks=24, clients=4, racks=3, replication=2, standby_replicas=1, stateful_fraction=1.0, name="small"))
LARGE = problem_to_data(random_streams_problem(4, tasks=2000, clients=50, racks=3, replication=2, standby_replicas=1, stateful_fraction=1.0, name="large"))


@pytest.fixture(scope="module")
def service() -> Iterator[tuple[AssignmentService, Lines]]:
    lines = Lines()
    with AssignmentService(ServiceConfig(port=0, workers=2, max_request_bytes=4 * 1024 * 1024), log=lines) as running:
        yield running, lines


def test_answers_a_problem_with_the_exact_assignment_checked_by_the_evaluator(service: tuple[AssignmentService, Lines]) -> None:
    running, lines = service
    status, answer = _post(running, _request(SMALL, group="orders"))
    assert status == 200, answer
    assert answer["source"] == "exact" and answer["group"] == "orders" and answer["kind"] == "problem"
    solution = solution_from_data(answer["assignment"]["solution"])
    problem = load_problem_data(SMALL)
    assert evaluate(problem, solution).valid
    assert any(answer["request_id"] in line and "source=exact" in line and "group=orders" in line for line in lines.lines)


def load_problem_data(data: dict[str, Any]):  # type: ignore[no-untyped-def]
    from optimizer.model.problem import problem_from_data

    return problem_from_data(data)


def test_a_problem_too_large_to_prove_in_its_deadline_gets_the_best_found_in_time(service: tuple[AssignmentService, Lines]) -> None:
    """2,000 tasks over 50 clients in 4 s: the exact engine answers by the deadline with what it
    has (its first point, or the stages it finished, each goal saying whether it is proven), never
    worse than Kafka's reproduction on the figures compared, which is the answer where it is
    better or where the engine's child did not answer in time."""
    running, _ = service
    started = time.monotonic()
    status, answer = _post(running, _request(LARGE, group="big", deadline_ms=4_000))
    took = time.monotonic() - started
    assert status == 200, answer
    assert took < 4.0 + BUSY
    solution = solution_from_data(answer["assignment"]["solution"])
    assert evaluate(load_problem_data(LARGE), solution).valid
    if answer["source"] == "exact":
        assert solution.goals and all(str(g.status) in ("optimal", "time_limit", "feasible") for g in solution.goals)
    else:
        assert answer["source"] == "kafka" and "deadline" in answer["reason"]


def test_no_answer_at_all_within_a_tiny_deadline_is_a_503_in_time(service: tuple[AssignmentService, Lines]) -> None:
    running, _ = service
    started = time.monotonic()
    status, answer = _post(running, _request(LARGE, group="tiny", deadline_ms=100))
    assert status == 503 and "deadline" in answer["error"]
    assert time.monotonic() - started < 0.1 + BUSY


def test_several_groups_at_once_each_get_their_own_answer(service: tuple[AssignmentService, Lines]) -> None:
    running, _ = service
    problems = {
        f"app-{i}": problem_to_data(random_streams_problem(10 + i, tasks=12 + i, clients=3, racks=3, replication=2, standby_replicas=1, name=f"app-{i}"))
        for i in range(8)
    }
    results: dict[str, tuple[int, dict[str, Any]]] = {}

    def one(group: str) -> None:
        results[group] = _post(running, _request(problems[group], group=group))

    threads = [threading.Thread(target=one, args=(group,)) for group in problems]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert sorted(results) == sorted(problems)
    for group, (status, answer) in results.items():
        assert status == 200, answer
        assert answer["group"] == group
        solution = solution_from_data(answer["assignment"]["solution"])
        assert solution.problem == group
        assert evaluate(load_problem_data(problems[group]), solution).valid


def _mutations(rng: random.Random, valid: dict[str, Any]) -> Iterator[bytes]:
    """Malformed requests: broken bytes and JSON, wrong shapes, and random damage to a valid one."""
    text = json.dumps(valid)
    yield b""
    yield b"\xff\xfe\x00garbage"
    yield b"{" * 100_000
    yield b"[" * 50 + b"]" * 50
    yield b'{"version": 1, "kind": "problem", "problem": ' + b"9" * 5000 + b"}"
    yield text[: len(text) // 2].encode()
    yield b"null"
    yield b"[]"
    yield b'"a string"'
    yield json.dumps({**valid, "version": 2}).encode()
    yield json.dumps({**valid, "kind": "nonsense"}).encode()
    yield json.dumps({**valid, "deadline_ms": -5}).encode()
    yield json.dumps({**valid, "deadline_ms": "soon"}).encode()
    yield json.dumps({k: v for k, v in valid.items() if k != "problem"}).encode()
    yield json.dumps({**valid, "kafka": {"clients": []}}).encode()
    for kind in ("streams_task_assignor", "consumer_group", "streams_group", "classic_consumer"):
        yield json.dumps({"version": 1, "kind": kind, "kafka": {}}).encode()
        yield json.dumps({"version": 1, "kind": kind, "kafka": {"members": [{"id": None}], "clients": [{"process_id": 5}], "tasks": 3}}).encode()
    for _ in range(60):
        damaged = json.loads(text)
        target: Any = damaged["problem"]
        for _ in range(rng.randint(1, 3)):
            key = rng.choice(sorted(target)) if isinstance(target, dict) and target else None
            if key is None:
                break
            choice = rng.random()
            if choice < 0.3:
                del target[key]
            elif choice < 0.6:
                target[key] = rng.choice([None, -1, "x", [], {}, 1e308, [None], True])
            elif isinstance(target[key], (dict, list)) and target[key]:
                inner = target[key]
                target = inner if isinstance(inner, dict) else rng.choice(inner)
        yield json.dumps(damaged).encode()


def test_survives_malformed_requests_with_a_clear_error_and_no_traceback(service: tuple[AssignmentService, Lines]) -> None:
    running, lines = service
    rng = random.Random(32)
    answered = 0
    for body in _mutations(rng, _request(SMALL, deadline_ms=10_000)):
        status, answer = _post(running, body)
        assert status in (200, 400), (status, answer, body[:200])
        if status == 400:
            assert answer["error"] and isinstance(answer["problems"], list)
        else:
            answered += 1  # a mutation the problem format accepts (an optional field dropped)
    assert not any("Traceback" in line for line in lines.lines)
    status, answer = _post(running, _request(SMALL))
    assert status == 200 and answer["source"] == "exact"
    assert running.stats.as_data()["requests"]["failed"] == 0


def test_limits_paths_and_methods(service: tuple[AssignmentService, Lines]) -> None:
    running, _ = service
    # a length beyond the limit: refused before the body is sent; no length at all
    reply = _reply(running.port, b"POST /v1/assign HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n")
    assert reply.startswith("HTTP/1.1 413") and "999,999,999 bytes" in reply
    reply = _reply(running.port, b"POST /v1/assign HTTP/1.1\r\nHost: x\r\n\r\n")
    assert reply.startswith("HTTP/1.1 411")
    assert _get(running, "/v1/assign")[0] == 405
    assert _get(running, "/nowhere")[0] == 404
    status, text = _get(running, "/v1/health")
    assert status == 200 and json.loads(text)["status"] == "ok"
    status, text = _get(running, "/v1/stats")
    stats = json.loads(text)
    assert status == 200 and stats["requests"]["refused"] >= 2 and stats["latency_seconds"]["count"] >= 1
    status, text = _get(running, "/metrics")
    assert status == 200 and 'kao_assign_requests_total{outcome="exact"}' in text


def test_a_token_is_required_when_configured_and_never_logged() -> None:
    lines = Lines()
    with AssignmentService(ServiceConfig(port=0, token=TOKEN), log=lines) as running:
        assert _post(running, _request(SMALL))[0] == 401
        assert _post(running, _request(SMALL), {"Authorization": "Bearer wrong"})[0] == 401
        assert _get(running, "/v1/stats")[0] == 401
        status, answer = _post(running, _request(SMALL), {"Authorization": f"Bearer {TOKEN}"})
        assert status == 200 and answer["source"] == "exact"
    assert lines.lines and not any(TOKEN in line for line in lines.lines)


def test_busy_workers_give_a_503_before_the_deadline() -> None:
    with AssignmentService(ServiceConfig(port=0, workers=1)) as running:
        first: list[tuple[int, dict[str, Any]]] = []
        slow = threading.Thread(target=lambda: first.append(_post(running, _request(LARGE, deadline_ms=5_000))))
        slow.start()
        _until_every_worker_is_taken(running)
        started = time.monotonic()
        status, answer = _post(running, _request(SMALL, deadline_ms=800))
        assert status == 503 and answer["error"].startswith("busy")
        assert time.monotonic() - started < 0.8 + BUSY
        slow.join(30)
        assert first and first[0][0] == 200


def _until_every_worker_is_taken(running: AssignmentService) -> None:
    """Until the request sent first holds the worker (reading a large request takes a while on a loaded machine)."""
    deadline = time.monotonic() + 30
    while running._slots._free > 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert running._slots._free == 0


def test_with_no_room_to_wait_a_busy_service_answers_503_at_once() -> None:
    with AssignmentService(ServiceConfig(port=0, workers=1, max_waiting=0)) as running:
        first: list[tuple[int, dict[str, Any]]] = []
        slow = threading.Thread(target=lambda: first.append(_post(running, _request(LARGE, deadline_ms=4_000))))
        slow.start()
        _until_every_worker_is_taken(running)
        status, answer = _post(running, _request(SMALL, deadline_ms=3_000))
        # "N requests already wait" is the refusal given before any waiting (one that waited for a worker says "no worker
        # free within the deadline"): at once, whatever the machine's load (a bound of 0.3 s failed at a load average of 12)
        assert status == 503 and answer["error"] == "busy: 0 requests already wait for a worker", answer
        slow.join(30)


def test_a_short_deadline_on_a_large_problem_is_met_with_the_services_own_work_counted(service: tuple[AssignmentService, Lines]) -> None:
    running, _ = service
    for deadline_ms in (300, 700, 1_500):
        started = time.monotonic()
        status, answer = _post(running, _request(LARGE, deadline_ms=deadline_ms))
        took = time.monotonic() - started
        assert status in (200, 503), answer
        # the request's upload and JSON parse come on top on the client's side; how far past its
        # deadline the client hears back on an idle machine is a benchmark's (issue 51), not a test's
        assert took < deadline_ms / 1000 + BUSY, (deadline_ms, took)


def test_refusals_close_the_connection_and_http_servers_own_errors_are_json(service: tuple[AssignmentService, Lines]) -> None:
    running, _ = service
    body = json.dumps(_request(SMALL)).encode()
    # a POST refused by its path: its body is not read, so the connection closes (the next request
    # on it would otherwise start inside that body)
    reply = _reply(
        running.port,
        b"POST /elsewhere/v1/assign HTTP/1.1\r\nHost: x\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        + b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n",
    )  # fmt: skip
    assert reply.startswith("HTTP/1.1 404") and reply.count("HTTP/1.1") == 1 and "Connection: close" in reply
    reply = _reply(running.port, b"PUT /v1/assign HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
    head, _, text = reply.partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 501") and json.loads(text)["error"]


def test_a_stopped_service_answers_nothing_more_on_a_kept_alive_connection() -> None:
    running = AssignmentService(ServiceConfig(port=0)).start()
    connection = http.client.HTTPConnection("127.0.0.1", running.port, timeout=10)
    try:
        connection.request("GET", "/v1/health")
        assert connection.getresponse().read()
        running.stop()
        with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
            connection.request("POST", "/v1/assign", body=json.dumps(_request(SMALL)), headers={"Content-Type": "application/json"})
            connection.getresponse().read()
    finally:
        connection.close()


def test_a_token_is_checked_before_the_client_is_told_to_send_its_body() -> None:
    with AssignmentService(ServiceConfig(port=0, token=TOKEN)) as running:
        reply = _reply(running.port, b"POST /v1/assign HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 999\r\n\r\n")
        assert reply.startswith("HTTP/1.1 401") and "100 Continue" not in reply
        assert TOKEN not in repr(running.config)


def test_records_every_request_as_a_problem_file_with_its_answer(tmp_path: Path) -> None:
    with AssignmentService(ServiceConfig(port=0, record_dir=tmp_path)) as running:
        status, answer = _post(running, _request(SMALL, group="team/orders"))
        assert status == 200
    problems = sorted((tmp_path / "problems").iterdir())
    answers = sorted((tmp_path / "answers").iterdir())
    assert len(problems) == len(answers) == 1 and "team_orders" in problems[0].name
    assert load_problem(problems[0]) == load_problem_data(SMALL)
    recorded = json.loads(answers[0].read_text())
    assert recorded["source"] == "exact" and recorded["request_id"] == answer["request_id"]
    assert recorded["answer"] == answer


def test_the_command_serves_until_sigterm_and_refuses_an_empty_token_file(tmp_path: Path) -> None:
    empty = tmp_path / "token"
    empty.write_text("\n")
    refused = subprocess.run([sys.executable, "-m", "optimizer", "serve", "--token-file", str(empty)], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "is empty" in refused.stderr and "Traceback" not in refused.stderr
    token = tmp_path / "token-ok"
    token.write_text(TOKEN + "\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "optimizer", "serve", "--port", "0", "--token-file", str(token)],
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        assert first.startswith("serving on http://127.0.0.1:") and "token required" in first and TOKEN not in first
        port = int(first.split("http://127.0.0.1:", 1)[1].split()[0])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.request("POST", "/v1/assign", body=json.dumps(_request(SMALL, group="cli")), headers={"Authorization": f"Bearer {TOKEN}"})
        response = connection.getresponse()
        assert response.status == 200 and json.loads(response.read())["source"] == "exact"
        connection.close()
        process.send_signal(signal.SIGTERM)
        rest = process.stderr.read()
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert "group=cli" in rest and "stopped: exact 1" in rest and TOKEN not in rest and "Traceback" not in rest
