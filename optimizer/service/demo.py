"""`kafka-assign demo`: Kafka's default assignors against the project's plug-ins on a real cluster,
measured by the clients themselves (docs/apply.md, "The proof").

For each follower-fetching mode (`off`: the leader serves every read, Kafka's default; `on`: the
brokers run `RackAwareReplicaSelector`, KIP-392), on a fresh sandbox of three brokers in racks a, b
and c whose topics have two replicas (fewer than the racks, so that a reader is not always near a
replica):

1. producers write at set, skewed rates (`PRODUCERS`) into the input of a stateful Kafka Streams
   application (three instances with `client.rack` a, b, c and a standby per task, classic
   protocol) and into the topic of a KIP-848 consumer group (three members in a, b, c);
2. both run on Kafka's defaults (the high-availability task assignor; the coordinator's `uniform`),
   then for `seconds` the clients' own `incoming-byte-total` per broker is read at both ends of
   the window, and each group is imported with its partitions' rates measured over the window
   (`kafka-assign import --sample-seconds`), for the evaluator's prediction;
3. both switch to the plug-ins, as an operator would: a rolling restart of the Streams instances
   with `task.assignor.class=kao.plugin.OptimizerTaskAssignor`, and the consumers restarted with
   `group.remote.assignor=optimizer` (their committed offsets kept), asking `kafka-assign serve`
   (here, in this process, reading the cluster's leaders and rates: `--bootstrap-server
   --sample-seconds`);
4. the same window is measured again; the assignment each group runs is checked to be the one the
   service answered last;
5. the producers stop, and every record is checked to have been processed (the Streams
   application's committed offsets at the end offsets, the consumers' positions at the end of
   every partition).

A cross-rack byte is one a client in rack r received from a broker in another rack. The result
(one row per group and mode: cross-rack bytes measured and predicted, all bytes read, rebalances,
restore time) is printed and written as JSON; bench/ keeps the recorded runs and docs/benchmarks.md
the figures.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optimizer.evaluate import evaluate
from optimizer.kafka import sandbox
from optimizer.kafka.describe import RACK_AWARE_SELECTOR
from optimizer.kafka.plugin_calls import plugins_jar
from optimizer.kafka.workload import Runner
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.problem import Problem, problem_from_data
from optimizer.model.solution import ClientAssignment
from optimizer.model.streams import StreamsProblem
from optimizer.service.metadata import ClusterMetadata
from optimizer.service.server import AssignmentService, ServiceConfig
from optimizer.sources.kafka_cluster import ImportOptions, import_group

RACKS = ("a", "b", "c")
PARTITIONS = 12
REPLICATION = 2
RATES = (160, 120, 90, 70, 55, 45, 35, 28, 22, 16, 12, 8)
"""Records per second into partitions 0-11 of each topic: skewed, as real keys are."""
VALUE_BYTES = 400
APPLICATION = "demo-app"
GROUP = "demo-group"
INPUT_TOPIC = "demo-input"
CLICKS_TOPIC = "demo-clicks"
MODES = ("off", "on")
RUNNER_SECONDS = 240.0
"""How long a runner command may take (a rolling restart settles in tens of seconds; a loaded
2-core machine needs more)."""


@dataclass(frozen=True)
class DemoOptions:
    seconds: float = 30.0
    """The measurement window, in each run."""
    modes: Sequence[str] = MODES
    directory: Path | None = None
    """Where the sandboxes, logs and the service's recorded requests go (default: a temporary
    directory, removed at the end unless `keep`)."""
    keep: bool = False
    deadline_ms: int = 10_000
    """The plug-ins' `kao.deadline.ms` (the broker's `kao.budget.ms` is 1 s more)."""


def _producer_spec(bootstrap: str) -> dict[str, Any]:
    topics = {name: {"partitions": PARTITIONS, "replication_factor": REPLICATION} for name in (INPUT_TOPIC, CLICKS_TOPIC)}
    producers = [
        {"topic": topic, "partition": p, "records_per_second": rate, "value_bytes": VALUE_BYTES, "key": f"key-{p}"}
        for topic in (INPUT_TOPIC, CLICKS_TOPIC)
        for p, rate in enumerate(RATES)
    ]
    return {"bootstrap": bootstrap, "topics": topics, "producers": producers}


def _streams_spec(bootstrap: str, state_dir: Path) -> dict[str, Any]:
    return {
        "bootstrap": bootstrap, "application_id": APPLICATION, "protocol": "classic", "input_topic": INPUT_TOPIC, "partitions": PARTITIONS,
        "replication_factor": REPLICATION, "state_dir": str(state_dir), "num_standby_replicas": 1, "rack_aware_assignment_tags": [],
        "records": 0, "keys": 1, "await_processing": False,
        "instances": [{"rack": rack, "tags": {}, "threads": 1} for rack in RACKS],
        # the demo measures steady reads, not warm-ups: every store counts as caught up
        "configs": {"acceptable.recovery.lag": str(2**62)},
    }  # fmt: skip


def _group_spec(bootstrap: str) -> dict[str, Any]:
    return {
        "bootstrap": bootstrap, "group": GROUP, "protocol": "consumer", "assignor": "uniform", "topics": {CLICKS_TOPIC: PARTITIONS},
        "replication_factor": REPLICATION, "members": [{"rack": rack, "topics": [CLICKS_TOPIC]} for rack in RACKS],
        "configs": {"auto.offset.reset": "earliest"},
    }  # fmt: skip


def _cross_rack(metrics: dict[str, dict[str, int]], racks_of_clients: dict[str, str], broker_racks: dict[int, str | None]) -> tuple[int, int]:
    """(cross-rack bytes, all bytes) received, from the runners' per-broker counters."""
    cross = total = 0
    for client, by_broker in metrics.items():
        for broker, received in by_broker.items():
            total += received
            if broker_racks.get(int(broker)) != racks_of_clients[client]:
                cross += received
    return cross, total


def _delta(after: dict[str, dict[str, int]], before: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    return {
        client: {broker: received - before.get(client, {}).get(broker, 0) for broker, received in by_broker.items()} for client, by_broker in after.items()
    }


def _predicted_bytes_per_second(problem: Problem) -> float | None:
    """The evaluator's cross-rack bytes per second of the assignment the imported group runs."""
    if isinstance(problem, StreamsProblem):
        running = {c.id: ClientAssignment(active=c.previous_active, standby=c.previous_standby) for c in problem.clients}
        metrics = evaluate(problem, running).metrics
        parts = (metrics.cross_rack_active_bytes, metrics.cross_rack_standby_bytes)  # type: ignore[union-attr]
        return None if parts[0] is None else float(sum(p or 0 for p in parts))
    assert isinstance(problem, ConsumerProblem)
    running = {m.id: ClientAssignment(active=m.owned_partitions) for m in problem.members}
    value = evaluate(problem, running).metrics.cross_rack_bytes  # type: ignore[union-attr]
    return None if value is None else float(value)


def _imported(bootstrap: str, group: str, streams: bool, seconds: float) -> Problem:
    document = import_group(bootstrap, group, ImportOptions(sample_seconds=seconds), streams=streams).document
    assert document is not None
    return problem_from_data(document, f"{group} imported")


def run_demo(options: DemoOptions, progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Both modes, each on its own sandbox; the result as JSON-ready data (module docstring)."""
    home = Path(tempfile.mkdtemp(prefix="kafka-assign-demo-")) if options.directory is None else Path(options.directory)
    home.mkdir(parents=True, exist_ok=True)
    plugins_jar()  # built before any cluster starts
    results: dict[str, Any] = {"seconds": options.seconds, "racks": list(RACKS), "partitions": PARTITIONS, "replication_factor": REPLICATION,
                               "records_per_second": list(RATES), "value_bytes": VALUE_BYTES, "modes": {}}  # fmt: skip
    try:
        for mode in options.modes:
            results["modes"][mode] = _run_mode(mode, home / f"follower-fetching-{mode}", options, progress)
    finally:
        if options.directory is None and not options.keep:
            shutil.rmtree(home, ignore_errors=True)
    return results


def _run_mode(mode: str, directory: Path, options: DemoOptions, progress: Callable[[str], None]) -> dict[str, Any]:
    directory.mkdir(parents=True, exist_ok=True)
    port = sandbox.free_port()
    brokers = {
        "group.consumer.assignors": "uniform,range,kao.plugin.OptimizerConsumerGroupAssignor",
        "kao.service.url": f"http://127.0.0.1:{port}",
        "kao.budget.ms": str(options.deadline_ms + 1000),
        "kao.deadline.ms": str(options.deadline_ms),
    }
    if mode == "on":
        brokers["replica.selector.class"] = RACK_AWARE_SELECTOR
    progress(f"follower fetching {mode}: starting a sandbox (3 brokers in racks a, b, c)")
    cluster = sandbox.start(3, RACKS, directory / "sandbox", tied=True, broker_configs=brokers)
    runners: list[Runner] = []
    service: AssignmentService | None = None
    lines: list[str] = []
    try:
        service = AssignmentService(
            ServiceConfig(port=port, record_dir=directory / "service", workers=2),
            log=lines.append,
            metadata=ClusterMetadata(cluster.bootstrap, refresh_seconds=10.0, sample_seconds=5.0),
        ).start()
        producers = Runner("kao.jvm.ProducerRunner", _producer_spec(cluster.bootstrap), directory / "producers.log", heap_mb=256)
        runners.append(producers)
        producers.line()
        streams = Runner("kao.jvm.StreamsAppRunner", _streams_spec(cluster.bootstrap, directory / "state"), directory / "streams.log")
        runners.append(streams)
        group = Runner("kao.jvm.ConsumerGroupRunner", _group_spec(cluster.bootstrap), directory / "group.log")
        runners.append(group)
        streams_state, group_state = streams.line(), group.line()
        member_racks = {str(i): rack for i, rack in enumerate(RACKS)}
        progress(f"follower fetching {mode}: running on Kafka's defaults; measuring {options.seconds:g} s")
        kafka = _measure(cluster, streams, group, options.seconds, member_racks)
        kafka["streams_instances"] = _restores(streams.ask({"command": "state"}), None)
        before_switch = streams.ask({"command": "state"})
        progress(f"follower fetching {mode}: switching to the plug-ins (a rolling restart of the Streams instances; the consumers restarted)")
        started = time.monotonic()
        plugin = {
            "task.assignor.class": "kao.plugin.OptimizerTaskAssignor",
            "kao.service.url": f"http://127.0.0.1:{port}",
            "kao.deadline.ms": str(options.deadline_ms),
        }
        for index in range(len(RACKS)):
            streams.ask({"command": "stop", "instance": index})
            streams_state = streams.ask({"command": "start", "instance": index, "configs": plugin})
        # the consumers restart with group.remote.assignor=optimizer (the group keeps its committed offsets)
        group.end()
        runners.remove(group)
        group = Runner("kao.jvm.ConsumerGroupRunner", {**_group_spec(cluster.bootstrap), "assignor": "optimizer"}, directory / "group-plugins.log")
        runners.append(group)
        group.line()
        switch_seconds = time.monotonic() - started
        progress(f"follower fetching {mode}: running on the plug-ins; measuring {options.seconds:g} s")
        ours = _measure(cluster, streams, group, options.seconds, member_racks)
        streams_state, group_state = streams.ask({"command": "state"}), group.ask({"command": "state"})
        ours["streams_instances"] = _restores(streams_state, before_switch)
        applied = _applied_as_answered(directory / "service", streams_state, group_state)
        progress(f"follower fetching {mode}: producers stopped; checking that every record was processed")
        producers.end()
        runners.remove(producers)
        streams.ask({"command": "drain"})  # an error (not processed within the settle timeout) raises
        group.ask({"command": "drain"})
        stats = service.stats.as_data()
    finally:
        for runner in runners:
            runner.end(grace=30.0)
        if service is not None:
            service.stop()
        sandbox.stop(cluster)
    (directory / "service.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {
        "replica.selector.class": brokers.get("replica.selector.class"),
        "kafka": kafka,
        "plugins": ours,
        "switch_seconds": round(switch_seconds, 1),
        "applied_as_answered": applied,
        "every_record_processed": {APPLICATION: True, GROUP: True},
        "service": stats["requests"],
    }


def _measure(cluster: sandbox.Sandbox, streams: Runner, group: Runner, seconds: float, member_racks: dict[str, str]) -> dict[str, Any]:
    """The two groups' bytes received over `seconds`, and the evaluator's prediction from the groups
    imported with their rates sampled over the same window."""
    import threading

    broker_racks = {n.node_id: n.rack for n in cluster.nodes if n.role == "broker"}
    streams_racks = {str(i): rack for i, rack in enumerate(RACKS)}
    group_racks = member_racks
    imported: dict[str, Problem] = {}
    failures: list[BaseException] = []

    def one(name: str, streams_kind: bool) -> None:
        try:
            imported[name] = _imported(cluster.bootstrap, name, streams_kind, max(1.0, seconds - 2.0))
        except BaseException as error:  # noqa: BLE001 - reported below, after the window
            failures.append(error)

    before = (streams.ask({"command": "metrics"})["metrics"], group.ask({"command": "metrics"})["metrics"])
    started = time.monotonic()
    threads = [threading.Thread(target=one, args=(APPLICATION, True)), threading.Thread(target=one, args=(GROUP, False))]
    for thread in threads:
        thread.start()
    time.sleep(max(0.0, seconds - (time.monotonic() - started)))
    after = (streams.ask({"command": "metrics"})["metrics"], group.ask({"command": "metrics"})["metrics"])
    window = time.monotonic() - started
    for thread in threads:
        thread.join(RUNNER_SECONDS)
    if failures:
        raise failures[0]
    rows = {}
    for name, (now, then), racks in (
        (APPLICATION, (after[0], before[0]), streams_racks),
        (GROUP, (after[1], before[1]), group_racks),
    ):
        cross, total = _cross_rack(_delta(now, then), racks, broker_racks)
        predicted = _predicted_bytes_per_second(imported[name])
        rows[name] = {
            "cross_rack_bytes": cross,
            "bytes": total,
            "predicted_cross_rack_bytes": None if predicted is None else round(predicted * window),
        }
    return {"window_seconds": round(window, 2), "groups": rows}


def _restores(state: dict[str, Any], before: dict[str, Any] | None) -> dict[str, float]:
    """Rebalances the Streams instances went through and what they restored, since `before`."""
    def totals(of: dict[str, Any] | None) -> tuple[int, int, float]:
        if of is None:
            return 0, 0, 0.0
        instances = of["instances"]
        return (sum(int(i.get("rebalances", 0)) for i in instances), sum(int(i.get("restored_records", 0)) for i in instances),
                sum(float(i.get("restore_seconds", 0.0)) for i in instances))  # fmt: skip

    now, then = totals(state), totals(before)
    return {"rebalances": now[0] - then[0], "restored_records": now[1] - then[1], "restore_seconds": round(now[2] - then[2], 2)}


def _applied_as_answered(records: Path, streams_state: dict[str, Any], group_state: dict[str, Any]) -> dict[str, bool]:
    """Whether each group runs the assignment the service answered last for it."""
    answers = sorted((records / "answers").glob("*.json")) if (records / "answers").is_dir() else []
    last: dict[str, dict[str, Any]] = {}
    for path in answers:
        recorded = json.loads(path.read_text(encoding="utf-8"))
        answer = recorded.get("answer")
        if answer is not None and answer.get("source") == "exact":
            last[answer["kind"]] = answer["assignment"]
    result = {}
    streams_answer = last.get("streams_task_assignor")
    if streams_answer is None:
        result[APPLICATION] = False
    else:
        running = {i["process_id"]: (sorted(i["active"]), sorted(i["standby"])) for i in streams_state["instances"] if i["running"]}
        answered = {c: (sorted(a["active"]), sorted(a["standby"])) for c, a in streams_answer["clients"].items()}
        result[APPLICATION] = running == answered
    group_answer = last.get("consumer_group")
    if group_answer is None:
        result[GROUP] = False
    else:
        names = {topic_id: name for name, topic_id in group_state.get("topic_ids", {}).items()}
        answered_members = {m: sorted(f"{names.get(t, t)}-{p}" for t, p in parts) for m, parts in group_answer["members"].items()}
        running_members = {m["member_id"]: sorted(f"{t}-{p}" for t, p in m["assignment"]) for m in group_state["members"]}
        result[GROUP] = running_members == answered_members
    return result


def table(results: dict[str, Any]) -> list[str]:
    """The result as lines of a table (the command prints them)."""
    lines = [f"{'mode':<9} {'group':<11} {'':<14} {'cross-rack read':>16} {'predicted':>12} {'all read':>12} {'rebalances':>10} {'restore':>9}  applied"]
    for mode, run in results["modes"].items():
        for name in (APPLICATION, GROUP):
            for label, key in (("Kafka default", "kafka"), ("plug-ins", "plugins")):
                row = run[key]["groups"][name]
                predicted = row["predicted_cross_rack_bytes"]
                shown = "-" if predicted is None else _mb(predicted)
                applied = "" if key == "kafka" else ("yes" if run["applied_as_answered"][name] else "NO")
                restores = run[key]["streams_instances"] if name == APPLICATION else None
                rebalances = "-" if restores is None else str(restores["rebalances"])
                restore = "-" if restores is None else f"{restores['restore_seconds']:.1f} s"
                figures = f"{_mb(row['cross_rack_bytes']):>16} {shown:>12} {_mb(row['bytes']):>12} {rebalances:>10} {restore:>9}"
                lines.append(f"{'ff ' + mode:<9} {name:<11} {label:<14} {figures}  {applied}")
    return lines


def _mb(value: float) -> str:
    return f"{value / 1e6:,.2f} MB"
