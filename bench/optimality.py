"""The optimality campaign (issue 28): every claim the exact engine makes, against enumeration.

Run: ./run python bench/optimality.py [PROBLEMS] [--start SEED] [--workers N]
(default 10,000 problems from seed 0 on 2 workers; writes bench/results/optimality.json; not a test)

Each problem is `optimizer.generate.varied_problem(seed)`: small enough to list every valid
assignment (at most 3,000), of every shape the engine takes (Streams with racks, tags, standbys,
lags, thread counts, weights and bytes, under every assignor and KIP-1071; consumer groups under
every classic strategy and KIP-848, with owned partitions, contested claims, generations, bytes
and capacities). `optimizer.testing.audit_problem` then checks, stage by stage, the default goal
sequence on every back-end and model (full, compressed, pattern), the sequence of the assignment
applied now towards its target, `solve` with each solver, and `solve` cut short at 5 and 20 ms;
then all of that (but the time limits) again for a second sequence drawn from every goal of the
problem's kind (1 to 4 goals in any order, sometimes a movement budget; runs named "drawn: ...").
Each stage's value is compared with the least value enumeration finds given the stages before
it: `optimal` only at that value, a bound never above it, `infeasible` only where nothing meets
the rows, the goal's own value on the assignment returned. The counts go to the results file by
run and by shape, with every finding. The time-limited runs depend on the machine's load (which
stages a run reaches): their counts vary from run to run, their findings must not.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import time
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "optimality.json"


TIME_LIMITS = (0.005, 0.02)
"""`solve` cut short at these many seconds as well (default sequence): stages end `time_limit`, or
with Kafka's fallback, and what they say is checked the same way."""


def audit_seed(seed: int) -> dict:
    """One problem's audit, on its default sequence and on a drawn one, as plain data (for the
    worker processes)."""
    from optimizer.generate import varied_problem
    from optimizer.testing import audit_problem, drawn_sequence

    started = time.perf_counter()
    problem = varied_problem(seed)
    audit = audit_problem(problem, time_limits=TIME_LIMITS)
    drawn = audit_problem(problem, sequence=drawn_sequence(problem.kind, seed))
    runs = {**audit.runs, **{f"drawn: {run}": counts for run, counts in drawn.runs.items()}}
    findings = [*audit.findings, *((f"drawn: {run}", finding) for run, finding in drawn.findings)]
    return {
        "seed": seed,
        "shape": audit.shape,
        "assignments": audit.assignments,
        "runs": runs,
        "findings": [
            {"run": run, "goal": f.goal, "flaw": str(f.flaw), "claimed": f.claimed, "enumerated": f.enumerated, "detail": f.detail}
            for run, f in findings
        ],
        "seconds": time.perf_counter() - started,
    }


def family(shape: str) -> str:
    """A shape without its details: kind, assignor, weighted or not."""
    parts = shape.split("/")
    return "/".join([parts[0], parts[1], *(["weighted"] if parts[-1] == "weighted" else [])])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="?", type=int, default=10_000)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()

    started = time.perf_counter()
    seeds = range(args.start, args.start + args.problems)
    by_run: dict[str, Counter] = defaultdict(Counter)
    by_family: dict[str, Counter] = defaultdict(Counter)
    shapes: Counter = Counter()
    findings = []
    done = 0
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        for result in pool.imap_unordered(audit_seed, seeds, chunksize=8):
            done += 1
            shapes[result["shape"]] += 1
            group = by_family[family(result["shape"])]
            group["problems"] += 1
            group["assignments"] += result["assignments"]
            for run, (stages, optimal) in result["runs"].items():
                by_run[run]["stages"] += stages
                by_run[run]["optimal"] += optimal
                group["stages"] += stages
                group["optimal"] += optimal
            for finding in result["findings"]:
                by_run[finding["run"]][finding["flaw"]] += 1
                group[finding["flaw"]] += 1
                findings.append({"seed": result["seed"], "shape": result["shape"], **finding})
            if done % 500 == 0:
                print(f"{done:,} of {args.problems:,} problems, {len(findings)} findings, {time.perf_counter() - started:.0f} s", flush=True)
    seconds = time.perf_counter() - started
    findings.sort(key=lambda f: (f["seed"], f["run"]))
    stages = sum(c["stages"] for c in by_run.values())
    report = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {multiprocessing.cpu_count()} cores, Python {platform.python_version()}",
        "problems": args.problems,
        "seeds": [args.start, args.start + args.problems - 1],
        "stages": stages,
        "optimal_claims": sum(c["optimal"] for c in by_run.values()),
        "findings": len(findings),
        "seconds": round(seconds, 1),
        "by_run": {run: dict(sorted(c.items())) for run, c in sorted(by_run.items())},
        "by_family": {name: dict(sorted(c.items())) for name, c in sorted(by_family.items())},
        "shapes": dict(sorted(shapes.items())),
        "every_finding": findings,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=1) + "\n")
    print(f"{args.problems:,} problems, {stages:,} stages ({report['optimal_claims']:,} claimed optimal), {len(findings)} findings, {seconds:.0f} s")
    width = max(len(run) for run in by_run)
    for run, counts in sorted(by_run.items()):
        flaws = {k: v for k, v in counts.items() if k not in ("stages", "optimal")}
        print(f"  {run:<{width}}  {counts['stages']:>7,} stages  {counts['optimal']:>7,} optimal  {flaws or 'no findings'}")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
