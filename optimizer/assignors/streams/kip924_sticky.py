"""KIP-924's public StickyTaskAssignor (`org.apache.kafka.streams.processor.assignment.assignors`,
`task.assignor.class`), as StreamsPartitionAssignor runs it: Kafka 3.8 to 4.3 (checked against
1eb7644's frozen answers and the 3.9.1, 4.0.0, 4.2.2 and 4.3.1 jars) and 4.4.0.

1. Actives: each previous active back to its client while that client has room: fewer actives
   than threads x (tasks // all threads) up to Kafka 4.3, than ceil(tasks x threads / all threads)
   from 4.4.0 (KAFKA-20198; `kip924_sticky_assign_4_4`); then each remaining task to a previous
   standby holder with room; then the rest, in task order, to the best client (below).
2. KIP-925's optimisation of the stateful, then the stateless actives (TaskAssignmentUtils,
   `kip924_utils`), only when both rack-aware costs are configured.
3. Standbys: each replica of each task with a changelog to the best client not holding it.
4. KIP-925's standby swaps, under the same condition.
The best client for a task: its previous active or least-loaded previous standby holder, unless
that client's load (tasks per thread) is at least 1 and above another client's; else the
least-loaded client, preferring one whose tasks would form a new pair with the task. No lags, no
warm-ups, no follow-up rebalance.

Ties go to the first client met in Java HashSets of process ids (UUID hash order), and tasks are
visited in HashMap orders of TaskIds; both are reproduced (`optimizer.assignors.java`). One order is
not: Kafka places standbys task by task in a HashSet of TaskInfo, which has no hashCode of its own,
so that order is the JVM's identity hashes, different from run to run; here tasks go in task order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from optimizer.assignors.java import java_hash_map_order, java_task_id_hash, kafka_client_hash
from optimizer.assignors.streams.client_state import ClientState, client_states
from optimizer.assignors.streams.high_availability import StreamsAssignorResult
from optimizer.assignors.streams.kip924_utils import TaskRacks, optimize_active_tasks, optimize_standby_tasks
from optimizer.model.ids import TaskKey, parse_task_id, task_id
from optimizer.model.streams import (
    STATELESS_NON_OVERLAP_COST,
    STATELESS_TRAFFIC_COST,
    StreamsProblem,
    TaskAssignor,
    kip925_costs,
)


def _task_hash(task: TaskKey) -> int:
    return java_task_id_hash(*task)


def _subtopology_hash(subtopology: int) -> int:
    """Subtopology.hashCode(): Objects.hash(nodeGroupId, namedTopology = null)."""
    return 31 * (31 + subtopology)


def grouper_order(tasks: Iterable[TaskKey]) -> list[TaskKey]:
    """The order StreamsPartitionAssignor's maps of tasks are filled in: subtopology by subtopology
    as a HashMap of Subtopology iterates them (the PartitionGrouper's, ChangelogTopics'), partitions
    in order. Within a HashMap bucket, keys keep this order."""
    by_subtopology: dict[int, list[TaskKey]] = {}
    for task in sorted(tasks):
        by_subtopology.setdefault(task.subtopology, []).append(task)
    subtopologies = java_hash_map_order(sorted(by_subtopology), _subtopology_hash)
    return [t for s in subtopologies for t in by_subtopology[s]]


def all_tasks_order(tasks: Iterable[TaskKey]) -> list[TaskKey]:
    """ApplicationState.allTasks() iteration: a HashMap of TaskIds filled as the PartitionGrouper
    made them (`grouper_order`)."""
    return java_hash_map_order(grouper_order(tasks), _task_hash)


class _TaskPairs:
    """Pairs of tasks already placed together on a client (StickyTaskAssignor.TaskPairs)."""

    def __init__(self, tasks: int):
        self.max_pairs = tasks * (tasks - 1) // 2
        self.pairs: set[tuple[TaskKey, TaskKey]] = set()

    def has_new_pair(self, task: TaskKey, others: Iterable[TaskKey]) -> bool:
        if len(self.pairs) == self.max_pairs:
            return False
        return any(_pair(task, other) not in self.pairs for other in others)

    def add_pairs(self, task: TaskKey, others: Iterable[TaskKey]) -> None:
        self.pairs.update(_pair(task, other) for other in others)


def _pair(a: TaskKey, b: TaskKey) -> tuple[TaskKey, TaskKey]:
    return (a, b) if a < b else (b, a)


class _Kip924StickyTaskAssignor:
    def __init__(self, problem: StreamsProblem, standby_order: Sequence[TaskKey] | None = None):
        self.problem = problem
        self.sorted_clients = client_states(problem)
        self.by_id = {c.id: c for c in self.sorted_clients}
        self.client_hash = {c.id: kafka_client_hash(c.id) for c in self.sorted_clients}
        # ApplicationState.kafkaStreamsStates: a HashMap keyed by process id.
        self.clients = [self.by_id[i] for i in self._client_set(c.id for c in self.sorted_clients)]
        self.all_tasks = all_tasks_order(parse_task_id(t.id) for t in problem.tasks)
        self.stateful = sorted(parse_task_id(t.id) for t in problem.tasks if t.stateful)
        self.stateless = sorted(parse_task_id(t.id) for t in problem.tasks if not t.stateful)
        self.changelogged = sorted(parse_task_id(t.id) for t in problem.tasks if t.changelog_partitions)
        if standby_order is not None:
            if sorted(standby_order) != self.changelogged:
                raise ValueError("standby_order must list every task with changelog partitions once")
            self.changelogged = list(standby_order)
        self.pairs = _TaskPairs(len(self.all_tasks))
        self.notes: list[str] = []
        # mapPreviousActiveTasks / mapPreviousStandbyTasks: HashMaps filled client by client.
        previous_active: dict[TaskKey, str] = {}
        previous_standby: dict[TaskKey, list[str]] = {}
        for client in self.clients:
            for task in sorted(client.previous_active):
                previous_active[task] = client.id  # a later client overwrites, the key keeps its place
            for task in sorted(client.previous_standby):
                previous_standby.setdefault(task, []).append(client.id)
        self.previous_active = previous_active
        self.previous_active_order = java_hash_map_order(list(previous_active), _task_hash)
        self.previous_standby = {task: self._client_set(holders) for task, holders in previous_standby.items()}

    def _client_set(self, ids: Iterable[str], presized: bool = False) -> list[str]:
        """A HashSet of process ids filled in the given order, as Java iterates it."""
        return java_hash_map_order(list(ids), self.client_hash.__getitem__, presized)

    def assign(self) -> StreamsAssignorResult:
        self._assign_active()
        racks = TaskRacks(self.problem)
        traffic, non_overlap = kip925_costs(self.problem.config, TaskAssignor.KIP924_STICKY)
        optimize_active_tasks(racks, self.clients, self.stateful, traffic, non_overlap, self.notes)
        optimize_active_tasks(racks, self.clients, self.stateless, STATELESS_TRAFFIC_COST, STATELESS_NON_OVERLAP_COST, self.notes)
        replicas = self.problem.config.num_standby_replicas
        self._assign_standby(replicas)
        if replicas > 0:
            optimize_standby_tasks(racks, self.clients, traffic, non_overlap, self.notes)
        return StreamsAssignorResult(self.sorted_clients, {}, False, self.notes)

    # ------------------------------------------------------------------ placement

    def _assign_active(self) -> None:
        tasks, total = len(self.all_tasks), sum(c.capacity for c in self.clients)
        room = {c.id: self.room(tasks, c.capacity, total) for c in self.clients}
        assigned: set[TaskKey] = set()
        for task in self.previous_active_order:
            client = self.by_id[self.previous_active[task]]
            if len(client.active) < room[client.id]:
                self._finalize(task, client, active=True)
                assigned.add(task)
        remaining = []
        for task in java_hash_map_order(self.all_tasks, _task_hash, presized=True):  # new HashSet<>(allTaskIds)
            if task in assigned:
                continue
            for holder in self.previous_standby.get(task, ()):
                if len(self.by_id[holder].active) < room[holder]:
                    self._finalize(task, self.by_id[holder], active=True)
                    break
            else:
                remaining.append(task)
        for task in sorted(remaining):
            candidates = self._client_set(c.id for c in self.clients)
            self._finalize(task, self._best_client(task, candidates), active=True)

    def _assign_standby(self, replicas: int) -> None:
        for task in self.changelogged:
            for placed in range(replicas):
                candidates = self._client_set(c.id for c in self.clients if not c.holds(task))
                if not candidates:
                    self.notes.append(
                        f"task {task_id(*task)}: only {placed} of {replicas} standby replicas could be placed (not enough clients)"
                    )
                    break
                self._finalize(task, self._best_client(task, candidates), active=False)

    @staticmethod
    def room(tasks: int, capacity: int, total_capacity: int) -> int:
        """hasRoomForActiveTask's limit on a client's actives (Kafka 3.8 to 4.3): its threads times
        the whole tasks per thread, `capacity * (tasks / totalCapacity)` in ints."""
        return capacity * (tasks // total_capacity)

    def _finalize(self, task: TaskKey, client: ClientState, active: bool) -> None:
        self.pairs.add_pairs(task, client.active | client.standby)
        if active:
            client.assign_active(task)
        else:
            client.assign_standby(task)

    # ------------------------------------------------------------------ choosing a client

    def _best_client(self, task: TaskKey, within: Sequence[str]) -> ClientState:
        """findBestClientForTask; `within` is never empty and in its HashSet's order."""
        if len(within) == 1:
            return self.by_id[within[0]]
        previous = self._previous_holder(task, within)
        if previous is None:
            return self._least_loaded_of(task, within)
        if self._should_balance_load(previous):
            standby = self._least_loaded_previous_standby(task, within)
            if standby is None or self._should_balance_load(standby):
                return self._least_loaded_of(task, within)
            return standby
        return previous

    def _least_loaded_of(self, task: TaskKey, within: Sequence[str]) -> ClientState:
        client = self._least_loaded(task, within)
        assert client is not None, "findBestClientForTask's candidates are never empty"
        return client

    def _previous_holder(self, task: TaskKey, within: Sequence[str]) -> ClientState | None:
        owner = self.previous_active.get(task)
        if owner is not None and owner in within:
            return self.by_id[owner]
        return self._least_loaded_previous_standby(task, within)

    def _least_loaded_previous_standby(self, task: TaskKey, within: Sequence[str]) -> ClientState | None:
        allowed = set(within)
        holders = self._client_set(self.previous_standby.get(task, ()), presized=True)  # new HashSet<>(ids)
        return self._least_loaded(task, [h for h in holders if h in allowed])

    def _should_balance_load(self, client: ClientState) -> bool:
        load = client.assigned_load
        return load >= 1 and any(other.assigned_load < load for other in self.clients)

    def _least_loaded(self, task: TaskKey, ids: Sequence[str]) -> ClientState | None:
        """findLeastLoadedClient: an empty client at once, else the first least loaded with a new
        pair for the task, else the first least loaded."""
        best: ClientState | None = None
        for client_id in ids:
            client = self.by_id[client_id]
            if client.assigned_load == 0:
                return client
            if (best is None or client.assigned_load < best.assigned_load) and self.pairs.has_new_pair(
                task, client.active | client.standby
            ):
                best = client
        if best is not None:
            return best
        for client_id in ids:
            client = self.by_id[client_id]
            if best is None or client.assigned_load < best.assigned_load:
                best = client
        return best


class _Kip924StickyTaskAssignor44(_Kip924StickyTaskAssignor):
    """Kafka 4.4.0 (KAFKA-20198): a client's room for actives is its share of the tasks rounded up."""

    @staticmethod
    def room(tasks: int, capacity: int, total_capacity: int) -> int:
        """`ceil(tasks x capacity / totalCapacity)`, as Kafka computes it in ints:
        `(taskCount * capacity + totalCapacity - 1) / totalCapacity`."""
        return (tasks * capacity + total_capacity - 1) // total_capacity


def kip924_sticky_assign(problem: StreamsProblem, standby_order: Sequence[TaskKey] | None = None) -> StreamsAssignorResult:
    """Kafka's answer (3.8 to 4.3); `standby_order` is the order standbys are placed task by task,
    which in Kafka is a HashSet of `TaskInfo` objects without `hashCode` (identity hashes: it
    changes from one JVM to the next). Default: task order."""
    return _Kip924StickyTaskAssignor(problem, standby_order).assign()


def kip924_sticky_assign_4_4(problem: StreamsProblem, standby_order: Sequence[TaskKey] | None = None) -> StreamsAssignorResult:
    """Kafka 4.4.0's answer (KAFKA-20198: room for actives `ceil(tasks x threads / all threads)`);
    `standby_order` as in `kip924_sticky_assign`."""
    return _Kip924StickyTaskAssignor44(problem, standby_order).assign()

