"""The reference goal (`--solver kip925`): only KIP-925's optimisation of the previous assignment.

As Kafka's `optimizeActiveTasks` does, but on the problem's previous active assignment: every
client keeps its number of stateful and of stateless actives (a client without tasks stays
empty), and the actives are re-placed at least KIP-925 cost (stateful: the configured traffic and
non-overlap costs, else 10 and 1; stateless: 1 and 0), by cycle canceling. The graph is
`balance_subtopology` when the config asks for it, else `min_traffic` (also when the config says
`none`: asking for this solver asks for the optimisation). Standbys are placed as Kafka's
high-availability assignor places them, then improved by KIP-925's greedy standby optimiser.

Tasks without a previous active client first go, in task order, to the client with the fewest
actives per thread, so that the optimisation starts from a complete assignment.
"""

from __future__ import annotations

import numpy as np

from optimizer.assignors.streams.client_state import ClientState, client_states
from optimizer.assignors.streams.high_availability import StreamsAssignorResult, assign_standby_tasks
from optimizer.assignors.streams.kip925.optimize import optimize_active_tasks
from optimizer.assignors.streams.rack_aware import RackAwareTaskAssignor
from optimizer.costs import StreamsIndex
from optimizer.model.ids import TaskKey, parse_task_id
from optimizer.model.streams import (
    STATELESS_NON_OVERLAP_COST,
    STATELESS_TRAFFIC_COST,
    RackAwareStrategy,
    StreamsProblem,
    TaskAssignor,
    kip925_costs,
)
from optimizer.text import plural


def kip925_reference(problem: StreamsProblem) -> StreamsAssignorResult:
    config = problem.config
    clients = client_states(problem)
    order = {c.id: i for i, c in enumerate(clients)}
    notes = []
    owner: dict[TaskKey, ClientState] = {}
    for client in clients:
        for task in client.previous_active:
            owner[task] = client
    tasks = sorted(parse_task_id(t.id) for t in problem.tasks)
    for task, client in owner.items():
        client.assign_active(task)
    missing = [t for t in tasks if t not in owner]
    for task in missing:
        owner[task] = min(clients, key=lambda c: (len(c.active) / c.capacity, order[c.id]))
        owner[task].assign_active(task)
    if missing:
        notes.append(f"{plural(len(missing), 'task')} without a previous active client: placed on the least loaded first")

    strategy = config.rack_aware_assignment_strategy
    if strategy == RackAwareStrategy.NONE:
        strategy = RackAwareStrategy.MIN_TRAFFIC
    traffic, non_overlap = kip925_costs(config, TaskAssignor.HIGH_AVAILABILITY)

    index = StreamsIndex.of(problem)
    by_index = [clients[order[c.id]] for c in index.clients]
    for stateful, costs in ((True, (traffic, non_overlap)), (False, (STATELESS_TRAFFIC_COST, STATELESS_NON_OVERLAP_COST))):
        rows = np.flatnonzero(index.stateful == stateful)
        if not len(rows):
            continue
        keys = [parse_task_id(index.tasks[r].id) for r in rows]
        current = np.array([index.client_position[owner[k].id] for k in keys])
        result = optimize_active_tasks(index, rows, current, *costs, strategy)
        for key, position in zip(keys, result.assignment.tolist(), strict=True):
            target = by_index[position]
            if target is not owner[key]:
                owner[key].unassign_active(key)
                target.assign_active(key)
        canceling = result.canceling
        notes.append(
            f"{'stateful' if stateful else 'stateless'} actives: cost {canceling.initial_cost} -> "
            f"{canceling.cost}, {canceling.cycles} cycles canceled in {canceling.passes} Bellman-Ford passes"
        )

    if config.num_standby_replicas > 0:
        stateful_keys = [parse_task_id(t.id) for t in index.tasks if t.stateful]
        rack_aware = RackAwareTaskAssignor(problem, strategy=strategy)
        enabled = rack_aware if rack_aware.can_enable() else None
        assign_standby_tasks(clients, stateful_keys, config, enabled, traffic, non_overlap)
    return StreamsAssignorResult(clients, {}, False, notes)
