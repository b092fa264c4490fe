"""The slow fuzz run a maintainer makes before a release (issue 10); not a test.

Run: ./run python bench/fuzz.py [--limit N] [--solvers kafka,exact] [--time-limit S] [--workers W]
(writes bench/results/fuzz.json; record the figures in docs/validation.md)

Every mutation of `tests/fuzzing.py` at every field path of every base problem (no sampling),
each mutant validated and, when valid, solved by every solver with the time limit, and its
solution checked by the evaluator (which `solve` does). Then `--generated N` random problems of
every shape (racks or none, rackless clients, tags, standbys, stateless only, no tasks; consumer
groups of every strategy) solved by kafka, kip925, exact, milp and cpsat. A mutant fails the run when anything
other than `InvalidInputError` is raised, when an error message has no location though it is
about a field, when a message is longer than `MESSAGE_LIMIT`, or when a solve takes longer than
the time limit plus `GRACE` seconds. The failures are listed in the result file, one per cause
(exception type and the innermost frame of the project's code).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import resource
import signal
import sys
import time
import traceback
from collections import Counter
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from optimizer.errors import InvalidInputError  # noqa: E402
from optimizer.model.problem import problem_from_data  # noqa: E402
from optimizer.solve import solve  # noqa: E402
from tests.fuzzing import base_documents, mutate, mutations_at, paths  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "fuzz.json"
MESSAGE_LIMIT = 2000
GRACE = 2.0


RUNAWAY = 60
"""Seconds after which a mutant is abandoned and reported as a runaway."""
MEMORY = 3 * 2**30
"""Address-space limit per worker process: a runaway allocation is reported, not swapped."""


class _Runaway(BaseException):
    pass


def _init_worker() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    def stop(signum, frame):
        raise _Runaway

    signal.signal(signal.SIGALRM, stop)


def check(job):
    """One mutant: (outcome, detail); outcome is rejected, solved, or a failure kind."""
    base, path, label, how, solvers, time_limit = job
    signal.alarm(RUNAWAY)
    try:
        return _check(base, path, label, how, solvers, time_limit)
    except _Runaway:
        return "runaway", f"{path} {label}: over {RUNAWAY} s"
    except MemoryError:
        return "out of memory", f"{path} {label}: over {MEMORY >> 30} GiB"
    finally:
        signal.alarm(0)


def _check(base, path, label, how, solvers, time_limit):
    document = mutate(base, path, how)
    try:
        problem = problem_from_data(document, "fuzz")
    except InvalidInputError as error:
        longest = max((len(str(i)) for i in error.issues), default=0)
        if longest > MESSAGE_LIMIT:
            return "long message", f"{path} {label}: {longest} characters"
        return "rejected", None
    except Exception as error:  # noqa: BLE001 - the point of the run
        return "crash in validation", _where(error, path, label)
    for solver in solvers:
        started = time.perf_counter()
        try:
            solve(problem, solver=solver, time_limit=time_limit)
        except InvalidInputError:
            continue
        except Exception as error:  # noqa: BLE001
            if type(error).__name__ == "SolverUnavailableError":
                continue  # a usage answer (e.g. kip925 on a consumer group), exit 2
            return f"crash in solve ({solver})", _where(error, path, label)
        seconds = time.perf_counter() - started
        if time_limit is not None and seconds > time_limit + GRACE:
            return f"slow ({solver})", f"{path} {label}: {seconds:.1f} s"
    return "solved", None


def _where(error: BaseException, path, label) -> str:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if str(ROOT) in f.filename]
    frame = frames[-1] if frames else None
    place = f"{Path(frame.filename).relative_to(ROOT)}:{frame.lineno}" if frame else "?"
    return f"{type(error).__name__} at {place}: {str(error)[:200]} [{path} {label}]"


GENERATED_SOLVERS = ("kafka", "kip925", "exact", "milp", "cpsat")


def generated(seed: int, time_limit: float):
    """One random problem of a random shape (racks or none, some clients rackless, tags,
    standbys, stateless only, no tasks; consumer groups of every strategy), solved by every
    solver that applies."""
    import random

    from optimizer.generate import random_consumer_problem, random_streams_problem

    rng = random.Random(seed)
    signal.alarm(RUNAWAY)
    try:
        if rng.random() < 0.7:
            clients = rng.randint(1, 6)
            problem = random_streams_problem(
                seed, tasks=rng.randint(0, 24), clients=clients, racks=rng.choice([0, 1, 2, 3]),
                rackless_clients=rng.choice([0, 0, 1]) if clients > 1 else 0,
                standby_replicas=rng.randint(0, 2), stateful_fraction=rng.choice([0.0, 0.5, 1.0]),
                threads=(1, rng.randint(1, 4)), tags=rng.choice([(), ("zone",), ("zone", "cluster")]),
                strategy=rng.choice(["none", "min_traffic", "balance_subtopology"]),
            )  # fmt: skip
            solvers = GENERATED_SOLVERS
        else:
            problem = random_consumer_problem(
                seed, members=rng.randint(1, 6), topics=rng.randint(1, 4), partitions=(1, 8),
                racks=rng.choice([0, 2, 3]), equal_subscriptions=rng.random() < 0.5,
                strategy=rng.choice(["range", "roundrobin", "sticky", "cooperative-sticky"]),
            )  # fmt: skip
            solvers = ("kafka", "exact", "milp", "cpsat")
        for solver in solvers:
            started = time.perf_counter()
            try:
                solve(problem, solver=solver, time_limit=time_limit)
            except Exception as error:  # noqa: BLE001
                if type(error).__name__ in ("SolverUnavailableError", "NoSolutionError"):
                    continue
                return f"crash in solve ({solver})", _where(error, ("generated", seed), problem.kind)
            if time.perf_counter() - started > time_limit + GRACE + 1:
                return f"slow ({solver})", f"generated seed {seed}: {time.perf_counter() - started:.1f} s"
        return "generated solved", None
    except _Runaway:
        return "runaway", f"generated seed {seed}: over {RUNAWAY} s"
    finally:
        signal.alarm(0)


def _generated_job(job):
    return generated(*job)


def jobs(solvers, time_limit, limit):
    count = 0
    for base in base_documents():
        for path in paths(base):
            node = base
            for key in path:
                node = node[key]
            for label, how in mutations_at(node):
                yield base, path, label, how, solvers, time_limit
                count += 1
                if limit and count >= limit:
                    return


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0, help="stop after N mutants (0: all)")
    parser.add_argument("--solvers", default="kafka,exact")
    parser.add_argument("--time-limit", type=float, default=5.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--generated", type=int, default=1000, help="random problems solved by every solver")
    args = parser.parse_args()
    solvers = args.solvers.split(",")
    started = time.perf_counter()
    outcomes: Counter[str] = Counter()
    failures: dict[str, list[str]] = {}
    with multiprocessing.Pool(args.workers, _init_worker) as pool:
        mutants = pool.imap_unordered(check, jobs(solvers, args.time_limit, args.limit), chunksize=4)
        randoms = pool.imap_unordered(_generated_job, ((seed, args.time_limit) for seed in range(args.generated)), chunksize=4)
        for outcome, detail in (*mutants, *randoms):
            outcomes[outcome] += 1
            if detail is not None:
                key = f"{outcome}: {detail.split(' [')[0].split(': ')[0]}"
                failures.setdefault(key, []).append(detail)
    seconds = time.perf_counter() - started
    result = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {multiprocessing.cpu_count()} cores, Python {platform.python_version()}",
        "solvers": solvers,
        "generated": {"problems": args.generated, "solvers": list(GENERATED_SOLVERS)},
        "time_limit": args.time_limit,
        "mutants": sum(outcomes.values()),
        "outcomes": dict(outcomes),
        "seconds": round(seconds, 1),
        "failures": {key: {"count": len(v), "examples": v[:3]} for key, v in sorted(failures.items())},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("mutants", "outcomes", "seconds")}, indent=2))
    for key, value in result["failures"].items():
        print(f"{value['count']:6d}  {key}\n        {value['examples'][0]}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
