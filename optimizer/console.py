"""What the command line prints on a terminal: every table and line of text, with rich.

The commands (`optimizer.cli`) compute and decide, then hand their results here; `compare`'s
`to_table()` renders here too. Everything printed through rich that comes from a user's files
(ids, names, paths, messages quoting them) goes through escape(): "[bold]" in a client id is
text, not markup.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import click
from rich import box
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.table import Table

from optimizer.errors import InvalidInputError
from optimizer.evaluate import Evaluation, headline
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.issues import Issue, Severity
from optimizer.model.metrics import ConsumerMetrics, Metrics
from optimizer.model.problem import Problem
from optimizer.model.solution import GoalStatus, Solution
from optimizer.money import DEFAULT_CURRENCY, hours_text, money_text, monthly_cost, rate_text
from optimizer.text import plural, whole

if TYPE_CHECKING:
    from optimizer.goal import Goal
    from optimizer.pipeline.run import PipelineResult
    from plugins.manager import LoadedPlugin

PIPED_WIDTH = 200
"""Console width when the output is not a terminal and COLUMNS is unset: wide enough that tables
keep their natural width (words are never cut to rich's default 80 columns), narrow enough for a
log viewer."""


def terminal(stderr: bool = False) -> Console:
    """A console on stdout (or stderr), PIPED_WIDTH wide when piped without COLUMNS."""
    console = Console(stderr=stderr, highlight=False, soft_wrap=True)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(stderr=stderr, highlight=False, soft_wrap=True, width=PIPED_WIDTH)
    return console


out = terminal()
err = terminal(stderr=True)


def text(renderable: RenderableType, width: int = 130) -> str:
    """`renderable` as plain text `width` columns wide, as `to_table()` returns it."""
    buffer = io.StringIO()
    Console(file=buffer, width=width, highlight=False).print(renderable)
    return buffer.getvalue()


def print_line(line: str, stderr: bool = False) -> None:
    """One line of plain text (no markup)."""
    (err if stderr else out).print(escape(line))


def print_error(message: str) -> None:
    """An error on stderr, marked as one."""
    err.print(f"[red]✗[/red] {escape(message)}")


# ---------------------------------------------------------------------------------------------
# Problems, issues and evaluations
# ---------------------------------------------------------------------------------------------


def describe(problem: Problem) -> str:
    """The problem in one line: its kind, name, size and the setting that matters most."""
    label = f" {problem.name!r}" if problem.name else ""
    if isinstance(problem, ConsumerProblem):
        partitions = sum(t.partitions for t in problem.topics)
        return (
            f"consumer group{label}: {plural(len(problem.members), 'member')}, {plural(len(problem.topics), 'topic')} "
            f"({plural(partitions, 'partition')}), strategy {problem.config.partition_assignment_strategy}"
        )
    stateful = sum(t.stateful for t in problem.tasks)
    return (
        f"streams application{label}: {plural(len(problem.clients), 'client')}, {plural(len(problem.tasks), 'task')} "
        f"({stateful} stateful), {plural(problem.config.num_standby_replicas, 'standby replica')}"
    )


def print_issues(issues: Sequence[Issue], console: Console) -> None:
    for issue in issues:
        style = "red" if issue.severity == Severity.ERROR else "yellow"
        console.print(f"  [{style}]{issue.severity}[/{style}] {escape(str(issue))}")


def print_invalid(error: InvalidInputError) -> None:
    count = len(error.issues)
    err.print(f"[red]✗[/red] {escape(error.source)}: {count} problem{'s' if count != 1 else ''}")
    print_issues(error.issues, err)


def print_valid(path: Path, problem: Problem, warnings: Sequence[Issue]) -> None:
    """A problem file that passed `validate`, with the warnings Kafka would give."""
    out.print(f"[green]✓[/green] {escape(str(path))}: {escape(describe(problem))}")
    print_issues(warnings, out)


def _first_clause(description: str) -> str:
    """A field's description up to its first full stop (or, when that is long, its first
    parenthesis past 40 characters): the meaning column's text."""
    text = " ".join(description.split())
    stop = text.find(". ")
    text = text[:stop] if stop > 0 else text.rstrip(".")
    aside = text.find(" (", 40)
    return text[:aside] if len(text) > 120 and aside > 0 else text


def cross_zone_line(metrics: Metrics | None, target_metrics: Metrics | None, price: tuple[float | None, str]) -> str | None:
    """`cross-zone traffic ...: applied now 2.0 MB/s = USD 107.01 / month, target ...` for a problem
    with rates (None without): what the bill counts, in bytes per second and money."""
    now = headline(metrics).get("cross_rack_bytes")
    if now is None:
        return None
    per_gb, currency = price
    warmups = " (actives, standbys and warm-ups)" if not isinstance(metrics, ConsumerMetrics) else ""

    def priced(rate: float) -> str:
        cost = monthly_cost(rate, per_gb)
        return rate_text(rate) + ("" if cost is None else f" = {money_text(cost, currency)}")

    text = f"cross-zone traffic{warmups}: "
    target = headline(target_metrics).get("cross_rack_bytes") if target_metrics is not None else None
    text += f"applied now {priced(now)}, target {priced(target)}" if target is not None else priced(now)
    if per_gb is None:
        return text + "; no price: give price_per_gb in the problem, or --price-per-gb, for money"
    return text + f" (at {currency} {per_gb:g} per GB, a month of 730 h)"


def print_evaluation(
    problem_path: Path, solution_path: Path, problem: Problem, evaluation: Evaluation, price: tuple[float | None, str] = (None, DEFAULT_CURRENCY)
) -> None:
    verdict = "[green]valid[/green]" if evaluation.valid else "[red]INVALID[/red]"
    out.print(f"{escape(str(solution_path))} for {escape(str(problem_path))}: {verdict}")
    out.print(f"  {escape(describe(problem))}")
    if evaluation.warnings:
        print_issues(evaluation.warnings, out)
    if evaluation.violations:
        table = Table(title="Violations", title_justify="left", show_lines=False)
        table.add_column("code", style="red", no_wrap=True)
        table.add_column("message")
        for violation in evaluation.violations:
            table.add_row(violation.code.value, escape(violation.message))
        out.print(table)
    table = Table(title="Metrics", title_justify="left")
    fields = type(evaluation.metrics).model_fields
    table.add_column("metric", no_wrap=True, min_width=max(len(name) for name in fields))
    table.add_column("value", justify="right", max_width=24, overflow="fold")
    table.add_column("meaning", min_width=30, ratio=1)
    by_racks = {}
    for name, value in evaluation.metrics.model_dump(mode="json").items():
        if name.endswith("_by_racks"):
            by_racks = value  # its own table below: a matrix does not fit a cell
            continue
        if isinstance(value, dict):
            shown = ", ".join(f"{k}: {whole(v)}" for k, v in value.items()) or "-"
        elif "bytes" in name:  # bytes per second (per unit of capacity)
            shown = rate_text(value)
        else:
            shown = whole(value) if isinstance(value, float) else str(value)
        table.add_row(name, escape(shown), _first_clause(fields[name].description or ""))
    out.print(table)
    if by_racks:
        racks = Table(title="Cross-zone traffic by rack", title_justify="left")
        racks.add_column("reader's rack", no_wrap=True)
        racks.add_column("reads from", no_wrap=True)
        racks.add_column("traffic", justify="right", no_wrap=True)
        for reader, sources in by_racks.items():
            for source, rate in sources.items():
                racks.add_row(escape(reader), escape(source), rate_text(rate))
        out.print(racks)
    traffic = cross_zone_line(evaluation.metrics, None, price)
    if traffic is not None:
        out.print(escape(traffic))


def figures(metrics: Metrics, target: bool = False) -> str:
    """The headline metrics of an evaluation on one line, labelled (`target`: of a target, whose
    warm-ups and caught-up state are those it is reached with, so left out)."""
    m = metrics
    if isinstance(m, ConsumerMetrics):
        return (
            f"partitions per member {m.min_size}-{m.max_size}, balance score {whole(m.balance_score)}, owned kept "
            f"{whole(m.owned_kept)}, owned moved {whole(m.owned_moved)}, cross-rack partitions {whole(m.cross_rack_partitions)}"
            + (f", withheld {whole(m.withheld_partitions)}" if m.withheld_partitions else "")
        )
    return (
        f"tasks per thread max - min {whole(m.active_load_skew)} (actives), {whole(m.stateful_load_skew)} (stateful); "
        f"cross-rack partitions {whole(m.cross_rack_active_partitions)} (actives), {whole(m.cross_rack_standby_partitions)} "
        f"(standbys); moved {plural(m.active_moves, 'active')}, {plural(m.standby_moves, 'standby', 'standbys')}; "
        + ("" if target else f"{plural(m.warmup_tasks, 'warm-up')}; {plural(m.actives_not_caught_up, 'active')} not caught up; ")
        + f"tag conflicts {whole(m.standby_tag_conflicts)}; kip925 cost {whole(m.kip925_cost)}"
    )


# ---------------------------------------------------------------------------------------------
# Solutions
# ---------------------------------------------------------------------------------------------

LARGE_ASSIGNMENT = 5_000
"""Entries (tasks or partitions held) beyond which `solve` prints plain lines, not a table:
laying out a table of 100,000 partitions takes seconds, and nobody reads it in a terminal."""


def _kafka_release(solution: Solution) -> str:
    """` (Kafka 4.4.0)`: the release whose assignor answered, or the proposal no release ships."""
    options = solution.solver.options if solution.solver is not None else {}
    if options.get("proposal"):
        return f" (a proposal no Kafka release ships: {options['proposal']})"
    return f" (Kafka {options['kafka.version']})" if options.get("kafka.version") else ""


def print_solution(problem: Problem, solution: Solution, price: tuple[float | None, str] = (None, DEFAULT_CURRENCY)) -> None:
    """A solution as `solve` prints it: the assignment, the plan, each goal, the figures, notes."""
    assert solution.solver is not None and solution.metrics is not None  # solve() recorded and evaluated it
    ran = solution.solver.name + _kafka_release(solution)
    out.print(f"{escape(describe(problem))}: solved with {escape(ran)}")
    print_issues(solution.warnings, out)
    streams = problem.kind == "streams"
    entries = sum(len(h.active) + len(h.standby) + len(h.warmup) for h in solution.assignment.values())
    if entries > LARGE_ASSIGNMENT:
        # ids are validated (no control characters), and plain text has no markup to escape
        lines = []
        for member, held in solution.assignment.items():
            parts = [f"active ({len(held.active)}): {', '.join(held.active) or '-'}"]
            if streams:
                parts += [f"standby ({len(held.standby)}): {', '.join(held.standby) or '-'}", f"warm-up ({len(held.warmup)}): {', '.join(held.warmup) or '-'}"]
            lines.append(f"{member}: " + "; ".join(parts))
        click.echo("\n".join(lines))
    else:
        table = Table(title_justify="left")
        table.add_column("client" if streams else "member", no_wrap=True)
        table.add_column("active")
        if streams:
            table.add_column("standby")
            table.add_column("warm-up")
        for member, held in solution.assignment.items():
            cells = [", ".join(held.active) or "-"]
            if streams:
                cells += [", ".join(held.standby) or "-", ", ".join(held.warmup) or "-"]
            table.add_row(escape(member), *map(escape, cells))
        out.print(table)
    if solution.plan is not None:
        for line in plan_lines(solution, streams):
            out.print(escape(line))
    for goal in solution.goals:
        unit = goal.unit or ""
        bound = "" if goal.bound is None else f", bound {figure_text(unit, goal.bound)}"
        now = f", applied now {figure_text(unit, goal.value_now)}" if solution.target is not None else ""
        out.print(f"goal {escape(goal.name)}: {figure_text(unit, goal.value)}{now} ({goal.status}{bound}, {goal.seconds:.3f} s)")
    label = "applied now" if solution.target is not None else "figures"
    out.print(f"{label}: {escape(figures(solution.metrics))}")
    if solution.target_metrics is not None:
        out.print(f"target: {escape(figures(solution.target_metrics, target=True))}")
    traffic = cross_zone_line(solution.metrics, solution.target_metrics, price)
    if traffic is not None:
        out.print(escape(traffic))
    for note in solution.solver.options.get("notes", ()):
        out.print(f"note: {escape(str(note))}")


def plan_lines(solution: Solution, streams: bool) -> list[str]:
    """The plan from the assignment applied now to the target, for a person."""
    plan = solution.plan
    assert plan is not None
    if len(plan.rounds) == 1:
        return ["plan: this assignment is the target (no follow-up rebalance)"]
    if not streams:
        # What is withheld now (the metrics' count) and what the follow-up places: Kafka's
        # cooperative assignor may also move partitions assigned now when it runs again.
        placed = plan.rounds[1].moves
        withheld = solution.metrics.withheld_partitions if isinstance(solution.metrics, ConsumerMetrics) else placed
        more = placed - withheld
        return [
            f"plan: {plural(withheld, 'partition')} withheld now (cooperative), assigned in the follow-up rebalance "
            "the revoking members trigger at once"
            + (f", which also moves {plural(more, 'partition')} assigned now" if more > 0 else "")
            + "; goal values are the target's"
        ]
    lines = [
        f"plan: {plural(plan.followup_rebalances, 'probing rebalance')} to the target, at least {hours_text(plan.seconds_to_target)} "
        f"(probing.rebalance.interval.ms); {plural(plan.warmups, 'warm-up replica')}, "
        f"{whole(plan.restore_offsets)} changelog offsets to restore"
        + (f" ({plural(plan.restore_unknown, 'copy', 'copies')} of unknown size)" if plan.restore_unknown else "")
        + "; goal values are the target's"
    ]
    shown_rounds = plan.rounds if len(plan.rounds) <= 6 else (*plan.rounds[:3], None, *plan.rounds[-2:])
    for entry in shown_rounds:
        if entry is None:
            lines.append(f"  ... {len(plan.rounds) - 5} more rounds")
            continue
        when = "now" if entry.round == 1 else f"rebalance {entry.round - 1}"
        warm = sum(len(tasks) for tasks in entry.warmups.values())
        lines.append(
            f"  round {entry.round} ({when}): {plural(entry.moves, 'active')} moved, {plural(warm, 'warm-up')} started, "
            f"{whole(entry.restore_offsets)} offsets to restore"
        )
    return lines


# ---------------------------------------------------------------------------------------------
# Goals and examples
# ---------------------------------------------------------------------------------------------


def print_goals(goals: Sequence[type[Goal]], owners: Mapping[str, str], loaded: Sequence[LoadedPlugin]) -> None:
    """The goals available, with the plugin that registered each, and the plugins loaded."""
    table = Table(title="Goals", title_justify="left")
    for column in ("goal", "plugin", "kinds", "hard", "what it counts (lower is better)"):
        table.add_column(column)
    for goal in goals:
        table.add_row(escape(goal.name), escape(owners[goal.name]), ", ".join(goal.kinds), "yes" if goal.hard else "", escape(goal.summary))
    out.print(table)
    out.print("plugins: " + ", ".join(escape(f"{p.name} {p.version}") for p in loaded))


EXAMPLE_VERDICTS = {
    "problem ok": "green",
    "yes": "green",
    "invalid problem": "red",
    "invalid file": "red",
    "NO": "red",
}
"""What `examples` says of a problem or a solution, and its colour."""


@dataclass(frozen=True)
class ExampleCheck:
    """One row of `kafka-assign examples`: a problem, or one of the solutions next to it."""

    problem: str
    """The problem file under the directory; empty below its first row."""
    solution: str
    """The solution's label (`NAME.LABEL.solution.json`), `-` when the problem has none."""
    verdict: str
    """One of EXAMPLE_VERDICTS."""
    detail: str
    """The figures, the problem's description, or what is wrong."""


def print_examples(directory: Path, checks: Sequence[ExampleCheck], problems: int, failures: int) -> None:
    table = Table(title=f"Examples under {escape(str(directory))}", title_justify="left")
    table.add_column("problem", overflow="fold", ratio=2)
    table.add_column("solution", overflow="fold", ratio=1)
    table.add_column("valid", no_wrap=True)
    table.add_column("figures", min_width=24, ratio=4)
    for check in checks:
        style = EXAMPLE_VERDICTS[check.verdict]
        table.add_row(escape(check.problem), escape(check.solution), f"[{style}]{check.verdict}[/{style}]", escape(check.detail))
    out.print(table)
    out.print(f"{plural(problems, 'problem')}, {plural(failures, 'failure')}; details: kafka-assign evaluate PROBLEM SOLUTION")


# ---------------------------------------------------------------------------------------------
# Comparisons (`compare` renders through these without this module importing it: the protocols
# below are what the tables read of `optimizer.compare`'s dataclasses)
# ---------------------------------------------------------------------------------------------


class ComparedGoal(Protocol):
    """One goal of a `Comparison` (`optimizer.compare.GoalComparison`)."""

    @property
    def name(self) -> str: ...
    @property
    def kafka(self) -> float: ...
    @property
    def exact(self) -> float | None: ...
    @property
    def status(self) -> GoalStatus: ...
    @property
    def bound(self) -> float | None: ...
    @property
    def seconds(self) -> float: ...
    @property
    def kafka_now(self) -> float: ...
    @property
    def exact_now(self) -> float | None: ...
    @property
    def notes(self) -> Mapping[str, str]: ...
    @property
    def unit(self) -> str | None: ...


class KafkaAgainstExact(Protocol):
    """Kafka's heuristic against the exact optimum (`optimizer.compare.Comparison`)."""

    @property
    def problem(self) -> str | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def goals(self) -> Sequence[ComparedGoal]: ...
    @property
    def kafka_seconds(self) -> float: ...
    @property
    def exact_seconds(self) -> float: ...
    @property
    def moves(self) -> int: ...
    @property
    def kafka(self) -> Solution: ...
    @property
    def reads(self) -> str | None: ...
    @property
    def currency(self) -> str: ...
    def figures(self) -> dict[str, dict[str, float]]: ...


class ProtocolsAgainstExact(Protocol):
    """The classic protocol's assignor, the new one's and the exact optimum
    (`optimizer.compare.ProtocolComparison`)."""

    @property
    def problem(self) -> str | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def columns(self) -> Sequence[str]: ...
    @property
    def assignors(self) -> Mapping[str, str]: ...
    @property
    def metrics(self) -> Mapping[str, Mapping[str, float]]: ...
    @property
    def goals(self) -> Mapping[str, Mapping[str, float | None]]: ...
    @property
    def seconds(self) -> Mapping[str, float]: ...
    @property
    def reads(self) -> str | None: ...
    def plans(self) -> dict[str, dict[str, float]]: ...


CAPTIONS = {
    "streams": (
        "now: the assignment applied at this rebalance (stateful actives on caught-up clients, warm-ups started); "
        "target: where the plan ends, one probing rebalance per round (probing.rebalance.interval.ms), assuming each "
        "warm-up catches up within one interval. Goal values of the exact target are proven against the bound."
    ),
    "cooperative": (
        "now: the assignment applied at this rebalance (cooperative: partitions that change owner are withheld until "
        "revoked); target: after the follow-up rebalance the revoking members trigger at once. No warm-ups: "
        "consumer groups have none."
    ),
    "eager": "Consumer groups have no warm-ups; this strategy assigns everything at once: now is the target.",
}

FIGURE_LABELS: dict[str, tuple[tuple[str, str], ...]] = {
    "streams": (
        ("cross_rack_partitions", "cross-rack partitions (actives, standbys, warm-ups)"),
        ("cross_rack_bytes", "cross-zone traffic (actives, standbys, warm-ups)"),
        ("money_per_month", "cross-zone cost per month (the same reads)"),
        ("load_skew", "active tasks per thread, max - min"),
        ("moves", "active + standby moves"),
        ("followup_rebalances", "probing rebalances to the target"),
        ("warmups", "warm-up replicas over the plan"),
        ("restore_offsets", "changelog offsets restored over the plan"),
        ("restore_unknown", "copies restored whose size is unknown"),
        ("hours_to_target", "time to the target (at least)"),
    ),
    "consumer": (
        ("cross_rack_partitions", "cross-rack partitions"),
        ("cross_rack_bytes", "cross-zone traffic"),
        ("money_per_month", "cross-zone cost per month"),
        ("load_skew", "partitions per member, max - min"),
        ("moves", "owned partitions moved or withheld"),
        ("withheld", "partitions withheld a round"),
        ("followup_rebalances", "follow-up rebalances to the target"),
    ),
}


def figure_text(figure: str, value: float | None, currency: str = DEFAULT_CURRENCY) -> str:
    """A figure's or goal's value with its unit: bytes per second as kB/s, MB/s, ...; money with
    its currency; hours; anything else as a whole number (or two decimals)."""
    if value is None:
        return "-"
    if figure in ("cross_rack_bytes", "bytes_per_second"):
        return rate_text(value)
    if figure == "money_per_month":
        return money_text(value, currency, monthly=False)
    if figure == "hours_to_target":
        return hours_text(value * 3600)
    return whole(value)


PROTOCOL_METRIC_LABELS = {
    "cross_rack_active_partitions": "cross-rack source partitions (actives)",
    "cross_rack_standby_partitions": "cross-rack changelog partitions (standbys)",
    "active_load_skew": "active tasks per thread, max - min",
    "stateful_load_skew": "stateful tasks per thread, max - min",
    "active_moves": "active tasks moved",
    "standby_moves": "standbys placed anew",
    "standby_rack_conflicts": "standbys sharing a rack with a copy",
    "actives_not_caught_up": "actives not caught up",
    "cross_rack_partitions": "cross-rack partitions",
    "size_skew": "partitions per member, max - min",
    "owned_moved": "owned partitions moved",
    "withheld_partitions": "partitions withheld a round",
}
"""How `compare --protocols` names the metrics `optimizer.compare.PROTOCOL_METRICS` lists."""


def _consumer_kind(solution: Solution) -> str:
    return "cooperative" if solution.plan is not None and solution.plan.followup_rebalances else "eager"


def comparison_table(comparison: KafkaAgainstExact) -> Table:
    """`kafka-assign compare`'s table: each goal and headline figure, Kafka's and the exact
    answer, each as applied now and as its target, with the bound, status and time."""
    name = f" {comparison.problem!r}" if comparison.problem else ""
    table = Table(title=escape(f"Kafka heuristic vs exact on{name}{_kafka_release(comparison.kafka)}"), title_justify="left")
    table.add_column("goal or figure (lower is better)", justify="left")
    for column in ("Kafka\nnow", "Kafka\ntarget", "exact\nnow", "exact\ntarget", "bound", "status", "seconds"):
        table.add_column(column, justify="left" if column == "status" else "right", no_wrap=True)
    marks: list[str] = []

    def marked(value: float | None, why: str | None, unit: str | None = None) -> str:
        text = figure_text(unit or "", value)
        if why is None:
            return text
        if why not in marks:
            marks.append(why)
        return f"{text} ({marks.index(why) + 1})"

    for number, g in enumerate(comparison.goals, start=1):
        reasons = {column: g.notes.get(column) for column in ("kafka_now", "kafka", "exact_now")}
        better = g.exact is not None and g.exact < g.kafka
        exact = figure_text(g.unit or "", g.exact)
        table.add_row(
            escape(f"goal {g.name}"),
            marked(g.kafka_now, reasons["kafka_now"], g.unit),
            marked(g.kafka, reasons["kafka"], g.unit),
            marked(g.exact_now, reasons["exact_now"], g.unit),
            f"[green]{exact}[/green]" if better else exact,
            figure_text(g.unit or "", g.bound),
            g.status,
            f"{g.seconds:.3f}",
            end_section=number == len(comparison.goals),
        )
    labels = dict(FIGURE_LABELS[comparison.kind])
    figures = comparison.figures()
    for figure in sorted(figures, key=lambda name: [*labels, name].index(name)):  # in the labels' order
        values = figures[figure]
        label = labels.get(figure, figure)
        table.add_row(
            escape(label),
            *(figure_text(figure, values.get(c), comparison.currency) for c in ("kafka_now", "kafka", "exact_now", "exact")),
            "",
            "",
            "",
        )
    caption = [
        f"Kafka {comparison.kafka_seconds:.3f} s, exact {comparison.exact_seconds:.3f} s; "
        f"{plural(comparison.moves, 'task' if comparison.kind == 'streams' else 'partition')} placed differently in the two targets.",
        CAPTIONS[comparison.kind if comparison.kind == "streams" else _consumer_kind(comparison.kafka)],
    ]
    if comparison.reads is not None:
        caption.append(comparison.reads)
    cut = [g.name for g in comparison.goals if str(g.status) == "time_limit"]
    if cut:
        caption.append(f"Cut by the time limit, not proven: {', '.join(cut)} (a longer --time-limit proves more; docs/engine.md).")
    if any(g.unit in ("partitions", "bytes_per_second") for g in comparison.goals) and comparison.kind == "streams":
        caption.append("The cross-rack goals count the reads of actives and standbys; the figures below them add the warm-ups' reads.")
    caption += [f"({i}) {why}" for i, why in enumerate(marks, start=1)]
    table.caption = escape("\n".join(caption))
    table.caption_justify = "left"
    return table


def protocol_comparison_table(comparison: ProtocolsAgainstExact) -> Table:
    """`kafka-assign compare --protocols`' table: the metrics of each assignment applied now, the
    goal values of each target and each plan, one column per protocol and the exact optimum."""
    name = f" {comparison.problem!r}" if comparison.problem else ""
    table = Table(title=escape(f"Classic protocol vs new protocol vs exact on{name}"), title_justify="left")
    table.add_column("figure (lower is better)", justify="left", no_wrap=True)
    for column in comparison.columns:
        table.add_column(escape(f"{column}\n{comparison.assignors[column]}"), justify="right", no_wrap=True)
    for metric, values in comparison.metrics.items():
        table.add_row(escape(f"now: {PROTOCOL_METRIC_LABELS[metric]}"), *(whole(values[c]) for c in comparison.columns))
    for goal, goal_values in comparison.goals.items():
        table.add_row(escape(f"target: goal {goal}"), *(whole(goal_values[c]) for c in comparison.columns))
    plans = comparison.plans()
    plan_labels = dict(FIGURE_LABELS[comparison.kind])
    for figure in (f for f in plans[comparison.columns[0]] if f != "withheld"):  # a metric row already
        table.add_row(escape(plan_labels[figure]), *(whole(plans[c].get(figure)) for c in comparison.columns))
    table.caption = escape(
        ", ".join(f"{c} {comparison.seconds[c]:.3f} s" for c in comparison.columns)
        + f"; goals in order: {', '.join(comparison.goals)}. now: the assignment applied at this rebalance; "
        "target: where each plan ends"
        + (" (warm-ups caught up, one probing rebalance per round)." if comparison.kind == "streams" else " (withheld partitions assigned).")
        + ("" if comparison.reads is None else "\n" + comparison.reads)
    )
    table.caption_justify = "left"
    return table


# ---------------------------------------------------------------------------------------------
# The fleet pipeline
# ---------------------------------------------------------------------------------------------

FAILED_LISTED = 20
"""Problems without an assignment named in the terminal summary (the report lists them all)."""


def reduction(before: float, after: float, unit: str = "") -> str:
    """`2,390 -> 1,146 (1,244 or 52.1 % less)`: a figure before and after, the change said as a
    reduction or an increase in words, not as a signed percentage."""
    change = after - before
    if change == 0:
        return f"{whole(before)}{unit} -> {whole(after)}{unit} (unchanged)"
    word = "less" if change < 0 else "more"
    percent = f" or {abs(change) / before * 100:.1f} %" if before else ""
    return f"{whole(before)}{unit} -> {whole(after)}{unit} ({whole(abs(change))}{unit}{percent} {word})"


def print_fleet(result: PipelineResult, price_per_gb: float | None = None, currency: str | None = None) -> None:
    """The terminal summary of a pipeline run: per solver, Kafka against the exact solver, the
    money, and the problems not solved."""
    from optimizer.report import failed_rows, fleet_totals, unproven_rows

    totals = fleet_totals(result.summary, price_per_gb, currency)
    title = f"Fleet: {plural(result.problems, 'problem')}, {plural(result.rows, 'row')}, {result.seconds:.1f} s end to end"
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    widest = max((len(name) for name in totals["per_solver"]), default=0)
    columns = (
        "solver", "solved", "invalid", "errors", "cross-rack\nnow", "cross-rack\ntarget", "moves\nnow",
        "mean skew\nnow", "mean skew\ntarget", "probing\nrounds", "restore\noffsets", "solve s",
    )  # fmt: skip
    for column in columns:
        width = max(len(column), widest) if column == "solver" else None  # kafka:classic whole
        table.add_column(column, justify="left" if column == "solver" else "right", no_wrap=True, min_width=width)
    for solver, t in totals["per_solver"].items():
        table.add_row(
            escape(solver), whole(t["solved"]), whole(t["invalid"]), whole(t["errors"]), whole(t["cross_rack_partitions"]),
            whole(t["target_cross_rack_partitions"]), whole(t["moves"]), whole(t["load_skew_mean"]),
            whole(t["target_load_skew_mean"]), whole(t["followup_rebalances"]), whole(t["restore_offsets"]),
            f"{t['seconds_total']:.1f}",
        )  # fmt: skip
    out.print(table)
    out.print(
        "now: the assignments applied at this rebalance; target: where each plan ends (Streams: warm-ups caught up, "
        "one probing rebalance per round; cooperative groups: withheld partitions assigned). cross-rack: partitions read "
        "across racks (Streams: by actives, standbys and warm-ups); mean skew: tasks per thread (partitions per member), "
        "max - min; probing rounds and restore offsets: over the plans."
    )
    c = totals["comparison"]
    if c:
        out.print(
            f"{c['reference']} vs {c['baseline']} on {plural(c['problems'], 'problem')}: cross-rack partitions applied now "
            f"{reduction(c['baseline_cross_rack'], c['reference_cross_rack'])}; at the targets "
            f"{reduction(c['baseline_target_cross_rack'], c['reference_target_cross_rack'])}; "
            f"better now on {c['better']}, equal on {c['equal']}, worse on {c['worse']} (goals rank before cross-rack traffic: see the report)"
        )
        out.print(
            f"getting there: moves applied now {reduction(c['baseline_moves'], c['reference_moves'])}; probing rebalances "
            f"{reduction(c['baseline_rounds'], c['reference_rounds'])}; changelog offsets restored "
            f"{reduction(c['baseline_restore_offsets'], c['reference_restore_offsets'])}; hours to the targets, summed over the "
            f"problems, {hours_text(c['baseline_hours_to_target'] * 3600)} -> {hours_text(c['reference_hours_to_target'] * 3600)} "
            f"(the longest {hours_text(c['baseline_longest_hours'] * 3600)} -> {hours_text(c['reference_longest_hours'] * 3600)}; "
            "at least: one probing.rebalance.interval.ms per round)"
        )
    money = totals["money"]
    if c and money:
        by_currency = money["by_currency"]
        priced = (
            "; ".join(
                f"{code} {m['baseline_money']:,.2f} -> {m['baseline_money'] - m['money_saved']:,.2f} a month "
                f"({abs(m['money_saved']):,.2f} {'more' if m['money_saved'] < 0 else 'less'}) on the {plural(m['priced'], 'problem')} priced in {code}"
                for code, m in by_currency.items()
            )
            if by_currency
            else "no price (--price-per-gb) for money"
        )
        out.print(
            f"cross-zone traffic at the targets on {plural(money['with_bytes'], 'problem')} with throughputs: "
            f"{rate_text(money['baseline_bytes'])} -> {rate_text(money['reference_bytes'])} "
            f"({rate_text(abs(money['bytes_saved']))} {'more' if money['bytes_saved'] < 0 else 'less'}); {priced}"
        )
        curve = totals["pareto"]
        if curve and curve["top"]:
            out.print(f"the top {curve['top']} of {curve['problems']} compared problems give {curve['share']:.0f} % of the saving (the report ranks them)")
    unproven = unproven_rows(result.summary)
    if unproven:
        listed = "; ".join(f"{escape(str(row.get('problem')))} ({row.get('solver')}: {escape(why)})" for row, why in unproven[:FAILED_LISTED])
        more = f"; and {len(unproven) - FAILED_LISTED} more (the report lists them)" if len(unproven) > FAILED_LISTED else ""
        out.print(f"not proven optimal ({plural(len(unproven), 'row')}, an assignment all the same): {listed}{more}")
    failed = failed_rows(result.summary)
    if failed:
        problems = sorted({str(row.get("problem")) for row in failed})
        out.print(f"not solved ({plural(len(problems), 'problem')}; every row has its reason in the summary's error column):")
        shown_rows: dict[str, dict[str, Any]] = {}
        for row in failed:  # one line per problem: the first solver's reason (invalid: the same for all)
            shown_rows.setdefault(str(row.get("problem")), row)
        for name in problems[:FAILED_LISTED]:
            row = shown_rows[name]
            reason = " ".join(str(row.get("error") or row.get("status")).split())
            if len(reason) > 300:
                reason = reason[:297] + "..."
            solvers = sorted({str(r.get("solver")) for r in failed if str(r.get("problem")) == name})
            out.print(f"  {escape(name)} ({row.get('status')}; {', '.join(solvers)}): {escape(reason)}")
        if len(problems) > FAILED_LISTED:
            out.print(f"  ... and {len(problems) - FAILED_LISTED} more (see the report)")
    out.print(f"output: {escape(str(result.output.resolve()))}")
