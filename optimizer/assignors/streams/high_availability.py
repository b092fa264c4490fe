"""Kafka Streams' HighAvailabilityTaskAssignor (KIP-441, with KIP-925 and KIP-708), as Kafka runs it.

1. Stateful actives round robin over the clients in Kafka's order, then balanced over threads;
   KIP-925 optimises them (traffic and non-overlap costs from the config, else 10 and 1).
2. Standbys: the client-tag assignor of KIP-708 when `rack.aware.assignment.tags` is set, else the
   default one; balanced over threads; KIP-925's greedy standby optimiser.
3. Task movements (KIP-441): actives and standbys whose balanced target is not caught up move to
   caught-up clients, with warm-ups on the targets, `max.warmup.replicas` at a time.
4. Stateless tasks to the client with the fewest actives per thread; KIP-925 with costs 1 and 0.
A follow-up (probing) rebalance is needed when any task had to move.

The round robin and the balancing ignore the previous assignment: stickiness comes only through
lags, because a previous active reports Kafka's LATEST_OFFSET and is the most caught up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from optimizer.assignors.streams.client_state import ClientState, client_states
from optimizer.assignors.streams.priority import ConstrainedPrioritySet
from optimizer.assignors.streams.rack_aware import RackAwareTaskAssignor
from optimizer.assignors.streams.standby import ClientTagAwareStandbyTaskAssignor, DefaultStandbyTaskAssignor
from optimizer.assignors.streams.task_movement import (
    CaughtUp,
    WarmupBudget,
    assign_active_task_movements,
    assign_standby_task_movements,
)
from optimizer.model.ids import TaskKey, parse_task_id
from optimizer.model.streams import (
    STATELESS_NON_OVERLAP_COST,
    STATELESS_TRAFFIC_COST,
    StreamsProblem,
    TaskAssignor,
    kip925_costs,
)


@dataclass
class StreamsAssignorResult:
    """Kafka's ClientStates after assignment, which standbys are warm-ups, and notes."""

    clients: list[ClientState]
    warmups: dict[str, set[TaskKey]]
    followup_rebalance: bool
    notes: list[str] = field(default_factory=list)
    target: dict[str, tuple[frozenset[TaskKey], frozenset[TaskKey]]] | None = None
    """Client -> (actives, standbys) of the balanced assignment the task movements defer (KIP-441's
    target), when it differs from `clients`; None when it is theirs. Its stateless tasks are
    spread over the balanced loads, as the rebalance that finds the warm-ups caught up does."""


def high_availability_assign(problem: StreamsProblem) -> StreamsAssignorResult:
    config = problem.config
    clients = client_states(problem)
    tasks = sorted(parse_task_id(t.id) for t in problem.tasks)
    stateful = sorted(parse_task_id(t.id) for t in problem.tasks if t.stateful)
    rack_aware = RackAwareTaskAssignor(problem)
    traffic, non_overlap = kip925_costs(config, TaskAssignor.HIGH_AVAILABILITY)
    rack_enabled = rack_aware.can_enable()

    for position, task in enumerate(stateful):
        clients[position % len(clients)].assign_active(task)
    balance_tasks_over_threads(
        clients, lambda c: c.active, ClientState.unassign_active, ClientState.assign_active, lambda s, d: True
    )
    if rack_enabled:
        rack_aware.optimize_active_tasks(stateful, clients, traffic, non_overlap)

    if config.num_standby_replicas > 0:
        assign_standby_tasks(clients, stateful, config, rack_aware if rack_enabled else None, traffic, non_overlap)

    balanced = [replace(c, active=set(c.active), standby=set(c.standby)) for c in clients]
    budget = WarmupBudget(config.max_warmup_replicas)
    caught_up = CaughtUp(clients, stateful, config.acceptable_recovery_lag)
    warmups: dict[str, set[TaskKey]] = {}
    moved = assign_active_task_movements(clients, caught_up, budget, warmups)
    moved += assign_standby_task_movements(clients, caught_up, budget, warmups)

    stateful_set = set(stateful)
    stateless = [t for t in tasks if t not in stateful_set]
    assign_stateless_active_tasks(clients, stateless)
    if rack_enabled:
        rack_aware.optimize_active_tasks(stateless, clients, STATELESS_TRAFFIC_COST, STATELESS_NON_OVERLAP_COST)
    target = None
    if moved:  # the next rebalances' answer once the warm-ups are caught up (docs/transition.md)
        notes = list(rack_aware.notes)
        assign_stateless_active_tasks(balanced, stateless)
        if rack_enabled:
            rack_aware.optimize_active_tasks(stateless, balanced, STATELESS_TRAFFIC_COST, STATELESS_NON_OVERLAP_COST)
        rack_aware.notes[:] = notes
        target = {c.id: (frozenset(c.active), frozenset(c.standby)) for c in balanced}
    return StreamsAssignorResult(clients, warmups, moved > 0, rack_aware.notes, target)


def assign_standby_tasks(
    clients: Sequence[ClientState],
    stateful: Sequence[TaskKey],
    config,
    rack_aware: RackAwareTaskAssignor | None,
    traffic: int,
    non_overlap: int,
) -> None:
    """Kafka's standby phase: the standby assignor the config names (client tags, KIP-708, or
    least loaded), standbys balanced over threads, then KIP-925's standby swaps when rack-aware
    assignment is enabled (`rack_aware` given)."""
    tags = config.rack_aware_assignment_tags
    standby = ClientTagAwareStandbyTaskAssignor(tags) if tags else DefaultStandbyTaskAssignor()
    standby.assign(clients, stateful, config.num_standby_replicas)
    balance_tasks_over_threads(
        clients,
        lambda c: c.standby,
        ClientState.unassign_standby,
        ClientState.assign_standby,
        standby.is_allowed_task_movement,
    )
    if rack_aware is not None:
        rack_aware.optimize_standby_tasks(clients, traffic, non_overlap, standby.is_allowed_standby_move)


def balance_tasks_over_threads(
    clients: Sequence[ClientState],
    tasks_of: Callable[[ClientState], set[TaskKey]],
    unassign: Callable[[ClientState, TaskKey], None],
    assign: Callable[[ClientState, TaskKey], None],
    allowed: Callable[[ClientState, ClientState], bool],
) -> None:
    """Move tasks from more to less loaded clients (tasks per thread) until no move helps."""
    keep_balancing = True
    while keep_balancing:
        keep_balancing = False
        for source in clients:
            for destination in clients:
                if destination is source:
                    continue
                for task in sorted(tasks_of(source)):
                    if not _should_move_a_task(source, destination):
                        break
                    if destination.holds(task) or not allowed(source, destination):
                        continue
                    unassign(source, task)
                    assign(destination, task)
                    keep_balancing = True


def _should_move_a_task(source: ClientState, destination: ClientState) -> bool:
    skew = source.assigned_load - destination.assigned_load
    if skew <= 0:
        return False
    proposed = (source.assigned_count - 1) / source.capacity - (
        destination.assigned_count + 1
    ) / destination.capacity
    return 0 <= proposed < skew


def assign_stateless_active_tasks(clients: Sequence[ClientState], stateless: Sequence[TaskKey]) -> None:
    """Each stateless task to the client with the fewest active tasks per thread."""
    order = {c.id: i for i, c in enumerate(clients)}
    queue = ConstrainedPrioritySet(lambda client, task: True, lambda c: c.active_load, order)
    queue.offer_all(clients)
    for task in stateless:
        client = queue.poll(task)
        # Unconstrained, and a problem has at least one client: the queue always yields one.
        assert client is not None, "no client for a stateless task"
        client.assign_active(task)
        queue.offer(client)
