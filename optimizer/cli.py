"""The `kafka-assign` command line.

Exit codes (DESIGN.md, `optimizer.errors.ExitCode`): 0 success, 1 invalid input (including an
invalid assignment given to `evaluate`), 2 usage error, 3 no feasible solution or a time limit
without a solution, 4 an internal error (a bug: a solver's result failed the evaluator, or an
unexpected exception; the message says so, and KAFKA_ASSIGN_TRACEBACK=1 prints the traceback
too). Every error the project raises on purpose reaches `_fail`, which prints it and exits with
the error's own `exit_code`; commands catch errors only to go on with the next file.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, NoReturn

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from optimizer.backends import REGISTRY
from optimizer.catalogue import SOLVERS, goal_class
from optimizer.compare import Comparison, ProtocolComparison, compare, compare_protocols
from optimizer.deadline import deadline_after, remaining, run_within
from optimizer.errors import ExitCode, InvalidInputError, KafkaAssignmentError, TimeLimitReached, UsageError
from optimizer.evaluate import Evaluation, evaluate, record_evaluation
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.issues import Issue, Severity
from optimizer.model.metrics import ConsumerMetrics, Metrics
from optimizer.model.normalize import normalize
from optimizer.model.problem import Problem, solution_to_data
from optimizer.model.solution import Solution
from optimizer.money import money_text, rate_text
from optimizer.solve import solve
from optimizer.sources import PROBLEM_SUFFIXES
from optimizer.sources.problem_file import load_problem, load_solution, save_solution
from optimizer.text import plural, whole
from optimizer.version import __version__
from plugins.manager import plugins

PIPED_WIDTH = 200
"""Console width when the output is not a terminal and COLUMNS is unset: wide enough that tables
keep their natural width (words are never cut to rich's default 80 columns), narrow enough for a
log viewer."""


def _console(stderr: bool = False) -> Console:
    console = Console(stderr=stderr, highlight=False, soft_wrap=True)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(stderr=stderr, highlight=False, soft_wrap=True, width=PIPED_WIDTH)
    return console


out = _console()
err = _console(stderr=True)

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _describe(problem: Problem) -> str:
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


# Everything printed through rich that comes from a user's files (ids, names, paths, messages
# quoting them) goes through escape(): "[bold]" in a client id is text, not markup.


def _print_issues(issues: tuple[Issue, ...] | list[Issue], console: Console) -> None:
    for issue in issues:
        style = "red" if issue.severity == Severity.ERROR else "yellow"
        console.print(f"  [{style}]{issue.severity}[/{style}] {escape(str(issue))}")


def _print_invalid(error: InvalidInputError) -> None:
    count = len(error.issues)
    err.print(f"[red]✗[/red] {escape(error.source)}: {count} problem{'s' if count != 1 else ''}")
    _print_issues(error.issues, err)


def _issue_json(issues: tuple[Issue, ...] | list[Issue]) -> list[dict[str, Any]]:
    return [issue.model_dump(mode="json") for issue in issues]


TRACEBACK_ENV = "KAFKA_ASSIGN_TRACEBACK"
"""Set to 1 to print the traceback of an internal error as well."""


def _fail(error: KafkaAssignmentError) -> NoReturn:
    """An error the project raised on purpose reached the command line: print it, exit with its
    own code (`optimizer.errors`)."""
    if isinstance(error, InvalidInputError):
        _print_invalid(error)
    elif error.exit_code == ExitCode.INTERNAL:
        err.print(f"[red]✗[/red] internal error: {escape(str(error))}")
    else:
        err.print(f"[red]✗[/red] {escape(str(error))}")
    sys.exit(error.exit_code)


def _internal_error(error: BaseException) -> NoReturn:
    """A bug reached the command line: say so in one message, exit 4 (never a bare traceback)."""
    err.print(
        f"[red]✗[/red] internal error (a bug in kafka-assignment-optimizer {escape(__version__)}, please report it): "
        f"{escape(type(error).__name__)}: {escape(str(error)[:2000])}"
    )
    if os.environ.get(TRACEBACK_ENV) == "1":
        err.print(escape("".join(traceback.format_exception(error))))
    else:
        err.print(f"  set {TRACEBACK_ENV}=1 to print the traceback")
    sys.exit(ExitCode.INTERNAL)


class _Commands(click.Group):
    """The command group; whatever a command does not handle ends as an internal error."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KafkaAssignmentError as error:
            _fail(error)
        except Exception as error:  # noqa: BLE001 - the last line of defence
            _internal_error(error)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="kafka-assign")
def cli() -> None:
    """Kafka-faithful and exact assignments for Kafka Streams tasks and consumer groups.

    Problems are JSON or YAML files (format kafka-assignment-problem/v1, see docs/file-formats.md).
    Exit codes: 0 success, 1 invalid input, 2 usage error, 3 no feasible solution (or none within
    the time limit), 4 internal error (a bug).
    """


@cli.command()
@click.argument("problems", nargs=-1, required=True, type=_FILE)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON result per file instead.")
def validate(problems: tuple[Path, ...], as_json: bool) -> None:
    """Check problem files: every error with its location, and the warnings Kafka would give.

    Exits 1 if any file is invalid. Warnings (conditions Kafka tolerates) do not fail.
    """
    results = []
    failed = False
    for path in problems:
        try:
            problem = load_problem(path)
        except InvalidInputError as error:
            failed = True
            results.append({"source": str(path), "valid": False, "issues": _issue_json(error.issues)})
            if not as_json:
                _print_invalid(error)
            continue
        warnings = normalize(problem).warnings
        results.append(
            {"source": str(path), "valid": True, "kind": problem.kind, "issues": _issue_json(warnings)}
        )
        if not as_json:
            out.print(f"[green]✓[/green] {escape(str(path))}: {escape(_describe(problem))}")
            _print_issues(warnings, out)
    if as_json:
        click.echo(json.dumps(results, indent=2))
    sys.exit(ExitCode.INVALID_INPUT if failed else ExitCode.OK)


@cli.command("evaluate")
@click.argument("problem_path", metavar="PROBLEM", type=_FILE)
@click.argument("solution_path", metavar="SOLUTION", type=_FILE)
@click.option("--json", "as_json", is_flag=True, help="Print the evaluation as JSON.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the solution with its metrics and the problem's warnings recorded.",
)
def evaluate_command(
    problem_path: Path, solution_path: Path, as_json: bool, output: Path | None
) -> None:
    """Check an assignment against its problem and print its metrics.

    Validity follows KIP-924's assignment errors plus completeness. Exits 1 when either file is
    invalid or the assignment has violations.
    """
    invalid = []
    problem: Problem | None = None
    solution: Solution | None = None
    try:
        problem = load_problem(problem_path)
    except InvalidInputError as error:
        invalid.append(error)
    try:
        solution = load_solution(solution_path)
    except InvalidInputError as error:
        invalid.append(error)
    if problem is not None and solution is not None and solution.kind is not None and solution.kind != problem.kind:
        invalid.append(
            InvalidInputError(
                str(solution_path),
                [
                    Issue(
                        severity=Severity.ERROR,
                        location="kind",
                        message=f"the solution is for a {solution.kind} problem, "
                        f"but {problem_path} is a {problem.kind} problem",
                    )
                ],
            )
        )
    if invalid or problem is None or solution is None:
        for failure in invalid:
            _print_invalid(failure)
        sys.exit(ExitCode.INVALID_INPUT)

    evaluation = evaluate(problem, solution)
    if output is not None:
        _write(record_evaluation(solution, evaluation, problem), output)
    if as_json:
        click.echo(evaluation.model_dump_json(indent=2))
    else:
        _print_evaluation(problem_path, solution_path, problem, evaluation)
    sys.exit(ExitCode.OK if evaluation.valid else ExitCode.INVALID_INPUT)


def _print_evaluation(
    problem_path: Path, solution_path: Path, problem: Problem, evaluation: Evaluation
) -> None:
    verdict = "[green]valid[/green]" if evaluation.valid else "[red]INVALID[/red]"
    out.print(f"{escape(str(solution_path))} for {escape(str(problem_path))}: {verdict}")
    out.print(f"  {escape(_describe(problem))}")
    if evaluation.warnings:
        _print_issues(evaluation.warnings, out)
    if evaluation.violations:
        table = Table(title="Violations", title_justify="left", show_lines=False)
        table.add_column("code", style="red", no_wrap=True)
        table.add_column("message")
        for violation in evaluation.violations:
            table.add_row(violation.code.value, escape(violation.message))
        out.print(table)
    table = Table(title="Metrics", title_justify="left")
    table.add_column("metric", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("meaning")
    fields = type(evaluation.metrics).model_fields
    for name, value in evaluation.metrics.model_dump(mode="json").items():
        meaning = (fields[name].description or "").split("\n")[0].rstrip(" (")
        if isinstance(value, dict):
            value = ", ".join(f"{k}: {v}" for k, v in value.items()) or "-"
        elif isinstance(value, float):
            value = f"{value:.3f}"
        table.add_row(name, escape(str(value)), meaning)
    out.print(table)


def _tolerances(values: tuple[str, ...]) -> dict[str, str]:
    tolerances = {}
    for value in values:
        name, _, amount = value.partition("=")
        if not amount:
            raise click.BadParameter(f"{value!r}: expected GOAL=N or GOAL=P%", param_hint="--tolerance")
        tolerances[name.strip()] = amount.strip()
    return tolerances


def _goal_list(value: str | None) -> list[str] | None:
    return None if value is None else [g for g in (part.strip() for part in value.split(",")) if g]


@cli.command("solve")
@click.argument("problem_path", metavar="PROBLEM", type=_FILE)
@click.option(
    "--solver",
    type=click.Choice(SOLVERS),
    default="exact",
    show_default=True,
    help="exact: goals in priority order, each proven optimal (fastest back-end per stage); "
    f"{', '.join(backend.name for backend in REGISTRY)}: force a back-end; kafka: what Kafka's own assignor computes; "
    "kip925: KIP-925's optimisation of the previous assignment (Streams).",
)
@click.option(
    "--goals", "goal_names", metavar="G1,G2,...",
    help="Goals in priority order (see `kafka-assign goals`); GOAL=ARG passes an argument, like movement_budget=10.",
)
@click.option(
    "--time-limit", type=click.FloatRange(min=0), metavar="SECONDS",
    help=(
        "For the whole command: reading the file, the exact goal sequence, and Kafka's assignor (as the solver or as "
        "the exact engine's fallback); exit 3 when nothing is found in time."
    ),
)
@click.option("--tolerance", "tolerances", multiple=True, metavar="GOAL=N|P%", help="Let later goals raise GOAL by N, or by P percent, above its optimum.")
@click.option("--no-warmups", is_flag=True, help="Return the exact target without KIP-441 warm-up planning.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the solution file.")
@click.option("--json", "as_json", is_flag=True, help="Print the solution as JSON.")
def solve_command(
    problem_path: Path,
    solver: str,
    goal_names: str | None,
    time_limit: float | None,
    tolerances: tuple[str, ...],
    no_warmups: bool,
    output: Path | None,
    as_json: bool,
) -> None:
    """Assign a problem's tasks or partitions and print the assignment.

    Every result passes the evaluator before it is printed. Warnings about the problem (things
    Kafka tolerates) are printed and recorded in the solution. Exits 3 when the exact solver
    found nothing within the time limit (Kafka's assignment is then returned, marked so), or when
    hard goals conflict (the best assignment that minimises them is returned, marked so).
    """
    deadline = deadline_after(time_limit)  # the whole command, reading the file included
    problem = _load(problem_path, deadline, time_limit)
    solution = solve(
        problem,
        solver=solver,
        goals=_goal_list(goal_names),
        time_limit=remaining(deadline),
        tolerances=_tolerances(tolerances),
        warmups=not no_warmups,
    )
    if output is not None:
        _write(solution, output)
    if as_json:
        click.echo(json.dumps(solution_to_data(solution), indent=2))
    else:
        _print_solution(problem, solution)
    if solution.solver is not None and solution.solver.options.get("fallback"):
        sys.exit(ExitCode.NO_SOLUTION)


def _load(path: Path, deadline: float | None = None, time_limit: float | None = None) -> Problem:
    """The problem at `path`, read by `deadline` (InvalidInputError, or TimeLimitReached past it)."""
    try:
        return run_within(deadline, lambda: load_problem(path))
    except TimeLimitReached:
        slow = " (YAML reads at about 1 MB/s, JSON much faster)" if path.suffix.lower() in (".yaml", ".yml") else ""
        raise TimeLimitReached(f"reading {path} took longer than the time limit ({time_limit:g} s){slow}") from None


def _cannot_write(output: Path, error: OSError) -> UsageError:
    return UsageError(f"cannot write {output}: {error.strerror or error}")


def _write(solution, output: Path) -> None:
    try:
        save_solution(solution, output)
    except OSError as error:
        raise _cannot_write(output, error) from None


@cli.command("compare")
@click.argument("problem_path", metavar="PROBLEM", type=_FILE)
@click.option("--goals", "goal_names", metavar="G1,G2,...", help="Goals in priority order (default: the kind's default sequence).")
@click.option(
    "--time-limit", type=click.FloatRange(min=0), metavar="SECONDS",
    help="For the whole command: reading the file, Kafka's assignor and the exact goal sequence.",
)
@click.option(
    "--protocols", is_flag=True,
    help="Kafka's assignor under the classic protocol and under the new one (KIP-848 for consumer "
    "groups, KIP-1071 for Streams), beside the exact optimum: cross-rack reads, balance, movement.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def compare_command(problem_path: Path, goal_names: str | None, time_limit: float | None, protocols: bool, as_json: bool) -> None:
    """Kafka's heuristic against the exact optimum, goal by goal: values, bound, gap, times, and
    how many tasks or partitions the two place differently."""
    deadline = deadline_after(time_limit)  # the whole command, reading the file included
    problem = _load(problem_path, deadline, time_limit)
    comparison: Comparison | ProtocolComparison
    if protocols:
        comparison = compare_protocols(problem, goals=_goal_list(goal_names), time_limit=remaining(deadline))
    else:
        comparison = compare(problem, goals=_goal_list(goal_names), time_limit=remaining(deadline))
    if as_json:
        click.echo(json.dumps(comparison.to_dict(), indent=2))
    else:
        out.print(comparison.table())


@cli.command("goals")
@click.option("--json", "as_json", is_flag=True, help="Print the goals as JSON.")
def goals_command(as_json: bool) -> None:
    """List the goals available (built-in and from plugins) and the plugins loaded."""
    loaded = plugins()
    goals = [goal_class(name) for name in loaded.goals.names()]
    rows: list[dict[str, Any]] = []
    for goal in goals:
        name = goal.name
        rows.append(
            {
                "name": name,
                "plugin": loaded.goals.owners[name],
                "kinds": list(goal.kinds),
                "hard": goal.hard,
                "summary": goal.summary,
            }
        )
    if as_json:
        click.echo(json.dumps({"plugins": [vars(p) for p in loaded.loaded], "goals": rows}, indent=2))
        return
    table = Table(title="Goals", title_justify="left")
    for column in ("goal", "plugin", "kinds", "hard", "what it counts (lower is better)"):
        table.add_column(column)
    for goal in goals:
        table.add_row(escape(goal.name), escape(loaded.goals.owners[goal.name]), ", ".join(goal.kinds), "yes" if goal.hard else "", escape(goal.summary))
    out.print(table)
    out.print("plugins: " + ", ".join(escape(f"{p.name} {p.version}") for p in loaded.loaded))


LARGE_ASSIGNMENT = 5_000
"""Entries (tasks or partitions held) beyond which `solve` prints plain lines, not a table:
laying out a table of 100,000 partitions takes seconds, and nobody reads it in a terminal."""


def _print_solution(problem: Problem, solution) -> None:
    out.print(f"{escape(_describe(problem))}: solved with {solution.solver.name}")
    _print_issues(solution.warnings, out)
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
        for line in _plan_lines(solution, streams):
            out.print(escape(line))
    for goal in solution.goals:
        bound = "" if goal.bound is None else f", bound {whole(goal.bound)}"
        now = f", applied now {whole(goal.value_now)}" if solution.target is not None else ""
        out.print(f"goal {escape(goal.name)}: {whole(goal.value)}{now} ({goal.status}{bound}, {goal.seconds:.3f} s)")
    label = "applied now" if solution.target is not None else "figures"
    out.print(f"{label}: {escape(_figures(solution.metrics))}")  # solve() evaluated it
    if solution.target_metrics is not None:
        out.print(f"target: {escape(_figures(solution.target_metrics, target=True))}")
    for note in solution.solver.options.get("notes", ()):
        out.print(f"note: {escape(str(note))}")


def _plan_lines(solution, streams: bool) -> list[str]:
    """The plan from the assignment applied now to the target, for a person."""
    plan = solution.plan
    if len(plan.rounds) == 1:
        return ["plan: this assignment is the target (no follow-up rebalance)"]
    if not streams:
        withheld = plan.rounds[1].moves
        return [
            f"plan: {plural(withheld, 'partition')} withheld now (cooperative), assigned in the follow-up rebalance "
            "the revoking members trigger at once; goal values are the target's"
        ]
    minutes = plan.seconds_to_target / 60
    lines = [
        f"plan: {plural(plan.followup_rebalances, 'probing rebalance')} to the target, at least {whole(round(minutes, 1))} min "
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


def _figures(metrics: Metrics, target: bool = False) -> str:
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


@cli.command()
@click.argument(
    "directory",
    default="examples",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
def examples(directory: Path) -> None:
    """Validate every problem under DIRECTORY and evaluate the solutions next to it.

    Problems are named NAME.problem.json (or .yaml), their solutions NAME.LABEL.solution.json.
    Streams figures are active/stateful or active/standby pairs. Exits 1 if anything is invalid.
    """
    problems = sorted(
        p for p in directory.rglob("*.problem.*") if p.suffix.lower() in PROBLEM_SUFFIXES
    )
    table = Table(title=f"Examples under {escape(str(directory))}", title_justify="left")
    table.add_column("problem", overflow="fold", ratio=2)
    table.add_column("solution", overflow="fold", ratio=1)
    table.add_column("valid", no_wrap=True)
    table.add_column("figures", min_width=24, ratio=4)
    failures = 0
    for problem_path in problems:
        name = problem_path.name.split(".problem.")[0]
        shown = escape(str(problem_path.relative_to(directory)))
        try:
            problem = load_problem(problem_path)
        except InvalidInputError as error:
            failures += 1
            table.add_row(shown, "", "[red]invalid problem[/red]", escape("; ".join(map(str, error.issues))))
            continue
        solutions = sorted(problem_path.parent.glob(f"{name}.*.solution.json"))
        if not solutions:
            table.add_row(shown, "-", "[green]problem ok[/green]", escape(_describe(problem)))
        for solution_path in solutions:
            label = escape(solution_path.name.removeprefix(f"{name}.").removesuffix(".solution.json"))
            try:
                evaluation = evaluate(problem, load_solution(solution_path))
            except InvalidInputError as error:
                failures += 1
                table.add_row(shown, label, "[red]invalid file[/red]", escape("; ".join(map(str, error.issues))))
                continue
            if evaluation.valid:
                table.add_row(shown, label, "[green]yes[/green]", escape(_figures(evaluation.metrics)))
            else:
                failures += 1
                codes = ", ".join(sorted({v.code.value for v in evaluation.violations}))
                table.add_row(shown, label, "[red]NO[/red]", codes)
            shown = ""
    out.print(table)
    out.print(
        f"{plural(len(problems), 'problem')}, {plural(failures, 'failure')}; "
        f"details: kafka-assign evaluate PROBLEM SOLUTION"
    )
    sys.exit(ExitCode.INVALID_INPUT if failures else ExitCode.OK)


PRICE_HELP = (
    "Price of a GB (10^9 bytes) of cross-zone traffic, for problems without their own price_per_gb: "
    "the report's savings per month (730 h)."
)


@cli.command("pipeline")
@click.option(
    "--input", "input_path", required=True, type=click.Path(exists=True, path_type=Path),
    help="JSON Lines of problem documents, a directory of problem files, or a directory of normalised tables.",
)
@click.option(
    "--output", required=True, type=click.Path(file_okay=False, path_type=Path),
    help="Output directory (Parquet tables), replaced when the run completes.",
)
@click.option("--master", metavar="URL", help="Spark master (default local[*]: this machine).")
@click.option("--local", "local_runner", is_flag=True, help="Run without Spark, in this process (same rows).")
@click.option(
    "--solvers", default="kafka,kafka:new,exact", show_default=True, metavar="S1,S2,...",
    help="Solvers to run on every problem; kafka:classic and kafka:new are Kafka's assignor under each protocol.",
)
@click.option("--goals", "goal_names", metavar="G1,G2,...", help="Goals in priority order (default: each kind's default sequence).")
@click.option(
    "--time-limit", type=click.FloatRange(min=0), metavar="SECONDS",
    help="Per problem and solver: Kafka's assignor and the exact goal sequence (see solve --help).",
)
@click.option(
    "--batch-size", type=click.IntRange(min=1), metavar="N",
    help="Problems per Spark task (default: batches shrinking from 1/(2 x cores) of the fleet to 1/(32 x cores)).",
)
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write the HTML report here.")
@click.option("--price-per-gb", type=click.FloatRange(min=0), metavar="PRICE", help=PRICE_HELP)
def pipeline_command(
    input_path: Path,
    output: Path,
    master: str | None,
    local_runner: bool,
    solvers: str,
    goal_names: str | None,
    time_limit: float | None,
    batch_size: int | None,
    report_path: Path | None,
    price_per_gb: float | None,
) -> None:
    """Solve a whole fleet: every problem with every solver, on Spark (or --local).

    Writes OUTPUT/summary (one row per problem and solver: status, goal values, metrics, seconds,
    error), OUTPUT/assignments (one row per task or partition copy) and OUTPUT/plugins. Problems
    that are invalid or fail get a row with the reason; the job still succeeds. Exit 1 when the
    input cannot be read at all, 2 on bad options or an output that cannot be written (a full or
    read-only disk, a directory that is not a pipeline output: checked before any work)."""
    from optimizer.pipeline.progress import pipeline_progress
    from optimizer.pipeline.run import run_pipeline

    if local_runner and master:
        raise UsageError("--local runs without Spark: drop --master")
    runner = "local" if local_runner else "spark"
    unit = "problems" if local_runner else "batches"
    # A bar on a terminal; plain `pipeline: ...` lines on stderr when either stream goes to a log.
    with pipeline_progress(err, unit, plain=not out.is_terminal) as shown:
        result = run_pipeline(
            input_path, output, solvers=solvers.split(","), goals=_goal_list(goal_names), time_limit=time_limit,
            runner=runner, master=master, batch_size=batch_size, progress=shown.progress, phase=shown.phase,
        )  # fmt: skip
        shown.finish(result.problems)
    _print_fleet(result, price_per_gb)
    if report_path is not None:
        _write_report(output, report_path, price_per_gb)


@cli.command("report")
@click.option("--input", "input_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path), help="A pipeline output directory.")
@click.option("--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="HTML file to write.")
@click.option("--price-per-gb", type=click.FloatRange(min=0), metavar="PRICE", help=PRICE_HELP)
def report_command(input_dir: Path, output: Path, price_per_gb: float | None) -> None:
    """An HTML report of a pipeline run, in one file viewable offline: where to start (cross-zone
    traffic and money saved, the zone-to-zone matrix, the Pareto curve, the applications ranked by
    saving with what changes, the configuration change alone and the cost to get there), fleet
    totals, the largest savings, problems not solved and plots."""
    _write_report(input_dir, output, price_per_gb)


@cli.command("fleet")
@click.option("--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="JSON Lines file to write.")
@click.option("--seed", default=2026, show_default=True, type=int)
@click.option("--applications", default=200, show_default=True, type=click.IntRange(min=0), help="Streams applications.")
@click.option("--groups", default=100, show_default=True, type=click.IntRange(min=0), help="Consumer groups.")
@click.option("--broken", default=2, show_default=True, type=click.IntRange(min=0), help="Invalid documents, on purpose.")
def fleet_command(output: Path, seed: int, applications: int, groups: int, broken: int) -> None:
    """Generate a sample fleet (what examples/fleet/fleet.jsonl holds), seeded."""
    from optimizer.pipeline.fleet import write_sample_fleet

    count = write_sample_fleet(output, seed=seed, applications=applications, groups=groups, broken=broken)
    out.print(f"wrote {count} problem documents to {escape(str(output))}")


def _write_report(input_dir: Path, output: Path, price_per_gb: float | None = None) -> None:
    from optimizer.report import write_report

    try:
        written = write_report(input_dir, output, price_per_gb)
    except OSError as error:
        raise _cannot_write(output, error) from None
    out.print(f"report: {escape(str(written.resolve()))}")


FAILED_LISTED = 20
"""Problems without an assignment named in the terminal summary (the report lists them all)."""


def _print_fleet(result, price_per_gb: float | None = None) -> None:
    from optimizer.report import failed_rows, fleet_totals

    totals = fleet_totals(result.summary, price_per_gb)
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
        "one probing rebalance per round; cooperative groups: withheld partitions assigned)."
    )
    c = totals["comparison"]
    if c:

        def saved(figure: int, percent: float | None) -> str:
            return f"saved {whole(figure)}" + ("" if percent is None else f" ({percent:+.1f} %)")

        out.print(
            f"{c['reference']} vs {c['baseline']} on {plural(c['problems'], 'problem')}: cross-rack partitions now "
            f"{whole(c['baseline_cross_rack'])} -> {whole(c['reference_cross_rack'])}, {saved(c['saved'], c['saved_percent'])}; "
            f"at the targets {whole(c['baseline_target_cross_rack'])} -> {whole(c['reference_target_cross_rack'])}, "
            f"{saved(c['target_saved'], c['target_saved_percent'])}; moves now {whole(c['baseline_moves'])} -> "
            f"{whole(c['reference_moves'])}; probing rounds {whole(c['baseline_rounds'])} -> {whole(c['reference_rounds'])}, "
            f"restore offsets {whole(c['baseline_restore_offsets'])} -> {whole(c['reference_restore_offsets'])}; "
            f"better now on {c['better']}, equal on {c['equal']}, worse on {c['worse']} "
            "(goals rank before cross-rack traffic: see the report)"
        )
    money = totals["money"]
    if c and money:
        priced = (
            f"; {money_text(money['money_saved'])} on the {plural(money['priced'], 'problem')} with a price"
            if money["money_saved"] is not None
            else "; no price (--price-per-gb) for money"
        )
        out.print(
            f"cross-zone traffic at the targets on {plural(money['with_bytes'], 'problem')} with throughputs: "
            f"{rate_text(money['baseline_bytes'])} -> {rate_text(money['reference_bytes'])}, saved {rate_text(money['bytes_saved'])}{priced}"
        )
        curve = totals["pareto"]
        if curve and curve["top"]:
            out.print(f"the top {curve['top']} of {curve['problems']} compared problems give {curve['share']:.0f} % of the saving (the report ranks them)")
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


def main() -> None:
    cli(prog_name="kafka-assign")
