"""Warm-up planning after the target (KIP-441).

The exact solvers compute a target assignment. Applying it at once could make a task active on a
client that has not restored its state. As KIP-441 (and Kafka) does, an active whose target
client is not caught up, while some client is, stays on a caught-up client (one holding a standby
of it first: a swap) and the target gets a warm-up replica, `max.warmup.replicas` at a time;
standbys move likewise. `followup_rebalance` is then set: the next (probing) rebalance finds the
warm-ups caught up and moves the tasks. This reuses the task-movement step of Kafka's assignor.
"""

from __future__ import annotations

from optimizer.assignors.streams.client_state import client_states
from optimizer.assignors.streams.task_movement import (
    CaughtUp,
    WarmupBudget,
    assign_active_task_movements,
    assign_standby_task_movements,
)
from optimizer.model.ids import parse_task_id, task_id
from optimizer.model.solution import ClientAssignment
from optimizer.model.streams import StreamsProblem


def plan_warmups(problem: StreamsProblem, target: dict[str, ClientAssignment]) -> tuple[dict, bool, int]:
    """(assignment to apply now, follow-up rebalance needed, number of warm-ups)."""
    clients = client_states(problem)
    for client in clients:
        held = target.get(client.id)
        if held is None:
            continue
        for task in held.active:
            client.assign_active(parse_task_id(task))
        for task in held.standby:
            client.assign_standby(parse_task_id(task))
    stateful = sorted(parse_task_id(t.id) for t in problem.tasks if t.stateful)
    caught_up = CaughtUp(clients, stateful, problem.config.acceptable_recovery_lag)
    budget = WarmupBudget(problem.config.max_warmup_replicas)
    warmups: dict[str, set] = {}
    moved = assign_active_task_movements(clients, caught_up, budget, warmups)
    moved += assign_standby_task_movements(clients, caught_up, budget, warmups)

    def ids(keys):
        return tuple(task_id(*key) for key in sorted(keys))

    assignment = {
        client.id: ClientAssignment(
            active=ids(client.active),
            standby=ids(client.standby - warmups.get(client.id, set())),
            warmup=ids(warmups.get(client.id, set())),
        )
        for client in sorted(clients, key=lambda c: c.id)
    }
    return assignment, moved > 0, sum(len(w) for w in warmups.values())


def withhold_transfers(problem, target: dict[str, ClientAssignment]) -> tuple[dict, bool, int]:
    """Cooperative rebalancing (KIP-429): a partition some member still holds may go only to one
    of its holders this round; otherwise it is withheld until its holders have revoked it.

    `problem` is the consumer problem as given (raw claims: every member listing a partition holds
    it, whatever its generation). Returns (assignment to apply now, follow-up rebalance needed:
    some member gives a partition up, number withheld).
    """
    claimants: dict[str, set[str]] = {}
    for member in problem.members:
        for partition in member.owned_partitions:
            claimants.setdefault(partition, set()).add(member.id)
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
    gives_up = any(
        partition not in set(assignment[m.id].active) for m in problem.members if m.id in assignment for partition in m.owned_partitions
    )
    return assignment, gives_up, withheld
