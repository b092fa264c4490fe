"""The report's drill-down: one application's figures, routes, racks, moves, plan and solution file.

Laid out from `optimizer.report.applications.Application`; every figure cell carries its value in
data-value (see `optimizer.report.format`).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import optimizer.report.format as fmt
from optimizer.money import monthly_cost
from optimizer.report.applications import CONFIG_COST_COLUMNS, Application
from optimizer.report.format import MISSING, cell, e
from optimizer.report.totals import SAVING_KEY, ranked_savings
from optimizer.text import plural

UNIT_LABEL = {
    "money": "saved per month, at the target",
    "bytes": "cross-zone bytes saved, at the target",
    "partitions": "cross-rack partitions saved, at the target",
}


def saving_text(entry: Mapping[str, Any], unit: str) -> str:
    saving = entry[SAVING_KEY[unit]]
    if unit == "money":
        return fmt.money(saving, entry.get("currency"))
    if unit == "bytes":
        return fmt.rate(saving)
    return fmt.count(saving)



# --- applications in detail -------------------------------------------------------------------


def applications_section(details: Sequence[Application], anchors: Mapping[str, str], totals: Mapping[str, Any], unread: bool) -> str:
    out = ["<section id=\"applications\">\n<h2>Applications in detail</h2>\n"]
    comparison = totals["comparison"]
    if comparison is None or not details:
        out.append("<p class=\"none\">No application to detail: nothing is compared or nothing saves anything.</p>\n")
        return "".join(out) + "</section>\n"
    if unread:
        out.append("<p class=\"flag\">The assignments table could not be read: the moves and the solution files below are empty.</p>\n")
    entries = {entry["problem"]: entry for entry in totals["compared"]}
    unit, _ = ranked_savings(totals["compared"])
    out.append(
        f"<p>Each application of the ranking above ({plural(len(details), 'application')}), with its racks and clients, what "
        f"{e(comparison['reference'])}'s assignment moves where, the routes to a lower traffic with their cost, the plan round by "
        "round, and the assignment to take away.</p>\n"
    )
    for application in details:
        out.append(_application(application, entries[application.problem], anchors[application.problem], comparison, unit))
    return "".join(out) + "</section>\n"


def _application(application: Application, entry: Mapping[str, Any], anchor: str, comparison: Mapping[str, Any], unit: str) -> str:
    base, ref = comparison["baseline"], comparison["reference"]
    name = application.problem
    streams = application.kind == "streams"
    clients = "clients" if streams else "members"
    out = [
        f"<article class=\"app\" id=\"{anchor}\" data-problem=\"{e(name)}\">\n"
        f"<h3>{e(anchor.removeprefix('app-'))}. {e(name)}</h3>\n"
        f"<p class=\"small\">{e(application.kind)}: {fmt.count(entry['tasks'])} {'tasks' if streams else 'partitions'} on "
        f"{fmt.count(entry['clients'])} {clients}. <a class=\"back\" href=\"#ranked\">Back to the ranking</a></p>\n"
    ]
    if application.unproven:
        out.append(
            f"<p class=\"flag\" data-field=\"unproven\">Not proven optimal: {e(application.unproven)}. The figures are what "
            f"{e(ref)}'s assignment reaches, not what is possible; a longer <code>--time-limit</code> may do better.</p>\n"
        )
    money = entry.get("money_saving")
    currency = entry.get("currency")
    rebalance_noun = "probing rebalance" if streams else "follow-up rebalance"
    facts = [
        (
            "Cross-zone traffic at the target",
            f"{e(fmt.rate(entry['baseline_bytes']))} with {e(base)} → {e(fmt.rate(entry['reference_bytes']))} with {e(ref)}: "
            f"<strong>{e(fmt.reduction(entry['bytes_saving'], fmt.rate(abs(entry['bytes_saving'] or 0))))}</strong>"
            if entry["baseline_bytes"] is not None
            else "no throughputs in this problem",
        ),
        (
            "In money, at the target",
            f"<strong>{e(fmt.reduction(money, fmt.money(abs(money), currency)))}</strong> "
            f"(of {e(fmt.money(entry.get('baseline_money'), currency))} with {e(base)})"
            if money is not None
            else "no price for this problem",
        ),
        (
            "Cross-rack partitions",
            f"at the target {fmt.count(entry['baseline_target_cross_rack'])} → {fmt.count(entry['reference_target_cross_rack'])}; "
            f"applied now (warm-ups included) {fmt.count(entry['baseline_cross_rack'])} → {fmt.count(entry['reference_cross_rack'])}",
        ),
        (
            "Getting there",
            f"{plural(entry['reference_rounds'], rebalance_noun)}, "
            f"{e(fmt.time_to_target(entry['reference_seconds_to_target'], entry['reference_rounds']))} to the target"
            + (f", {e(fmt.offsets(entry['reference_restore_offsets']))} changelog offsets restored" if streams else "")
            + f" ({e(ref)}'s plan; {e(base)}'s: {plural(entry['baseline_rounds'], rebalance_noun)}, "
            + f"{e(fmt.time_to_target(entry['baseline_seconds_to_target'], entry['baseline_rounds']))})",
        ),
    ]
    out.append("<dl class=\"meta\">\n" + "".join(f"<dt>{label}</dt><dd>{value}</dd>\n" for label, value in facts) + "</dl>\n")
    out.append(_routes_table(application, entry, unit))
    out.append(_racks_table(application, base, ref))
    out.append(_moves_table(application, base, ref))
    out.append(_rounds_table(application, ref))
    out.append(_take_away(application, ref))
    return "".join(out) + "</article>\n"


def _routes_table(application: Application, entry: Mapping[str, Any], unit: str) -> str:
    base_bytes = application.routes[0].target_bytes
    base_partitions = application.routes[0].target_cross_rack
    price, currency = entry.get("price"), entry.get("currency")
    out = [
        "<h4>Routes to a lower traffic, with their cost</h4>\n<table class=\"routes wide\">\n<thead><tr><th>route</th>"
        "<th>cross-zone at the target</th><th>reduction at the target</th><th>cross-rack partitions at the target</th>"
        "<th>follow-up rebalances</th><th>time to the target</th><th>changelog offsets restored</th><th>moves now</th></tr></thead>\n<tbody>\n"
    ]
    for index, route in enumerate(application.routes):
        if index == 0:
            reduction = "(today's configuration)"
        elif route.target_bytes is not None and base_bytes is not None:
            saved = base_bytes - route.target_bytes
            reduction = fmt.reduction(saved, fmt.rate(abs(saved)))
            cost = monthly_cost(saved, price)
            if cost is not None:
                reduction += f" ({fmt.money(abs(cost), currency)} {'less' if saved >= 0 else 'more'})"
        elif route.target_cross_rack is not None and base_partitions is not None:
            saved = base_partitions - route.target_cross_rack
            reduction = fmt.reduction(saved, plural(abs(saved), "partition"), "fewer")
        else:
            reduction = MISSING
        unknown = MISSING
        time = fmt.time_to_target(route.seconds_to_target, route.rounds)
        restore = fmt.offsets(route.restore_offsets) if route.restore_offsets is not None else ("none" if application.kind == "consumer" else unknown)
        out.append(
            f"<tr data-route=\"{index}\"><td><code>{e(route.name)}</code><br><span class=\"small\">{e(route.description)}"
            + (f": <code>{e(route.setting)}</code>" if route.setting else "")
            + "</span></td>"
            + cell(route.target_bytes, e(fmt.rate(route.target_bytes)), "target_bytes")
            + f"<td>{e(reduction)}</td>"
            + cell(route.target_cross_rack, fmt.count(route.target_cross_rack), "target_cross_rack")
            + cell(route.rounds, fmt.count(route.rounds) if route.rounds is not None else unknown, "rounds")
            + cell(route.seconds_to_target, e(time) if route.seconds_to_target is not None else unknown, "time")
            + cell(route.restore_offsets, e(restore), "restore")
            + cell(route.moves, fmt.count(route.moves) if route.moves is not None else unknown, "moves")
            + "</tr>\n"
        )
    out.append("</tbody></table>\n")
    if len(application.routes) > 2 and application.routes[1].rounds is None:
        out.append(
            "<p class=\"note\">–: the configuration change's own plan (its probing rebalances, time and restore volume) is not in "
            f"the pipeline's summary table ({', '.join(CONFIG_COST_COLUMNS)}); its traffic is.</p>\n"
        )
    return "".join(out)


def _racks_table(application: Application, base: str, ref: str) -> str:
    out = ["<h4>Racks and their clients</h4>\n"]
    if not application.racks:
        return "".join(out) + "<p class=\"note\">No rack is known for this application's clients.</p>\n"
    if not application.racks_known:
        out.append(
            "<p class=\"note\">Which client is in which rack is in the problem, not the pipeline's tables: give the report the "
            "pipeline's input (<code>write_report(..., problems=INPUT)</code>) to list them. The reads per rack below are the "
            "pipeline's.</p>\n"
        )
    out.append(
        "<table class=\"racks wide\">\n<thead><tr><th>rack</th><th>clients (threads)</th>"
        f"<th>cross-rack partitions read now, {e(base)} → {e(ref)}</th>"
        f"<th>cross-zone bytes read at the target, {e(base)} → {e(ref)}</th></tr></thead>\n<tbody>\n"
    )
    for rack in application.racks:
        members = ", ".join(f"{client} ({threads})" if threads != 1 else client for client, threads in rack.clients) or MISSING
        out.append(
            f"<tr data-rack=\"{e(rack.name)}\"><td class=\"nowrap\">{e(rack.name)}</td><td class=\"small\">{e(members)}</td>"
            + cell(rack.reads.get(base, 0) - rack.reads.get(ref, 0), f"{fmt.count(rack.reads.get(base))} → {fmt.count(rack.reads.get(ref))}", "reads")
            + cell(
                rack.bytes.get(base, 0.0) - rack.bytes.get(ref, 0.0),
                e(f"{fmt.rate(rack.bytes.get(base))} → {fmt.rate(rack.bytes.get(ref))}"),
                "bytes",
            )
            + "</tr>\n"
        )
    return "".join(out) + "</tbody></table>\n"


MOVE_GROUPS_SHOWN = 40
"""Groups of moves listed per application (the rest are counted)."""


def _moves_table(application: Application, base: str, ref: str) -> str:
    streams = application.kind == "streams"
    group = "subtopology" if streams else "topic"
    places = "rack" if application.racks_known else "client"
    if application.moves_against == "previous":
        against = "the previous assignment (the problem's)"
    else:
        against = f"{base}'s answer (the previous assignment is in the problem, not the pipeline's tables)"
    which = "target (where its plan ends)" if application.moves_at == "target" else "assignment applied now"
    out = [f"<h4>What moves where</h4>\n<p class=\"small\">{e(ref)}'s {which} against {e(against)}, by {group} and {places}.</p>\n"]
    if not application.moves:
        if application.moves_against == "previous":
            return "".join(out) + "<p class=\"note\" data-field=\"moves\">Nothing moves now; the later rounds' moves are in the plan below.</p>\n"
        return "".join(out) + (
            f"<p class=\"note\" data-field=\"moves\">{e(ref)} applies the same assignment as {e(base)} now: the difference is in the later "
            "rounds (the plan below).</p>\n"
        )
    shown = application.moves[:MOVE_GROUPS_SHOWN]
    places_class = " class=\"nowrap\"" if application.racks_known else ""  # rack names stay whole; client lists wrap
    out.append(
        f"<table class=\"moves sortable wide\">\n<thead><tr><th>{group}</th><th>from ({places})</th><th>to ({places})</th><th>actives</th>"
        + ("<th>standbys</th><th>warm-ups started</th>" if streams else "")
        + "<th>for example</th></tr></thead>\n<tbody>\n"
    )
    for move in shown:
        within = " <span class=\"small\">(same rack)</span>" if move.source == move.destination and application.racks_known else ""
        out.append(
            f"<tr><td>{e(move.group)}</td><td{places_class}>{e(move.source)}</td><td{places_class}>{e(move.destination)}{within}</td>"
            + cell(move.actives, fmt.count(move.actives), "actives")
            + (cell(move.standbys, fmt.count(move.standbys), "standbys") + cell(move.warmups, fmt.count(move.warmups), "warmups") if streams else "")
            + f"<td class=\"small\">{e(', '.join(move.examples))}</td></tr>\n"
        )
    out.append("</tbody></table>\n")
    if len(application.moves) > len(shown):
        out.append(f"<p class=\"note\">And {plural(len(application.moves) - len(shown), 'more group')}: the solution file below has them all.</p>\n")
    return "".join(out)


def _rounds_table(application: Application, ref: str) -> str:
    out = [f"<h4>The plan: {plural(len(application.rounds), 'round')}</h4>\n"]
    if not application.rounds:
        return "".join(out) + "<p class=\"note\">No plan recorded.</p>\n"
    streams = application.kind == "streams"
    out.append(
        "<table class=\"rounds\">\n<thead><tr><th>round</th><th>starts after</th><th>actives that change client</th>"
        + (f"<th>warm-ups started{' (by rack)' if application.racks_known else ''}</th><th>changelog offsets restored</th>" if streams else "")
        + "</tr></thead>\n<tbody>\n"
    )
    for plan_round in application.rounds:
        racks = ", ".join(f"{rack}: {count}" for rack, count in plan_round.warmup_racks.items())
        out.append(
            f"<tr>{cell(plan_round.number, str(plan_round.number))}"
            + cell(plan_round.starts_after_seconds, "now" if plan_round.number == 1 else e(fmt.time_to_target(plan_round.starts_after_seconds, 1)))
            + cell(plan_round.moves, fmt.count(plan_round.moves))
            + (
                cell(plan_round.warmups, fmt.count(plan_round.warmups) + (f" <span class=small>({e(racks)})</span>" if racks else ""))
                + cell(plan_round.restore_offsets, e(fmt.offsets(plan_round.restore_offsets)))
                if streams
                else ""
            )
            + "</tr>\n"
        )
    out.append("</tbody></table>\n")
    out.append(
        "<p class=\"note\">Round 1 is the rebalance that applies the assignment; each later one is a "
        + (
            "probing rebalance, <code>probing.rebalance.interval.ms</code> after the one before (at least: warm-ups that catch up in time)."
            if streams
            else "rejoin of the members that revoked partitions, at once."
        )
        + "</p>\n"
    )
    return "".join(out)


def _take_away(application: Application, ref: str) -> str:
    name = application.problem
    filename = _file_name(name) + ".solution.json"
    problem_file = _file_name(name) + ".json"
    streams = application.kind == "streams"
    goals = ",".join(str(goal.get("name")) for goal in application.solution.get("goals", ()))
    plug = (
        "Kafka Streams: <code>task.assignor.class=kao.plugin.OptimizerTaskAssignor</code>; a streams group: "
        "<code>streams.assignor.name=optimizer</code>"
        if streams
        else "a KIP-848 group: <code>group.remote.assignor=optimizer</code>; a classic group: "
        "<code>partition.assignment.strategy=kao.plugin.OptimizerConsumerAssignor</code>"
    )
    out = ["<h4>Take it away and apply it</h4>\n"]
    if application.unusable is None:
        document = json.dumps(application.solution, indent=2) + "\n"
        encoded = base64.b64encode(document.encode("utf-8")).decode("ascii")
        holds = "its target, " if "target" in application.solution else ""
        partial = "" if application.racks_known else " Clients idle under every solver are not in the pipeline's tables, so not in the file."
        out.append(
            f"<p><a class=\"download\" data-problem=\"{e(name)}\" download=\"{e(filename)}\" href=\"data:application/json;base64,{encoded}\">"
            f"Download {e(filename)}</a> <span class=\"small\">a <code>kafka-assignment-solution/v1</code> file: {e(ref)}'s assignment "
            f"applied now, {holds}its plan, goals and metrics.{e(partial)}</span></p>\n"
        )
    else:
        out.append(
            f"<p class=\"flag\" data-field=\"unusable\">No solution file here: {e(application.unusable)}. Solve the application on its own "
            f"for the whole answer, target included: <code>kafka-assign solve {e(problem_file)} --solver {e(ref)} --goals {e(goals)} "
            f"-o {e(filename)}</code>.</p>\n"
        )
    follow = "the probing rebalances of the plan follow on their own" if streams else "the members that revoke partitions rejoin at once"
    out.append(
        "<ol class=\"apply\">\n"
        f"<li>Check it against the application's problem file: <code>kafka-assign evaluate {e(problem_file)} {e(filename)}</code>.</li>\n"
        f"<li>Start the assignment service with the same goals: <code>kafka-assign serve --{'streams' if streams else 'consumer'}-goals {e(goals)}</code> "
        "(docs/apply.md, section 1).</li>\n"
        f"<li>Install the plug-in and choose it for this application ({plug}; docs/apply.md, section 2). At its next rebalance the "
        f"service answers this assignment (the problem unchanged); {follow}.</li>\n"
        "<li>Roll back by removing the setting (docs/apply.md, section 3): the plug-in falls back to Kafka's default at once.</li>\n"
        "</ol>\n"
    )
    return "".join(out)


def _file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "problem"
