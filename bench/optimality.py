"""The optimality campaign (issues 28 and 49): every claim the exact engine makes, against enumeration.

Run: ./run python bench/optimality.py [PROBLEMS] [--edges N] [--mixes] [--start SEED] [--workers N]
(default 10,000 problems from seed 0 on 2 workers, no edge problems; writes
bench/results/optimality.json; not a test)

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

`--edges N` audits N more problems the same way, `optimizer.generate.edge_problem(seed)` (issue
49): thread mixes with one large client (the narrow balance widths), task weights, capacities and
bytes per second across the sanity bounds' range (coarser units, huge coefficients), cooperative
groups with capacities. Every audit also checks that no stage's bound is above its own value and
that `balance`'s bound is reached by some valid assignment. `--mixes` also lists every thread mix
of 2 to 5 clients of 1 to 5 threads with 1 to 4 tasks (0 to 2 standbys, at most `ENUMERABLE`
valid assignments) and checks that some valid assignment meets `balance` and `balance=kip441`.
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


def audit_seed(drawn: tuple[str, int]) -> dict:
    """One problem's audit (`drawn`: the family, "varied" or "edge", and the seed), on its default
    sequence and on a drawn one, as plain data (for the worker processes)."""
    from optimizer.generate import edge_problem, varied_problem
    from optimizer.testing import audit_problem, drawn_sequence

    family, seed = drawn
    started = time.perf_counter()
    problem = varied_problem(seed) if family == "varied" else edge_problem(seed)
    audit = audit_problem(problem, time_limits=TIME_LIMITS)
    drawn = audit_problem(problem, sequence=drawn_sequence(problem.kind, seed))
    runs = {**audit.runs, **{f"drawn: {run}": counts for run, counts in drawn.runs.items()}}
    findings = [*audit.findings, *((f"drawn: {run}", finding) for run, finding in drawn.findings)]
    return {
        "seed": seed,
        "family": family,
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


MIX_CLIENTS = (2, 3, 4, 5)
MIX_THREADS = (1, 2, 3, 4, 5)
MIX_TASKS = (1, 2, 3, 4)


def mixes() -> list[tuple[tuple[int, ...], int, int, int]]:
    """Every (threads, tasks, stateful tasks, standbys) of `--mixes` small enough to enumerate."""
    import itertools
    import math

    from optimizer.generate import ENUMERABLE

    found = []
    for clients in MIX_CLIENTS:
        for threads in itertools.combinations_with_replacement(MIX_THREADS, clients):
            for tasks in MIX_TASKS:
                for stateful in range(tasks + 1):
                    for standbys in range(min(2, clients - 1) + 1):
                        if (clients * math.comb(clients - 1, standbys)) ** stateful * clients ** (tasks - stateful) <= ENUMERABLE:
                            found.append((threads, tasks, stateful, standbys))
    return found


def balance_reached(mix: tuple[tuple[int, ...], int, int, int]) -> list[str]:
    """The `balance` goals ("balance", "balance=kip441") that no valid assignment of the mix meets."""
    from optimizer.catalogue import resolve_goals
    from optimizer.generate import thread_mix
    from optimizer.model.normalize import normalize
    from optimizer.model.problem import problem_from_data
    from optimizer.testing import streams_assignments

    threads, tasks, stateful, standbys = mix
    document = thread_mix(list(threads), tasks, stateful, standbys)
    problem = normalize(problem_from_data(document)).problem
    missed = []
    for name in ("balance", "balance=kip441"):
        goal = resolve_goals([name], problem)[0]
        if not any(goal.evaluate(problem, assignment) == 0 for assignment in streams_assignments(problem)):
            missed.append(name)
    return missed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="?", type=int, default=10_000)
    parser.add_argument("--edges", type=int, default=0, help="edge problems (optimizer.generate.edge_problem) audited too")
    parser.add_argument("--mixes", action="store_true", help="check balance on every small thread mix too")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()

    started = time.perf_counter()
    seeds = [("varied", seed) for seed in range(args.start, args.start + args.problems)]
    seeds += [("edge", seed) for seed in range(args.start, args.start + args.edges)]
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
                findings.append({"seed": result["seed"], "family": result["family"], "shape": result["shape"], **finding})
            if done % 500 == 0:
                print(f"{done:,} of {len(seeds):,} problems, {len(findings)} findings, {time.perf_counter() - started:.0f} s", flush=True)
        unmet = []
        listed = mixes() if args.mixes else []
        for mix, missed in zip(listed, pool.imap(balance_reached, listed, chunksize=16), strict=True):
            unmet += [{"threads": list(mix[0]), "tasks": mix[1], "stateful": mix[2], "standbys": mix[3], "goal": name} for name in missed]
    seconds = time.perf_counter() - started
    findings.sort(key=lambda f: (f["family"], f["seed"], f["run"]))
    stages = sum(c["stages"] for c in by_run.values())
    report = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {multiprocessing.cpu_count()} cores, Python {platform.python_version()}",
        "problems": args.problems,
        "seeds": [args.start, args.start + args.problems - 1],
        "edge_problems": args.edges,
        "thread_mixes": {"checked": len(listed), "balance_unmet": unmet} if args.mixes else None,
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
    claimed = report["optimal_claims"]
    problems = f"{args.problems:,} problems and {args.edges:,} edge problems"
    print(f"{problems}, {stages:,} stages ({claimed:,} claimed optimal), {len(findings)} findings, {seconds:.0f} s")
    if args.mixes:
        print(f"  thread mixes: {len(listed):,}, balance unmet on {len(unmet)}")
    width = max((len(run) for run in by_run), default=0)
    for run, counts in sorted(by_run.items()):
        flaws = {k: v for k, v in counts.items() if k not in ("stages", "optimal")}
        print(f"  {run:<{width}}  {counts['stages']:>7,} stages  {counts['optimal']:>7,} optimal  {flaws or 'no findings'}")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
