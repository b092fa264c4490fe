"""`probing_rebalances=N` (or `=8h`): the target reached within N probing rebalances of warm-ups.

KIP-441 moves a stateful copy to a client that is behind on its task only after a warm-up
replica there has caught up, `max.warmup.replicas` (B) warm-ups at a time, one round per probing
rebalance (`probing.rebalance.interval.ms`, 10 minutes by default). The plan
(optimizer.engine.transition) warms up the target copies on clients that are behind which the
assignment applied now cannot hold at once: that assignment keeps each stateful active on a
caught-up client and can put the task's r standbys on r of its target clients, so a task needs a
warm-up when all of its 1 + r target copies sit on clients that are behind (W such tasks: about
ceil(W / B) probing rebalances). This goal holds W <= N * B, so that the plan needs about N
probing rebalances (N = 0: none; `=8h` or `=90m`: as many as fit in that time). "About": the
assignment applied now is chosen after the target; with this goal in the sequence it keeps those
copies in place right after KIP-441's caught-up rule (`exact_now`), and keeps fewer only where
that rule does not allow it (docs/goals.md has the measured figures). Hard by default, a constraint whatever its place in the
sequence (if no assignment meets it, the engine says so and minimises it as a soft goal); its
value is the tasks beyond N * B (0 within the bound). Streams only; the full model.
"""

from __future__ import annotations

import re

import numpy as np

from goals.common import streams_placement
from optimizer.costs import StreamsIndex
from optimizer.errors import GoalError
from optimizer.formulation import COUNT_BOUND, UNBOUNDED, LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.model.problem import Problem
from optimizer.model.streams import StreamsProblem
from optimizer.placement import behind
from optimizer.protocols import StreamsVariablesAPI

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*(h|m|min)$")


class ProbingRebalances(Goal):
    name = "probing_rebalances"
    summary = "the target within N probing rebalances of warm-ups: probing_rebalances=N (or =8h)"
    kinds = ("streams",)
    hard = True

    def __init__(self, argument: str | None = None) -> None:
        text = (argument or "").strip()
        duration = _DURATION.match(text)
        if not (text.isdigit() or duration):
            raise GoalError(
                "goal 'probing_rebalances' needs the probing rebalances allowed, like probing_rebalances=6, "
                f"or a time, like probing_rebalances=8h or =90m (got {argument!r})"
            )
        self.argument = argument
        self.count = int(text) if text.isdigit() else None
        self.minutes = None if duration is None else float(duration.group(1)) * (60 if duration.group(2) == "h" else 1)

    def rounds(self, problem: StreamsProblem) -> int:
        """N: the probing rebalances allowed (a time: those that fit in it at the problem's interval)."""
        if self.count is not None:
            return self.count
        assert self.minutes is not None
        return int(self.minutes * 60_000 // problem.config.probing_rebalance_interval_ms)

    def allowed(self, problem: StreamsProblem) -> int:
        """N * max.warmup.replicas: the tasks whose target copies may all sit on clients that are behind."""
        return self.rounds(problem) * problem.config.max_warmup_replicas

    def hard_bound(self, problem: Problem) -> int | None:
        return 0

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        assert isinstance(problem, StreamsProblem)  # a Streams goal: the engine checks `kinds`
        index = StreamsIndex.of(problem)
        placement = streams_placement(index, assignment)
        lagging = _lagging(problem, index)
        rows = np.flatnonzero(index.stateful)
        behind = np.zeros(len(index.tasks), dtype=np.int64)
        placed = placement.active[rows] >= 0
        behind[rows[placed]] += lagging[rows[placed], placement.active[rows[placed]]]
        np.add.at(behind, placement.standby_rows, lagging[placement.standby_rows, placement.standby_clients])
        standbys = problem.effective_standby_replicas
        waiting = int((behind[rows] > standbys).sum())
        return max(0, waiting - self.allowed(problem))

    def encode(self, formulation: StreamsVariablesAPI) -> LinExpr:  # type: ignore[override]
        assert formulation.kind == "streams"  # a Streams goal: the engine checks `kinds`
        problem = formulation.problem
        lagging = _lagging(problem, formulation.index)
        rows = formulation.stateful_rows
        model = formulation.model
        waits = model.add_vars(len(rows), 0, 1)  # 1 when every copy of the task is on a client behind
        standbys = formulation.standbys
        r_rows: list[int] = []
        r_cols: list[int] = []
        r_coefs: list[int] = []
        for i, t in enumerate(rows.tolist()):
            behind = np.flatnonzero(lagging[t])
            columns = [*formulation.x[t, behind].tolist(), *(formulation.y[i, behind].tolist() if standbys else []), int(waits[i])]
            r_rows += [i] * len(columns)
            r_cols += columns
            r_coefs += [1] * (len(columns) - 1) + [-1]
        # copies on clients behind - waits <= standbys: waits >= 1 when all 1 + standbys are
        model.add_rows(r_rows, r_cols, r_coefs, [-UNBOUNDED] * len(rows), [standbys] * len(rows))
        allowed = self.allowed(problem)
        excess = model.add_vars(1, 0, COUNT_BOUND)[0]
        waiting = LinExpr.of(waits, np.ones(len(rows), dtype=np.int64))
        model.add_expr_row(waiting + LinExpr.of([excess], [-1]), -UNBOUNDED, allowed)  # excess >= waiting - allowed

        def fix(solution: np.ndarray) -> None:
            for i, t in enumerate(rows.tolist()):
                behind = np.flatnonzero(lagging[t])
                held = int(solution[formulation.x[t, behind]].sum()) + (int(solution[formulation.y[i, behind]].sum()) if standbys else 0)
                solution[waits[i]] = int(held > standbys)
            solution[excess] = max(0, int(solution[waits].sum()) - allowed)

        formulation.repairs.append(fix)
        return LinExpr.of([excess], [1])


def _lagging(problem: StreamsProblem, index: StreamsIndex) -> np.ndarray:
    """tasks x clients: 1 where a copy of a stateful task would need a warm-up first (the client
    is not among the most caught up on it: `behind`), else 0."""
    return behind(problem, index) * index.stateful[:, None].astype(np.int64)
