"""The slow fuzz run a maintainer makes before a release (issue 10); not a test.

Run: ./run python bench/fuzz.py [--limit N] [--solvers kafka,exact] [--time-limit S] [--workers W]
(writes bench/results/fuzz.json; record the figures in docs/validation.md)

Every mutation of `tests/fuzzing.py` at every field path of every base problem (no sampling),
each mutant validated and, when valid, solved by every solver with the time limit, and its
solution checked by the evaluator (which `solve` does). A mutant fails the run when anything
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
    args = parser.parse_args()
    solvers = args.solvers.split(",")
    started = time.perf_counter()
    outcomes: Counter[str] = Counter()
    failures: dict[str, list[str]] = {}
    with multiprocessing.Pool(args.workers, _init_worker) as pool:
        for outcome, detail in pool.imap_unordered(check, jobs(solvers, args.time_limit, args.limit), chunksize=4):
            outcomes[outcome] += 1
            if detail is not None:
                key = f"{outcome}: {detail.split(' [')[0].split(': ')[0]}"
                failures.setdefault(key, []).append(detail)
    seconds = time.perf_counter() - started
    result = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {multiprocessing.cpu_count()} cores, Python {platform.python_version()}",
        "solvers": solvers,
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
