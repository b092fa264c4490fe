"""KIP-925 inside Kafka's assignors (Kafka's RackAwareTaskAssignor).

`optimize_active_tasks` re-places a set of actives at least cost with every client keeping its
number of them: KIP-925's min-cost flow, on the `min_traffic` graph or on the
`balance_subtopology` graph whose (subtopology, client) capacities are
ceil(count / tasks x subtopology tasks), computed in doubles as Kafka does; that graph starts from
a breadth-first max flow rather than from the current assignment. `optimize_standby_tasks` is
KIP-925's greedy standby optimiser: up to four rounds over pairs of clients on different racks,
each pair's movable standbys re-placed by a two-client min-cost flow.

Among equally cheap assignments Kafka returns the one its search order reaches, and so does this
module: the min_traffic graph and the standby pairs by `kafka_graph`, the balance_subtopology
graph by `balance_graph` (Kafka's search, vectorised; both graphs: `kip925.constructors`). Beyond
`KAFKA_TIE_BREAK_WORK` the contracted cycle canceling is used: the same minimum cost, but possibly
another of the tied optima; the solution's notes say so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from optimizer.assignors.streams.client_state import ClientState
from optimizer.assignors.streams.kip925.constructors import balance_subtopology, min_traffic
from optimizer.assignors.streams.kip925.kafka_graph import cancel_cycles_as_kafka
from optimizer.model.ids import TaskKey, parse_task_id
from optimizer.model.streams import RackAwareStrategy, StreamsProblem

STANDBY_OPTIMIZER_MAX_ITERATION = 4

CanMove = Callable[[TaskKey, ClientState, ClientState, Sequence[ClientState]], bool]
"""Whether a standby of the task may move from the first client to the second; the last argument
lists the clients that hold the task (Kafka's `isAllowedTaskMovement` scans every client for them:
a client that does not hold it changes nothing)."""


@dataclass
class RackAwareTaskAssignor:
    """Rack information of one problem, and the optimisations that use it."""

    problem: StreamsProblem
    strategy: RackAwareStrategy | None = None
    """The graph to use; the problem's `rack.aware.assignment.strategy` when not given."""
    notes: list[str] = field(default_factory=list)
    """How each optimisation was solved (faithful graph or contracted cycle canceling)."""

    def __post_init__(self) -> None:
        if self.strategy is None:
            self.strategy = self.problem.config.rack_aware_assignment_strategy
        self.client_rack = {c.id: c.rack for c in self.problem.clients}
        self.source_racks: dict[TaskKey, list[frozenset[str]]] = {}
        self.changelog_racks: dict[TaskKey, list[frozenset[str]]] = {}
        self.subtopology_tasks: dict[int, list[TaskKey]] = {}
        for task in self.problem.tasks:
            key = parse_task_id(task.id)
            self.source_racks[key] = [frozenset(p.replica_racks) for p in task.source_partitions]
            self.changelog_racks[key] = [frozenset(p.replica_racks) for p in task.changelog_partitions]
            self.subtopology_tasks.setdefault(key.subtopology, []).append(key)
        for tasks in self.subtopology_tasks.values():
            tasks.sort()
        self._enabled: bool | None = None

    def can_enable(self) -> bool:
        """Kafka's canEnableRackAwareAssignor: a strategy set, every client with a rack, every
        source partition (and, with standbys, every changelog partition) with replica racks."""
        if self.strategy == RackAwareStrategy.NONE:
            return False
        if self._enabled is None:
            enabled = all(rack is not None for rack in self.client_rack.values()) and all(
                racks for partitions in self.source_racks.values() for racks in partitions
            )
            if enabled and self.problem.config.num_standby_replicas > 0:
                enabled = all(racks for partitions in self.changelog_racks.values() for racks in partitions)
            self._enabled = enabled
        return self._enabled

    def cost(
        self, task: TaskKey, client: ClientState, in_current: bool, traffic: int, non_overlap: int, standby: bool
    ) -> int:
        racks = (self.changelog_racks if standby else self.source_racks)[task]
        crossing = sum(1 for replicas in racks if client.rack not in replicas)
        return traffic * crossing + (0 if in_current else non_overlap)

    # ------------------------------------------------------------------ actives

    def optimize_active_tasks(
        self, tasks: Sequence[TaskKey], clients: Sequence[ClientState], traffic: int, non_overlap: int
    ) -> None:
        """Re-place the actives `tasks` (sorted) over `clients` (Kafka order) at least KIP-925 cost."""
        if not tasks:
            return
        owner = {}
        for j, client in enumerate(clients):
            for task in tasks:
                if task in client.active:
                    owner[task] = j
        start = np.array([owner[t] for t in tasks], dtype=np.int64)
        cost = np.array(
            [
                [self.cost(t, c, owner[t] == j, traffic, non_overlap, False) for j, c in enumerate(clients)]
                for t in tasks
            ],
            dtype=np.int64,
        )
        if self.strategy == RackAwareStrategy.BALANCE_SUBTOPOLOGY:
            # every subtopology of the topology is a group (Kafka's internal assignor), also those
            # without a task among `tasks`
            groups = [self.subtopology_tasks[s] for s in sorted(self.subtopology_tasks)]
            target = balance_subtopology(tasks, groups, cost, start, len(clients), self.notes)
        else:
            target = min_traffic(cost, start, self.notes)
        for task, j in zip(tasks, target, strict=True):
            if j != owner[task]:
                clients[owner[task]].unassign_active(task)
                clients[j].assign_active(task)

    # ------------------------------------------------------------------ standbys

    def optimize_standby_tasks(
        self, clients: Sequence[ClientState], traffic: int, non_overlap: int, can_move: CanMove
    ) -> None:
        # Who holds each task, kept up to date through the swaps: the tag check reads a task's
        # holders, which a scan of every client found for each (task, pair) before (on 5,000 tasks
        # x 100 clients with two standbys, 87 million membership tests, 29 of 50 s).
        holders: dict[TaskKey, list[ClientState]] = {}
        for client in clients:
            for task in (*client.active, *client.standby):
                holders.setdefault(task, []).append(client)
        moved, rounds = True, 0
        while moved and rounds < STANDBY_OPTIMIZER_MAX_ITERATION:
            moved, rounds = False, rounds + 1
            for i, first in enumerate(clients):
                for second in clients[i + 1 :]:
                    if first.rack == second.rack:
                        continue  # swapping between clients of one rack changes no traffic
                    movable_first = [
                        t for t in sorted(first.standby) if not second.holds(t) and can_move(t, first, second, holders[t])
                    ]
                    movable_second = [
                        t for t in sorted(second.standby) if not first.holds(t) and can_move(t, second, first, holders[t])
                    ]
                    if movable_first and movable_second:
                        moved |= self._swap_standbys(
                            sorted(movable_first + movable_second), [first, second], traffic, non_overlap, holders
                        )

    def _swap_standbys(self, tasks, pair, traffic, non_overlap, holders) -> bool:
        """Kafka's two-client min-cost flow over the pair's movable standbys (`holders` follows the moves)."""
        owner = np.array([0 if task in pair[0].standby else 1 for task in tasks], dtype=np.int64)
        cost = np.array(
            [
                [self.cost(task, client, task in client.standby, traffic, non_overlap, True) for client in pair]
                for task in tasks
            ],
            dtype=np.int64,
        )
        target = cancel_cycles_as_kafka(cost, owner)
        moved = False
        for task, before, after in zip(tasks, owner.tolist(), target.tolist(), strict=True):
            if before != after:
                pair[before].unassign_standby(task)
                pair[after].assign_standby(task)
                held = holders[task]
                held[held.index(pair[before])] = pair[after]
                moved = True
        return moved
