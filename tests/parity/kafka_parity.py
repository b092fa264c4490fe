"""Kafka parity: `--solver kafka` against Apache Kafka's own answers (issue 11).

The golden cases live outside the repository, in `../shared/kafka-parity/` (`KAO_KAFKA_PARITY`
overrides the place): each file holds a problem in our format, the solution Kafka's unmodified
Java assignor gave for it, the assignor's name and the Kafka commit. `check(path)` solves the
problem with `solver="kafka"` and compares:

* Streams: each client's active tasks, and its standby and warm-up tasks (Kafka sends warm-ups as
  standbys; the golden warm-up labels were recovered from Kafka's calls, so they are compared too);
  and whether a follow-up (probing) rebalance is asked for.
* Consumer groups: each member's partitions (as sets: the list order within a member is not part
  of Kafka's contract) and whether a follow-up rebalance is asked for. Where Kafka's own answer
  changed with the order members were inserted into a Java HashMap (`order_sensitive`), only the
  evaluator's metrics are compared.

Members claiming partitions numbered beyond their topic's partition count (docs/decisions.md,
decision 46): Kafka's sticky assignors keep such claims; the answer then may hold partitions that
do not exist, or the same partition on several members, or Kafka throws. There `--solver kafka`
refuses (SolverUnavailableError) saying which: such a case is `documented` when it refuses with
the same kind of failure as Kafka's (raises, or an invalid answer).

Used by tests/parity/test_kafka_parity.py (the suite) and bench/parity.py (the figures in
docs/validation.md).
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

from optimizer import evaluate, problem_from_data, solve
from optimizer.assignors.consumer.strategy import KIP848_ASSIGNORS as KIP848_TABLE
from optimizer.assignors.streams.sticky_task import TASK_ORDER, sticky_task_assign
from optimizer.errors import SolverUnavailableError
from optimizer.model import solution_from_data
from optimizer.model.ids import partition_id, task_id
from optimizer.model.normalize import normalize
from optimizer.model.solution import ClientAssignment

ROOT = Path(__file__).resolve().parents[2]


def _parity_dir() -> Path:
    """`KAO_KAFKA_PARITY`, else `shared/kafka-parity` beside the checkout or beside one of its
    parent directories (a clean clone made elsewhere on the machine finds it too)."""
    if os.environ.get("KAO_KAFKA_PARITY"):
        return Path(os.environ["KAO_KAFKA_PARITY"])
    for folder in ROOT.parents:
        candidate = folder / "shared" / "kafka-parity"
        if candidate.is_dir():
            return candidate
    return ROOT.parent / "shared" / "kafka-parity"


PARITY_DIR = _parity_dir()

# The client-side assignors at Kafka commit 1eb7644 (issue 11), and the broker-side ones of
# KIP-848 and KIP-1071 (issue 13; the commits are in each set's README).
STREAMS_ASSIGNORS = ("high_availability", "legacy_sticky")
CONSUMER_ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")
STREAMS_GROUP_ASSIGNORS = ("streams-sticky", "streams-balanced")
# KIP-848: `uniform` with trunk's homogeneous builder (consumer-group-current/) and with 4.0.0's
# (the `__uniform` files of consumer/, run under 4.0.0), and the broker's `range` (consumer/).
KIP848_ASSIGNORS = ("uniform", "server-range")


@dataclass(frozen=True)
class Outcome:
    case: str
    assignor: str
    status: str
    """`exact`; `metrics` (order-sensitive case, metrics equal); `documented` (decision 46, with
    its warning); `differs`; `error` (our solve raised)."""
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.status in ("exact", "metrics", "documented")


def streams_cases() -> list[Path]:
    folder = PARITY_DIR / "streams"
    files = sorted(folder.glob("*.json")) + sorted((folder / "repro").glob("*.json"))
    return [f for f in files if _assignor(f) in STREAMS_ASSIGNORS]


def consumer_cases() -> list[Path]:
    return [f for f in sorted((PARITY_DIR / "consumer").glob("*.json")) if _assignor(f) in CONSUMER_ASSIGNORS]


def kip924_cases() -> list[Path]:
    """KIP-924's public StickyTaskAssignor (`streams/kip924/`)."""
    return sorted((PARITY_DIR / "streams" / "kip924").glob("*.json"))


def kip848_cases() -> list[Path]:
    """KIP-848's broker-side assignors."""
    current = sorted((PARITY_DIR / "consumer-group-current").glob("*.json"))
    older = sorted((PARITY_DIR / "consumer").glob("*__uniform.json"))
    ranged = sorted((PARITY_DIR / "consumer").glob("*__server-range.json"))
    return current + older + ranged


def streams_group_cases() -> list[Path]:
    """KIP-1071's streams-group assignors (`streams-group/`)."""
    return [f for f in sorted((PARITY_DIR / "streams-group").glob("*.json")) if _assignor(f) in STREAMS_GROUP_ASSIGNORS]


def _assignor(path: Path) -> str:
    name = path.stem.removesuffix(".golden")
    if "__" in name:  # consumer files name their assignor; avoid parsing the big ones twice
        suffix = name.rsplit("__", 1)[1]
        if suffix in ("uniform", "uniform-norack", "server-range"):
            return suffix.removesuffix("-norack")
        if suffix == "balanced":
            return "streams-balanced"
    return json.loads(path.read_text())["assignor"]


# The broker-side assignors' goldens hold problems without protocol keys: the case's assignor
# says which protocol and assignor Kafka ran.
PROTOCOL_CONFIG = {
    "uniform": {"group.protocol": "consumer", "group.remote.assignor": "uniform"},
    "server-range": {"group.protocol": "consumer", "group.remote.assignor": "range"},
    "streams-sticky": {"group.protocol": "streams", "streams.assignor.name": "sticky"},
    "streams-balanced": {"group.protocol": "streams", "streams.assignor.name": "balanced"},
}


# The Kafka whose answers each folder froze (`kafka.version`): the 4.0 line's trunk at 1eb7644
# (4.0.0-SNAPSHOT, the same assignor code as 4.0.0 where the sets are compared), and newer trunk
# commits for the broker-side sets (their README names them).
FROZEN_VERSION = {"streams": "4.0.0", "repro": "4.0.0", "kip924": "4.0.0", "consumer": "4.0.0", "consumer-group-current": "trunk", "streams-group": "trunk"}


def problem_of(case: dict, assignor: str, path: Path) -> dict:
    """The case's problem, configured for the protocol and assignor Kafka ran, in the Kafka
    release (or trunk) whose code ran (`FROZEN_VERSION`)."""
    data = case["problem"]
    config = {**data.get("config", {}), **PROTOCOL_CONFIG.get(assignor, {}), "kafka.version": FROZEN_VERSION[path.parent.name]}
    if assignor in ("uniform", "server-range") and "join_order" not in data:
        # The harness put the members into the assignor's HashMap in the case's list order.
        return {**data, "config": config, "join_order": [m["id"] for m in data["members"]]}
    return {**data, "config": config}


def check(path: Path) -> Outcome:
    case = json.loads(path.read_text())
    name = path.name
    problem = problem_from_data(problem_of(case, _assignor(path), path))
    try:
        ours = solve(problem, "kafka")
    except SolverUnavailableError as error:
        # Decision 46: where Kafka raises or answers with no valid assignment, --solver kafka
        # refuses, saying which.
        if case["kafka"] is None:  # Kafka's assignor threw
            kafka_error = case.get("kafka_error", "")
            if "IllegalStateException" in kafka_error and "raises IllegalStateException" in str(error):
                return Outcome(name, case["assignor"], "documented", f"Kafka: {kafka_error}")
        elif _not_in_problem(problem, solution_from_data(case["kafka"])) and "returns an invalid assignment" in str(error):
            return Outcome(name, case["assignor"], "documented", f"Kafka's answer is invalid: {error}")
        return Outcome(name, case["assignor"], "error", f"{type(error).__name__}: {error}")
    except Exception as error:  # noqa: BLE001 - a crash is an outcome to report
        return Outcome(name, case["assignor"], "error", f"{type(error).__name__}: {error}")
    if case["kafka"] is None:  # Kafka's assignor threw
        return Outcome(name, case["assignor"], "differs", f"Kafka threw ({case.get('kafka_error', '')}); we answered")
    expected = solution_from_data(case["kafka"])
    if _not_in_problem(problem, expected):
        return Outcome(name, case["assignor"], "differs", "Kafka's answer is invalid (partitions that do not exist, or twice); we answered")
    differences = _differences(expected, ours) + _member_differences(case.get("kafka_members"), ours)
    if not differences:
        return Outcome(name, case["assignor"], "exact")
    if case["assignor"] == "legacy_sticky" and not _differences(expected, _in_task_order(problem, ours)):
        return Outcome(name, case["assignor"], "documented", TASK_ORDER_HARNESS)
    if "uniform" in case["assignor"] and not _differences(expected, _with_incremental_sets(problem, ours)):
        return Outcome(name, case["assignor"], "documented", INCREMENTAL_SETS_HARNESS)
    if case.get("order_sensitive"):
        theirs, mine = _metrics(problem, expected), _metrics(problem, ours)
        if theirs == mine:
            return Outcome(name, case["assignor"], "metrics")
        changed = sorted(k for k in theirs if theirs[k] != mine.get(k))
        return Outcome(name, case["assignor"], "differs", "metrics " + ", ".join(f"{k}: kafka {theirs[k]} ours {mine.get(k)}" for k in changed))
    return Outcome(name, case["assignor"], "differs", "; ".join(differences[:5]) + (f" (+{len(differences) - 5})" if len(differences) > 5 else ""))


TASK_ORDER_HARNESS = (
    "Kafka's answer with its task sets filled in task order, as the harness fed them; a rebalance "
    "fills them subtopology by subtopology, which --solver kafka reproduces (decision 73)"
)


INCREMENTAL_SETS_HARNESS = (
    "Kafka's answer with each member's previous target in sets filled one partition at a time, as the "
    "harness built them; the group coordinator copies them from the target-assignment record "
    "(Assignment.fromRecord), which --solver kafka reproduces (issue 50)"
)


def _with_incremental_sets(problem, ours):
    """`ours` with the uniform assignor's answer for previous targets filled one partition at a time."""
    normalized = normalize(problem).problem
    result = KIP848_TABLE.select(normalized.config.remote_assignor, normalized.config.release)(normalized, previous_sets="incremental")
    assignment = {member: ClientAssignment(active=tuple(partition_id(t, p) for t, p in sorted(parts))) for member, parts in result.assignment.items()}
    return ours.model_copy(update={"assignment": assignment})


def _in_task_order(problem, ours):
    """`ours` with the legacy sticky assignor's answer for its task sets filled in task order."""
    result = sticky_task_assign(normalize(problem).problem, TASK_ORDER)
    assignment = {
        c.id: ClientAssignment(active=tuple(task_id(*t) for t in sorted(c.active)), standby=tuple(task_id(*t) for t in sorted(c.standby)))
        for c in result.clients
    }
    return ours.model_copy(update={"assignment": assignment})


def _differences(expected, ours) -> list[str]:
    found = []
    for client in sorted(set(expected.assignment) | set(ours.assignment)):
        want, got = expected.assignment.get(client), ours.assignment.get(client)
        for role in ("active", "standby", "warmup"):
            w = set(getattr(want, role, ()) or ())
            g = set(getattr(got, role, ()) or ())
            if w != g:
                found.append(f"{client} {role}: kafka only {sorted(w - g)}, ours only {sorted(g - w)}")
    if bool(expected.followup_rebalance) != bool(ours.followup_rebalance):
        found.append(f"followup_rebalance: kafka {expected.followup_rebalance}, ours {ours.followup_rebalance}")
    return found


def _member_differences(expected: dict | None, ours) -> list[str]:
    """Per member (stream thread) of a streams group; Kafka's answer omits members with nothing."""
    if expected is None:
        return []
    found = []
    got = {m: held for client in ours.assignment.values() for m, held in client.members.items()}
    for member in sorted(set(expected) | set(got)):
        for role in ("active", "standby"):
            w = set(expected.get(member, {}).get(role, ()))
            g = set(getattr(got.get(member), role, ()) or ())
            if w != g:
                found.append(f"member {member} {role}: kafka only {sorted(w - g)}, ours only {sorted(g - w)}")
    return found


def _not_in_problem(problem, solution) -> set[str] | str:
    """Partitions of a consumer solution that do not exist, or "twice" when one is on several
    members; an empty set for a sound answer (and for every Streams one)."""
    if problem.kind != "consumer":
        return set()
    exists = {f"{t.name}-{n}" for t in problem.topics for n in range(t.partitions)}
    listed = [p for member in solution.assignment.values() for p in member.active]
    if len(listed) != len(set(listed)):
        return "twice"
    return {p for p in listed if p not in exists}


def _metrics(problem, solution) -> dict:
    return dict(evaluate(problem, solution).metrics)


def kip924_standby_order_matters(problem) -> bool:
    """Whether our KIP-924 answer changes with the order standbys are placed task by task: Kafka's
    order is a HashSet of `TaskInfo` objects without `hashCode` (identity hashes, different in
    every JVM), so where it matters Kafka's own answer is one of several (decision 55). Tried:
    task order, reversed, and four seeded shuffles."""
    from optimizer.assignors.streams.kip924_sticky import kip924_sticky_assign
    from optimizer.model.ids import parse_task_id
    from optimizer.model.normalize import normalize

    normalized = normalize(problem).problem
    tasks = sorted(parse_task_id(t.id) for t in normalized.tasks if t.changelog_partitions)

    def answer(order):
        result = kip924_sticky_assign(normalized, order)
        return {c.id: (frozenset(c.active), frozenset(c.standby)) for c in result.clients}

    first = answer(tasks)
    orders = [tasks[::-1], *(random.Random(seed).sample(tasks, len(tasks)) for seed in range(4))]
    return any(answer(order) != first for order in orders)


def check_kip924(path: Path) -> Outcome:
    """`check`, and where Kafka's standby order is its JVM's identity hashes and matters
    (`kip924_standby_order_matters`): `standby-order` when the actives are Kafka's and every
    task has as many standbys as in Kafka's answer, the standbys being placed in another order."""
    outcome = check(path)
    if outcome.status != "differs":
        return outcome
    case = json.loads(path.read_text())
    problem = problem_from_data(problem_of(case, "kip924_sticky", path))
    if not kip924_standby_order_matters(problem):
        return outcome
    ours = solve(problem, "kafka")
    expected = solution_from_data(case["kafka"])
    actives = {c: set(held.active) for c, held in expected.assignment.items()}
    if actives != {c: set(held.active) for c, held in ours.assignment.items()}:
        return outcome
    if _standby_counts(expected) != _standby_counts(ours):
        return Outcome(path.name, case["assignor"], "differs", "standby replicas per task differ")
    return Outcome(path.name, case["assignor"], "standby-order", "actives exact; standbys placed in another task order than Kafka's JVM took")


def _standby_counts(solution) -> dict[str, int]:
    counts: dict[str, int] = {}
    for held in solution.assignment.values():
        for task in (*held.standby, *held.warmup):
            counts[task] = counts.get(task, 0) + 1
    return counts
