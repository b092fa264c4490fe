"""Seeded random problems that look like real applications and groups.

Used by property tests, benchmarks and the sample fleet. The same arguments always give the same
problem. Streams problems have subtopologies with co-partitioned source topics, replicas on a
subset of the racks, stateful tasks with changelogs, and a previous assignment from before a
scaling event (some clients left, some joined), with lags for the state each client holds.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import partition_id, partition_key, task_id, task_key
from optimizer.model.problem import problem_from_data, problem_to_data
from optimizer.model.streams import StreamsProblem


def _racks(count: int) -> list[str]:
    return [f"rack-{chr(ord('a') + i)}" for i in range(count)]


def random_streams_problem(
    seed: int,
    *,
    tasks: int = 20,
    clients: int = 5,
    subtopologies: int | None = None,
    racks: int = 3,
    replication: int = 2,
    partitions_per_task: tuple[int, int] = (1, 4),
    stateful_fraction: float = 0.7,
    standby_replicas: int = 1,
    threads: tuple[int, int] = (1, 4),
    tags: tuple[str, ...] = (),
    strategy: str = "min_traffic",
    previous: bool = True,
    churn: float = 0.2,
    lags: bool = True,
    rackless_clients: int = 0,
    rates: bool = False,
    weights: bool = False,
    name: str | None = None,
) -> StreamsProblem:
    """A Streams application with `tasks` tasks over `clients` clients.

    `racks=0` gives a problem without any rack information (no client rack, no replica racks),
    `rackless_clients=N` leaves the last N clients without a rack (partial rack information);
    `standby_replicas=0`, `stateful_fraction=0.0` and `tags=()` the other shapes Kafka allows.
    `rates` adds skewed bytes per second (`skewed_rates`), `weights` task weights and client
    capacities; both draw from their own random sequence, so the rest of the problem is the same
    with or without them."""
    rng = random.Random(seed)
    rack_names = _racks(max(racks, 1))
    subtopologies = subtopologies or max(1, min(tasks, rng.randint(1, 4)))
    # Split the tasks over subtopologies (each at least one partition).
    sizes = [1] * min(subtopologies, max(tasks, 1))
    for _ in range(tasks - len(sizes)):
        sizes[rng.randrange(len(sizes))] += 1
    end_offset = 1_000_000

    def replicas() -> list[str]:
        if not racks:
            return []
        return sorted(rng.sample(rack_names, min(replication, len(rack_names))))

    task_docs: list[dict[str, Any]] = []
    for sub, count in enumerate(sizes if tasks else []):
        inputs = rng.randint(*partitions_per_task)
        stateful = rng.random() < stateful_fraction
        for partition in range(count):
            doc: dict[str, Any] = {
                "id": task_id(sub, partition),
                "stateful": stateful,
                "source_partitions": [
                    _partition(f"s{sub}-input-{i}", partition, replicas()) for i in range(inputs)
                ],
            }
            if stateful:
                doc["changelog_partitions"] = [_partition(f"app-s{sub}-store-changelog", partition, replicas())]
                doc["changelog_end_offset"] = end_offset
            task_docs.append(doc)

    tag_values = {tag: [f"{tag}-{i}" for i in range(3)] for tag in tags}
    client_docs: list[dict[str, Any]] = []
    for i in range(clients):
        doc = {"id": f"client-{i:04d}", "rack": rack_names[i % len(rack_names)], "threads": rng.randint(*threads)}
        if not racks or i >= clients - rackless_clients:
            del doc["rack"]
        if tags:
            doc["tags"] = {tag: rng.choice(values) for tag, values in tag_values.items()}
        client_docs.append(doc)

    if previous and task_docs:
        # The previous generation: some of today's clients plus some that have left since.
        stayed = [d for d in client_docs if rng.random() >= churn] or client_docs[:1]
        departed = max(0, round(churn * clients))
        holders = [d["id"] for d in stayed] + [f"departed-{i}" for i in range(departed)]
        by_id = {d["id"]: d for d in stayed}
        order = list(range(len(task_docs)))
        rng.shuffle(order)
        active_of: dict[str, str] = {}
        for n, t in enumerate(order):
            owner = holders[n % len(holders)]
            active_of[task_docs[t]["id"]] = owner
            if owner in by_id:
                by_id[owner].setdefault("previous_active", []).append(task_docs[t]["id"])
        for task in task_docs:
            if not task["stateful"]:
                continue
            others = [h for h in holders if h != active_of[task["id"]]]
            for holder in rng.sample(others, min(standby_replicas, len(others))):
                if holder in by_id:
                    by_id[holder].setdefault("previous_standby", []).append(task["id"])
        if lags:
            acceptable = 10_000
            for doc in stayed:
                # A running active reports no lag (Kafka's LATEST_OFFSET); a standby may lag.
                lag_of = {}
                for t in doc.get("previous_standby", ()):
                    lag_of[t] = rng.choice([0, rng.randint(0, 3 * acceptable)])
                if lag_of:
                    doc["lags"] = lag_of
        for doc in stayed:
            for key in ("previous_active", "previous_standby"):
                if key in doc:
                    doc[key].sort(key=task_key)

    config: dict[str, Any] = {"num.standby.replicas": standby_replicas, "rack.aware.assignment.strategy": strategy}
    if tags:
        config["rack.aware.assignment.tags"] = list(tags)
    document: dict[str, Any] = {
        "kind": "streams",
        "name": name or f"streams-{seed}",
        "config": config,
        "clients": client_docs,
        "tasks": task_docs,
    }
    if rates:
        document["topic_bytes_per_second"] = _streams_rates(random.Random(f"{seed}-rates"), task_docs)
    if weights:
        extra = random.Random(f"{seed}-weights")
        by_subtopology: dict[int, float] = {}
        for task in task_docs:
            task["weight"] = by_subtopology.setdefault(task_key(task["id"])[0], extra.choice([1, 1, 1, 2, 5, 0.5]))
        for client in client_docs:
            client["capacity"] = extra.choice([1, 1, 1, 2, 0.5])
    problem = problem_from_data(document)
    assert isinstance(problem, StreamsProblem)  # a "streams" document
    return problem


def add_zombies(rng: random.Random, data: dict[str, Any], rate: float) -> int:
    """Zombies in a Streams problem's data, as a cluster after a network partition reports them:
    each previously active task, with probability `rate`, is also reported active by another
    client (dropped from that client's standbys), or, on a client that lists its members, by
    another member of the same process. Returns how many reports were added."""
    clients = data["clients"]
    added = 0

    def actives(client: dict[str, Any]) -> list[str]:
        return [t for m in client.get("members", ()) for t in m.get("previous_active", ())] or list(client.get("previous_active", ()))

    for task in sorted({t for client in clients for t in actives(client)}, key=task_key):
        if rng.random() >= rate:
            continue
        holders = [i for i, client in enumerate(clients) if task in actives(client)]
        first = clients[holders[0]]
        members = first.get("members") or []
        if len(members) > 1 and rng.random() < 0.5:
            free = [m for m in members if task not in {*m.get("previous_active", ()), *m.get("previous_standby", ()), *m.get("previous_warmup", ())}]
            if free:
                rng.choice(free).setdefault("previous_active", []).append(task)
                added += 1
            continue
        others = [i for i in range(len(clients)) if i not in holders]
        if not others:
            continue
        other = clients[rng.choice(others)]
        if other.get("members"):
            for member in other["members"]:
                for field in ("previous_standby", "previous_warmup"):
                    if task in member.get(field, ()):
                        member[field].remove(task)
            rng.choice(other["members"]).setdefault("previous_active", []).append(task)
        else:
            if task in other.get("previous_standby", ()):
                other["previous_standby"].remove(task)
            other.setdefault("previous_active", []).append(task)
        added += 1
    return added


def skewed_rate(rng: random.Random) -> int:
    """Bytes per second into each partition of a topic, as real estates have them: log-uniform
    between 1 kB/s and 1 MB/s, and one topic in ten hot (5 to 50 MB/s per partition)."""
    if rng.random() < 0.1:
        return round(rng.uniform(5e3, 50e3)) * 1000
    return round(1e3 * 1e3 ** rng.random())


def _streams_rates(rng: random.Random, task_docs: list[dict[str, Any]]) -> dict[str, float]:
    """Rates per topic: skewed for source topics; a changelog writes a fraction of what its
    subtopology reads. Partitions of a hot topic may be skewed themselves (a hot key): some
    partitions then carry their own rate."""
    topics: dict[str, float] = {}
    for task in task_docs:
        for partition in task["source_partitions"]:
            if partition["topic"] not in topics:
                topics[partition["topic"]] = skewed_rate(rng)
    for task in task_docs:
        read = sum(topics[p["topic"]] for p in task["source_partitions"])
        for partition in task.get("changelog_partitions", ()):
            topics.setdefault(partition["topic"], round(read * rng.choice([0.05, 0.2, 0.5])))
    for task in task_docs:
        for partition in task["source_partitions"]:
            if topics[partition["topic"]] >= 5e6 and rng.random() < 0.2:
                partition["bytes_per_second"] = topics[partition["topic"]] * rng.choice([3, 5])
    return topics


def _partition(topic: str, partition: int, replica_racks: list[str]) -> dict[str, Any]:
    doc: dict[str, Any] = {"topic": topic, "partition": partition}
    if replica_racks:
        doc["replica_racks"] = replica_racks
    return doc


def random_consumer_problem(
    seed: int,
    *,
    members: int = 5,
    topics: int = 3,
    partitions: tuple[int, int] = (1, 12),
    racks: int = 3,
    replication: int = 2,
    equal_subscriptions: bool = True,
    strategy: str = "sticky",
    owned: bool = True,
    churn: float = 0.2,
    rates: bool = False,
    weights: bool = False,
    name: str | None = None,
) -> ConsumerProblem:
    """A consumer group over `topics` topics; members owned partitions before a scaling event.
    `rates` adds skewed bytes per second (`skewed_rate`; a hot topic's partitions may be skewed
    too), `weights` member capacities, each from its own random sequence."""
    rng = random.Random(seed)
    rack_names = _racks(max(racks, 1))
    topic_docs = []
    for i in range(topics):
        count = rng.randint(*partitions)
        doc: dict[str, Any] = {"name": f"topic-{i}", "partitions": count}
        if racks:
            doc["replica_racks"] = [
                sorted(rng.sample(rack_names, min(replication, len(rack_names)))) for _ in range(count)
            ]
        topic_docs.append(doc)
    names = [t["name"] for t in topic_docs]
    member_docs = []
    for i in range(members):
        subscriptions = names if equal_subscriptions else sorted(rng.sample(names, rng.randint(1, len(names))))
        doc = {"id": f"member-{i:04d}", "subscriptions": list(subscriptions)}
        if racks:
            doc["rack"] = rack_names[i % len(rack_names)]
        member_docs.append(doc)
    if owned:
        stayed = [d for d in member_docs if rng.random() >= churn] or member_docs[:1]
        departed = max(0, round(churn * members))
        holders = [d["id"] for d in stayed] + [f"departed-{i}" for i in range(departed)]
        by_id = {d["id"]: d for d in stayed}
        everything = [partition_id(t["name"], p) for t in topic_docs for p in range(t["partitions"])]
        rng.shuffle(everything)
        for n, partition in enumerate(everything):
            owner = holders[n % len(holders)]
            topic, _ = partition_key(partition)
            if owner in by_id and topic in by_id[owner]["subscriptions"]:
                by_id[owner].setdefault("owned_partitions", []).append(partition)
        for doc in stayed:
            doc["generation"] = 7
            if "owned_partitions" in doc:
                doc["owned_partitions"].sort(key=partition_key)
    if rates:
        extra = random.Random(f"{seed}-rates")
        for doc in topic_docs:
            rate = skewed_rate(extra)
            if rate >= 5e6 and extra.random() < 0.3:  # a hot key: one partition takes most of it
                doc["partition_bytes_per_second"] = [rate * (5 if p == 0 else 1) for p in range(doc["partitions"])]
            else:
                doc["bytes_per_second"] = rate
    if weights:
        extra = random.Random(f"{seed}-weights")
        for doc in member_docs:
            doc["capacity"] = extra.choice([1, 1, 1, 2, 0.5])
    problem = problem_from_data(
        {
            "kind": "consumer",
            "name": name or f"group-{seed}",
            "config": {"partition.assignment.strategy": strategy},
            "topics": topic_docs,
            "members": member_docs,
        }
    )
    assert isinstance(problem, ConsumerProblem)  # a "consumer" document
    return problem


ENUMERABLE = 3_000
"""At most this many valid assignments in a `varied_problem`: every one of them can be listed."""

VARIED_RATES = (1_000, 20_000, 500_000, 3_000_000, 40_000_000, 170_000_000)
"""Bytes per second a `varied_problem` draws from (times 1 to 9): from a quiet partition to one
at the edge of what a broker carries, so that goals in bytes meet large coefficients."""


def thread_mix(threads: list[int], tasks: int, stateful: int, standbys: int) -> dict[str, Any]:
    """The document of an application of clients with these `threads`, `tasks` tasks of which the
    first `stateful` are stateful, and `standbys` standby replicas (balance's narrow widths)."""
    return {
        "kind": "streams",
        "config": {"num.standby.replicas": standbys},
        "clients": [{"id": f"c{k}", "threads": t} for k, t in enumerate(threads)],
        "tasks": [
            {"id": f"0_{i}", "stateful": i < stateful, "source_partitions": [{"topic": "in", "partition": i}],
             **({"changelog_partitions": [{"topic": "in-changelog", "partition": i}]} if i < stateful else {})}
            for i in range(tasks)
        ],
    }  # fmt: skip


def varied_problem(seed: int, kind: str | None = None) -> StreamsProblem | ConsumerProblem:
    """A small random problem of any shape the engine takes, for checks against enumeration
    (`optimizer.testing.audit`): at most `ENUMERABLE` valid assignments. `kind` None alternates
    by seed (even: Streams).

    Streams: 2-4 clients with 1-3 threads, racks or none (some clients without), tag dimensions,
    0-2 standbys, stateful and stateless subtopologies, previous actives and standbys (some held by
    a client that left), lags inside and beyond `acceptable.recovery.lag`, every
    `rack.aware.assignment.strategy`, the HA, sticky and KIP-924 assignors and KIP-1071 streams
    groups; in two of five, bytes per second, task weights and capacities. Consumer groups: 2-4
    members over 1-3 topics, equal or different subscriptions, racks, owned partitions (some
    claimed twice), generations, every classic strategy (cooperative-sticky twice as often) and
    KIP-848's assignors; in half of them, bytes per second (per topic or per partition) and
    member capacities."""
    kind = kind or ("streams" if seed % 2 == 0 else "consumer")
    document = _varied_streams(seed) if kind == "streams" else _varied_consumer(seed)
    problem = problem_from_data(document)
    assert isinstance(problem, StreamsProblem | ConsumerProblem)
    return problem


def _varied_rate(rng: random.Random) -> int:
    return rng.choice(VARIED_RATES) * rng.randint(1, 9)


def _varied_streams(seed: int) -> dict[str, Any]:
    rng = random.Random(f"varied-streams-{seed}")
    clients = rng.randint(2, 4)
    standbys = rng.choice([0, 1, 1, 2]) if clients >= 3 else rng.choice([0, 1])
    stateful_choices = clients * math.comb(clients - 1, min(standbys, clients - 1))
    most = 1
    while most < 5 and stateful_choices ** (most + 1) <= ENUMERABLE:
        most += 1
    tasks = rng.randint(max(1, most - 1), most)
    racks = rng.choice([0, 2, 3])
    rack_names = [f"r{i}" for i in range(racks)]
    weighted = rng.random() < 0.4
    subtopologies = rng.randint(1, min(3, tasks))
    sizes = [1] * subtopologies
    for _ in range(tasks - subtopologies):
        sizes[rng.randrange(subtopologies)] += 1

    def replicas() -> dict[str, Any]:
        return {"replica_racks": sorted(rng.sample(rack_names, rng.randint(1, racks)))} if racks else {}

    task_docs: list[dict[str, Any]] = []
    rates: dict[str, int] = {}
    for sub, count in enumerate(sizes):
        stateful = rng.random() < 0.7
        weight = rng.choice([1, 1, 2, 5, 0.5]) if weighted else 1
        for partition in range(count):
            doc: dict[str, Any] = {
                "id": task_id(sub, partition),
                "stateful": stateful,
                "source_partitions": [{"topic": f"in-{sub}", "partition": partition, **replicas()}],
            }
            if stateful:
                doc["changelog_partitions"] = [{"topic": f"app-{sub}-changelog", "partition": partition, **replicas()}]
                doc["changelog_end_offset"] = rng.choice([50_000, 1_000_000])
            if weight != 1:
                doc["weight"] = weight
            task_docs.append(doc)
        if weighted:
            rates[f"in-{sub}"] = _varied_rate(rng)
            if stateful:
                rates[f"app-{sub}-changelog"] = rng.choice(VARIED_RATES)
    tags = rng.choice([(), (), ("zone",), ("zone", "cluster")])
    client_docs: list[dict[str, Any]] = []
    for i in range(clients):
        client: dict[str, Any] = {"id": f"client-{i}", "threads": rng.choice([1, 1, 2, 3])}
        if racks and rng.random() < 0.9:
            client["rack"] = rng.choice(rack_names)
        if tags:
            client["tags"] = {tag: f"{tag}-{rng.randint(0, 1)}" for tag in tags}
        if weighted and rng.random() < 0.5:
            client["capacity"] = rng.choice([0.5, 1, 2, 3, 1.5])
        client_docs.append(client)
    if rng.random() < 0.85:  # a previous generation, with a client that has left since
        holders = [*client_docs, {"id": "departed"}]
        for task in task_docs:
            owner = rng.choice(holders)
            if rng.random() < 0.85:
                owner.setdefault("previous_active", []).append(task["id"])
            if task["stateful"]:
                for holder in rng.sample(holders, rng.randint(0, 2)):
                    if holder is not owner:
                        holder.setdefault("previous_standby", []).append(task["id"])
        for client in client_docs:
            lags = {t: rng.choice([0, 500, 20_000, 200_000]) for t in client.get("previous_standby", ()) if rng.random() < 0.6}
            for task in task_docs:
                held = (*client.get("previous_active", ()), *client.get("previous_standby", ()))
                if task["stateful"] and task["id"] not in held and rng.random() < 0.1:
                    lags[task["id"]] = rng.choice([100, 9_000, 70_000])
            if lags:
                client["lags"] = lags
    config: dict[str, Any] = {
        "num.standby.replicas": standbys,
        "rack.aware.assignment.strategy": rng.choice(["none", "min_traffic", "balance_subtopology"]),
    }
    if tags:
        config["rack.aware.assignment.tags"] = list(tags)
    if rng.random() < 0.3:
        config["acceptable.recovery.lag"] = rng.choice([0, 1_000, 100_000])
    assignor = rng.random()
    if assignor < 0.15:
        config["task.assignor.class"] = "sticky"
    elif assignor < 0.3:
        config["task.assignor.class"] = "kip924_sticky"
    elif assignor < 0.45:
        config["group.protocol"] = "streams"
        config["streams.assignor.name"] = rng.choice(["sticky", "balanced"])
    document: dict[str, Any] = {"kind": "streams", "name": f"varied-streams-{seed}", "config": config, "clients": client_docs, "tasks": task_docs}
    if rates:
        document["topic_bytes_per_second"] = rates
    return document


def _varied_consumer(seed: int) -> dict[str, Any]:
    rng = random.Random(f"varied-consumer-{seed}")
    members = rng.randint(2, 4)
    topics = rng.randint(1, 3)
    most = max(topics, int(math.log(ENUMERABLE, members)))
    counts = [1] * topics
    for _ in range(rng.randint(topics, most) - topics):
        counts[rng.randrange(topics)] += 1
    racks = rng.choice([0, 2, 3])
    rack_names = [f"r{i}" for i in range(racks)]
    weighted = rng.random() < 0.5
    topic_docs: list[dict[str, Any]] = []
    for i, count in enumerate(counts):
        topic: dict[str, Any] = {"name": f"topic-{i}", "partitions": count}
        if racks:
            topic["replica_racks"] = [sorted(rng.sample(rack_names, rng.randint(1, racks))) for _ in range(count)]
        if weighted and rng.random() < 0.8:
            if rng.random() < 0.4:
                topic["partition_bytes_per_second"] = [_varied_rate(rng) for _ in range(count)]
            else:
                topic["bytes_per_second"] = _varied_rate(rng)
        topic_docs.append(topic)
    names = [t["name"] for t in topic_docs]
    equal = rng.random() < 0.5
    member_docs: list[dict[str, Any]] = []
    for i in range(members):
        member: dict[str, Any] = {"id": f"member-{i}", "subscriptions": names if equal else sorted(rng.sample(names, rng.randint(1, topics)))}
        if racks and rng.random() < 0.9:
            member["rack"] = rng.choice(rack_names)
        if weighted and rng.random() < 0.5:
            member["capacity"] = rng.choice([0.25, 0.5, 1, 1.5, 2, 3])
        member_docs.append(member)
    if rng.random() < 0.8:  # owned partitions, some claimed by two members
        for member in member_docs:
            if rng.random() < 0.8:
                member["generation"] = rng.choice([5, 5, 5, 4])
        for topic in topic_docs:
            for p in range(topic["partitions"]):
                draw = rng.random()
                claimants = rng.sample(member_docs, 1 if draw < 0.6 else 2) if draw < 0.7 else []
                for member in claimants:
                    if topic["name"] in member["subscriptions"]:
                        member.setdefault("owned_partitions", []).append(partition_id(topic["name"], p))
    config: dict[str, Any]
    if rng.random() < 0.25:
        config = {"group.protocol": "consumer", "group.remote.assignor": rng.choice(["uniform", "range"])}
    else:
        config = {"partition.assignment.strategy": rng.choice(["range", "roundrobin", "sticky", "cooperative-sticky", "cooperative-sticky"])}
    return {"kind": "consumer", "name": f"varied-consumer-{seed}", "config": config, "topics": topic_docs, "members": member_docs}



EDGE_RATES = (1, 999, 1_234_567, 300_000_000, 2**37 + 1, 10**11, 10**13)
"""Bytes per second an `edge_problem` draws from: from one byte to the sanity bound (10 TB/s),
odd numbers among them, so that reads and loads meet coarser units."""

EDGE_WEIGHTS = (0.001, 0.5, 1, 1, 7, 1000, 999_999.5, 1_000_000)
"""Task weights an `edge_problem` draws from: the sanity bounds' whole range."""

EDGE_CAPACITIES = (0.001, 0.25, 1, 1, 1.001, 3, 1_000_000)
"""Client and member capacities an `edge_problem` draws from: the sanity bounds' whole range."""

EDGE_THREADS = ((1, 1, 1, 3), (2, 2, 2, 5), (1, 1, 1, 1, 4), (1, 4, 1), (3, 1), (1, 2, 3), (5, 1, 1))
"""Thread mixes an `edge_problem` draws clients' threads from (in turn, as many as it has
clients): mixes with one large client, where the narrowest balances of actives and of stateful
copies apart can leave no assignment (goals/balance.py)."""


def edge_problem(seed: int, kind: str | None = None) -> StreamsProblem | ConsumerProblem:
    """A `varied_problem` (the same shape, size and history for the same seed) at the edges of
    what validates, for checks against enumeration: Streams clients' threads from mixes with one
    large client (`EDGE_THREADS`), and in half of them task weights, capacities and bytes per
    second across the sanity bounds' range; consumer groups with capacities and bytes per second
    across that range, cooperative-sticky in half of them. `kind` None alternates by seed."""
    kind = kind or ("streams" if seed % 2 == 0 else "consumer")
    rng = random.Random(f"edge-{kind}-{seed}")
    if kind == "streams":
        document = _varied_streams(seed)
        mix = rng.choice(EDGE_THREADS)
        for client, threads in zip(document["clients"], itertools.cycle(sorted(mix, reverse=True))):
            client["threads"] = threads
        if rng.random() < 0.5:
            for task in document["tasks"]:
                task["weight"] = rng.choice(EDGE_WEIGHTS)
            for client in document["clients"]:
                client["capacity"] = rng.choice(EDGE_CAPACITIES)
            topics = {p["topic"] for task in document["tasks"] for p in (*task["source_partitions"], *task.get("changelog_partitions", ()))}
            document["topic_bytes_per_second"] = {topic: rng.choice(EDGE_RATES) for topic in sorted(topics)}
    else:
        document = _varied_consumer(seed)
        for topic in document["topics"]:
            topic.pop("bytes_per_second", None)
            topic["partition_bytes_per_second"] = [rng.choice(EDGE_RATES) for _ in range(topic["partitions"])]
        for member in document["members"]:
            member["capacity"] = rng.choice(EDGE_CAPACITIES)
        if rng.random() < 0.5:
            document["config"] = {"partition.assignment.strategy": "cooperative-sticky"}
    document["name"] = f"edge-{kind}-{seed}"
    problem = problem_from_data(document)
    assert isinstance(problem, StreamsProblem | ConsumerProblem)
    return problem


# The live oracle's groups (tests/kafka/test_live_oracle.py, bench/consumer_releases.py): seeded, so
# that a release's figures can be reproduced.

CLASSIC_STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky")


def oracle_classic_groups(strategy: str, count: int, first: int = 0) -> list[ConsumerProblem]:
    """`count` classic groups of `strategy` (seeds `first`...): 1-9 members over 1-4 topics of 1-12
    partitions, racks or none, equal subscriptions or not, owned partitions and churn."""
    groups = []
    for seed in range(first, first + count):
        rng = random.Random(f"{strategy}-{seed}")
        groups.append(
            random_consumer_problem(
                seed, members=rng.randint(1, 9), topics=rng.randint(1, 4), partitions=(1, 12), racks=rng.choice([0, 2, 3]),
                replication=rng.randint(1, 3), equal_subscriptions=rng.random() < 0.5, strategy=strategy,
                owned=rng.random() < 0.8, churn=rng.random() * 0.5, name=f"{strategy}-{seed}",
            )
        )  # fmt: skip
    return groups


def oracle_joined_groups(strategy: str, count: int) -> list[ConsumerProblem]:
    """`count` classic groups of `strategy` with 8-30 members, enough for member ids to share the
    leader's hash buckets, each with a shuffled `join_order` (the order the coordinator lists them)."""
    groups = []
    for seed in range(count):
        rng = random.Random(f"joined-{strategy}-{seed}")
        data = problem_to_data(random_consumer_problem(
            seed, members=rng.randint(8, 30), topics=rng.randint(1, 4), partitions=(1, 40), racks=rng.choice([0, 0, 3]),
            equal_subscriptions=rng.random() < 0.7, strategy=strategy, owned=rng.random() < 0.8, churn=rng.random() * 0.5,
            name=f"joined-{strategy}-{seed}",
        ))  # fmt: skip
        order = [m["id"] for m in data["members"]]
        rng.shuffle(order)
        data["join_order"] = order
        made = problem_from_data(data)
        assert isinstance(made, ConsumerProblem)
        groups.append(made)
    return groups


def oracle_varied_classic_groups(count: int, strategies: tuple[str, ...] = CLASSIC_STRATEGIES) -> list[ConsumerProblem]:
    """`count` small classic `varied_problem`s of these strategies: contested claims, generations."""
    groups: list[ConsumerProblem] = []
    seed = 1
    while len(groups) < count:
        problem = varied_problem(seed, "consumer")
        seed += 2
        if isinstance(problem, ConsumerProblem) and problem.config.group_protocol == "classic":
            if str(problem.config.partition_assignment_strategy) in strategies:
                groups.append(problem)
    return groups


def oracle_stale_claim_groups(count: int) -> list[ConsumerProblem]:
    """`count` sticky and cooperative-sticky `varied_problem`s where one member also claims 1-3
    partitions beyond a topic's current count (the topic was deleted and re-created smaller), with
    a generation."""
    groups: list[ConsumerProblem] = []
    seed = 1
    while len(groups) < count:
        problem = varied_problem(seed, "consumer")
        seed += 2
        if not (isinstance(problem, ConsumerProblem) and problem.config.group_protocol == "classic"):
            continue
        if str(problem.config.partition_assignment_strategy) not in ("sticky", "cooperative-sticky"):
            continue
        data = problem_to_data(problem)
        rng = random.Random(seed)
        topic, member = rng.choice(data["topics"]), rng.choice(data["members"])
        stale = [f"{topic['name']}-{topic['partitions'] + k}" for k in range(rng.randint(1, 3))]
        member["owned_partitions"] = [*member.get("owned_partitions", []), *stale]
        member["generation"] = max(1, member.get("generation", -1))
        stale_problem = problem_from_data(data)
        assert isinstance(stale_problem, ConsumerProblem)
        groups.append(stale_problem)
    return groups


def oracle_static_kip848_groups(assignor: str, count: int) -> list[ConsumerProblem]:
    """`oracle_kip848_groups` with about 60 % of the members static (a `group.instance.id` whose
    order is not their member ids'): KIP-848's `range` orders static members first, by it."""
    rng = random.Random(f"static-{assignor}")
    groups = []
    for problem in oracle_kip848_groups(assignor, count):
        data = problem_to_data(problem)
        for member in data["members"]:
            if rng.random() < 0.6:
                member["group_instance_id"] = f"instance-{rng.randrange(10**6):06d}"
        made = problem_from_data(data)
        assert isinstance(made, ConsumerProblem)
        groups.append(made)
    return groups


def oracle_large_target_groups(count: int) -> list[ConsumerProblem]:
    """KIP-848 `uniform` groups of 1-4 members owning up to 200 partitions of a topic: where a
    previous target copied from its record (presized) and one filled a partition at a time
    iterate differently (`ServerGroup.previous_sets`)."""
    groups = []
    for seed in range(count):
        rng = random.Random(f"record-{seed}")
        data = problem_to_data(random_consumer_problem(
            seed, members=rng.randint(1, 4), topics=rng.randint(1, 3), partitions=(30, 200), equal_subscriptions=True,
            owned=True, churn=rng.random() * 0.5, name=f"record-{seed}",
        ))  # fmt: skip
        data["config"] = {"group.protocol": "consumer", "group.remote.assignor": "uniform"}
        made = problem_from_data(data)
        assert isinstance(made, ConsumerProblem)
        groups.append(made)
    return groups


def oracle_kip848_groups(assignor: str, count: int, first: int = 0) -> list[ConsumerProblem]:
    """`count` KIP-848 groups (`group.protocol=consumer`, `group.remote.assignor=assignor`) as
    `oracle_classic_groups` makes them, half the members on a rack."""
    groups = []
    for seed in range(first, first + count):
        rng = random.Random(f"{assignor}-{seed}")
        problem = random_consumer_problem(
            seed, members=rng.randint(1, 9), topics=rng.randint(1, 4), partitions=(1, 12), racks=rng.choice([0, 2, 3]),
            equal_subscriptions=rng.random() < 0.5, owned=rng.random() < 0.8, churn=rng.random() * 0.5, name=f"{assignor}-{seed}",
        )  # fmt: skip
        data = problem_to_data(problem)
        data["config"] = {"group.protocol": "consumer", "group.remote.assignor": assignor}
        for member in data["members"]:
            if rng.random() < 0.5:
                member["rack"] = rng.choice(["rack-a", "rack-b", "rack-c"])
        server_problem = problem_from_data(data)
        assert isinstance(server_problem, ConsumerProblem)
        groups.append(server_problem)
    return groups
