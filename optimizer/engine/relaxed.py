"""The relaxed pass: every stage of a sequence at once, as far as the linear relaxations are
tight (`relaxed_pass`), on a back-end whose session solves relaxations (`RelaxingSession`).

Each goal is frozen at the ceiling of its relaxation's optimum, or first guessed at its lower
bound (`frozen_bounds`), and one integer point meeting every frozen row proves every stage
optimal. The stage loop (`optimizer.engine.stages`) tries it first and goes stage by stage when it
gives nothing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from optimizer.backends import RelaxingSession, search_limits
from optimizer.formulation import UNBOUNDED, LinExpr
from optimizer.goal import Goal
from optimizer.model.solution import GoalStatus
from optimizer.results import Stage, StageResult


def relaxed_pass(
    session: RelaxingSession,
    constrained: list[tuple[Goal, int]],
    order: list[Goal],
    expressions: dict[int, LinExpr],
    remaining: Callable[[], float | None],
    start: np.ndarray | None,
    engine: str,
) -> tuple[list[Stage], np.ndarray, str] | None:
    """The stages at once, as far as the relaxations are tight: each goal in turn is frozen at the
    ceiling of its linear relaxation's optimum (given the goals before it frozen so), then one
    integer point meeting every frozen row is searched for. At such a point each goal's value is
    its bound, and that bound is a lower bound on the goal given the earlier goals at theirs (a
    relaxation of the stage's own problem): every stage is proven optimal, by induction.

    Goals but the last are first guessed to reach their lower bound (`Goal.lower_bound`, usually
    0: no cross-rack standby, no spread excess) and frozen there without a relaxation. A guess is
    proven by the integer point, which cannot go below the lower bound; a wrong one shows as the
    next relaxation being infeasible (then the latest guessed goal gets its relaxation) or as no
    point being found (then the pass starts over without guesses).

    Failing a point, the last goal's row is dropped and the last goal minimised as a stage of its
    own, with the others frozen; its point proves the others the same way. Returns (the stages,
    the point, a note), None when neither works (the caller then starts over stage by stage)."""
    if not order and session.relax(LinExpr.zero(), remaining()) != 0:
        return None
    started = time.perf_counter()
    # The bounds the pass with guesses froze up to its last guess, when it found no point on them:
    # the pass without guesses stops where its relaxations reach them, as every row after would be
    # the same (10,000 x 200: 13 s of searching again, for nothing)
    repeat: list[tuple[int, int]] | None = None
    for guess in (True, False):
        frozen = frozen_bounds(session, order, expressions, remaining, guess, repeat)
        if frozen is None:
            return None
        bounds, guesses = frozen
        if guesses:
            repeat = [(id(goal), bound) for goal, bound, _ in bounds[: guesses[-1] + 1]]
        point = session.find(remaining(), start)
        last: Stage | None = None
        if point is None and bounds:
            goal, _, seconds = bounds.pop()
            session.pop_row()
            # at most a quarter of the time left: if a bound before the last has no integer point,
            # this is a proof of infeasibility (4 s of a 10 s limit on a 20 x 20 application of the
            # sample fleet), and stage by stage needs the rest
            left = remaining()
            result = session.minimize(expressions[id(goal)], None if left is None else left / 4, start, **search_limits(goal))
            searched = goal.search_nodes is not None and result.status == GoalStatus.FEASIBLE  # its node limit, not the clock
            if result.has_solution and result.status != GoalStatus.OPTIMAL and not searched and remaining() != 0.0:  # the rest, from its point
                more = session.minimize(expressions[id(goal)], remaining(), result.solution, **search_limits(goal))
                result = StageResult(more.status, more.solution, more.objective, more.bound, result.seconds + more.seconds)
            if result.solution is not None and result.objective is not None and result.status != GoalStatus.INFEASIBLE:
                point = result.solution
                last = Stage(goal, result.status, result.objective, result.bound, seconds + result.seconds, engine)
                session.add_row(expressions[id(goal)], -UNBOUNDED, result.objective)
        if point is not None:
            break
        if not guesses:
            return None
        for _ in bounds:  # a guess may be what no integer point meets: once more, without guesses
            session.pop_row()
    assert point is not None  # found, or the pass without guesses returned None
    found = time.perf_counter() - started - sum(seconds for _, _, seconds in bounds) - (last.seconds if last else 0.0)
    if any(expressions[id(goal)].value(point) != bound for goal, bound, _ in bounds):
        return None  # below a proven lower bound: a relaxation off its tolerance, trust none
    stages = [Stage(goal, GoalStatus.OPTIMAL, expressions[id(goal)].value(point), float(limit), 0.0, engine) for goal, limit in constrained]
    for i, (goal, bound, seconds) in enumerate(bounds):
        stages.append(Stage(goal, GoalStatus.OPTIMAL, bound, float(bound), seconds + (found if i == len(bounds) - 1 and last is None else 0.0), engine))
    if last is None:
        return stages, point, "every stage proven by its relaxation's bound, one integer point for all"
    return stages + [last], point, "stages before the last proven by their relaxations' bounds; the last minimised on its own"


def frozen_bounds(
    session: RelaxingSession,
    order: list[Goal],
    expressions: dict[int, LinExpr],
    remaining: Callable[[], float | None],
    guess: bool,
    repeat: list[tuple[int, int]] | None = None,
) -> tuple[list[tuple[Goal, int, float]], list[int]] | None:
    """Freeze each goal of `order` with a row at its bound: the ceiling of its relaxation, or
    (`guess`, every goal but the last) its lower bound, guessed until a relaxation after it is
    infeasible (then the latest guess is undone and that goal relaxed, and so on back). Returns
    ([(goal, bound, seconds)], the positions of the guesses that stand),
    or None when a relaxation did not solve or is infeasible without guesses, and when the
    bounds reach `repeat` (goal id, bound: an earlier pass's up to its last guess, which found no
    point): every row after them would be that pass's again (on a 1,000 x 50 application, 0.74 s of
    relaxations that found the same bounds)."""
    bounds: list[tuple[Goal, int, float]] = []
    kinds: list[bool] = []  # per bound: a guess
    guessed = 0  # goals frozen by a guess since the last relaxation (the last rows added)
    relaxed: set[int] = set()  # positions whose guess was undone
    i = 0
    while i < len(order):
        goal, expression = order[i], expressions[id(order[i])]
        if guess and i < len(order) - 1 and i not in relaxed:
            session.add_row(expression, -UNBOUNDED, goal.lower_bound())
            bounds.append((goal, goal.lower_bound(), 0.0))
            kinds.append(True)
            guessed += 1
            i += 1
            continue
        started = time.perf_counter()
        bound = session.relax(expression, remaining())
        if bound == math.inf and guessed:  # a guess is wrong: the latest one gets its relaxation
            session.pop_row()
            bounds.pop()
            kinds.pop()
            guessed -= 1
            i -= 1
            relaxed.add(i)
            continue
        if bound is None or bound == math.inf:
            return None
        guessed = 0
        session.add_row(expression, -UNBOUNDED, int(bound))
        bounds.append((goal, int(bound), time.perf_counter() - started))
        kinds.append(False)
        if repeat is not None and [(id(goal), bound) for goal, bound, _ in bounds] == repeat:
            return None
        i += 1
    return bounds, [k for k, kind in enumerate(kinds) if kind]
