"""The assignment service under concurrent requests, measured at the client (issues 49 and 51):
`kafka-assign serve` on its defaults (2 workers, 16 waiting), started as docs/apply.md says but
without a token (loopback only), and N requests sent at once, each a problem with a deadline.
Per request: the wall time from sending it to reading the answer, the status, and the answer's
source (exact, Kafka's reproduction) or the 503's reason. Kafka isn't needed: the requests are
`kind: problem`.

Run: ./run python bench/service_load.py   (writes bench/results/service_load.json; not a test)

The cases are issue 51's: a Streams application of 1,000 tasks over 50 clients with one standby,
2 s deadline, 1, 10 and 50 at once; and one 10,000 x 200 application (two standbys, two tags,
rates, weights) and one 50,000 x 100 consumer group, alone, with a 5 s deadline.
"""

from __future__ import annotations

import concurrent.futures
import http.client
import json
import os
import platform
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model.problem import problem_to_data

RESULTS = Path(__file__).parent / "results" / "service_load.json"


def _post(port: int, body: bytes, timeout: float = 120) -> tuple[float, int, dict[str, Any]]:
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", "/v1/assign", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
        return time.monotonic() - started, response.status, answer
    finally:
        connection.close()


def _row(seconds: float, status: int, answer: dict[str, Any]) -> dict[str, Any]:
    return {"seconds": round(seconds, 3), "status": status, "source": answer.get("source"), "reason": (answer.get("reason") or answer.get("error") or "")[:160]}


def _burst(port: int, problem: dict[str, Any], deadline_ms: int, count: int) -> dict[str, Any]:
    body = json.dumps({"version": 1, "kind": "problem", "problem": problem, "deadline_ms": deadline_ms}).encode()
    with concurrent.futures.ThreadPoolExecutor(max_workers=count) as pool:
        rows = [_row(*f.result()) for f in [pool.submit(_post, port, body) for _ in range(count)]]
    times = sorted(r["seconds"] for r in rows)
    by_source: dict[str, int] = {}
    for r in rows:
        key = f"{r['status']} {r['source'] or r['reason'].split(':')[0]}"
        by_source[key] = by_source.get(key, 0) + 1
    return {
        "concurrent": count,
        "deadline_ms": deadline_ms,
        "median_seconds": times[len(times) // 2],
        "max_seconds": times[-1],
        "past_deadline_plus_100ms": sum(t > deadline_ms / 1000 + 0.1 for t in times),
        "answers": dict(sorted(by_source.items())),
        "first_rows": rows[:3],
    }


def main() -> None:
    command = [str(Path(sys.executable).parent / "kafka-assign"), "serve", "--port", "0"]
    service = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        assert service.stderr is not None
        for line in service.stderr:
            found = re.search(r"127\.0\.0\.1:(\d+)", line)
            if found:
                port = int(found.group(1))
                break
        assert port is not None, "the service printed no port"
        threading.Thread(target=lambda: [None for _ in service.stderr], daemon=True).start()  # its log lines, drained
        streams = problem_to_data(random_streams_problem(1, tasks=1000, clients=50, standby_replicas=1))
        big = problem_to_data(
            random_streams_problem(3, tasks=10000, clients=200, standby_replicas=2, tags=("zone", "cluster"), rates=True, weights=True)
        )
        group = problem_to_data(random_consumer_problem(3, members=100, topics=50, partitions=(1000, 1000), rates=True))
        _burst(port, streams, 2000, 1)  # the workers' first request loads what they import lazily
        runs = [{"problem": "streams 1,000 x 50", **_burst(port, streams, 2000, n)} for n in (1, 10, 50)]
        runs.append({"problem": "streams 10,000 x 200", **_burst(port, big, 5000, 1)})
        runs.append({"problem": "consumer 50,000 x 100", **_burst(port, group, 5000, 1)})
        for run in runs:
            print(json.dumps({k: v for k, v in run.items() if k != "first_rows"}), flush=True)
    finally:
        service.terminate()
        service.wait(30)
    RESULTS.write_text(
        json.dumps(
            {
                "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
                "date": time.strftime("%Y-%m-%d %H:%M"),
                "load_average_at_end": os.getloadavg(),
                "runs": runs,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
