"""Kafka Streams' view of a client during assignment (Kafka's ClientState), built from a problem.

Lags follow Kafka: a previous active that reports no lag is a running active, Kafka's
LATEST_OFFSET (-2), which sorts before every real lag; a previous standby that reports none is
taken as caught up (0); any other client restores the whole changelog (`changelog_end_offset`,
or the largest long when unknown). A stateful task without changelog has lag 0 everywhere. As in
Kafka, a task a client reports a lag for and did not run as active is a previous standby of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from optimizer.assignors.java import kafka_client_order
from optimizer.model.ids import INT64_MAX, TaskKey, parse_task_id
from optimizer.model.streams import StreamsProblem

LATEST_OFFSET = -2
MAX_LONG = INT64_MAX


@dataclass(eq=False)
class ClientState:
    id: str
    capacity: int
    """Stream threads."""
    rack: str | None
    tags: dict[str, str]
    reported_lags: dict[TaskKey, int]
    """Lags the client reported (stateful tasks only)."""
    end_offsets: dict[TaskKey, int]
    """Changelog end offset per stateful task (0: no changelog), shared by all clients."""
    previous_active: frozenset[TaskKey]
    previous_standby: frozenset[TaskKey]
    active: set[TaskKey] = field(default_factory=set)
    standby: set[TaskKey] = field(default_factory=set)

    def lag(self, task: TaskKey) -> int:
        """Kafka's lag of this client on a stateful task (see the module's docstring)."""
        end = self.end_offsets[task]
        if end == 0:
            return LATEST_OFFSET if task in self.previous_active else 0
        if task in self.reported_lags:
            return self.reported_lags[task]
        if task in self.previous_active:
            return LATEST_OFFSET
        if task in self.previous_standby:
            return 0
        return end

    @property
    def active_load(self) -> float:
        return len(self.active) / self.capacity

    @property
    def assigned_count(self) -> int:
        return len(self.active) + len(self.standby)

    @property
    def assigned_load(self) -> float:
        return self.assigned_count / self.capacity

    def holds(self, task: TaskKey) -> bool:
        return task in self.active or task in self.standby

    def assign_active(self, task: TaskKey) -> None:
        self._check_free(task)
        self.active.add(task)

    def assign_standby(self, task: TaskKey) -> None:
        self._check_free(task)
        self.standby.add(task)

    def unassign_active(self, task: TaskKey) -> None:
        self.active.remove(task)

    def unassign_standby(self, task: TaskKey) -> None:
        self.standby.remove(task)

    def _check_free(self, task: TaskKey) -> None:
        if self.holds(task):
            raise AssertionError(f"client {self.id} already holds task {task}")

    def __repr__(self) -> str:
        return f"ClientState({self.id}, active={sorted(self.active)}, standby={sorted(self.standby)})"


def client_states(problem: StreamsProblem) -> list[ClientState]:
    """ClientStates of a (normalised) problem, in Kafka's client order, with empty assignments."""
    end_offset = {
        parse_task_id(t.id): (
            0 if not t.changelog_partitions else (t.changelog_end_offset if t.changelog_end_offset is not None else MAX_LONG)
        )
        for t in problem.tasks
        if t.stateful
    }
    states = []
    for client_id in kafka_client_order(c.id for c in problem.clients):
        client = problem.client_by_id[client_id]
        previous_active = frozenset(parse_task_id(t) for t in client.previous_active)
        reported = {task: lag for task, lag in ((parse_task_id(t), lag) for t, lag in client.lags.items()) if task in end_offset}
        # Kafka's initializeRemainingPrevTasksFromTaskOffsetSums: every task a client reports an
        # offset sum for, and did not run as active, is one of its previous standbys.
        previous_standby = frozenset(parse_task_id(t) for t in client.previous_standby) | (
            reported.keys() - previous_active
        )
        states.append(
            ClientState(
                id=client.id,
                capacity=client.threads,
                rack=client.rack,
                tags=dict(client.tags),
                reported_lags=reported,
                end_offsets=end_offset,
                previous_active=previous_active,
                previous_standby=previous_standby,
            )
        )
    return states
