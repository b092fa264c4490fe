"""Importing Kafka Streams applications from the sandbox (issue 31): a classic Streams application
(`group.protocol=classic`) and a KIP-1071 streams group (`group.protocol=streams`), each with three
instances in racks a, b and c (the first with two stream threads), a client tag `zone`, one standby
and a `count()` store holding data (`kao.jvm.StreamsAppRunner`: `selectKey -> groupByKey -> count`,
two subtopologies, a repartition topic and a changelog; the input topic has 6 partitions with 2
replicas over the 3 racks, so partitions differ in racks and leaders).

Each imported problem must equal what the test set up and what the instances report
(`KafkaStreams.metadataForLocalThreads`, store positions from `allLocalStorePartitionLags`, the
runner's own Admin client), and `--solver kafka` on it must give the assignment the application
runs. The sandbox's brokers report streams-group task offsets every 2 s and heartbeat every 1 s
(`group.streams.*` in tests/kafka/conftest.py; Kafka's floors are 15 s and 5 s) so the module stays
short.
"""

from __future__ import annotations

import json
import select
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from optimizer.errors import InvalidInputError, KafkaUnavailableError
from optimizer.kafka import sandbox
from optimizer.kafka.jvm import java
from optimizer.kafka.streams_describe import describe_streams_application
from optimizer.model.problem import problem_from_data
from optimizer.model.streams import StreamsProblem
from optimizer.oracle.batch import batch
from optimizer.solve import solve
from optimizer.sources.kafka_streams import map_streams_application, read_streams_application

pytestmark = pytest.mark.kafka

PARTITIONS = 6
INSTANCES = [
    {"rack": "a", "tags": {"zone": "zone-a"}, "threads": 2},
    {"rack": "b", "tags": {"zone": "zone-b"}, "threads": 1},
    {"rack": "c", "tags": {"zone": "zone-c"}, "threads": 1},
]
APPS = {"imp-streams-classic": "classic", "imp-streams-group": "streams"}
CONSUMER_GROUP = "imp-streams-not-an-app"
SASL_USER, SASL_PASSWORD = "importer", "importer-secret"
"""The sandbox's SASL_PLAINTEXT user (tests/kafka/conftest.py)."""
ANSWER_SECONDS = 150.0
"""How long a runner may take to settle after a command (it gives up itself after 120 s)."""


class _Runner:
    """One `kao.jvm.StreamsAppRunner` JVM: its spec on stdin, then a command per line, each
    answered with one JSON line (the application's state once settled)."""

    def __init__(self, spec: dict[str, Any], main: str = "kao.jvm.StreamsAppRunner"):
        self.name = spec.get("application_id") or spec.get("group")
        self.process = subprocess.Popen(
            java(main, heap_mb=384), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=sandbox.tie_to_parent,
        )  # fmt: skip
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(spec) + "\n")
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None and self.process.stderr is not None
        ready, _, _ = select.select([self.process.stdout], [], [], ANSWER_SECONDS)
        line = self.process.stdout.readline() if ready else ""
        if not line:
            self.end()
            pytest.fail(f"{self.name} did not settle: {self.process.stderr.read()[-3000:]}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def send(self, command: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def end(self) -> None:
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _spec(bootstrap: str, application: str, protocol: str, state_dir: Path) -> dict[str, Any]:
    return {
        "bootstrap": bootstrap, "application_id": application, "protocol": protocol, "input_topic": f"{application}-input",
        "partitions": PARTITIONS, "replication_factor": 2, "state_dir": str(state_dir), "num_standby_replicas": 1,
        "rack_aware_assignment_tags": ["zone"], "records": 600, "keys": 60, "instances": INSTANCES,
    }  # fmt: skip


@pytest.fixture(scope="module")
def applications(kafka_sandbox: sandbox.Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Both applications, each in its own runner JVM, started at once, and a one-member consumer
    group. The classic application then has its third instance stopped, 120 more records produced,
    and the instance started again on its state (the same process id): its threads all rejoin with
    their task offset sums (a first generation reports none). The streams group's members report
    their offsets without a rejoin (every 2 s here). Yields each application's last state; the JVMs
    end with the module, or with this process if it is killed."""
    runners: dict[str, _Runner] = {}
    try:
        for application, protocol in APPS.items():
            state_dir = tmp_path_factory.mktemp(application)
            runners[application] = _Runner(_spec(kafka_sandbox.bootstrap, application, protocol, state_dir))
        topic = f"{CONSUMER_GROUP}-topic"
        consumers = {"bootstrap": kafka_sandbox.bootstrap, "topics": {topic: 2}, "group": CONSUMER_GROUP, "protocol": "classic",
                     "assignor": "org.apache.kafka.clients.consumer.RangeAssignor", "members": [{"rack": "a", "topics": [topic]}]}  # fmt: skip
        runners[CONSUMER_GROUP] = _Runner(consumers, "kao.jvm.ConsumerGroupRunner")
        states: dict[str, Any] = {name: runner.answer() for name, runner in runners.items()}
        classic = runners["imp-streams-classic"]
        for command in ({"command": "stop", "instance": 2}, {"command": "produce", "records": 120}, {"command": "start", "instance": 2}):
            classic.send(command)
            states["imp-streams-classic"] = classic.answer()
        yield states
    finally:
        for runner in runners.values():
            runner.end()


@pytest.fixture(scope="module")
def described(applications: dict[str, Any], kafka_sandbox: sandbox.Sandbox) -> dict[str, dict[str, Any]]:
    """Each application as `kao.jvm.DescribeStreams` reads it through the plaintext listener, once for the module (a
    JVM each): what the tests below map, and what the secured listener must give alike."""
    return {application: describe_streams_application(kafka_sandbox.bootstrap, application, timeout=30) for application in APPS}


def _client_of(state: dict[str, Any], index: int) -> str:
    process = state["instances"][index]["process_id"]
    assert isinstance(process, str)
    return process


def _check_set_up(problem: StreamsProblem, state: dict[str, Any]) -> None:
    """Clients (process ids, threads, racks, tags), tasks (source and changelog partitions, replica
    and leader racks, end offsets) as the application was set up and as the runner's Admin client
    reads them."""
    application = problem.name
    topics = state["topics"]
    racks = state["partitions"]
    ends = state["changelog_end_offsets"][topics["changelog"]]
    assert {c.id for c in problem.clients} == {i["process_id"] for i in state["instances"]}
    for index, instance in enumerate(INSTANCES):
        client = next(c for c in problem.clients if c.id == _client_of(state, index))
        assert (client.rack, client.threads, dict(client.tags)) == (instance["rack"], instance["threads"], instance["tags"])
    assert [t.id for t in problem.tasks] == [f"{s}_{p}" for s in (0, 1) for p in range(PARTITIONS)]
    for task in problem.tasks:
        source = topics["input"] if task.subtopology == 0 else topics["repartition"]
        assert [(p.topic, p.partition) for p in task.source_partitions] == [(source, task.partition)]
        assert list(task.source_partitions[0].replica_racks) == racks[source][task.partition]["replica_racks"]
        assert task.source_partitions[0].leader_rack == racks[source][task.partition]["leader_rack"]
        if task.subtopology == 0:
            assert not task.stateful and not task.changelog_partitions and task.changelog_end_offset is None
            continue
        assert task.stateful
        assert [(p.topic, p.partition) for p in task.changelog_partitions] == [(topics["changelog"], task.partition)]
        assert list(task.changelog_partitions[0].replica_racks) == racks[topics["changelog"]][task.partition]["replica_racks"]
        assert task.changelog_partitions[0].leader_rack == racks[topics["changelog"]][task.partition]["leader_rack"]
        assert task.changelog_end_offset == ends[task.partition] > 0  # the stores hold data
    # replication 2 over 3 racks: the partitions differ in racks (and leaders)
    assert len({tuple(sorted(p["replica_racks"])) for p in racks[topics["input"]]}) > 1
    assert all(len(set(p["replica_racks"])) == 2 for p in racks[topics["input"]])
    assert len({p["leader_rack"] for p in racks[topics["input"]]}) > 1
    assert problem.config.replica_selector_class is None  # the sandbox's brokers leave it unset: the leaders serve
    assert str(problem.config.kafka_version) == "4.4"
    assert problem.name == application


def _running(state: dict[str, Any]) -> dict[str, tuple[list[str], list[str]]]:
    """Each process's active and standby tasks as Streams reports them (metadataForLocalThreads)."""
    return {i["process_id"]: (sorted(i["active"]), sorted(i["standby"])) for i in state["instances"]}


def test_a_classic_streams_application_imports_as_set_up_and_solves_to_what_it_runs(applications, described, kafka_sandbox):
    """The classic application after its third instance rejoined on stale state: clients, threads,
    racks, tags, tasks and partitions as set up; each client's current active and standby tasks as
    Streams runs them; num.standby.replicas inferred (1) and the tags guessed (zone), both said in the
    warnings; lags from the offset sums (exact: end offsets minus the sums the threads reported;
    within what the instances held: a rejoining instance reports at least the position it stopped
    at, the others the positions they had, all caught up); and `--solver kafka` gives what runs.

    Kafka's high-availability assignor moves nothing here on the next rebalance: every client is
    within acceptable.recovery.lag (10,000) of every task, so no warm-up is placed
    (`TaskMovement.assignActiveTaskMovements` finds each task caught up on its client) and no
    probing rebalance follows."""
    state = applications["imp-streams-classic"]
    application = "imp-streams-classic"
    imported = map_streams_application(described[application], kafka_sandbox.bootstrap)
    problem = problem_from_data(imported.document, application)
    assert isinstance(problem, StreamsProblem)
    _check_set_up(problem, state)
    config = problem.config
    assert (str(config.group_protocol), config.num_standby_replicas, list(config.rack_aware_assignment_tags)) == ("classic", 1, ["zone"])
    assert (config.acceptable_recovery_lag, config.max_warmup_replicas, config.probing_rebalance_interval_ms) == (10_000, 2, 600_000)
    assert any("num.standby.replicas 1: inferred" in w for w in imported.warnings)
    assert any("rack.aware.assignment.tags ['zone']: guessed" in w for w in imported.warnings)
    assert all(w in problem.description for w in imported.warnings)
    running = _running(state)
    for client in problem.clients:
        assert (sorted(client.previous_active), sorted(client.previous_standby)) == running[client.id]
    # lags: the end offsets (listOffsets) minus the offset sums each process's threads sent at the last join
    tasks = {t.id: t for t in problem.tasks}
    for client in problem.clients:
        sums: dict[str, int] = {}
        for member in described[application]["members"]:
            if member["process_id"] == client.id:
                for task, offset in member["task_offset_sums"].items():
                    sums[task] = offset if task not in sums or offset == -2 or (sums[task] != -2 and offset > sums[task]) else sums[task]
        ends = {t: tasks[t].changelog_end_offset or 0 for t in sums}
        expected = {t: 0 if s == -2 else ends[t] if s > ends[t] else ends[t] - s for t, s in sums.items() if t not in client.previous_active}
        assert dict(client.lags) == expected, client.id
        for task, lag in client.lags.items():
            assert 0 <= lag <= tasks[task].changelog_end_offset
    stopped = _client_of(state, 2)
    at_stop = state["positions_at_stop"]["2"]
    before_start = {_client_of(state, int(i)): held for i, held in state["positions_before_start"].items()}
    for client in problem.clients:
        held = at_stop if client.id == stopped else before_start[client.id]
        for task, position in held.items():
            if task in client.lags:  # a reported sum is at least the position held when the rebalance began
                assert client.lags[task] <= tasks[task].changelog_end_offset - position, (client.id, task)
                if client.id != stopped:  # the others were caught up, and nothing was produced since
                    assert client.lags[task] == 0, (client.id, task)
    solution = solve(problem, solver="kafka")
    assert not solution.followup_rebalance
    answered = {c: (sorted(a.active), sorted(a.standby)) for c, a in solution.assignment.items()}
    assert answered == running
    assert all(not a.warmup for a in solution.assignment.values())


def test_a_streams_group_imports_as_set_up_and_solves_to_what_it_runs(applications, described, kafka_sandbox):
    """The streams group: clients (with Kafka's process ids), racks, tags, tasks and partitions as set
    up; each client's members (stream threads) with their own current tasks as the group and Streams
    report them; the group configs (standbys, tags) read from the GROUP resource; every standby's lag
    0, as the members reported offsets equal to their stores' positions, at the changelogs' ends
    (other tasks a process has state for: within the changelog); and `--solver kafka` gives the
    running assignment, member by member, as Kafka's own StickyTaskAssignor does when fed the group
    as its coordinator holds it (its process ids, each member's own offsets): Kafka 4.4.0 moves
    nothing on the next rebalance, as every member holds its previous tasks within its quotas (3
    actives, 5 tasks) and no other process reports state for them.

    A group whose process came back on its state is not here: each stream thread reports offsets for
    the tasks on its process's disk, and Kafka's 4.4.0 assignor takes such members as standby
    candidates one by one (KAFKA-20719), while a problem's lags are the client's, reported by one of
    its members (docs/assignors/protocols.md); the answers then differ where the member matters
    (tests/test_kafka_streams_mapping.py records such a group)."""
    state = applications["imp-streams-group"]
    application = "imp-streams-group"
    bootstrap = kafka_sandbox.bootstrap
    imported = map_streams_application(described[application], bootstrap)
    problem = problem_from_data(imported.document, application)
    assert isinstance(problem, StreamsProblem)
    _check_set_up(problem, state)
    config = problem.config
    assert (str(config.group_protocol), str(config.streams_assignor_name)) == ("streams", "sticky")
    assert (config.num_standby_replicas, list(config.rack_aware_assignment_tags)) == (1, ["zone"])
    running = _running(state)
    members = {m["member_id"]: m for m in state["members"]}
    for client in problem.clients:
        assert client.process_id == client.id
        assert (sorted(client.previous_active), sorted(client.previous_standby)) == running[client.id]
        assert {m.id for m in client.members} == {m for m, listed in members.items() if listed["process_id"] == client.id}
        for member in client.members:
            listed = members[str(member.id)]
            assert (list(member.previous_active), list(member.previous_standby), list(member.previous_warmup)) == (
                listed["active"], listed["standby"], listed["warmup"])  # fmt: skip
        for task in client.previous_standby:
            assert client.lags.get(task) == 0, (client.id, task)
        ends = {t.id: t.changelog_end_offset for t in problem.tasks}
        assert all(0 <= lag <= (ends[t] or 0) for t, lag in client.lags.items())
    # Kafka's own class on the group as its coordinator holds it
    case = {
        "assignor": "sticky", "num_standby_replicas": 1, "rack_aware_assignment_tags": ["zone"],
        "subtopologies": [{"id": str(s), "partitions": PARTITIONS, "stateful": s == 1} for s in (0, 1)],
        "members": [{"member_id": m["member_id"], "process_id": m["process_id"], "rack": m["rack"], "client_tags": m["client_tags"],
                     "active": m["assignment"]["active"], "standby": m["assignment"]["standby"], "warmup": m["assignment"]["warmup"],
                     "task_offsets": m["task_offsets"], "task_end_offsets": {}} for m in described[application]["members"]],
    }  # fmt: skip
    [(kafka, _)] = batch("kao.jvm.StreamsGroupAssignors", [case])
    kafkas = {m: (sorted(t.get("active", [])), sorted(t.get("standby", []))) for m, t in kafka.items()}
    solution = solve(problem, solver="kafka")
    answered = {
        str(member): (sorted(tasks.active), sorted(tasks.standby))
        for client in solution.assignment.values() for member, tasks in (client.members or {}).items()
    }  # fmt: skip
    expected = {member: (listed["active"], listed["standby"]) for member, listed in members.items()}
    assert kafkas == expected  # Kafka keeps the running assignment
    assert answered == expected  # and so does the reproduction, member by member
    assert {c: (sorted(a.active), sorted(a.standby)) for c, a in solution.assignment.items()} == running


def test_an_unknown_application_and_a_consumer_group_are_refused_by_name(applications, kafka_sandbox):
    """An application id no group has, and a consumer group: InvalidInputError naming them."""
    bootstrap = kafka_sandbox.bootstrap
    with pytest.raises(InvalidInputError, match="no Kafka Streams application 'imp-streams-nope'"):
        describe_streams_application(bootstrap, "imp-streams-nope", timeout=10)
    with pytest.raises(InvalidInputError, match=f"'{CONSUMER_GROUP}' .* is not a Kafka Streams application: a classic group with the assignor 'range'"):
        describe_streams_application(bootstrap, CONSUMER_GROUP, timeout=10)


def _sasl_config(path: Path, password: str) -> Path:
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        f'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="{SASL_USER}" password="{password}";\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("application", sorted(APPS))
def test_a_secured_listener_gives_the_same_problem_and_refuses_a_wrong_password(applications, described, kafka_sandbox, tmp_path, application):
    """Through the sandbox's SASL_PLAINTEXT listener with a command config (the Admin client and, for
    the classic application, the raw DescribeGroups request authenticate): the same problem as through
    the plaintext listener (the module's read, mapped as `read_streams_application` maps it), bar the
    address and time in its description; a wrong password is refused, saying so, without the password."""
    plain = map_streams_application(described[application], kafka_sandbox.bootstrap).document
    good = _sasl_config(tmp_path / "good.properties", SASL_PASSWORD)
    secured = read_streams_application(kafka_sandbox.sasl_bootstrap, application, command_config=good, timeout=30).document
    assert {k: v for k, v in secured.items() if k != "description"} == {k: v for k, v in plain.items() if k != "description"}
    assert SASL_PASSWORD not in json.dumps(secured)
    wrong = "not-" + SASL_PASSWORD
    with pytest.raises(KafkaUnavailableError, match="refused the credentials") as refused:
        read_streams_application(kafka_sandbox.sasl_bootstrap, application, command_config=_sasl_config(tmp_path / "wrong.properties", wrong), timeout=10)
    assert wrong not in str(refused.value)
