"""One application's figures for the report's drill-down: pure functions over the pipeline's rows.

For an application the report compares (an entry of `totals.compared_problems`) this gathers:
its racks and their clients, what the reference's assignment moves where (grouped by subtopology
or topic and by rack, never a list of partition ids), the plan's rounds with their time and
restore volume, the routes to a lower traffic (Kafka as configured, Kafka with a configuration
change, the reference) each with its own cost, and the reference's answer as a solution document
(`kafka-assignment-solution/v1`) to take away.

The pipeline's tables hold each solver's assignment applied now and its plan, not the problem:
the clients' racks and what they held before come from the problem document when the report is
given the pipeline's input (`write_report(..., problems=...)`); without it, moves are counted
against Kafka's answer, client by client.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from optimizer.errors import KafkaAssignmentError
from optimizer.evaluate import evaluate
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import natural_key, parse_partition_id
from optimizer.model.problem import Problem, solution_from_data
from optimizer.model.solution import SOLUTION_FORMAT
from optimizer.model.streams import StreamsProblem
from optimizer.version import __version__

Copies = Sequence[tuple[str, str, str]]
"""A solver's assignment applied now: (client, task or partition, role) rows of the assignments table."""

ROLES = ("active", "standby", "warmup")

CONFIG_COST_COLUMNS = ("config_followup_rebalances", "config_seconds_to_target", "config_restore_offsets", "config_moves")
"""Summary columns that give a configuration change's own cost (Kafka's plan with the changed
config), read when the run has them."""


@dataclass(frozen=True)
class Rack:
    """A rack of the application: its clients (id, threads) and what reads cross from it."""

    name: str
    clients: tuple[tuple[str, int], ...]
    reads: dict[str, int]
    """Solver -> partitions its clients in this rack read across racks (the row's `rack_traffic`)."""
    bytes: dict[str, float]
    """Solver -> cross-zone bytes per second its clients read at the target (the row's `zone_bytes`)."""


@dataclass(frozen=True)
class MoveGroup:
    """Copies the reference places elsewhere than before, of one subtopology (or topic), from one
    place to another (a rack when racks are known, else a client)."""

    group: str
    source: str
    destination: str
    actives: int = 0
    standbys: int = 0
    warmups: int = 0
    examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class Round:
    """A rebalance of the plan: round 1 now, each later one a follow-up."""

    number: int
    starts_after_seconds: float
    warmups: int
    warmup_racks: dict[str, int]
    moves: int
    restore_offsets: int


@dataclass(frozen=True)
class Route:
    """A way to a lower cross-zone traffic, with what it costs to get there."""

    name: str
    description: str
    target_bytes: int | None
    target_cross_rack: int | None
    rounds: int | None
    seconds_to_target: float | None
    restore_offsets: int | None
    moves: int | None
    setting: str | None = None
    """The configuration change the route makes (`key=value`), when it is one."""


@dataclass(frozen=True)
class Application:
    """Everything the drill-down of one compared application shows."""

    problem: str
    kind: str
    racks: tuple[Rack, ...]
    racks_known: bool
    moves_against: str
    """What the moves are counted from: `previous` (the problem's previous assignment) or the baseline solver's name."""
    moves: tuple[MoveGroup, ...]
    rounds: tuple[Round, ...]
    routes: tuple[Route, ...]
    solution: dict[str, Any]
    unproven: str | None
    moves_at: str = "now"
    """Which assignment of the reference the moves lead to: `now` (applied now) or `target` (where the plan ends)."""
    unusable: str | None = None
    """Why the solution file is not offered (the evaluator rejects it, or it cannot be whole); None: offered."""


def build_application(
    entry: Mapping[str, Any],
    base_row: Mapping[str, Any],
    ref_row: Mapping[str, Any],
    copies: Mapping[str, Copies],
    problem: Problem | None,
    unproven: str | None = None,
    targets: Mapping[str, Copies] | None = None,
) -> Application:
    """The drill-down of `entry` (a `compared_problems` entry) from its baseline and reference
    summary rows, the assignments applied now per solver, the problem when known, and the
    targets per solver when the run recorded them (a `targets` table)."""
    base, ref = str(base_row["solver"]), str(ref_row["solver"])
    kind = str(entry.get("kind") or ref_row.get("kind") or "")
    rack_of = _rack_of(problem)
    racks = _racks(problem, {base: base_row, ref: ref_row})
    ours = copies.get(ref, ())
    target = (targets or {}).get(ref) or ()
    if problem is not None:
        before, against = _previous(problem), "previous"
    else:
        before, against = list(copies.get(base, ())), base
    moves = _move_groups(before, target or ours, kind, rack_of)
    solution = solution_document(ref_row, ours, problem, _clients_seen(copies), target)
    plan = _json(ref_row.get("plan")) or {}
    rounds = _rounds(plan, float(ref_row.get("seconds_to_target") or 0.0), int(ref_row.get("followup_rebalances") or 0), rack_of)
    return Application(
        problem=str(entry["problem"]),
        kind=kind,
        racks=racks,
        racks_known=bool(rack_of),
        moves_against=against,
        moves=moves,
        rounds=rounds,
        routes=_routes(entry, base_row, ref_row),
        solution=solution,
        unproven=unproven,
        moves_at="target" if target else "now",
        unusable=unusable(solution, problem),
    )


def unusable(document: Mapping[str, Any], problem: Problem | None) -> str | None:
    """Why `document` must not be offered as a solution file, or None. With the problem at hand
    the evaluator decides; without it, a consumer group's answer that withholds partitions is
    known to be incomplete without its target (the evaluator would find them unassigned)."""
    if problem is not None:
        try:
            verdict = evaluate(problem, solution_from_data(dict(document), str(document.get("problem"))))
        except KafkaAssignmentError as error:
            return f"it does not read as a solution: {error}"
        if verdict.valid:
            return None
        shown = verdict.violations[0].message
        more = len(verdict.violations) - 1
        return f"the evaluator rejects it: {shown}" + (f" (and {more} more)" if more > 0 else "")
    if document.get("kind") == "consumer" and document.get("followup_rebalance") and "target" not in document:
        return "it withholds partitions now, and the pipeline's tables do not hold the target that assigns them"
    return None


def _rack_of(problem: Problem | None) -> dict[str, str]:
    if isinstance(problem, StreamsProblem):
        return {client.id: client.rack for client in problem.clients if client.rack is not None}
    if isinstance(problem, ConsumerProblem):
        return {member.id: member.rack for member in problem.members if member.rack is not None}
    return {}


def _racks(problem: Problem | None, rows: Mapping[str, Mapping[str, Any]]) -> tuple[Rack, ...]:
    clients: dict[str, list[tuple[str, int]]] = {}
    if isinstance(problem, StreamsProblem):
        for client in problem.clients:
            clients.setdefault(client.rack or "(no rack)", []).append((client.id, client.threads))
    elif isinstance(problem, ConsumerProblem):
        for member in problem.members:
            clients.setdefault(member.rack or "(no rack)", []).append((member.id, 1))
    reads = {solver: _json(row.get("rack_traffic")) or {} for solver, row in rows.items()}
    zone_bytes = {solver: _json(row.get("zone_bytes")) or {} for solver, row in rows.items()}
    names = set(clients) | {rack for per in reads.values() for rack in per} | {rack for per in zone_bytes.values() for rack in per}
    return tuple(
        Rack(
            name=name,
            clients=tuple(sorted(clients.get(name, ()), key=lambda c: natural_key(c[0]))),
            reads={solver: int(per.get(name, 0) or 0) for solver, per in reads.items()},
            bytes={solver: float(sum(v for v in (per.get(name) or {}).values() if isinstance(v, int | float))) for solver, per in zone_bytes.items()},
        )
        for name in sorted(names, key=natural_key)
    )


def _previous(problem: Problem) -> list[tuple[str, str, str]]:
    if isinstance(problem, StreamsProblem):
        return [(c.id, t, "active") for c in problem.clients for t in c.previous_active] + [
            (c.id, t, "standby") for c in problem.clients for t in c.previous_standby
        ]
    assert isinstance(problem, ConsumerProblem)
    return [(m.id, p, "active") for m in problem.members for p in m.owned_partitions]


def group_of(task: str, kind: str) -> str:
    """The subtopology of a Streams task (`0_3`: subtopology 0), the topic of a partition."""
    if kind == "consumer":
        try:
            return parse_partition_id(task).topic
        except ValueError:
            return task
    subtopology, _, _ = task.rpartition("_")
    return subtopology or task


NOT_HELD = ("(new)", "(unowned)")
"""Where an active comes from when no client ran it before (Streams), or a partition no member owned (groups)."""

EXAMPLES = 3
"""Task or partition ids named per group of moves (the rest are counted)."""


def _move_groups(before: Copies, after: Copies, kind: str, rack_of: Mapping[str, str]) -> tuple[MoveGroup, ...]:
    """What `after` places elsewhere than `before`, grouped by (subtopology or topic, from, to):
    actives that change client, standbys on a client that held none of the task (from the client
    that lost one, else a new copy), warm-ups started (from where the task's active runs)."""
    place = (lambda client: rack_of.get(client, "(no rack)")) if rack_of else (lambda client: client)
    held: dict[str, dict[str, set[str]]] = {role: {} for role in ROLES}
    was: dict[str, dict[str, set[str]]] = {role: {} for role in ROLES}
    for table, copies in ((was, before), (held, after)):
        for client, task, role in copies:
            table.setdefault(role, {}).setdefault(task, set()).add(client)
    counts: dict[tuple[str, str, str], dict[str, Any]] = {}

    def add(task: str, source: str, destination: str, what: str) -> None:
        key = (group_of(task, kind), source, destination)
        slot = counts.setdefault(key, {"actives": 0, "standbys": 0, "warmups": 0, "examples": []})
        slot[what] += 1
        slot["examples"].append(task)

    for task, clients in held["active"].items():
        previous = sorted(was["active"].get(task, ()))
        for client in sorted(clients - set(previous)):
            add(task, place(previous[0]) if previous else NOT_HELD[kind == "consumer"], place(client), "actives")
    for task, clients in held["standby"].items():
        before_holders = was["standby"].get(task, set()) | was["active"].get(task, set())
        lost = sorted(was["standby"].get(task, set()) - clients - held["active"].get(task, set()))
        for index, client in enumerate(sorted(clients - before_holders)):
            add(task, place(lost[index]) if index < len(lost) else "(new copy)", place(client), "standbys")
    for task, clients in held["warmup"].items():
        runs = sorted(held["active"].get(task, ()))
        for client in sorted(clients):
            add(task, place(runs[0]) if runs else "(new copy)", place(client), "warmups")
    if not rack_of:
        return _per_group(counts)
    groups = [
        MoveGroup(
            group=group,
            source=source,
            destination=destination,
            actives=slot["actives"],
            standbys=slot["standbys"],
            warmups=slot["warmups"],
            examples=tuple(sorted(set(slot["examples"]), key=natural_key)[:EXAMPLES]),
        )
        for (group, source, destination), slot in counts.items()
    ]
    groups.sort(key=lambda g: (natural_key(g.group), -(g.actives + g.standbys + g.warmups), natural_key(g.source), natural_key(g.destination)))
    return tuple(groups)


CLIENTS_NAMED = 3
"""Clients named per side of a group of moves when racks are unknown (the rest are counted)."""


def _per_group(counts: Mapping[tuple[str, str, str], Mapping[str, Any]]) -> tuple[MoveGroup, ...]:
    """Moves between clients, one group per subtopology or topic: client pairs would be as many
    rows as moves; the clients that give and take the most are named instead."""
    merged: dict[str, dict[str, Any]] = {}
    for (group, source, destination), slot in counts.items():
        total = slot["actives"] + slot["standbys"] + slot["warmups"]
        into = merged.setdefault(group, {"actives": 0, "standbys": 0, "warmups": 0, "examples": [], "from": {}, "to": {}})
        for what in ("actives", "standbys", "warmups"):
            into[what] += slot[what]
        into["examples"] += slot["examples"]
        into["from"][source] = into["from"].get(source, 0) + total
        into["to"][destination] = into["to"].get(destination, 0) + total
    return tuple(
        MoveGroup(
            group=group,
            source=_named(slot["from"]),
            destination=_named(slot["to"]),
            actives=slot["actives"],
            standbys=slot["standbys"],
            warmups=slot["warmups"],
            examples=tuple(sorted(set(slot["examples"]), key=natural_key)[:EXAMPLES]),
        )
        for group, slot in sorted(merged.items(), key=lambda item: natural_key(item[0]))
    )


def _named(counts: Mapping[str, int]) -> str:
    """`client-3 ×4, client-1 ×2 and 3 more clients`: the busiest first."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], natural_key(item[0])))
    named = ", ".join(f"{client} ×{number}" if number > 1 else client for client, number in ranked[:CLIENTS_NAMED])
    rest = len(ranked) - CLIENTS_NAMED
    return named + (f" and {rest} more" if rest > 0 else "")


def _rounds(plan: Mapping[str, Any], seconds_to_target: float, followups: int, rack_of: Mapping[str, str]) -> tuple[Round, ...]:
    # Follow-ups are one probing.rebalance.interval.ms apart (the plan's own lower bound).
    interval = seconds_to_target / followups if followups else 0.0
    rounds: list[Round] = []
    for entry in plan.get("rounds") or ():
        number = int(entry.get("round") or len(rounds) + 1)
        warmups = entry.get("warmups") or {}
        per_rack: dict[str, int] = {}
        for client, tasks in warmups.items() if rack_of else ():  # by rack only when racks are known
            rack = rack_of.get(client, "(no rack)")
            per_rack[rack] = per_rack.get(rack, 0) + len(tasks)
        rounds.append(
            Round(
                number=number,
                starts_after_seconds=interval * (number - 1),
                warmups=sum(len(tasks) for tasks in warmups.values()),
                warmup_racks=dict(sorted(per_rack.items())),
                moves=int(entry.get("moves") or 0),
                restore_offsets=int(entry.get("restore_offsets") or 0),
            )
        )
    return tuple(rounds)


def _routes(entry: Mapping[str, Any], base_row: Mapping[str, Any], ref_row: Mapping[str, Any]) -> tuple[Route, ...]:
    def of(row: Mapping[str, Any], name: str, description: str) -> Route:
        return Route(
            name=name,
            description=description,
            target_bytes=_maybe_int(row.get("target_cross_rack_bytes", row.get("cross_rack_bytes"))),
            target_cross_rack=_maybe_int(row.get("target_cross_rack_partitions", row.get("cross_rack_partitions"))),
            rounds=_maybe_int(row.get("followup_rebalances")),
            seconds_to_target=None if row.get("seconds_to_target") is None else float(row["seconds_to_target"]),
            restore_offsets=_maybe_int(row.get("restore_offsets")),
            moves=_maybe_int(row.get("moves")),
        )

    base, ref = str(base_row["solver"]), str(ref_row["solver"])
    routes = [of(base_row, base, "Kafka's assignor as the application is configured today")]
    change = base_row.get("config_change")
    if change:
        key, _, value = str(change).partition("=")
        routes.append(
            Route(
                name=f"{base} with {key.rsplit('.', 1)[-1]}={value}",
                description="Kafka's own assignor after a configuration change alone (no plug-in)",
                setting=str(change),
                target_bytes=_maybe_int(base_row.get("config_target_cross_rack_bytes")),
                target_cross_rack=_maybe_int(base_row.get("config_target_cross_rack_partitions")),
                rounds=_maybe_int(base_row.get("config_followup_rebalances")),
                seconds_to_target=None if base_row.get("config_seconds_to_target") is None else float(base_row["config_seconds_to_target"]),
                restore_offsets=_maybe_int(base_row.get("config_restore_offsets")),
                moves=_maybe_int(base_row.get("config_moves")),
            )
        )
    routes.append(of(ref_row, ref, "the exact assignment, applied through the plug-in and the service (docs/apply.md)"))
    return tuple(routes)


def solution_document(
    row: Mapping[str, Any], copies: Copies, problem: Problem | None, clients: Sequence[str] = (), target: Copies = ()
) -> dict[str, Any]:
    """The solver's answer of `row` as a `kafka-assignment-solution/v1` document: the assignment
    applied now (every client listed, even with nothing), whether a follow-up rebalance is needed,
    the target when `target` gives it and it differs, the plan, the goals and the metrics, as the
    pipeline recorded them."""
    if isinstance(problem, StreamsProblem):
        names = [client.id for client in problem.clients]
    elif isinstance(problem, ConsumerProblem):
        names = [member.id for member in problem.members]
    else:
        names = list(clients)
    roles = ROLES if row.get("kind") == "streams" else ("active",)
    assignment = _assignment(copies, names, roles)
    document: dict[str, Any] = {
        "format": SOLUTION_FORMAT,
        "problem": row["problem"],
        "kind": row.get("kind"),
        "assignment": assignment,
        "followup_rebalance": bool(row.get("followup_rebalance")),
    }
    if target:
        at_target = _assignment(target, names, roles[:2])
        if at_target != {client: {role: held[role] for role in roles[:2]} for client, held in assignment.items()}:
            document["target"] = at_target
    plan = _json(row.get("plan"))
    if plan:
        document["plan"] = plan
    goals = _json(row.get("goals"))
    if goals:
        document["goals"] = goals
    metrics = _json(row.get("metrics"))
    if metrics:
        document["metrics"] = metrics
    plugins = [
        {"name": name, "version": version}
        for item in str(row.get("plugins") or "").split(",")
        if item
        for name, _, version in [item.partition("==")]
    ]
    document["solver"] = {"name": row["solver"], "version": __version__, "options": {}, "plugins": plugins}
    return document


def _assignment(copies: Copies, names: Sequence[str], roles: Sequence[str]) -> dict[str, dict[str, list[str]]]:
    """Copies as a solution's `assignment`: every client of `names` (and any other the copies
    name) with its tasks per role, in Kafka's order."""
    assignment: dict[str, dict[str, list[str]]] = {name: {role: [] for role in roles} for name in names}
    for client, task, role in copies:
        if role in roles:
            assignment.setdefault(client, {r: [] for r in roles})[role].append(task)
    return {
        client: {role: sorted(tasks, key=natural_key) for role, tasks in held.items()}
        for client, held in sorted(assignment.items(), key=lambda item: natural_key(item[0]))
    }


def _clients_seen(copies: Mapping[str, Copies]) -> list[str]:
    """Clients any solver assigned something to: without the problem, the best list of its
    clients the tables give (a client idle under every solver is not in them)."""
    return sorted({client for rows in copies.values() for client, _, _ in rows}, key=natural_key)


def _maybe_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _json(text: Any) -> Any:
    if not text:
        return None
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return None
