"""What Kafka tolerates: the problem as Kafka would act on it, and a warning for each such case.

A problem file is kept as written. Solvers and the evaluator work on `normalize(problem).problem`,
in which
* previous assignments and owned partitions that name tasks or partitions no longer in the
  problem are dropped (KIP-54 step 1), as are previous standbys of stateless tasks;
* a partition owned by several members stays with the highest generation; owners tied at the
  highest generation all lose it (Kafka invalidates such claims);
and the warnings say so. Conditions that change no data, but change what Kafka does, are warned
about too: more standbys requested than clients allow (each task gets `min(k, clients - 1)`),
clients without a rack (rack-aware assignment disabled), subscriptions to topics that do not exist.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from optimizer.model.base import derived
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import natural_key, partition_id, partition_key, shown
from optimizer.model.issues import Issue, warning
from optimizer.model.releases import unchecked_patch
from optimizer.model.streams import RackAwareStrategy, StreamsProblem

P = TypeVar("P", bound=StreamsProblem | ConsumerProblem)


@dataclass(frozen=True, eq=False)  # kept on its problem (`derived`): compared by identity, never field by field
class Normalized(Generic[P]):
    problem: P
    """The problem with Kafka's tolerant behaviour applied."""
    warnings: tuple[Issue, ...]
    """One warning per tolerated condition, with its location."""


@derived
def normalize(problem: P) -> Normalized[P]:
    """The problem as Kafka acts on it, with the warnings (computed once per problem object)."""
    normalized = _normalize_streams(problem) if isinstance(problem, StreamsProblem) else _normalize_consumer(problem)
    read = problem._read_warnings
    return cast(Normalized[P], Normalized(normalized.problem, (*read, *normalized.warnings)) if read else normalized)


def _names(values: list[str], limit: int = 8) -> str:
    ordered = sorted(set(values), key=natural_key)
    shown = ", ".join(ordered[:limit])
    return shown + (f" and {len(ordered) - limit} more" if len(ordered) > limit else "")


def _release_warnings(version: str) -> list[Issue]:
    """A patch release newer than those the project checked gets its line's latest variant: said."""
    newer = unchecked_patch(version)
    return [warning("config.kafka.version", newer)] if newer else []


def _reads_warnings(selector: str | None, where: str, without_leader: list[str]) -> list[Issue]:
    """How reads are counted, where the problem leaves it unsure (optimizer.model.racks): a replica
    selector the project does not know, and leaders given for some partitions only
    (`without_leader`: the partitions read with replica racks and no leader rack, when others have
    one and the leader serves)."""
    warnings: list[Issue] = []
    if selector is not None:
        warnings.append(
            warning(
                "config.replica.selector.class",
                f"{shown(selector)} is not Kafka's RackAwareReplicaSelector: which replica it picks is unknown, so "
                "cross-rack reads are counted from the leader, as with Kafka's default",
            )
        )
    if without_leader:
        warnings.append(
            warning(
                where,
                f"partitions {_names(without_leader)} have replica racks but no leader rack while others have one: "
                "their reads are counted as cross-rack only when no replica is in the reader's rack",
            )
        )
    return warnings


def _zombie_warnings(problem: StreamsProblem) -> list[Issue]:
    """Previous tasks reported twice, which Kafka reads as they come: a task active on several
    clients (a zombie: a process that lost the group kept its task), and a task on several members
    of one process. Nothing is dropped; the warnings say how each side reads them."""
    warnings: list[Issue] = []
    zombies = problem.zombie_tasks
    if zombies:
        shown_tasks = sorted(zombies, key=natural_key)
        listed = "; ".join(f"{task} on {', '.join(map(shown, zombies[task]))}" for task in shown_tasks[:8])
        more = f" and {len(shown_tasks) - 8} more" if len(shown_tasks) > 8 else ""
        warnings.append(
            warning(
                "clients",
                f"tasks previously active on several clients (zombies: a process that lost the group kept running them): {listed}{more}. "
                "Kafka's assignors read every report (high_availability counts each client caught up; sticky and KIP-924's "
                "StickyTaskAssignor keep the last client of their HashMap of process ids; a streams group the last member); "
                "the figures and the optimizer count each task as previously active on the first of its clients in id order",
            )
        )
    for index, client in enumerate(problem.clients):
        reported: dict[str, int] = defaultdict(int)
        for member in client.members:
            for task in {*member.previous_active, *member.previous_standby, *member.previous_warmup}:
                reported[task] += 1
        twice = [task for task, count in reported.items() if count > 1]
        if twice:
            warnings.append(
                warning(
                    f"clients[{index}] (id {shown(client.id)}).members",
                    f"tasks {_names(twice)} are reported by several members of this process: Kafka reads every report "
                    "(a streams group's sticky assignor keeps the last member's active and ranks every standby report); "
                    "the process holds one copy, active where any member ran it active",
                )
            )
    return warnings


def _normalize_streams(problem: StreamsProblem) -> Normalized[StreamsProblem]:
    warnings: list[Issue] = _release_warnings(problem.config.kafka_version)
    leaders_serve = problem.has_leaders and not problem.config.follower_fetching
    without_leader = (
        [
            p.id
            for task in problem.tasks
            for p in (*task.source_partitions, *task.changelog_partitions)
            if p.leader_rack is None and p.replica_racks
        ]
        if leaders_serve
        else []
    )
    warnings += _reads_warnings(problem.config.custom_replica_selector, "tasks", without_leader)
    unlogged = unlogged_tasks(problem)
    if unlogged:
        warnings.append(
            warning(
                "tasks",
                f"tasks {_names(list(unlogged))} are stateful without changelog partitions (their stores log nothing): "
                "nothing to replicate or restore, so they get no standby and no warm-up and are assigned as "
                "stateless, as Kafka's assignors count them (only a task with a changelog is stateful to them; "
                "KIP-924's StickyTaskAssignor still places their actives as stateful ones)",
            )
        )
    warnings += _zombie_warnings(problem)
    streams_tasks = tuple(t.model_copy(update={"stateful": False}) if t.id in unlogged else t for t in problem.tasks)
    # A client may hold state of a task whose stores log nothing (its local state directory): such a
    # previous standby stays, as Kafka's ClientState keeps it; one of a task without stores goes.
    tasks = problem.task_by_id
    clients = []
    for index, client in enumerate(problem.clients):
        where = f"clients[{index}] (id {shown(client.id)})"
        gone_active = [t for t in client.previous_active if t not in tasks]
        gone_standby = [t for t in client.previous_standby if t not in tasks]
        stateless_standby = [
            t for t in client.previous_standby if t in tasks and not tasks[t].stateful
        ]
        if gone_active:
            warnings.append(
                warning(
                    f"{where}.previous_active",
                    f"tasks {_names(gone_active)} are not in the problem's task list; "
                    "dropped, as Kafka ignores tasks that no longer exist",
                )
            )
        if gone_standby:
            warnings.append(
                warning(
                    f"{where}.previous_standby",
                    f"tasks {_names(gone_standby)} are not in the problem's task list; dropped",
                )
            )
        if stateless_standby:
            warnings.append(
                warning(
                    f"{where}.previous_standby",
                    f"tasks {_names(stateless_standby)} are stateless and have no standbys; dropped",
                )
            )
        if gone_active or gone_standby or stateless_standby:
            dropped = set(gone_standby) | set(stateless_standby)
            client = client.model_copy(
                update={
                    "previous_active": tuple(t for t in client.previous_active if t in tasks),
                    "previous_standby": tuple(
                        t for t in client.previous_standby if t not in dropped
                    ),
                }
            )
        clients.append(client)

    if not problem.tasks:
        warnings.append(
            warning("tasks", "the application has no tasks: every client gets an empty assignment, as in Kafka")
        )
    requested = problem.config.num_standby_replicas
    if requested > len(problem.clients) - 1 and any(t.stateful for t in streams_tasks):
        granted = len(problem.clients) - 1
        warnings.append(
            warning(
                "config.num.standby.replicas",
                f"{requested} standby replicas requested but there are only "
                f"{len(problem.clients)} clients: each stateful task gets {granted}, as in Kafka",
            )
        )

    without_rack = [c.id for c in problem.clients if c.rack is None]
    rack_aware = problem.config.rack_aware_assignment_strategy != RackAwareStrategy.NONE
    if without_rack and rack_aware:
        warnings.append(
            warning(
                "config.rack.aware.assignment.strategy",
                f"clients {_names(without_rack)} have no rack: rack-aware assignment is disabled, "
                "as Kafka does when any client lacks client.rack",
            )
        )
    elif without_rack and len(without_rack) < len(problem.clients):
        warnings.append(
            warning(
                "clients",
                f"clients {_names(without_rack)} have no rack while others have one: "
                "cross-rack figures count only clients with a rack",
            )
        )
    if rack_aware and not without_rack:
        unknown = sorted(
            {
                partition.id
                for task in problem.tasks
                for partition in (*task.source_partitions, *task.changelog_partitions)
                if not partition.replica_racks
            }
        )
        if unknown:
            warnings.append(
                warning(
                    "config.rack.aware.assignment.strategy",
                    f"partitions {_names(unknown)} have no replica racks: rack-aware assignment "
                    "is disabled, as Kafka does when partition racks are unknown",
                )
            )

    update: dict[str, Any] = {"clients": tuple(clients)}
    if unlogged:
        update["tasks"] = streams_tasks
    return Normalized(problem.model_copy(update=update), tuple(warnings))


def unlogged_tasks(problem: StreamsProblem) -> frozenset[str]:
    """The ids of the stateful tasks without changelog partitions, which `normalize` makes stateless
    (KIP-924's StickyTaskAssignor alone reads their stores: `TaskInfo.isStateful`)."""
    return frozenset(t.id for t in problem.tasks if t.stateful and not t.changelog_partitions)


def _normalize_consumer(problem: ConsumerProblem) -> Normalized[ConsumerProblem]:
    warnings: list[Issue] = _release_warnings(problem.config.kafka_version)
    topics = problem.topic_by_name
    without_leader = []
    if problem.has_leaders and not problem.config.follower_fetching:
        subscribed = sorted({t for m in problem.members for t in m.subscriptions if t in topics})
        without_leader = [
            partition_id(t, p)
            for t in subscribed
            if (replicas := topics[t].replica_racks) is not None
            for p in range(topics[t].partitions)
            if topics[t].leader_rack(p) is None and replicas[p]
        ]
    warnings += _reads_warnings(problem.config.custom_replica_selector, "topics", without_leader)

    for index, member in enumerate(problem.members):
        missing = [t for t in member.subscriptions if t not in topics]
        if missing:
            warnings.append(
                warning(
                    f"members[{index}] (id {shown(member.id)}).subscriptions",
                    f"topics {_names(missing)} do not exist; the member gets no partitions of them",
                )
            )

    # Owned partitions that still exist, then conflicts settled by generation.
    valid_owned: list[list[str]] = []
    claims: dict[str, list[int]] = defaultdict(list)
    for index, member in enumerate(problem.members):
        kept, gone, beyond = [], [], []
        for owned in member.owned_partitions:
            topic, number = partition_key(owned)  # a PartitionId field: checked
            if topic not in topics:
                gone.append(owned)
            elif number >= topics[topic].partitions:
                beyond.append(owned)
            else:
                kept.append(owned)
                claims[owned].append(index)
        where = f"members[{index}] (id {shown(member.id)}).owned_partitions"
        if gone:
            warnings.append(
                warning(
                    where,
                    f"partitions {_names(gone)} belong to topics that no longer exist; dropped, as KIP-54 step 1 does",
                )
            )
        if beyond:
            # Kafka's sticky assignors keep such claims (decision 46): --solver kafka says where it fails.
            warnings.append(
                warning(
                    where,
                    f"partitions {_names(beyond)} are beyond their topic's partition count: the exact solvers ignore them; "
                    "Kafka's sticky assignors keep them, and may fail on them (decision 46)",
                )
            )
        valid_owned.append(kept)

    lost: dict[int, set[str]] = defaultdict(set)
    contested = [(partition, owners) for partition, owners in claims.items() if len(owners) > 1]
    for partition, owners in sorted(contested, key=lambda item: natural_key(item[0])):
        top = max(problem.members[i].generation for i in owners)
        winners = [i for i in owners if problem.members[i].generation == top]
        keeper = winners[0] if len(winners) == 1 else None
        for i in owners:
            if i != keeper:
                lost[i].add(partition)
        ids = ", ".join(shown(problem.members[i].id) for i in sorted(owners, key=lambda i: problem.members[i].id))
        outcome = (
            f"member {shown(problem.members[keeper].id)} (generation {top}) keeps it"
            if keeper is not None
            else f"they tie at generation {top}, so it is removed from all of them, as Kafka does"
        )
        warnings.append(
            warning("members", f"partition {partition} is owned by members {ids}: {outcome}")
        )

    members = tuple(
        member
        if member.owned_partitions == tuple(valid_owned[i]) and i not in lost
        else member.model_copy(
            update={"owned_partitions": tuple(p for p in valid_owned[i] if p not in lost[i])}
        )
        for i, member in enumerate(problem.members)
    )

    without_rack = [m.id for m in problem.members if m.rack is None]
    if without_rack and len(without_rack) < len(problem.members):
        warnings.append(
            warning(
                "members",
                f"members {_names(without_rack)} have no rack while others have one: rack-aware "
                "assignment (KIP-881) treats them as rack-less, and cross-rack figures skip them",
            )
        )
    return Normalized(problem.model_copy(update={"members": members}), tuple(warnings))
