"""From the assignment applied now to the target: transition-aware results (docs/transition.md).

An exact target may put a stateful active on a client that has not restored the task's state.
Kafka (KIP-441's TaskMovement) keeps such a task on a caught-up client, gives the target client a
warm-up replica (`max.warmup.replicas` at a time) and schedules a probing rebalance. Repairing an
exact target that way after the fact leaves the displaced tasks wherever they were (on the
600 x 24 application of issue 14: 11 tasks per thread of skew where Kafka had 0.33). Here the
assignment applied now is itself optimised, knowing the target (`exact_now`):

1. `caught_up_now`: every stateful active on one of the most caught-up clients (KIP-441), and a
   task that no client has caught up on its target client at once (as Kafka does);
2. `balance` (as a soft goal: the least excess beyond the narrowest balance the caught-up rule allows);
3. `target_distance`: actives elsewhere than in the target, and standbys where it has none.

It is then checked against Kafka's own assignment applied now (`worse_than`): should it place more
actives on clients that are not caught up, or have a larger active load skew per thread, Kafka's
applied-now assignment is used instead, so an exact result is never less safe to apply now than
Kafka's. `plan_transition` then lists the rounds to the target, for Kafka's answer and the exact
one alike: warm-ups for every target copy on a client that is behind, `max.warmup.replicas` per
round, each round a probing rebalance, with the changelog offsets each round replays. It assumes
that every warm-up catches up within one probing interval and that each follow-up rebalance keeps
the target: its time is a lower bound.

Cooperative consumer groups (KIP-429) have no warm-ups: a partition another member still owns is
withheld this round (`withhold_transfers`) and assigned in the follow-up rebalance the revoking
member triggers at once (`consumer_plan`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from ortools.graph.python import min_cost_flow

from optimizer.backends import named
from optimizer.costs import StreamsIndex
from optimizer.deadline import WorkBudget
from optimizer.engine.sequence import run_sequence
from optimizer.errors import SolverError
from optimizer.formulation import LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.problem import Problem
from optimizer.model.solution import ClientAssignment, GoalStatus, PlanRound, TransitionPlan
from optimizer.model.streams import StreamsProblem
from optimizer.placement import behind, caught_up_ranks, restore_offsets, streams_placement
from optimizer.protocols import FormulationAPI


def target_clients(index: StreamsIndex, target: Assignment) -> np.ndarray:
    """tasks x clients: True where `target` places a copy (active or standby) of the task."""
    placement = streams_placement(index, target)
    held = np.zeros((len(index.tasks), len(index.clients)), dtype=bool)
    rows = np.flatnonzero(placement.active >= 0)
    held[rows, placement.active[rows]] = True
    held[placement.standby_rows, placement.standby_clients] = True
    return held


class _TowardsTarget(Goal):
    """An internal goal of `exact_now`, which knows the target: it prices the target's clients of
    a task apart from the rest of their class, so they are direct variables of the compressed model."""

    compressible = True
    kinds = ("streams",)

    def __init__(self, target: Assignment) -> None:
        super().__init__()
        self.target = target

    def distinguished(self, index: StreamsIndex) -> np.ndarray:
        return target_clients(index, self.target)


class TargetDistance(_TowardsTarget):
    """Actives not on their target client, plus standbys on a client the target gives none of
    that task: how far an assignment is from `target` (internal: `exact_now`'s last goal).

    A tie-break among assignments equally safe and balanced now, searched at HiGHS's root only
    (`search_nodes`): its proof took 3.5 s and 100 s on two applications of 1,000 x 50 where
    the root's point was within 5 % (decision 96)."""

    name = "target_distance"
    summary = "actives elsewhere than in the target, and standbys where the target has none"
    search_nodes = 1
    search_gap = 0.1

    def apart(self, problem: Problem) -> frozenset[str]:
        return frozenset()  # the target's clients only, which `distinguished` names

    def _costs(self, index: StreamsIndex) -> tuple[np.ndarray, np.ndarray]:
        placement = streams_placement(index, self.target)
        shape = (len(index.tasks), len(index.clients))
        active = np.ones(shape, dtype=np.int64)
        rows = np.flatnonzero(placement.active >= 0)
        active[rows, placement.active[rows]] = 0
        standby = np.ones(shape, dtype=np.int64)
        standby[placement.standby_rows, placement.standby_clients] = 0
        return active, standby

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        assert isinstance(problem, StreamsProblem)
        index = StreamsIndex.of(problem)
        active, standby = self._costs(index)
        placement = streams_placement(index, assignment)
        return placement.active_cost(active) + placement.standby_cost(standby)

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        assert formulation.kind == "streams"
        active, standby = self._costs(formulation.index)
        expr = formulation.active_cost(active)
        if formulation.standbys:
            expr += formulation.standby_cost(standby[formulation.stateful_rows])
        return expr


class WarmupsNow(_TowardsTarget):
    """Target copies of stateful tasks on clients that are behind which the assignment applied now
    does not hold (each waits for a warm-up: `plan_transition`). Internal: `exact_now`'s goal
    after `caught_up_now` when the sequence bounds the probing rebalances (`probing_rebalances`)."""

    name = "warmups_now"
    summary = "target copies on clients behind that the assignment applied now does not hold"

    def apart(self, problem: Problem) -> frozenset[str]:
        return frozenset()  # the target's clients only, which `distinguished` names

    def _waiting(self, index: StreamsIndex) -> np.ndarray:
        """tasks x clients: 1 where the target holds a copy of a stateful task on a client that is behind."""
        problem = index.problem
        lagging = behind(problem, index) * index.stateful[:, None]
        placement = streams_placement(index, self.target)
        held = np.zeros(lagging.shape, dtype=np.int64)
        rows = np.flatnonzero(placement.active >= 0)
        held[rows, placement.active[rows]] = 1
        held[placement.standby_rows, placement.standby_clients] = 1
        return np.asarray(held * lagging, dtype=np.int64)

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        assert isinstance(problem, StreamsProblem)
        index = StreamsIndex.of(problem)
        waiting = self._waiting(index)
        placement = streams_placement(index, assignment)
        return int(waiting.sum()) - placement.active_cost(waiting) - placement.standby_cost(waiting)

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        assert formulation.kind == "streams"
        waiting = self._waiting(formulation.index)
        expr = formulation.active_cost(-waiting) + LinExpr.of([], [], int(waiting.sum()))
        if formulation.standbys:
            expr += formulation.standby_cost(-waiting[formulation.stateful_rows])
        return expr


class CaughtUpNow(_TowardsTarget):
    """KIP-441's rule for the assignment applied now: a stateful active on one of the task's most
    caught-up clients; a task that no client holds within `acceptable.recovery.lag` (a new task,
    or one every client lost) goes straight to its target client, as Kafka's task movement does
    when no client is caught up (elsewhere it would be restored twice). Internal: `exact_now`'s
    first goal."""

    name = "caught_up_now"
    summary = "stateful actives not on a most caught-up client (tasks nobody has caught up: not on their target)"

    def apart(self, problem: Problem) -> frozenset[str]:
        return frozenset({"state"})  # lags, and the target's clients (`distinguished`)

    def cost(self, problem: StreamsProblem, index: StreamsIndex) -> np.ndarray:
        """tasks x clients: 1 where an active breaks the rule, else 0."""
        ranks = caught_up_ranks(problem, index)
        cost = behind(problem, index, ranks)
        target = streams_placement(index, self.target).active
        nobody = np.flatnonzero((ranks.min(axis=1) > 0) & (target >= 0))
        cost[nobody, :] = 1
        cost[nobody, target[nobody]] = 0
        return cost

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        assert isinstance(problem, StreamsProblem)
        index = StreamsIndex.of(problem)
        return streams_placement(index, assignment).active_cost(self.cost(problem, index))

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        assert formulation.kind == "streams"
        return formulation.active_cost(self.cost(formulation.problem, formulation.index))


BALANCE_SCALE = 2**16
"""`flow_now`'s price of a client's j-th active: BALANCE_SCALE x (2j - 1) / threads, rounded (the
marginal of the sum over clients of actives squared per thread)."""


def flow_now(problem: StreamsProblem, target: Assignment) -> dict[str, ClientAssignment]:
    """The assignment applied now on the way to `target`, by one min-cost flow in milliseconds
    (decision 105): every stateful active on one of the task's most caught-up clients
    (`CaughtUpNow`: a task nobody has caught up goes to its target client), the active tasks per
    thread as even as that allows (a convex price per client: the sum of actives squared per
    thread), then as many actives on their target client as that allows; each standby where the
    target has it, swapping with the active where the active stays on a client the target gives
    a standby of the task (as Kafka's task movements do). Not proven: the assignment applied now
    when the optimised one (`exact_now`, which starts from it) is not ready in its share of time."""
    index = StreamsIndex.of(problem)
    placement = streams_placement(index, target)
    n_tasks, n_clients = len(index.tasks), len(index.clients)
    allowed = CaughtUpNow(target).cost(problem, index) == 0
    free = allowed.all(axis=1) & (placement.active >= 0)
    held = np.flatnonzero(~free)  # stateful actives kept to their caught-up clients
    loose = np.flatnonzero(free)
    threads = index.threads
    total = int(threads.sum())
    # nodes: held tasks, loose tasks, the pool of moved loose tasks, clients, the sink
    pool = n_tasks
    first_client = pool + 1
    sink = first_client + n_clients
    balance_weight = n_tasks + 1  # balance first: one unit of it outweighs every move
    rows, clients = np.nonzero(allowed[held])
    rows = held[rows]
    one, none = np.ones(len(loose), dtype=np.int64), np.zeros(len(loose), dtype=np.int64)
    tails = [rows, loose, loose, np.full(n_clients, pool)]
    heads = [first_client + clients, first_client + placement.active[loose], np.full(len(loose), pool), first_client + np.arange(n_clients)]
    costs = [(clients != placement.active[rows]).astype(np.int64), none, one, np.zeros(n_clients, dtype=np.int64)]
    capacities = [np.ones(len(rows), dtype=np.int64), one, one, np.full(n_clients, n_tasks)]
    forced = np.bincount(clients[np.isin(rows, held[allowed[held].sum(axis=1) == 1])], minlength=n_clients)
    for k in range(n_clients):  # the convex price of a client's actives, then beyond its window at the last price
        window = max(int(forced[k]), -(-n_tasks * int(threads[k]) // total) + 2)
        marginal = np.rint(BALANCE_SCALE * (2 * np.arange(1, window + 1) - 1) / threads[k]).astype(np.int64) * balance_weight
        tails += [np.full(window + 1, first_client + k)]
        heads += [np.full(window + 1, sink)]
        capacities += [np.append(np.ones(window, dtype=np.int64), n_tasks)]
        costs += [np.append(marginal, marginal[-1] + BALANCE_SCALE * balance_weight)]
    supplies = np.zeros(sink + 1, dtype=np.int64)
    supplies[:n_tasks] = 1
    supplies[sink] = -n_tasks
    solver = min_cost_flow.SimpleMinCostFlow()
    arcs = [np.concatenate(part) for part in (tails, heads, capacities, costs)]
    solver.add_arcs_with_capacity_and_unit_cost(*arcs)
    solver.set_nodes_supplies(np.arange(sink + 1), supplies)
    if solver.solve() != solver.OPTIMAL:
        raise SolverError("the assignment applied now found no flow (a bug): every task has a client it may run on")
    flows = np.asarray(solver.flows(np.arange(len(arcs[0]))))
    active = np.full(n_tasks, -1, dtype=np.int64)
    used = flows[: len(rows)] > 0
    active[rows[used]] = clients[used]
    stayed = flows[len(rows) : len(rows) + len(loose)] > 0
    active[loose[stayed]] = placement.active[loose[stayed]]
    moved = loose[~stayed]
    spread = flows[len(rows) + 2 * len(loose) : len(rows) + 2 * len(loose) + n_clients]
    active[moved] = np.repeat(np.arange(n_clients), spread)
    # standbys where the target has them; one on the client the active stays on goes to the target's active client
    standby_clients = placement.standby_clients.copy()
    clash = standby_clients == active[placement.standby_rows]
    standby_clients[clash] = placement.active[placement.standby_rows[clash]]
    return index.assignment(active.tolist(), placement.standby_rows.tolist(), standby_clients.tolist())


def exact_now_needed(problem: StreamsProblem, target: Assignment) -> bool:
    """Whether `target` may not be applied as it is: it has a stateful active on a client that is
    not among the most caught up (or, for a task nobody has caught up, not its target's)."""
    return CaughtUpNow(target).evaluate(problem, target) > 0


def exact_now(
    problem: StreamsProblem,
    target: Assignment,
    balance: Goal | None,
    start: Callable[[], dict[str, ClientAssignment] | None],
    backend: str,
    time_limit: float | None,
    bounded: bool = False,
    work: WorkBudget | None = None,
) -> tuple[dict[str, ClientAssignment] | None, list[str]]:
    """The assignment to apply now (no warm-ups yet) on the way to `target`, and notes; None
    (with the note why) when none was found within `time_limit`: the caller applies `flow_now`'s.

    Goals, in order: `CaughtUpNow`, `WarmupsNow` (when `bounded`: the target's sequence bounds the
    probing rebalances), `balance` (a soft version of the registered goal, when balance is a goal
    of the target; else None), `TargetDistance`. `start()`: a feasible start (`flow_now`'s).
    `work`: deterministic work for its CP-SAT solves (`run_sequence`). A
    target that already meets `CaughtUpNow` is applied as it is. Flow-only back-ends cannot
    encode the distance to the target: the engine's own choice (`exact`) solves this step."""
    first = CaughtUpNow(target)
    if first.evaluate(problem, target) == 0:
        return dict(target), []
    if backend != "exact" and not named(backend).capabilities.linear:
        backend = "exact"
    warmups = [WarmupsNow(target)] if bounded else []
    goals = [first, *warmups, *([balance] if balance is not None else []), TargetDistance(target)]
    result = run_sequence(problem, goals, backend, time_limit, {}, start, work=work)
    values = {stage.goal.name: stage.objective for stage in result.stages}
    last = next((stage for stage in result.stages if stage.goal.name == "target_distance"), None)
    if result.assignment is None or any(values.get(goal.name) is None for goal in goals):
        return None, ["the assignment applied now was not found within its time"]
    excess = f"balance excess {_whole(values['balance'])}, " if "balance" in values else ""
    unproven = ""
    if last is not None and last.status != GoalStatus.OPTIMAL and last.bound is not None and last.objective is not None and last.bound < last.objective:
        unproven = f", at least {_whole(last.bound)}: a tie-break not searched to its proof"
    return dict(result.assignment), [
        "applied now: stateful actives stay on caught-up clients until their target client has warmed up "
        f"({excess}{_whole(values.get('target_distance'))} placements differ from the target{unproven})"
    ]


def _whole(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f}"


def accepted_skew(problem: StreamsProblem, target: Assignment) -> float:
    """The active load skew per thread a user accepts with a tolerance on `balance`: the
    target's, at least KIP-441's one task per thread."""
    from optimizer.evaluate import streams_now_figures

    return max(1.0, streams_now_figures(problem, target)[1])


def worse_than(problem: StreamsProblem, ours: Assignment, kafka: Assignment, balanced: bool = True, accepted: float = 0.0) -> str | None:
    """Why `ours` is less safe to apply now than Kafka's `kafka` (None when it is not): more
    stateful actives on clients that are not caught up, or (when `balanced`: balance is a goal) a
    larger active load skew per thread than Kafka's (`accepted`: any skew up to that, with a
    tolerance on balance)."""
    from optimizer.evaluate import streams_now_figures

    mine, theirs = streams_now_figures(problem, ours), streams_now_figures(problem, kafka)
    if mine[0] > theirs[0]:
        return f"{mine[0]} actives not caught up against Kafka's {theirs[0]}"
    if balanced and mine[1] > max(theirs[1], accepted) + 1e-9:
        return f"an active load skew of {mine[1]:.2f} per thread against Kafka's {theirs[1]:.2f}"
    return None


def plan_transition(
    problem: StreamsProblem,
    now: Mapping[str, ClientAssignment],
    target: Mapping[str, ClientAssignment],
    start_warmups: bool = True,
) -> tuple[dict[str, ClientAssignment], TransitionPlan]:
    """`now` with the warm-ups this round starts, and the plan from it to `target`.

    A target copy (active or standby) of a stateful task on a client that is behind on it (not
    among its most caught up) and holds no copy of it now is warmed up first, in KIP-441's order
    (tasks with the fewest caught-up clients first, then task and client order),
    `max.warmup.replicas` per round counting the warm-ups `now` has. Round 1 starts as many as
    are left of that budget (none when not `start_warmups`: Kafka's answer comes with its own);
    a copy warmed up in round r moves in round r + 1; every other copy moves in round 2. Copies
    are counted as task position x clients + client position, in numpy."""
    index = StreamsIndex.of(problem)
    budget = problem.config.max_warmup_replicas
    offsets = restore_offsets(problem, index)
    lagging = behind(problem, index, caught_up_ranks(problem, index)).astype(bool)
    n = len(index.clients)
    caught = (~lagging).sum(axis=1)

    held_now, active_now = _copies(index, now)
    target_held, target_active = _copies(index, target)
    warm_now = sum(len(assigned.warmup) for assigned in now.values())
    new = np.setdiff1d(target_held, held_now)
    new = new[index.stateful[new // n].astype(bool) & lagging[new // n, new % n]]
    pending = new[np.lexsort((new % n, new // n, caught[new // n]))]  # clients are in id order
    first = pending[: max(0, budget - warm_now)] if start_warmups else pending[:0]
    # round 1 starts `first`; the rest go `budget` a round from round 2 on
    started = np.concatenate([np.ones(len(first), dtype=np.int64), 2 + np.arange(len(pending) - len(first)) // budget])

    applied = dict(now)
    for t, k in zip(*np.divmod(first, n), strict=True):
        client_id = index.clients[k].id
        warm = sorted((*applied[client_id].warmup, index.tasks[t].id), key=index.task_position.__getitem__)
        applied[client_id] = applied[client_id].model_copy(update={"warmup": tuple(warm)})

    # target copies not in place now move in round 2, or in the round after their warm-up
    is_active = np.isin(target_held, target_active)
    in_place = np.isin(target_held, held_now) & (~is_active | np.isin(target_held, active_now))
    moving, moving_active = target_held[~in_place], is_active[~in_place]
    warm_round = dict(zip(pending.tolist(), started.tolist(), strict=True))
    round_of = np.array([warm_round.get(key, 1) + 1 for key in moving.tolist()], dtype=np.int64)
    fresh = moving[~np.isin(moving, held_now) & ~np.isin(moving, pending)]  # neither held nor warmed up: replayed in round 2
    last = max(1, int(started.max(initial=1)), int(round_of.max(initial=1)))

    previous = index.previous_active()
    placement = streams_placement(index, now)
    had = previous >= 0
    moves = np.bincount(round_of[moving_active], minlength=last + 1)
    moves[1] += int((placement.active[had] != previous[had]).sum())
    # the copies whose changelogs each round replays: round 1 those applied now
    restored = [np.zeros(0, dtype=np.int64), np.union1d(held_now, first)]
    restored += [np.concatenate([pending[started == r], fresh if r == 2 else fresh[:0]]) for r in range(2, last + 1)]

    warmups: list[dict[str, list[str]]] = [{} for _ in range(last + 1)]
    for key, r in zip(pending.tolist(), started.tolist(), strict=True):
        warmups[r].setdefault(index.clients[key % n].id, []).append(index.tasks[key // n].id)
    for client_id, assigned in now.items():  # warm-ups `now` came with (Kafka's)
        if assigned.warmup:
            warmups[1].setdefault(client_id, []).extend(assigned.warmup)

    replayed = [_replayed(offsets, keys, n) for keys in restored]
    plan_rounds = [
        PlanRound(
            round=r,
            warmups={c: tuple(sorted(ts, key=index.task_position.__getitem__)) for c, ts in sorted(warmups[r].items())},
            moves=int(moves[r]),
            restore_offsets=replayed[r][0],
        )
        for r in range(1, last + 1)
    ]
    plan = TransitionPlan(
        rounds=tuple(plan_rounds),
        followup_rebalances=last - 1,
        warmups=len(pending) + warm_now,
        restore_offsets=sum(offsets_ for offsets_, _ in replayed[1:]),
        restore_unknown=sum(unknown for _, unknown in replayed[1:]),
        seconds_to_target=(last - 1) * problem.config.probing_rebalance_interval_ms / 1000,
    )
    return applied, plan


def _copies(index: StreamsIndex, assignment: Mapping[str, ClientAssignment]) -> tuple[np.ndarray, np.ndarray]:
    """(every copy, each active), as task position x clients + client position, sorted, each once."""
    tasks, n = index.task_position, len(index.clients)
    held: list[int] = []
    active: list[int] = []
    for client_id, assigned in assignment.items():
        k = index.client_position[client_id]
        active += [tasks[t] * n + k for t in assigned.active]
        held += [tasks[t] * n + k for t in (*assigned.standby, *assigned.warmup)]
    actives = np.unique(np.array(active, dtype=np.int64))
    return np.union1d(actives, np.array(held, dtype=np.int64)), actives


def _replayed(offsets: np.ndarray, keys: np.ndarray, n: int) -> tuple[int, int]:
    """(changelog offsets replayed, copies whose offsets are unknown) for the copies `keys`: whole
    numbers at any magnitude."""
    values = offsets[keys // n, keys % n]
    known = values[values >= 0]
    if len(known) and int(known.max()) * len(known) >= 2**62:
        return sum(int(v) for v in known.tolist()), int((values < 0).sum())
    return int(known.sum()), int((values < 0).sum())


def withhold_transfers(problem: ConsumerProblem, target: Assignment) -> tuple[dict[str, ClientAssignment], bool, int]:
    """Cooperative rebalancing (KIP-429): a partition some member still holds may go only to one
    of its holders this round; otherwise it is withheld until its holders have revoked it.

    `problem` is the consumer problem as given (raw claims: every member listing a partition holds
    it, whatever its generation). Returns (assignment to apply now, follow-up rebalance needed:
    some member gives a partition up, number withheld).
    """
    claimants: dict[str, set[str]] = {}
    for claimant in problem.members:
        for partition in claimant.owned_partitions:
            claimants.setdefault(partition, set()).add(claimant.id)
    withheld = 0
    assignment = {}
    for member, held in target.items():
        keep = []
        for partition in held.active:
            holders = claimants.get(partition)
            if holders and member not in holders:
                withheld += 1
            else:
                keep.append(partition)
        assignment[member] = held.model_copy(update={"active": tuple(keep)})
    # A member that gives up a partition it holds rejoins after revoking it: another round.
    gives_up = any(partition not in set(assignment[m.id].active) for m in problem.members if m.id in assignment for partition in m.owned_partitions)
    return assignment, gives_up, withheld


def consumer_plan(now: Mapping[str, ClientAssignment], target: Mapping[str, ClientAssignment] | None, moves_now: int, followup: bool) -> TransitionPlan:
    """Cooperative rebalancing's plan: the partitions withheld now go to their target member in the
    follow-up rebalance, which the revoking members trigger at once (no probing interval).
    `target` None: the assignment applied now is the target (`followup`: a rejoin is still due,
    as when Kafka's cooperative assignor revokes without a known target)."""
    withheld = 0
    if target is not None:
        withheld = sum(len(set(held.active) - set(now[m].active if m in now else ())) for m, held in target.items())
    first = PlanRound(round=1, moves=moves_now)
    if not (withheld or followup):
        return TransitionPlan(rounds=(first,))
    return TransitionPlan(rounds=(first, PlanRound(round=2, moves=withheld)), followup_rebalances=1)
