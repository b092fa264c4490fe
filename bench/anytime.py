"""The deadline as the law (issue 49): `kafka-assign solve FILE --time-limit T` as a user runs it,
on the issue's problems, from 1,000 tasks x 50 clients to 10,000 x 200 (rates, weights, two
standbys, two tag dimensions) and a consumer group of 50,000 partitions x 100 members with rates:
the wall time from the process's start to its end (imports and reading included), the peak
memory (RSS), the exit code, and what came back (each goal's status, the fallback, the notes
that say what was cut).

Run: ./run python bench/anytime.py [--limits 1,3,10,60] [--sizes ...] [--address-space BYTES]
(writes bench/results/anytime.json; not a test). `--address-space` runs each command under
`prlimit --as` (the issue's 4 GB cap: 4294967296).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.sources.problem_file import save_problem

RESULTS = Path(__file__).parent / "results" / "anytime.json"
STREAMS = {"s1000x50": (1000, 50), "s2000x50": (2000, 50), "s5000x100": (5000, 100), "s10000x200": (10000, 200)}
CONSUMERS = {"c50000x100": (50, 1000, 100)}
"""name: (topics, partitions per topic, members)."""


def problem_file(name: str, folder: Path) -> Path:
    path = folder / f"{name}.json"
    if name in STREAMS:
        tasks, clients = STREAMS[name]
        problem = random_streams_problem(3, tasks=tasks, clients=clients, standby_replicas=2, tags=("zone", "cluster"), rates=True, weights=True, name=name)
    else:
        topics, partitions, members = CONSUMERS[name]
        problem = random_consumer_problem(3, members=members, topics=topics, partitions=(partitions, partitions), rates=True, name=name)
    save_problem(problem, path)
    return path


MEASURE = """
import json, resource, subprocess, sys, time
started = time.monotonic()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).returncode
seconds = time.monotonic() - started
print(json.dumps({"seconds": seconds, "exit": code, "peak_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""
"""Runs a command in a process of its own, so that its peak RSS (and its children's, the engine's
forked processes) is its own: the wall time, the exit code and the peak, as JSON."""


def run(path: Path, limit: float, address_space: int | None) -> dict:
    """One `solve` command: its wall time, peak RSS, exit code and answer."""
    out = path.with_suffix(f".{limit:g}.solution.json")
    command = [str(Path(sys.executable).parent / "kafka-assign"), "solve", str(path), "--time-limit", f"{limit:g}", "-o", str(out)]
    if address_space is not None:
        command = ["prlimit", f"--as={address_space}", *command]
    measured = subprocess.run([sys.executable, "-c", MEASURE, *command], capture_output=True, text=True, check=True)
    figures = json.loads(measured.stdout.strip().splitlines()[-1])
    seconds = figures["seconds"]
    row: dict = {"seconds": round(seconds, 2), "late_by": round(max(0.0, seconds - limit), 2), "exit": figures["exit"]}
    row["peak_rss_mb"] = round(figures["peak_kb"] / 1024)
    if out.exists():
        solution = json.loads(out.read_text())
        options = solution["solver"]["options"]
        row["statuses"] = {g["name"]: g["status"] for g in solution["goals"]}
        row["values"] = {g["name"]: g["value"] for g in solution["goals"]}
        row["fallback"] = options.get("fallback")
        row["cut"] = [n for n in options["notes"] if any(w in n for w in ("stopped", "first point", "not found within", "in time"))]
        out.unlink()
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limits", default="1,3,10,60")
    parser.add_argument("--sizes", default=",".join([*STREAMS, *CONSUMERS]))
    parser.add_argument("--address-space", type=int)
    args = parser.parse_args()
    limits = [float(x) for x in args.limits.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.sizes.split(","):
            path = problem_file(name, Path(folder))
            for limit in limits:
                row = {"problem": name, "time_limit": limit, **run(path, limit, args.address_space)}
                print(json.dumps(row), flush=True)
                rows.append(row)
    RESULTS.write_text(
        json.dumps(
            {
                "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
                "date": time.strftime("%Y-%m-%d"),
                "address_space": args.address_space,
                "load_average_at_end": os.getloadavg(),
                "rows": rows,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
