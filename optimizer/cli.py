"""The `kafka-assign` command line.

Exit codes (DESIGN.md, `optimizer.errors.ExitCode`): 0 success, 1 invalid input (including an
invalid assignment given to `evaluate`), 2 usage error, 3 no feasible solution or a time limit
without a solution, 4 an internal error (a bug: a solver's result failed the evaluator, or an
unexpected exception; the message says so, and KAFKA_ASSIGN_TRACEBACK=1 prints the traceback
too). Every error the project raises on purpose reaches `_fail`, which prints it and exits with
the error's own `exit_code`; commands catch errors only to go on with the next file. What they print
on a terminal is `optimizer.console`'s; they read problem and solution files through
`optimizer.sources`.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from optimizer.activity import Heartbeat
from optimizer.backends import REGISTRY
from optimizer.catalogue import DEFAULT_PIPELINE_SOLVERS, SOLVERS, goal_class
from optimizer.compare import compare, compare_protocols
from optimizer.console import (
    ExampleCheck,
    comparison_table,
    describe,
    err,
    figures,
    out,
    print_error,
    print_evaluation,
    print_examples,
    print_fleet,
    print_goals,
    print_invalid,
    print_line,
    print_solution,
    print_valid,
    protocol_comparison_table,
)
from optimizer.deadline import deadline_after, now, process_started, remaining, run_within
from optimizer.errors import ExitCode, InvalidInputError, KafkaAssignmentError, TimeLimitReached, UsageError
from optimizer.evaluate import evaluate, headline, record_evaluation
from optimizer.model.issues import Issue, Severity
from optimizer.model.normalize import normalize
from optimizer.model.problem import Problem, solution_to_data
from optimizer.model.solution import Solution
from optimizer.model.streams import StreamsProblem
from optimizer.money import cross_zone, price_and_currency
from optimizer.solve import solve
from optimizer.sources import PROBLEM_SUFFIXES
from optimizer.sources.problem_file import load_problem, load_solution, save_solution
from optimizer.text import plural
from optimizer.version import __version__
from plugins.manager import plugins

if TYPE_CHECKING:
    from optimizer.sources.kafka_cluster import ImportOptions

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _issue_json(issues: tuple[Issue, ...] | list[Issue]) -> list[dict[str, Any]]:
    return [issue.model_dump(mode="json") for issue in issues]


TRACEBACK_ENV = "KAFKA_ASSIGN_TRACEBACK"
"""Set to 1 to print the traceback of an internal error as well."""


def _fail(error: KafkaAssignmentError) -> NoReturn:
    """An error the project raised on purpose reached the command line: print it, exit with its
    own code (`optimizer.errors`)."""
    if isinstance(error, InvalidInputError):
        print_invalid(error)
    elif error.exit_code == ExitCode.INTERNAL:
        print_error(f"internal error: {error}")
    else:
        print_error(str(error))
    sys.exit(error.exit_code)


def _internal_error(error: BaseException) -> NoReturn:
    """A bug reached the command line: say so in one message, exit 4 (never a bare traceback)."""
    print_error(
        f"internal error (a bug in kafka-assignment-optimizer {__version__}, please report it): {type(error).__name__}: {str(error)[:2000]}"
    )
    if os.environ.get(TRACEBACK_ENV) == "1":
        print_line("".join(traceback.format_exception(error)), stderr=True)
    else:
        print_line(f"  set {TRACEBACK_ENV}=1 to print the traceback", stderr=True)
    sys.exit(ExitCode.INTERNAL)


READER_GONE = 141
"""The exit code when whatever reads the output stops reading (`kafka-assign solve P | head`): a
shell's for a process that SIGPIPE ended (128 + 13), without a message."""


def _reader_gone() -> NoReturn:
    """The output's reader has closed it: nothing more is written there (the interpreter's last
    flush included), and the command ends quietly (`READER_GONE`)."""
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(READER_GONE)


class _Commands(click.Group):
    """The command group; whatever a command does not handle ends as an internal error."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except BrokenPipeError:
            _reader_gone()
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
    the time limit), 4 internal error (a bug), 141 the output's reader stopped reading.
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
                print_invalid(error)
            continue
        warnings = normalize(problem).warnings
        results.append(
            {"source": str(path), "valid": True, "kind": problem.kind, "issues": _issue_json(warnings)}
        )
        if not as_json:
            print_valid(path, problem, warnings)
    if as_json:
        click.echo(json.dumps(results, indent=2))
    sys.exit(ExitCode.INVALID_INPUT if failed else ExitCode.OK)


PRICE_HELP = (
    "Price of a GB (10^9 bytes) of cross-zone traffic, for problems without their own price_per_gb: "
    "the report's savings per month (730 h)."
)
CURRENCY_HELP = "ISO 4217 code of the price's currency, for problems without their own currency (default USD)."


def _currency_option(_context: click.Context, _parameter: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    code = value.strip().upper()
    if len(code) != 3 or not code.isascii() or not code.isalpha():
        raise click.BadParameter(f"{value!r} is not an ISO 4217 currency code (three letters, such as USD or EUR)")
    return code


currency_option = click.option("--currency", metavar="CODE", callback=_currency_option, help=CURRENCY_HELP)
price_option = click.option("--price-per-gb", type=click.FloatRange(min=0), metavar="PRICE", help=PRICE_HELP)


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
@price_option
@currency_option
def evaluate_command(
    problem_path: Path, solution_path: Path, as_json: bool, output: Path | None, price_per_gb: float | None, currency: str | None
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
            print_invalid(failure)
        sys.exit(ExitCode.INVALID_INPUT)

    evaluation = evaluate(problem, solution)
    if output is not None:
        _write(record_evaluation(solution, evaluation, problem), output)
    price = price_and_currency(problem.price_per_gb, problem.currency, price_per_gb, currency)
    if as_json:
        data = evaluation.model_dump(mode="json")
        data["cross_zone"] = cross_zone(headline(evaluation.metrics).get("cross_rack_bytes"), *price)
        click.echo(json.dumps(data, indent=2))
    else:
        print_evaluation(problem_path, solution_path, problem, evaluation, price)
    sys.exit(ExitCode.OK if evaluation.valid else ExitCode.INVALID_INPUT)


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


DEFAULT_TIME_LIMIT = 60.0
"""`solve` and `compare`'s time limit when none is given (`--time-limit none`: no limit)."""


class _TimeLimit(click.ParamType):
    """Seconds (0 or more), or `none` for no limit."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float | None:
        if value is None or isinstance(value, float):
            return value
        text = str(value).strip()
        if text.lower() == "none":
            return None
        try:
            seconds = float(text)
        except ValueError:
            self.fail(f"{text!r} is neither a number of seconds nor 'none'", param, ctx)
        if not seconds >= 0 or seconds == float("inf"):
            self.fail(f"{text!r}: give 0 or more seconds, or 'none' for no limit", param, ctx)
        return seconds


_COMMAND_TIME_LIMIT = click.option(
    "--time-limit", type=_TimeLimit(), default=str(DEFAULT_TIME_LIMIT), show_default=True, metavar="SECONDS|none",
    help=(
        "For the whole command: reading the file, Kafka's assignor and the exact goal sequence (as the solver or as "
        "the exact engine's fallback); exit 3 when nothing is found in time. 'none': no limit."
    ),
)


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
@_COMMAND_TIME_LIMIT
@click.option("--tolerance", "tolerances", multiple=True, metavar="GOAL=N|P%", help="Let later goals raise GOAL by N, or by P percent, above its optimum.")
@click.option("--no-warmups", is_flag=True, help="Return the exact target without KIP-441 warm-up planning.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the solution file.")
@click.option("--json", "as_json", is_flag=True, help="Print the solution as JSON.")
@price_option
@currency_option
def solve_command(
    problem_path: Path,
    solver: str,
    goal_names: str | None,
    time_limit: float | None,
    tolerances: tuple[str, ...],
    no_warmups: bool,
    output: Path | None,
    as_json: bool,
    price_per_gb: float | None,
    currency: str | None,
) -> None:
    """Assign a problem's tasks or partitions and print the assignment.

    Every result passes the evaluator before it is printed. Warnings about the problem (things
    Kafka tolerates) are printed and recorded in the solution. Exits 3 when the exact solver
    found nothing within the time limit (Kafka's assignment is then returned, marked so), or when
    hard goals conflict (the best assignment that minimises them is returned, marked so).
    """
    deadline = deadline_after(time_limit, _started())  # the whole command, from the process's start
    with Heartbeat("solve", time_limit):  # progress lines on stderr past 2 s
        problem = _load(problem_path, deadline, time_limit)
        solution = solve(
            problem,
            solver=solver,
            goals=_goal_list(goal_names),
            time_limit=_solving_time(problem, deadline),
            tolerances=_tolerances(tolerances),
            warmups=not no_warmups,
        )
    if output is not None:
        _write(solution, output)
    if as_json:
        click.echo(json.dumps(solution_to_data(solution), indent=2))
    else:
        print_solution(problem, solution, price_and_currency(problem.price_per_gb, problem.currency, price_per_gb, currency))
    if solution.solver is not None and solution.solver.options.get("fallback"):
        sys.exit(ExitCode.NO_SOLUTION)


OUTPUT_BASE = 0.05
OUTPUT_PER_COPY = 3e-6
"""What a command keeps of its deadline for its output (the solution file, the terminal's table):
seconds, and seconds per copy of a task or per partition (`_solving_time`)."""


def _solving_time(problem: Problem, deadline: float | None) -> float | None:
    """What is left of the command's `deadline` for solving, less what printing and writing the
    answer take."""
    left = remaining(deadline)
    if left is None:
        return None
    if isinstance(problem, StreamsProblem):
        copies = len(problem.tasks) * (1 + problem.config.num_standby_replicas)
    else:
        copies = sum(topic.partitions for topic in problem.topics)
    return max(0.0, left - OUTPUT_BASE - OUTPUT_PER_COPY * copies)


READ_GRACE = 0.5
"""Seconds past the command's deadline that reading its problem may take: a problem read just
after the limit is still answered (the engine's first point, late by what the answer's checks
take), not refused for want of time; a file slower to read than that is refused."""


def _load(path: Path, deadline: float | None = None, time_limit: float | None = None) -> Problem:
    """The problem at `path`, read by `deadline` + READ_GRACE (InvalidInputError, or
    TimeLimitReached past it).

    The cyclic garbage collector is off while the problem is read, and what exists once it is
    read (the problem, the modules) is frozen out of later collections (`gc.freeze`): it lives
    as long as the command, and each full collection walked all of it again, a third of reading
    a 10,000-task problem and a tenth of solving it at one second. Reference counting still frees
    everything else as it goes, and the collector runs again for what the solve makes."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return run_within(None if deadline is None else deadline + READ_GRACE, lambda: load_problem(path))
    except TimeLimitReached:
        slow = " (YAML reads at about 1 MB/s, JSON much faster)" if path.suffix.lower() in (".yaml", ".yml") else ""
        raise TimeLimitReached(f"reading {path} took longer than the time limit ({time_limit:g} s, and {READ_GRACE:g} s more){slow}") from None
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


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
@_COMMAND_TIME_LIMIT
@click.option(
    "--protocols", is_flag=True,
    help="Kafka's assignor under the classic protocol and under the new one (KIP-848 for consumer "
    "groups, KIP-1071 for Streams), beside the exact optimum: cross-rack reads, balance, movement.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@price_option
@currency_option
def compare_command(
    problem_path: Path, goal_names: str | None, time_limit: float | None, protocols: bool, as_json: bool, price_per_gb: float | None, currency: str | None
) -> None:
    """Kafka's heuristic against the exact optimum, goal by goal: values, bound, gap, times, and
    how many tasks or partitions the two place differently."""
    deadline = deadline_after(time_limit, _started())  # the whole command, from the process's start
    with Heartbeat("compare", time_limit):  # progress lines on stderr past 2 s
        problem = _load(problem_path, deadline, time_limit)
        if protocols:
            by_protocol = compare_protocols(problem, goals=_goal_list(goal_names), time_limit=_solving_time(problem, deadline))
            data, table = by_protocol.to_dict(), protocol_comparison_table(by_protocol)
        else:
            comparison = compare(
                problem, goals=_goal_list(goal_names), time_limit=_solving_time(problem, deadline), price_per_gb=price_per_gb, currency=currency
            )
            data, table = comparison.to_dict(), comparison_table(comparison)
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        out.print(table)


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
    print_goals(goals, loaded.goals.owners, loaded.loaded)


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
    checks: list[ExampleCheck] = []
    failures = 0
    for problem_path in problems:
        name = problem_path.name.split(".problem.")[0]
        shown = str(problem_path.relative_to(directory))
        try:
            problem = load_problem(problem_path)
        except InvalidInputError as error:
            failures += 1
            checks.append(ExampleCheck(shown, "", "invalid problem", "; ".join(map(str, error.issues))))
            continue
        solutions = sorted(problem_path.parent.glob(f"{name}.*.solution.json"))
        if not solutions:
            checks.append(ExampleCheck(shown, "-", "problem ok", describe(problem)))
        for solution_path in solutions:
            label = solution_path.name.removeprefix(f"{name}.").removesuffix(".solution.json")
            try:
                evaluation = evaluate(problem, load_solution(solution_path))
            except InvalidInputError as error:
                failures += 1
                checks.append(ExampleCheck(shown, label, "invalid file", "; ".join(map(str, error.issues))))
                continue
            if evaluation.valid:
                checks.append(ExampleCheck(shown, label, "yes", figures(evaluation.metrics)))
            else:
                failures += 1
                checks.append(ExampleCheck(shown, label, "NO", ", ".join(sorted({v.code.value for v in evaluation.violations}))))
            shown = ""
    print_examples(directory, checks, len(problems), failures)
    sys.exit(ExitCode.INVALID_INPUT if failures else ExitCode.OK)




@cli.command("pipeline")
@click.option(
    "--input", "input_path", required=True, metavar="PATH|kafka://HOST:PORT",
    help="JSON Lines of problem documents, a directory of problem files, a directory of normalised tables, "
    "or a live cluster's consumer groups (kafka://HOST:PORT; docs/import.md).",
)
@click.option(
    "--output", required=True, type=click.Path(file_okay=False, path_type=Path),
    help="Output directory (Parquet tables), replaced when the run completes.",
)
@click.option("--master", metavar="URL", help="Spark master (default local[*]: this machine).")
@click.option("--local", "local_runner", is_flag=True, help="Run without Spark, in this process (same rows).")
@click.option(
    "--solvers", default=",".join(DEFAULT_PIPELINE_SOLVERS), show_default=True, metavar="S1,S2,...",
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
@price_option
@currency_option
def pipeline_command(
    input_path: str,
    output: Path,
    master: str | None,
    local_runner: bool,
    solvers: str,
    goal_names: str | None,
    time_limit: float | None,
    batch_size: int | None,
    report_path: Path | None,
    price_per_gb: float | None,
    currency: str | None,
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
    location: str | Path = input_path if "://" in input_path else Path(input_path)
    if isinstance(location, Path) and not location.exists():
        raise UsageError(f"--input {input_path}: no such file or directory")
    runner = "local" if local_runner else "spark"
    # A bar on a terminal; plain `pipeline: ...` lines on stderr when either stream goes to a log.
    with pipeline_progress(err, "problems", plain=not out.is_terminal) as shown:
        result = run_pipeline(
            location, output, solvers=solvers.split(","), goals=_goal_list(goal_names), time_limit=time_limit,
            runner=runner, master=master, batch_size=batch_size, progress=shown.progress, phase=shown.phase,
        )  # fmt: skip
        shown.finish(result.problems)
    print_fleet(result, price_per_gb, currency)
    if report_path is not None:
        _write_report(output, report_path, price_per_gb, currency)


@cli.command("report")
@click.option("--input", "input_dir", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path), help="A pipeline output directory.")
@click.option("--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="HTML file to write.")
@price_option
@currency_option
def report_command(input_dir: Path, output: Path, price_per_gb: float | None, currency: str | None) -> None:
    """An HTML report of a pipeline run, in one file viewable offline: where to start (cross-zone
    traffic and money saved, the zone-to-zone matrix, the Pareto curve, the applications ranked by
    saving with what changes, the configuration change alone and the cost to get there), fleet
    totals, the largest savings, problems not solved and plots."""
    _write_report(input_dir, output, price_per_gb, currency)


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
    print_line(f"wrote {count} problem documents to {output}")


@cli.command("import")
@click.option("--bootstrap-server", "bootstrap", required=True, metavar="HOST:PORT[,HOST:PORT]", help="The cluster's brokers, as Kafka's CLI tools take them.")
@click.option("--group", metavar="G", help="The consumer group to import (classic or KIP-848).")
@click.option("--application-id", metavar="A", help="The Kafka Streams application to import (classic, or a KIP-1071 streams group).")
@click.option("--all", "every_group", is_flag=True, help="Every consumer group and Kafka Streams application of the cluster, one file each in --output DIR.")
@click.option(
    "-o", "--output", type=click.Path(path_type=Path),
    help="--group/--application-id: write the problem here (.yaml/.yml as YAML, .json as JSON; default: JSON on stdout). --all: the directory to write into.",
)  # fmt: skip
@click.option(
    "--command-config", type=_FILE, metavar="FILE",
    help="Client properties (security.protocol, sasl.*, ssl.*) as Kafka's CLI tools take them; never printed or written.",
)  # fmt: skip
@click.option(
    "--timeout", default=30.0, show_default=True, type=click.FloatRange(min=1, max=3600), metavar="SECONDS",
    help="How long to wait for the brokers and for a rebalancing group to settle.",
)  # fmt: skip
@click.option(
    "--sample-seconds", type=click.FloatRange(min=0, max=3600, min_open=True), metavar="SECONDS",
    help="Measure every partition's bytes per second over this window (log sizes at both ends) and write them as the problem's rates.",
)  # fmt: skip
@click.option(
    "--num-standby-replicas", type=click.IntRange(min=0, max=2**31 - 1), metavar="N",
    help="A classic Kafka Streams application's num.standby.replicas (default: inferred from the standbys it runs; a streams group's comes from its config).",
)  # fmt: skip
def import_command(
    bootstrap: str, group: str | None, application_id: str | None, every_group: bool, output: Path | None, command_config: Path | None,
    timeout: float, sample_seconds: float | None, num_standby_replicas: int | None,
) -> None:  # fmt: skip
    """Read a consumer group or a Kafka Streams application from a live cluster as a problem:
    members or clients with their racks, subscriptions or tasks, current assignment, lags, the
    assignor, the topics with their replicas' racks and leaders, the brokers' replica selector, and
    with --sample-seconds each partition's rate (docs/import.md). What the cluster cannot tell is
    said on stderr. With --all, every group, one line each: written, skipped (share groups, Connect,
    empty groups) or failed. Exit 1 for an unknown or empty group (--all: nothing written), 2 when
    the cluster cannot be reached or the group is still rebalancing at --timeout."""
    from optimizer.model.problem import problem_from_data
    from optimizer.sources.documents import dump_document
    from optimizer.sources.kafka_cluster import ImportOptions, import_group

    chosen = [name for name, given in (("--group", group), ("--application-id", application_id), ("--all", every_group or None)) if given is not None]
    if len(chosen) != 1:
        raise UsageError("give one of --group G, --application-id A or --all" + (f" (not {' and '.join(chosen)})" if chosen else ""))
    options = ImportOptions(command_config, timeout, sample_seconds, num_standby_replicas)
    if every_group:
        if output is None:
            raise UsageError("--all writes one file per group: give --output DIR")
        _import_every_group(bootstrap, output, options)
        return
    name = group if group is not None else application_id
    assert name is not None
    if output is not None and (output.is_dir() or output.suffix.lower() not in PROBLEM_SUFFIXES):
        raise UsageError(f"cannot write {output}: the output must be a file ending in {', '.join(PROBLEM_SUFFIXES)}")
    imported = import_group(bootstrap, name, options, streams=application_id is not None)
    assert imported.document is not None
    problem_from_data(imported.document, f"{'application' if application_id else 'group'} {name} from kafka://{bootstrap}")
    for warning in imported.warnings:
        print_line(f"warning: {name}: {warning}", stderr=True)
    if output is None:
        sys.stdout.write(json.dumps(imported.document, indent=2, ensure_ascii=False) + "\n")
        return
    try:
        dump_document(imported.document, output)
    except OSError as error:
        raise _cannot_write(output, error) from None
    print_line(f"wrote {_imported_what(imported.document)} to {output}", stderr=True)


def _imported_what(document: dict[str, Any]) -> str:
    """`group G (3 members)` or `application A (3 clients, 12 tasks)`."""
    if document["kind"] == "streams":
        return f"application {document['name']} ({plural(len(document['clients']), 'client')}, {plural(len(document['tasks']), 'task')})"
    return f"group {document['name']} ({plural(len(document['members']), 'member')})"


def _import_every_group(bootstrap: str, directory: Path, options: ImportOptions) -> None:
    """`import --all`: every group in turn, a line each; exit 0 when at least one file was written."""
    from optimizer.model.problem import problem_from_data
    from optimizer.sources.documents import dump_document
    from optimizer.sources.kafka_cluster import group_file_names, import_cluster

    if directory.exists() and not directory.is_dir():
        raise UsageError(f"cannot write into {directory}: it is not a directory")
    written = skipped = 0
    errors: list[KafkaAssignmentError] = []
    imported = list(import_cluster(bootstrap, options))
    try:  # once the cluster answered: an unreachable one leaves no empty directory behind
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise _cannot_write(directory, error) from None
    names = group_file_names([one.group for one in imported])
    for one in imported:
        if one.skipped is not None:
            skipped += 1
            print_line(f"skipped {one.group}: {one.skipped}")
            continue
        try:
            if one.error is not None:
                raise one.error
            assert one.document is not None
            problem_from_data(one.document, f"group {one.group} from kafka://{bootstrap}")
            target = directory / names[one.group]
            try:
                dump_document(one.document, target)
            except OSError as error:
                raise _cannot_write(target, error) from None
        except KafkaAssignmentError as error:
            errors.append(error)
            print_error(f"failed {one.group}: {error}")
            continue
        written += 1
        for warning in one.warnings:
            print_line(f"warning: {one.group}: {warning}", stderr=True)
        print_line(f"wrote {_imported_what(one.document).split(' ', 1)[1]} to {target}")
    print_line(f"{plural(written, 'group')} written to {directory}, {skipped} skipped, {len(errors)} failed")
    if written == 0:
        if errors:
            sys.exit(max(int(e.exit_code) for e in errors))
        print_error(f"no consumer group or Kafka Streams application to import on {bootstrap}")
        sys.exit(ExitCode.INVALID_INPUT)


SANDBOX_DIR = Path(tempfile.gettempdir()) / "kafka-assign-sandbox"
"""Where `kafka-assign sandbox` keeps its cluster unless told otherwise (`--dir`)."""

_SANDBOX_DIR_OPTION = click.option(
    "--dir", "directory", default=SANDBOX_DIR, show_default=True, type=click.Path(file_okay=False, path_type=Path),
    help="The sandbox's directory: its storage, logs and the list of its processes.",
)  # fmt: skip


@cli.group("sandbox")
def sandbox_group() -> None:
    """A local Kafka cluster on 127.0.0.1 (KRaft: a controller and brokers in racks), from the
    project's Kafka jars (jvm/; Java 17 and Maven)."""


@sandbox_group.command("start")
@click.option("--brokers", default=3, show_default=True, type=click.IntRange(1, 9), help="Brokers to start.")
@click.option("--racks", default="a,b,c", show_default=True, help="Racks (broker.rack) the brokers take in turn; '' for none.")
@click.option(
    "--broker-config", "broker_configs", multiple=True, metavar="KEY=VALUE",
    help="A broker setting on top of the sandbox's own, static ones too (repeatable), e.g. "
    "replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector.",
)  # fmt: skip
@click.option(
    "--controller-config", "controller_configs", multiple=True, metavar="KEY=VALUE",
    help="A controller setting (repeatable), e.g. group.streams.assignors=sticky,kao.plugin.OptimizerStreamsGroupAssignor: "
    "the controller validates group configs against its own.",
)  # fmt: skip
@_SANDBOX_DIR_OPTION
def sandbox_start(brokers: int, racks: str, broker_configs: tuple[str, ...], controller_configs: tuple[str, ...], directory: Path) -> None:
    """Start the cluster, wait until every broker is registered, print its bootstrap address."""
    from optimizer.kafka import sandbox

    settings, controller = _settings(broker_configs, "--broker-config"), _settings(controller_configs, "--controller-config")
    started = sandbox.start(
        brokers, [r.strip() for r in racks.split(",") if r.strip()], directory, broker_configs=settings, controller_configs=controller
    )
    print_line(f"bootstrap: {started.bootstrap}")
    print_line("brokers: " + ", ".join(f"{n} (rack {r})" if r else str(n) for n, r in started.racks.items()))
    print_line(f"stop with: kafka-assign sandbox stop{'' if directory == SANDBOX_DIR else f' --dir {directory}'}")


def _settings(given: tuple[str, ...], option: str) -> dict[str, str]:
    settings = {}
    for setting in given:
        key, equals, value = setting.partition("=")
        if not equals or not key.strip():
            raise UsageError(f"{option} {setting!r}: expected KEY=VALUE")
        settings[key.strip()] = value.strip()
    return settings


@sandbox_group.command("stop")
@_SANDBOX_DIR_OPTION
def sandbox_stop(directory: Path) -> None:
    """Stop every process of the cluster and remove what it wrote (storage, logs)."""
    from optimizer.kafka import sandbox

    running = sandbox.load(directory)
    sandbox.stop(running)
    print_line(f"stopped {plural(len(running.nodes), 'Kafka process', 'Kafka processes')}")


@sandbox_group.command("workload")
@click.option("--spec", type=_FILE, metavar="FILE", help="A workload spec (JSON or YAML; optimizer/kafka/workload.py); default: the one docs/import.md uses.")
@click.option(
    "--seconds", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
    help="Stop after this long (default: run until interrupted, Ctrl-C).",
)  # fmt: skip
@_SANDBOX_DIR_OPTION
def sandbox_workload(spec: Path | None, seconds: float | None, directory: Path) -> None:
    """Run applications on the sandbox to import and solve: producers at set rates, consumer groups
    and Kafka Streams applications with racks (by default two consumer groups and a Streams
    application over skewed topics). Prints each part once it runs, then keeps them running until
    interrupted or --seconds have passed, and stops them."""
    import signal
    import time

    from optimizer.kafka import sandbox, workload
    from optimizer.sources.documents import read_document

    running = sandbox.load(directory)
    wanted = workload.DEFAULT_SPEC if spec is None else read_document(spec)
    started = workload.start(running, wanted, directory / "workload")
    stopping = False

    def _stop(number: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    previous = signal.signal(signal.SIGTERM, _stop), signal.signal(signal.SIGINT, _stop)
    try:
        for name in started.reports:
            print_line(f"running: {name}")
        print_line(f"bootstrap: {running.bootstrap}")
        print_line("until interrupted (Ctrl-C)" if seconds is None else f"for {seconds:g} s")
        sys.stdout.flush()
        deadline = None if seconds is None else time.monotonic() + seconds
        while not stopping and (deadline is None or time.monotonic() < deadline):
            ended = [name for name, process in started.processes.items() if process.poll() is not None]
            if ended:
                print_error(f"workload part(s) {', '.join(ended)} ended (logs in {directory / 'workload'})")
                break
            time.sleep(0.5)
    finally:
        started.stop()
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])
    print_line(f"stopped {plural(len(started.processes), 'workload part')}")


SERVICE_TOKEN_ENV = "KAO_SERVICE_TOKEN"
"""The service's token, when --token-file is not given."""


@cli.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on (loopback unless told otherwise).")
@click.option("--port", default=8787, show_default=True, type=click.IntRange(0, 65535), help="The port (0: any free one, printed).")
@click.option(
    "--token-file", type=_FILE, metavar="FILE",
    help=f"Require 'Authorization: Bearer TOKEN' with the token this file holds (or set {SERVICE_TOKEN_ENV}); never printed.",
)  # fmt: skip
@click.option(
    "--deadline-ms", default=5_000, show_default=True, type=click.IntRange(50, 600_000), metavar="MS",
    help="The deadline of a request that gives none (the plug-ins send theirs: kao.deadline.ms).",
)  # fmt: skip
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 64), help="Requests solved at once, each in a process of its own.")
@click.option("--max-waiting", default=16, show_default=True, type=click.IntRange(0, 10_000), help="Requests that may wait for a worker; more get 503 at once.")
@click.option(
    "--max-request-bytes", default=32 * 1024 * 1024, show_default=True, type=click.IntRange(1024, 2**31 - 1), metavar="BYTES",
    help="Larger requests are refused (413) without being read.",
)  # fmt: skip
@click.option("--streams-goals", metavar="G1,G2,...", help="Goals for Kafka Streams applications and streams groups, in priority order (default: the kind's).")
@click.option("--consumer-goals", metavar="G1,G2,...", help="Goals for consumer groups, in priority order (default: the kind's).")
@click.option(
    "--bootstrap-server", "bootstrap", metavar="HOST:PORT[,HOST:PORT]",
    help="Read the cluster's leaders and replica.selector.class, which the plug points do not give, and add them to each request (docs/apply.md).",
)  # fmt: skip
@click.option("--command-config", type=_FILE, metavar="FILE", help="Client properties for --bootstrap-server (security.protocol, sasl.*, ssl.*).")
@click.option(
    "--metadata-refresh", default=60.0, show_default=True, type=click.FloatRange(min=1), metavar="SECONDS",
    help="How often the cluster's leaders are read again (--bootstrap-server).",
)  # fmt: skip
@click.option(
    "--sample-seconds", type=click.FloatRange(min=0, max=3600, min_open=True), metavar="SECONDS",
    help="Also measure every partition's bytes per second over this window at each refresh, so that the goals count bytes (--bootstrap-server).",
)  # fmt: skip
@click.option(
    "--record", "record_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
    help="Write every request as a problem file (DIR/problems) and what was answered (DIR/answers), to replay offline.",
)  # fmt: skip
def serve_command(
    host: str, port: int, token_file: Path | None, deadline_ms: int, workers: int, max_waiting: int, max_request_bytes: int, streams_goals: str | None,
    consumer_goals: str | None, bootstrap: str | None, command_config: Path | None, metadata_refresh: float, sample_seconds: float | None,
    record_dir: Path | None,
) -> None:  # fmt: skip
    """The assignment service the plug-ins call (docs/apply.md; protocol: docs/service-protocol.md).
    Each request is answered before its deadline with the exact assignment applied now, or with
    the project's reproduction of Kafka's default when the exact one is not ready or the model says
    so (the answer says which), else 503. One log line per request on stderr; counters at
    GET /v1/stats and /metrics. Stops on Ctrl-C or SIGTERM."""
    import signal

    from optimizer.catalogue import resolve_goals
    from optimizer.service.metadata import ClusterMetadata
    from optimizer.service.server import AssignmentService, ServiceConfig, is_loopback

    token = _service_token(token_file)
    for given, name in ((command_config, "--command-config"), (sample_seconds, "--sample-seconds")):
        if given is not None and bootstrap is None:
            raise UsageError(f"{name} is for --bootstrap-server: give both")
    goals = {}
    for kind, names in (("streams", streams_goals), ("consumer", consumer_goals)):
        listed = _goal_list(names)
        if listed is not None:
            resolve_goals(listed, kind)  # an unknown goal is a usage error now, not at the first rebalance
            goals[kind] = tuple(listed)
    if not is_loopback(host) and token is None:
        print_line(f"warning: listening on {host} without a token: anyone who reaches the port can ask for assignments (--token-file)", stderr=True)
    try:
        service = AssignmentService(
            ServiceConfig(
                host=host, port=port, token=token, default_deadline_ms=deadline_ms, max_request_bytes=max_request_bytes, workers=workers,
                max_waiting=max_waiting, goals=goals, record_dir=record_dir,
            ),
            metadata=None if bootstrap is None else ClusterMetadata(bootstrap, command_config, metadata_refresh, sample_seconds=sample_seconds),
        )
    except OSError as error:
        raise UsageError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None

    def _stop(number: int, frame: object) -> None:
        import threading

        threading.Thread(target=service.stop, daemon=True).start()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    print_line(f"serving on {service.url} (POST /v1/assign; GET /v1/health, /v1/stats, /metrics){'; token required' if token else ''}", stderr=True)
    service.serve_forever()
    counts = service.stats.as_data()["requests"]
    print_line("stopped: " + ", ".join(f"{name} {value}" for name, value in counts.items()), stderr=True)


def _service_token(token_file: Path | None) -> str | None:
    if token_file is None:
        value = os.environ.get(SERVICE_TOKEN_ENV, "").strip()
        return value or None
    try:
        value = token_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read the token file {token_file}: {getattr(error, 'strerror', None) or error}") from None
    if not value:
        raise UsageError(f"the token file {token_file} is empty")
    return value


@cli.command("demo")
@click.option("--seconds", default=30.0, show_default=True, type=click.FloatRange(min=5, max=3600), help="The measurement window of each run.")
@click.option(
    "--follower-fetching", "mode", default="both", show_default=True, type=click.Choice(["off", "on", "both"]),
    help="Reads served by leaders (off, Kafka's default), by the nearest replica (on: RackAwareReplicaSelector), or one run of each.",
)  # fmt: skip
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the result as JSON.")
@click.option(
    "--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
    help="Keep the sandboxes' logs, the service's log and its recorded requests here (default: a temporary directory, removed).",
)  # fmt: skip
def demo_command(seconds: float, mode: str, output: Path | None, directory: Path | None) -> None:
    """Kafka's default assignors against the project's plug-ins on a real cluster (a fresh sandbox per
    run): a stateful Kafka Streams application and a KIP-848 consumer group over racks a, b, c, at
    set, skewed rates, first on Kafka's defaults, then switched to the plug-ins. Prints, per group,
    the cross-rack bytes the clients received (their own incoming-byte-total per broker), the
    evaluator's prediction, and whether each group runs what the service answered (docs/apply.md).
    Takes a few minutes per run."""
    from optimizer.service.demo import DemoOptions, run_demo, table

    options = DemoOptions(seconds=seconds, modes=("off", "on") if mode == "both" else (mode,), directory=directory)
    results = run_demo(options, progress=lambda line: print_line(line, stderr=True))
    for line in table(results):
        print_line(line)
    if output is not None:
        try:
            output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        except OSError as error:
            raise _cannot_write(output, error) from None
        print_line(f"wrote {output}", stderr=True)


def _write_report(input_dir: Path, output: Path, price_per_gb: float | None = None, currency: str | None = None) -> None:
    from optimizer.report import write_report

    try:
        written = write_report(input_dir, output, price_per_gb, currency)
    except OSError as error:
        raise _cannot_write(output, error) from None
    print_line(f"report: {written.resolve()}")


_STARTED: float | None = None
"""When the `kafka-assign` process started (`main` sets it): what a command's time limit counts
from, so that the interpreter's start and the imports count too; a command invoked some other
way (from Python, as the tests do) counts from its own start."""


def _started() -> float:
    return _STARTED if _STARTED is not None else now()


QUICK_EXIT_COMMANDS = frozenset({"solve", "compare"})
"""Commands whose process ends as soon as they have answered (`main`), without the interpreter's
tear-down: freeing a large problem's objects one by one took 0.2 s after a 10,000-task answer,
time its limit counts. What they write is flushed first; they start no service and no Spark."""


def main() -> None:
    global _STARTED
    _STARTED = process_started()
    try:
        cli(prog_name="kafka-assign")
    except SystemExit as done:
        if done.code == 1 and type(sys.stdout).__name__.endswith("PacifyFlushWrapper"):
            # A broken pipe outside a command's own code (click's teardown): click wraps stdout and
            # exits 1; the reader left, as `_reader_gone` says.
            with contextlib.suppress(OSError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.__stdout__.fileno() if sys.__stdout__ else 1)
            done = SystemExit(READER_GONE)
        if isinstance(done.code, (int, type(None))) and QUICK_EXIT_COMMANDS.intersection(sys.argv[1:2]):
            _exit_now(done.code or 0)
        raise done from None


def _exit_now(code: int) -> NoReturn:
    """End the process with `code` at once, once what it wrote is out (`QUICK_EXIT_COMMANDS`); with
    `READER_GONE` where the output's reader closed it before the last of it was flushed."""
    logging.shutdown()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = READER_GONE
    except (OSError, ValueError):
        pass
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(code)
