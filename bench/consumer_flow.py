"""Consumer groups on the min-cost flow, goal by goal (issue 49): time, peak memory and status of
`kafka-assign solve` under a 4 GB address-space cap, from 5,000 partitions x 20 members to
100,000 x 200 (the sanity bound on partitions).

Two shapes per size:

* "topic rates": the issue's group, `random_consumer_problem(3, members=M, topics=P/1000,
  partitions=(1000, 1000), rates=True)` (one rate per topic, a hot partition in some, replicas on
  two of three racks, members in all three, 80 % of the members holding partitions before). Its
  default goals: balance, cross_rack_bytes, stickiness.
* "partition rates": the same group with a rate of its own for every partition (1 kB/s to
  50 MB/s), replicas on one or two of the three racks and members in two of them (reads of
  partitions only in the third cross racks), unequal subscriptions and the cooperative-sticky
  assignor (balance_now last): no two partitions are interchangeable, the network's largest case.

Each size runs twice: the whole command (`/usr/bin/time -f %M` around `prlimit --as=4294967296
kafka-assign solve FILE --time-limit 60 -o OUT`, a fresh process: reading, normalising, Kafka's
assignor beside it, the engine, the plan, the checks, the output), and the flow alone in a
fresh process (reading and normalising, then `run_sequence(problem, goals, "flow")`: its seconds
and the peak RSS before and after it).

Run: ./run python bench/consumer_flow.py [sizes...]   (writes bench/results/consumer_flow.json;
not a test; sizes as PxM, default all four)
"""

from __future__ import annotations

import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

from optimizer.generate import random_consumer_problem
from optimizer.model.problem import problem_from_data
from optimizer.sources.problem_file import save_problem

RESULTS = Path(__file__).parent / "results" / "consumer_flow.json"
VENV = Path(sys.executable).parent
SIZES = ((5_000, 20), (20_000, 50), (50_000, 100), (100_000, 200))
ADDRESS_SPACE = 4 * 2**30
TIME_LIMIT = 60

FLOW_ALONE = """
import json, resource, sys, time
from optimizer.catalogue import resolve_goals
from optimizer.engine.sequence import run_sequence
from optimizer.model.normalize import normalize
from optimizer.sources.problem_file import load_problem
raw = load_problem(sys.argv[1])
problem = normalize(raw).problem
goals = resolve_goals(None, raw)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
result = run_sequence(problem, goals, "flow", time_limit=60)
seconds = time.perf_counter() - started
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "rss_before_mb": before / 1024, "rss_after_mb": after / 1024,
                  "stages": [[s.goal.name, str(s.status), s.objective] for s in result.stages], "notes": result.notes}))
"""


def group_file(folder: Path, partitions: int, members: int, shape: str) -> Path:
    """The group of `shape` at this size, written as a problem file."""
    raw = random_consumer_problem(
        3, members=members, topics=partitions // 1000, partitions=(1000, 1000), rates=True,
        equal_subscriptions=shape == "topic rates", strategy="sticky" if shape == "topic rates" else "cooperative-sticky",
        name=f"c{partitions}x{members}",
    )  # fmt: skip
    if shape == "partition rates":
        data = raw.model_dump(mode="json", exclude_none=True)
        rng = random.Random(f"{partitions}x{members}")
        racks = sorted({m["rack"] for m in data["members"]})
        for topic in data["topics"]:
            topic.pop("bytes_per_second", None)
            topic["partition_bytes_per_second"] = [rng.randint(1_000, 50_000_000) for _ in range(topic["partitions"])]
            topic["replica_racks"] = [sorted(rng.sample(racks, rng.choice([1, 2]))) for _ in range(topic["partitions"])]
        for i, member in enumerate(data["members"]):
            member["rack"] = racks[i % 2]
        raw = problem_from_data(data)
    path = folder / f"c{partitions}x{members}-{shape.replace(' ', '-')}.json"
    save_problem(raw, path)
    return path


def command(path: Path, folder: Path) -> dict[str, object]:
    """The whole command under the address-space cap: seconds, peak RSS, exit code, the goals."""
    out, timing = folder / "out.json", folder / "time.txt"
    out.unlink(missing_ok=True)
    run = [
        "/usr/bin/time", "-f", "%e %M", "-o", str(timing), "prlimit", f"--as={ADDRESS_SPACE}",
        str(VENV / "kafka-assign"), "solve", str(path), "--time-limit", str(TIME_LIMIT), "-o", str(out),
    ]  # fmt: skip
    load = os.getloadavg()[0]
    finished = subprocess.run(run, capture_output=True, text=True, check=False)
    seconds, rss_kb = timing.read_text().split()[-2:]
    row: dict[str, object] = {
        "seconds": float(seconds), "peak_rss_mb": round(int(rss_kb) / 1024), "exit_code": finished.returncode, "load_before": round(load, 2),
    }  # fmt: skip
    if out.exists():
        solution = json.loads(out.read_text())
        row["goals"] = {g["name"]: [g["status"], g["value"]] for g in solution["goals"]}
        row["notes"] = [n for n in solution["solver"]["options"]["notes"] if "classes" in n or n.startswith("back-end")]
    else:
        row["error"] = finished.stderr.strip().splitlines()[-1:] if finished.stderr else []
    return row


def flow_alone(path: Path) -> dict[str, object]:
    """The flow back-end alone in a fresh process: its seconds, the peak RSS before and after it."""
    finished = subprocess.run([sys.executable, "-c", FLOW_ALONE, str(path)], capture_output=True, text=True, check=True)
    found = json.loads(finished.stdout.strip().splitlines()[-1])
    return {
        "seconds": round(found["seconds"], 3), "rss_before_mb": round(found["rss_before_mb"]), "rss_after_mb": round(found["rss_after_mb"]),
        "stages": found["stages"], "network": found["notes"][1] if len(found["notes"]) > 1 else "",
    }  # fmt: skip


def main(sizes: list[tuple[int, int]]) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for partitions, members in sizes:
            for shape in ("topic rates", "partition rates"):
                path = group_file(folder, partitions, members, shape)
                started = time.perf_counter()
                row = {"group": f"{partitions:,} x {members}", "shape": shape, "command": command(path, folder), "flow": flow_alone(path)}
                print(json.dumps(row), f"({time.perf_counter() - started:.0f} s)", flush=True)
                rows.append(row)
    RESULTS.parent.mkdir(exist_ok=True)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}"
    summary = {"date": str(date.today()), "machine": machine, "address_space": ADDRESS_SPACE, "time_limit": TIME_LIMIT, "rows": rows}
    RESULTS.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"written {RESULTS}")


if __name__ == "__main__":
    chosen = [tuple(int(n) for n in size.split("x")) for size in sys.argv[1:]]
    main([(p, m) for p, m in chosen] if chosen else list(SIZES))
