"""Fleet aggregation over the pipeline's summary table: pure functions, no plotting.

Kept apart from the HTML and the plots so the pipeline's terminal summary can reuse the same
figures without importing matplotlib: everything here takes the summary as a `pyarrow.Table` or
as a list of row dicts (one per (problem, solver), columns as in `optimizer.pipeline.schema`)
and needs neither pyarrow nor matplotlib (the row statuses come from `optimizer.pipeline.status`).

Definitions used throughout (docs/report.md repeats them for readers of the report):

* a row is **solved** when it carries an assignment: `error` is null and its status is neither
  `invalid` nor `error` (an `infeasible` or `time_limit` row still has an assignment; a
  `time_limit` row with an `error` found none in time, and counts among the **errors** with the
  `error` rows);
* the **baseline** is Kafka's heuristic `kafka`; the **reference** is the best exact-type solver
  present, the first of `exact`, `milp`, `cpsat`, `flow`;
* comparisons cover only the problems where both the baseline and the reference are solved, so
  a problem one of them failed on cannot tilt the totals.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from optimizer.catalogue import EXACT_SOLVERS, SOLVER_ORDER
from optimizer.model.solution import GoalStatus
from optimizer.money import monthly_cost, price_and_currency
from optimizer.pipeline.status import UNSOLVED_STATUSES, UnsolvedStatus

BASELINE_SOLVER = "kafka"
"""Kafka's own heuristic: what a fleet gets today."""

REFERENCE_SOLVERS = EXACT_SOLVERS
"""Exact-type solvers, best first: the first one present is compared with the baseline."""

_Entry = TypeVar("_Entry", bound=Mapping[str, Any])
"""An entry of `compared_problems`: `top_savings` gives back the entries it is given."""


def summary_rows(summary: Any) -> list[dict[str, Any]]:
    """The summary as a list of row dicts, whether given as a pyarrow Table or already as rows.

    Duck-typed on `to_pylist` so that pyarrow stays an optional import for callers that have
    plain rows (the terminal summary, tests)."""
    if hasattr(summary, "to_pylist"):
        return summary.to_pylist()
    return [dict(row) for row in summary]


def is_solved(row: Mapping[str, Any]) -> bool:
    """Whether the row carries an assignment (and therefore metrics)."""
    return row.get("error") is None and row.get("status") not in UNSOLVED_STATUSES


def ordered_solvers(names: Iterable[str | None]) -> list[str]:
    """Distinct solver names, the known ones in a fixed order, so tables and plots line up."""
    distinct = {str(name) for name in names if name is not None}
    known = [name for name in SOLVER_ORDER if name in distinct]
    return known + sorted(distinct - set(known))


def reference_solver(solvers: Iterable[str]) -> str | None:
    """The exact-type solver to compare `kafka` with: the first of REFERENCE_SOLVERS present."""
    present = set(solvers)
    return next((name for name in REFERENCE_SOLVERS if name in present), None)


def comparison_skipped_reason(solvers: Sequence[str]) -> str | None:
    """Why `kafka` cannot be compared with an exact solver in this run, or None when it can."""
    if BASELINE_SOLVER not in solvers:
        return (
            f"Kafka's heuristic ({BASELINE_SOLVER}) is not in this run (solvers: {', '.join(solvers) or 'none'}), "
            "so there is nothing to compare the exact assignments with."
        )
    if reference_solver(solvers) is None:
        return (
            f"No exact solver ({', '.join(REFERENCE_SOLVERS)}) is in this run (solvers: {', '.join(solvers)}), "
            f"so {BASELINE_SOLVER} has nothing to be compared with."
        )
    return None


def compared_problems(
    summary: Any,
    baseline: str = BASELINE_SOLVER,
    reference: str | None = None,
    price_per_gb: float | None = None,
    currency: str | None = None,
) -> list[dict[str, Any]]:
    """One entry per problem solved by both `baseline` and `reference` (default: the best
    exact-type solver present), in problem-name order.

    Each entry: problem, kind, tasks, clients, size (tasks × clients), `saving` (baseline minus
    reference cross-rack partitions as applied now: positive when the reference reads less across
    racks), `target_saving` (the same between the targets the plans reach) and, per side,
    cross_rack / moves / load_skew (applied now), target_cross_rack, rounds (follow-up
    rebalances), restore_offsets and seconds_to_target (over the plan) under the keys `baseline_*` and
    `reference_*`. In bytes and money, between the targets (the steady state): baseline_bytes,
    reference_bytes and bytes_saving (None without rates), price (the problem's own price per GB,
    else `price_per_gb`), currency (the problem's own, else `currency`, else USD), money_saving
    (per month; None without rates or price); and what a
    configuration change alone gets (the baseline's `config_change`): config_change,
    config_bytes_saving, config_partition_saving, config_money_saving (None without one; 0 where
    the change would read more, as nobody would make it), and what it costs when the run recorded
    Kafka's plan with the change: config_rounds, config_seconds_to_target, config_restore_offsets
    (None otherwise)."""
    rows = summary_rows(summary)
    if reference is None:
        reference = reference_solver(row["solver"] for row in rows)
    if reference is None:
        return []
    by_pair = {(row["problem"], row["solver"]): row for row in rows}  # one each: read_summary checks
    entries = []
    for problem in sorted({row["problem"] for row in rows}):
        ours = by_pair.get((problem, baseline))
        theirs = by_pair.get((problem, reference))
        if ours is None or theirs is None or not is_solved(ours) or not is_solved(theirs):
            continue
        tasks, clients = theirs.get("tasks"), theirs.get("clients")
        entries.append(
            {
                "problem": problem,
                "kind": theirs.get("kind") or ours.get("kind"),
                "tasks": tasks,
                "clients": clients,
                "size": tasks * clients if tasks is not None and clients is not None else None,
                "saving": _int(ours.get("cross_rack_partitions")) - _int(theirs.get("cross_rack_partitions")),
                "baseline_cross_rack": _int(ours.get("cross_rack_partitions")),
                "reference_cross_rack": _int(theirs.get("cross_rack_partitions")),
                "baseline_moves": _int(ours.get("moves")),
                "reference_moves": _int(theirs.get("moves")),
                "baseline_load_skew": ours.get("load_skew"),
                "reference_load_skew": theirs.get("load_skew"),
                "target_saving": _target(ours, "cross_rack_partitions") - _target(theirs, "cross_rack_partitions"),
                "baseline_target_cross_rack": _target(ours, "cross_rack_partitions"),
                "reference_target_cross_rack": _target(theirs, "cross_rack_partitions"),
                "baseline_rounds": _int(ours.get("followup_rebalances")),
                "reference_rounds": _int(theirs.get("followup_rebalances")),
                "baseline_restore_offsets": _int(ours.get("restore_offsets")),
                "reference_restore_offsets": _int(theirs.get("restore_offsets")),
                "baseline_seconds_to_target": float(ours.get("seconds_to_target") or 0.0),
                "reference_seconds_to_target": float(theirs.get("seconds_to_target") or 0.0),
                **_money(ours, theirs, price_per_gb, currency),
            }
        )
    return entries


def _money(ours: Mapping[str, Any], theirs: Mapping[str, Any], default_price: float | None, default_currency: str | None) -> dict[str, Any]:
    """The bytes and money figures of a compared entry (see `compared_problems`)."""
    mine, yours = _target_bytes(ours), _target_bytes(theirs)
    own = ours.get("price_per_gb")
    price, currency = price_and_currency(None if own is None else float(own), ours.get("currency"), default_price, default_currency)
    saving = None if mine is None or yours is None else mine - yours
    change = ours.get("config_change")
    config_bytes = ours.get("config_target_cross_rack_bytes")
    # A change that would read more across racks is not worth making: it saves nothing.
    config_saving = None if change is None or mine is None or config_bytes is None else max(0, mine - int(config_bytes))
    config_partitions = ours.get("config_target_cross_rack_partitions")
    return {
        "baseline_bytes": mine,
        "reference_bytes": yours,
        "bytes_saving": saving,
        "price": price,
        "currency": currency,
        "money_saving": monthly_cost(saving, price),
        "baseline_money": monthly_cost(mine, price),
        "config_change": change,
        "config_bytes_saving": config_saving,
        "config_partition_saving": None
        if change is None or config_partitions is None
        else max(0, _target(ours, "cross_rack_partitions") - int(config_partitions)),
        "config_money_saving": monthly_cost(config_saving, price),
        # The change's own plan, when the run recorded it (None otherwise).
        "config_rounds": _maybe_int(ours.get("config_followup_rebalances")) if change else None,
        "config_seconds_to_target": _maybe_float(ours.get("config_seconds_to_target")) if change else None,
        "config_restore_offsets": _maybe_int(ours.get("config_restore_offsets")) if change else None,
    }


def _target_bytes(row: Mapping[str, Any]) -> int | None:
    value = row.get("target_cross_rack_bytes")
    if value is None:
        value = row.get("cross_rack_bytes")
    return None if value is None else int(value)


PARETO_SHARE = 80.0
"""The share of the saving the report's Pareto sentence names the applications for."""


def ranked_savings(entries: Sequence[Mapping[str, Any]]) -> tuple[str, list[Mapping[str, Any]]]:
    """The entries that save something, largest saving first (ties by name), and the unit they
    are ranked in: `money` when any entry has a money saving (only those entries) and all of those
    are in one currency, else `bytes` (entries with rates), else `partitions` (cross-rack
    partitions at the targets). One unit per ranking: never money for some and partitions for
    others, nor two currencies in one ranking."""
    currencies = {entry.get("currency") for entry in entries if entry.get("money_saving") is not None and entry["money_saving"] > 0}
    for unit, key in (("money", "money_saving"), ("bytes", "bytes_saving"), ("partitions", "target_saving")):
        if unit == "money" and len(currencies) > 1:
            continue
        ranked = [entry for entry in entries if entry.get(key) is not None and entry[key] > 0]
        if ranked or unit == "partitions":
            ranked.sort(key=lambda entry: (-entry[key], entry["problem"]))
            return unit, ranked
    raise AssertionError("unreachable")


SAVING_KEY = {"money": "money_saving", "bytes": "bytes_saving", "partitions": "target_saving"}
"""The entry key of each ranking unit."""


def pareto(entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The Pareto curve of the savings: `unit` (as `ranked_savings`), `cumulative` (the percent of
    the total saving the top 1, 2, ... applications give), `total`, and `top` (how many give
    PARETO_SHARE percent of it; 0 without savings)."""
    unit, ranked = ranked_savings(entries)
    values = [float(entry[SAVING_KEY[unit]]) for entry in ranked]
    total = sum(values)
    cumulative: list[float] = []
    running = 0.0
    for value in values:
        running += value
        cumulative.append(100.0 * running / total)
    top = next((n for n, share in enumerate(cumulative, 1) if share >= PARETO_SHARE - 1e-9), 0)
    return {"unit": unit, "cumulative": cumulative, "total": total, "top": top, "share": PARETO_SHARE, "problems": len(entries)}


def zone_matrix(summary: Any, solvers: Sequence[str], problems: Iterable[str]) -> dict[str, dict[str, dict[str, float]]]:
    """Per solver, cross-zone bytes per second by reader rack, then rack read from, at the
    targets, summed over `problems` (their `zone_bytes`; racks matched by name, as the fleet's
    applications share the zones)."""
    wanted = set(problems)
    result: dict[str, dict[str, dict[str, float]]] = {solver: {} for solver in solvers}
    for row in summary_rows(summary):
        if row.get("solver") not in result or row.get("problem") not in wanted or not is_solved(row):
            continue
        matrix = result[row["solver"]]
        for reader, sources in _json_object(row.get("zone_bytes")).items():
            if not isinstance(sources, dict):
                continue
            for source, value in sources.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    cells = matrix.setdefault(str(reader), {})
                    cells[str(source)] = cells.get(str(source), 0.0) + float(value)
    return result


def largest_savings(summary: Any, limit: int = 20) -> list[dict[str, Any]]:
    """The `limit` problems where the reference saves the most cross-rack partitions over
    `kafka` (entries of `compared_problems`), largest first, ties by name; only positive savings,
    because a list padded with zero or negative savings would not be "savings"."""
    return top_savings(compared_problems(summary), limit)


def top_savings(entries: Iterable[_Entry], limit: int = 20) -> list[_Entry]:
    """`largest_savings` of entries `compared_problems` already made."""
    positive = [entry for entry in entries if entry["saving"] > 0]
    positive.sort(key=lambda entry: (-entry["saving"], entry["problem"]))
    return positive[:limit]


def solver_totals(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The fleet figures of one solver's rows (see `fleet_totals`)."""
    solved = [row for row in rows if is_solved(row)]
    skews = [float(row["load_skew"]) for row in solved if row.get("load_skew") is not None]
    target_skews = [float(_target(row, "load_skew")) for row in solved if row.get("load_skew") is not None]
    # Skew is tasks per thread for Streams and partitions per member for groups: never one mean.
    per_kind = {
        kind: [row for row in solved if row.get("kind") == kind and row.get("load_skew") is not None] for kind in ("streams", "consumer")
    }
    with_bytes = [row for row in solved if _target_bytes(row) is not None]
    # Every row that has a time counts, failed solves included: they cost time too. Invalid
    # documents never reach a solver and have no time.
    seconds = [float(row["seconds"]) for row in rows if row.get("seconds") is not None]
    return {
        "problems": len({row["problem"] for row in rows}),
        "solved": len(solved),
        "invalid": sum(1 for row in rows if row.get("status") == UnsolvedStatus.INVALID),
        # no assignment though the document was valid: a solver failed, or found none in time
        "errors": sum(1 for row in rows if not is_solved(row) and row.get("status") != UnsolvedStatus.INVALID),
        "cross_rack_partitions": sum(_int(row.get("cross_rack_partitions")) for row in solved),
        "moves": sum(_int(row.get("moves")) for row in solved),
        "load_skew_mean": statistics.fmean(skews) if skews else None,
        "load_skew_max": max(skews) if skews else None,
        "warmups": sum(_int(row.get("warmups")) for row in solved),
        "target_cross_rack_partitions": sum(_target(row, "cross_rack_partitions") for row in solved),
        "target_load_skew_mean": statistics.fmean(target_skews) if target_skews else None,
        "followup_rebalances": sum(_int(row.get("followup_rebalances")) for row in solved),
        "restore_offsets": sum(_int(row.get("restore_offsets")) for row in solved),
        "streams_skew_mean": statistics.fmean(float(r["load_skew"]) for r in per_kind["streams"]) if per_kind["streams"] else None,
        "consumer_skew_mean": statistics.fmean(float(r["load_skew"]) for r in per_kind["consumer"]) if per_kind["consumer"] else None,
        "streams_target_skew_mean": statistics.fmean(_target(r, "load_skew") for r in per_kind["streams"]) if per_kind["streams"] else None,
        "consumer_target_skew_mean": statistics.fmean(_target(r, "load_skew") for r in per_kind["consumer"]) if per_kind["consumer"] else None,
        "with_bytes": len(with_bytes),
        "cross_rack_bytes": sum(_int(row.get("cross_rack_bytes")) for row in with_bytes),
        "target_cross_rack_bytes": sum(_target_bytes(row) or 0 for row in with_bytes),
        "seconds_total": sum(seconds),
        "seconds_median": statistics.median(seconds) if seconds else None,
    }


def fleet_totals(summary: Any, price_per_gb: float | None = None, currency: str | None = None) -> dict[str, Any]:
    """The fleet's headline figures: per solver, and `kafka` against the best exact solver.

    `summary`: the summary table (`pyarrow.Table`) or its rows as dicts. Returns:

    * `problems`: distinct problem names; `rows`: rows; `solvers`: solver names in display order;
    * `per_solver`: solver -> `solver_totals` (problems, solved, invalid, errors,
      cross_rack_partitions, moves, load_skew_mean, load_skew_max, warmups (as applied now),
      target_cross_rack_partitions, target_load_skew_mean (where the plans end),
      followup_rebalances, restore_offsets (over the plans), seconds_total, seconds_median; sums
      and load skews over solved rows, seconds over every timed row);
    * `comparison`: None, with `comparison_skipped` saying why, when there is no pair to compare;
      otherwise baseline, reference, problems (solved by both), baseline_cross_rack,
      reference_cross_rack, saved (baseline − reference), saved_percent (of the baseline's total;
      None when that is 0), baseline_moves, reference_moves, moves_difference (reference −
      baseline), better / equal / worse (problems where the reference reads fewer / as many /
      more cross-rack partitions); all as applied now, and the targets' baseline_target_cross_rack,
      reference_target_cross_rack, target_saved, target_saved_percent, with each side's rounds
      and restore offsets over the plans, and its hours to the targets: `*_hours_to_target`
      summed over the problems (the probing rebalances' wait, at least), `*_longest_hours` the
      longest one;
    * `compared`: the `compared_problems` entries behind `comparison` (empty without one), with
      `price_per_gb` and `currency` for problems that give no price or currency of their own;
    * `money`: over the compared problems with rates, at the targets: `with_bytes`, `priced`
      (those with a price), baseline_bytes, reference_bytes, bytes_saved, baseline_money,
      money_saved (per month, priced problems only; None when none is priced), config_money_saved
      and config_bytes_saved (a configuration change alone), `currency` (of the money figures;
      None when the priced problems name several, whose sums are then only in `by_currency`:
      currency -> priced, baseline_money, money_saved, config_money_saved); `pareto` (see `pareto`) and `zones`
      (`zone_matrix` of the baseline and the reference over the problems with rates).
    """
    rows = summary_rows(summary)
    solvers = ordered_solvers(row.get("solver") for row in rows)
    per_solver = {name: solver_totals([row for row in rows if row.get("solver") == name]) for name in solvers}
    comparison = None
    entries: list[dict[str, Any]] = []
    skipped = comparison_skipped_reason(solvers)
    if skipped is None:
        reference = reference_solver(solvers)
        entries = compared_problems(rows, BASELINE_SOLVER, reference, price_per_gb, currency)
        if not entries:
            skipped = f"No problem has an assignment from both {BASELINE_SOLVER} and {reference}."
        else:
            ours = sum(entry["baseline_cross_rack"] for entry in entries)
            theirs = sum(entry["reference_cross_rack"] for entry in entries)
            our_moves = sum(entry["baseline_moves"] for entry in entries)
            their_moves = sum(entry["reference_moves"] for entry in entries)
            target_ours = sum(entry["baseline_target_cross_rack"] for entry in entries)
            target_theirs = sum(entry["reference_target_cross_rack"] for entry in entries)
            comparison = {
                "baseline": BASELINE_SOLVER,
                "reference": reference,
                "problems": len(entries),
                "baseline_cross_rack": ours,
                "reference_cross_rack": theirs,
                "saved": ours - theirs,
                "saved_percent": 100.0 * (ours - theirs) / ours if ours else None,
                "target_saved": target_ours - target_theirs,
                "target_saved_percent": 100.0 * (target_ours - target_theirs) / target_ours if target_ours else None,
                "baseline_moves": our_moves,
                "reference_moves": their_moves,
                "moves_difference": their_moves - our_moves,
                "baseline_target_cross_rack": target_ours,
                "reference_target_cross_rack": target_theirs,
                "baseline_rounds": sum(entry["baseline_rounds"] for entry in entries),
                "reference_rounds": sum(entry["reference_rounds"] for entry in entries),
                "baseline_restore_offsets": sum(entry["baseline_restore_offsets"] for entry in entries),
                "reference_restore_offsets": sum(entry["reference_restore_offsets"] for entry in entries),
                "baseline_hours_to_target": sum(entry["baseline_seconds_to_target"] for entry in entries) / 3600,
                "reference_hours_to_target": sum(entry["reference_seconds_to_target"] for entry in entries) / 3600,
                "baseline_longest_hours": max(entry["baseline_seconds_to_target"] for entry in entries) / 3600,
                "reference_longest_hours": max(entry["reference_seconds_to_target"] for entry in entries) / 3600,
                "better": sum(1 for entry in entries if entry["saving"] > 0),
                "equal": sum(1 for entry in entries if entry["saving"] == 0),
                "worse": sum(1 for entry in entries if entry["saving"] < 0),
            }
    money = _money_totals(rows, entries if comparison else [], comparison)
    return {
        "problems": len({row.get("problem") for row in rows}),
        "rows": len(rows),
        "solvers": solvers,
        "per_solver": per_solver,
        "comparison": comparison,
        "comparison_skipped": skipped,
        "compared": entries if comparison else [],
        "protocols": protocol_totals(rows),
        "money": money,
        "pareto": pareto(entries) if comparison else None,
    }


def _money_totals(rows: Sequence[Mapping[str, Any]], entries: Sequence[Mapping[str, Any]], comparison: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The `money` figures of `fleet_totals` (None without a comparison or without rates)."""
    with_bytes = [entry for entry in entries if entry["bytes_saving"] is not None]
    if comparison is None or not with_bytes:
        return None
    priced = [entry for entry in with_bytes if entry["money_saving"] is not None]
    configured = [entry for entry in with_bytes if entry["config_bytes_saving"] is not None]
    by_currency = {
        currency: {
            "priced": len(same),
            "baseline_money": sum(entry["baseline_money"] for entry in same),
            "money_saved": sum(entry["money_saving"] for entry in same),
            "config_money_saved": sum(entry["config_money_saving"] for entry in same if entry["config_money_saving"] is not None),
        }
        for currency in sorted({entry["currency"] for entry in priced})
        for same in [[entry for entry in priced if entry["currency"] == currency]]
    }
    one = next(iter(by_currency.values())) if len(by_currency) == 1 else None  # sums in several currencies are no sum
    return {
        "with_bytes": len(with_bytes),
        "priced": len(priced),
        "baseline_bytes": sum(entry["baseline_bytes"] for entry in with_bytes),
        "reference_bytes": sum(entry["reference_bytes"] for entry in with_bytes),
        "bytes_saved": sum(entry["bytes_saving"] for entry in with_bytes),
        "currency": next(iter(by_currency)) if one is not None else None,
        "by_currency": by_currency,
        "baseline_money": one["baseline_money"] if one is not None else None,
        "money_saved": one["money_saved"] if one is not None else None,
        "configured": len(configured),
        "config_bytes_saved": sum(entry["config_bytes_saving"] for entry in configured),
        "config_money_saved": one["config_money_saved"] if one is not None else None,
        "zones": zone_matrix(rows, [comparison["baseline"], comparison["reference"]], [entry["problem"] for entry in with_bytes]),
    }


def protocol_totals(summary: Any) -> dict[str, dict[str, Any]]:
    """Per kind (`streams`, `consumer`): the classic protocol's assignor, the new protocol's
    (`kafka:new`) and the best exact solver, on the problems of that kind all of them solved.

    The classic column is `kafka:classic` when the run has it, else `kafka` (the problems' own
    config, classic unless they set `group.protocol`). Each kind maps to `problems` (the count) and
    `columns`: solver -> cross_rack_partitions, moves (sums) and load_skew_mean; kinds without a
    `kafka:new` row are left out."""
    rows = summary_rows(summary)
    solvers = ordered_solvers(row.get("solver") for row in rows)
    classic = "kafka:classic" if "kafka:classic" in solvers else BASELINE_SOLVER
    columns = [name for name in (classic, "kafka:new", reference_solver(solvers)) if name in solvers]
    if "kafka:new" not in columns:
        return {}
    by_pair = {(row["problem"], row["solver"]): row for row in rows}
    result: dict[str, dict[str, Any]] = {}
    for kind in ("streams", "consumer"):
        names = sorted({row["problem"] for row in rows if row.get("kind") == kind})
        problems = [p for p in names if all((p, c) in by_pair and is_solved(by_pair[(p, c)]) for c in columns)]
        if not problems:
            continue
        figures = {}
        for column in columns:
            solved = [by_pair[(p, column)] for p in problems]
            skews = [float(row["load_skew"]) for row in solved if row.get("load_skew") is not None]
            figures[column] = {
                "cross_rack_partitions": sum(_int(row.get("cross_rack_partitions")) for row in solved),
                "moves": sum(_int(row.get("moves")) for row in solved),
                "load_skew_mean": statistics.fmean(skews) if skews else None,
            }
        result[kind] = {"problems": len(problems), "columns": figures}
    return result


def rack_traffic_totals(summary: Any) -> dict[str, dict[str, int]]:
    """Per solver (solved rows only), per rack: cross-rack partitions read by that rack's clients,
    summed over the fleet from the `rack_traffic` JSON. Racks are matched by name across
    problems, as applications of one fleet share the data centre's racks. A malformed JSON value
    is skipped rather than failing the report over one row."""
    totals: dict[str, dict[str, int]] = {}
    for row in summary_rows(summary):
        if not is_solved(row):
            continue
        per_rack = totals.setdefault(row["solver"], {})
        for rack, count in _json_object(row.get("rack_traffic")).items():
            if isinstance(count, int | float) and not isinstance(count, bool):
                per_rack[str(rack)] = per_rack.get(str(rack), 0) + int(count)
    return {name: totals[name] for name in ordered_solvers(totals)}


def failed_rows(summary: Any) -> list[dict[str, Any]]:
    """Rows without an assignment (invalid documents, solver errors), by problem then solver."""
    rows = [row for row in summary_rows(summary) if not is_solved(row)]
    return sorted(rows, key=lambda row: (str(row.get("problem")), str(row.get("solver"))))


def unproven_rows(summary: Any) -> list[tuple[dict[str, Any], str]]:
    """Solved rows of the exact solvers whose goals are not all proven optimal (a time limit cut a
    stage, hard goals conflicted, or the engine fell back to Kafka's answer: `heuristic`), each
    with why: the goals that are not `optimal`, with their status and gap, by problem then solver."""
    found = []
    for row in summary_rows(summary):
        if not is_solved(row) or row.get("solver") not in EXACT_SOLVERS or row.get("status") == GoalStatus.OPTIMAL:
            continue
        goals = row.get("goals") or []
        if isinstance(goals, str):
            goals = json.loads(goals)
        stages = [
            f"{g['name']}: {g['status']}" + (f" (gap {g['gap']:.3g})" if g.get("gap") else "")
            for g in goals
            if g.get("status") != GoalStatus.OPTIMAL
        ]
        if row.get("status") == GoalStatus.HEURISTIC:
            stages = ["Kafka's assignment (the exact engine found none in time)"]
        found.append((row, "; ".join(stages) or str(row.get("status"))))
    return sorted(found, key=lambda item: (str(item[0].get("problem")), str(item[0].get("solver"))))


def _target(row: Mapping[str, Any], figure: str) -> Any:
    """A row's `figure` at its target: the `target_<figure>` column (a summary written before
    targets were recorded has none: the figure as applied now)."""
    value = row.get(f"target_{figure}")
    if value is None:
        value = row.get(figure)
    return (float(value) if figure == "load_skew" else int(value)) if value is not None else 0


def _maybe_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _maybe_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _int(value: Any) -> int:
    # Metric columns are null only on unsolved rows; treating a stray null as 0 keeps sums total.
    return int(value) if value is not None else 0


def _json_object(text: Any) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
