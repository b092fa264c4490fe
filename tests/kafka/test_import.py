"""`kafka-assign import`: consumer groups running on the sandbox (classic range, sticky and
cooperative-sticky, KIP-848 uniform and range; members in racks a, b, c), imported as problems that equal what
was set up, and that `--solver kafka` solves to the assignment the running group has; all at once
(`import --all`), and as the pipeline's input `kafka://HOST:PORT`."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from optimizer.errors import InvalidInputError
from optimizer.kafka import sandbox
from optimizer.kafka.jvm import java
from optimizer.model.problem import problem_from_data
from optimizer.solve import solve
from optimizer.sources.kafka_cluster import import_consumer_group
from optimizer.sources.problem_file import load_problem

pytestmark = pytest.mark.kafka

RACKS = ("a", "b", "c")
GROUPS = {
    # group: (group.protocol, the assignor as the consumers configure it, what the problem names)
    "imp-range": ("classic", "org.apache.kafka.clients.consumer.RangeAssignor", "range"),
    "imp-coop": ("classic", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor", "cooperative-sticky"),
    "imp-uniform": ("consumer", "uniform", "uniform"),
    "imp-sticky": ("classic", "org.apache.kafka.clients.consumer.StickyAssignor", "sticky"),
    "imp-krange": ("consumer", "range", "range"),
}
SETTLE_SECONDS = 150.0
SASL_USER, SASL_PASSWORD = "importer", "importer-secret"
"""The user the session's sandbox allows on its SASL_PLAINTEXT listener (tests/kafka/conftest.py)."""
REPLICATION_FACTOR = 2
"""Below the number of racks: partitions differ in their replicas' racks and leaders."""


def _topics(group: str) -> dict[str, int]:
    return {f"{group}-orders": 6, f"{group}-payments": 4}


def _subscriptions(group: str) -> list[list[str]]:
    orders, payments = _topics(group)
    return [[orders, payments], [orders], [orders, payments]]


def _spec(bootstrap: str, group: str) -> dict[str, Any]:
    protocol, assignor, _ = GROUPS[group]
    members = [{"rack": rack, "topics": topics} for rack, topics in zip(RACKS, _subscriptions(group), strict=True)]
    return {
        "bootstrap": bootstrap, "topics": _topics(group), "replication_factor": REPLICATION_FACTOR, "group": group, "protocol": protocol,
        "assignor": assignor, "members": members,
    }  # fmt: skip


def _end(process: subprocess.Popen[str]) -> None:
    if process.stdin is not None and not process.stdin.closed:
        process.stdin.close()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# ---- first, what needs no running group: the module's groups (five runner JVMs) start with the first test that reads them


def test_an_unknown_group_is_named_with_exit_code_1(kafka_sandbox, tmp_path):
    """An unknown group: exit 1, the group named, no traceback; the same as InvalidInputError from
    Python. The --command-config file is read (its client.id applies) and its secret never printed."""
    config = tmp_path / "client.properties"
    secret = "hunter2-not-printed"
    config.write_text(
        f'client.id=kao-import-test\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="{secret}";\n',
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "optimizer", "import", "--bootstrap-server", kafka_sandbox.bootstrap, "--group", "no-such-group",
         "--command-config", str(config)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1
    assert "'no-such-group' does not exist" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == "" and secret not in done.stderr
    with pytest.raises(InvalidInputError, match="no-such-group"):
        import_consumer_group(kafka_sandbox.bootstrap, "no-such-group", timeout=10)
    # a group id that looks like one of the adapter's modes is still a group id
    with pytest.raises(InvalidInputError, match="'--list' does not exist"):
        import_consumer_group(kafka_sandbox.bootstrap, "--list", timeout=10)


def test_unreachable_brokers_exit_2_within_the_timeout():
    """Nothing listening: exit 2 after about --timeout, naming the address, no traceback."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "optimizer", "import", "--bootstrap-server", f"127.0.0.1:{sandbox.free_port()}", "--group", "g", "--timeout", "2"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "could not be reached" in done.stderr and "Traceback" not in done.stderr
    assert time.monotonic() - started < 60  # --timeout 2, plus starting a JVM on a loaded machine


def test_import_all_from_unreachable_brokers_exits_2_and_writes_nothing(tmp_path):
    """`--all` with nothing listening: exit 2 naming the address as unreachable, no directory made."""
    output = tmp_path / "imported"
    done = subprocess.run(
        [sys.executable, "-m", "optimizer", "import", "--bootstrap-server", f"127.0.0.1:{sandbox.free_port()}", "--all", "--output", str(output),
         "--timeout", "2"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "could not be reached" in done.stderr and "Traceback" not in done.stderr
    assert not output.exists()


@pytest.fixture(scope="module")
def running_groups(kafka_sandbox: sandbox.Sandbox) -> Iterator[dict[str, dict[str, Any]]]:
    """The groups, each in a `kao.jvm.ConsumerGroupRunner` JVM started at once; their
    assignments once every group is stable. The JVMs end with the module (closing their stdin), and
    with this process if it is killed (the sandbox's parent-death signal)."""
    processes: dict[str, subprocess.Popen[str]] = {}
    try:
        for group in GROUPS:
            process = subprocess.Popen(
                java("kao.jvm.ConsumerGroupRunner", heap_mb=256), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, preexec_fn=sandbox.tie_to_parent,
            )  # fmt: skip
            assert process.stdin is not None
            process.stdin.write(json.dumps(_spec(kafka_sandbox.bootstrap, group)) + "\n")
            process.stdin.flush()
            processes[group] = process
        settled = {}
        deadline = time.monotonic() + SETTLE_SECONDS
        for group, process in processes.items():
            assert process.stdout is not None
            ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            line = process.stdout.readline() if ready else ""
            if not line:
                _end(process)
                assert process.stderr is not None
                pytest.fail(f"group {group} did not settle: {process.stderr.read()[-2000:]}")
            settled[group] = json.loads(line)
        yield settled
    finally:
        for process in processes.values():
            _end(process)


def _check(problem_data: dict[str, Any], group: str, running: dict[str, Any]) -> None:
    """The imported problem equals what the group was set up with and what it runs."""
    problem = problem_from_data(problem_data, group)
    protocol, _, assignor = GROUPS[group]
    if protocol == "classic":
        assert str(problem.config.partition_assignment_strategy) == assignor
        assert str(problem.config.group_protocol) == "classic"
    else:
        assert str(problem.config.group_protocol) == "consumer"
        assert str(problem.config.group_remote_assignor) == assignor
    assert problem.name == group
    assert {t.name: t.partitions for t in problem.topics} == _topics(group)
    for topic in problem.topics:  # as Kafka placed them: two replicas in two racks
        placed = running["topics"][topic.name]
        assert topic.replica_racks is not None and [list(r) for r in topic.replica_racks] == [p["replica_racks"] for p in placed]
        assert all(len(set(racks)) == REPLICATION_FACTOR for racks in topic.replica_racks)
        assert topic.leader_racks is not None and list(topic.leader_racks) == [p["leader_rack"] for p in placed]
        assert topic.topic_id == running["topic_ids"][topic.name]  # Kafka's id: the KIP-848 assignors break ties by it
    assert problem.config.replica_selector_class is None and not problem.config.follower_fetching  # the sandbox's brokers: Kafka's default
    members = {m["member_id"]: m for m in running["members"]}
    assert {m.id for m in problem.members} == set(members)
    if protocol == "classic":  # the order the coordinator lists the members in (the leader's HashMap is filled so)
        assert problem.join_order is not None and sorted(problem.join_order) == sorted(members)
    for member in problem.members:
        index = members[member.id]["index"]
        assert member.rack == RACKS[index]
        assert sorted(member.subscriptions) == sorted(_subscriptions(group)[index])
        assert list(member.owned_partitions) == [f"{t}-{p}" for t, p in members[member.id]["assignment"]]
    solution = solve(problem, solver="kafka")
    answered = {member: sorted(assigned.active) for member, assigned in solution.assignment.items()}
    assert answered == {m: sorted(f"{t}-{p}" for t, p in members[m]["assignment"]) for m in members}


@pytest.mark.parametrize("group", ["imp-coop", "imp-uniform", "imp-sticky", "imp-krange"])
def test_an_imported_group_equals_the_running_one_and_solves_to_its_assignment(running_groups, kafka_sandbox, group):
    """Classic cooperative-sticky and sticky, KIP-848 uniform and range: members, racks, subscriptions, topics,
    partitions and replica racks as set up; `--solver kafka` gives the assignment the group runs."""
    _check(import_consumer_group(kafka_sandbox.bootstrap, group, timeout=20), group, running_groups[group])


def test_the_command_writes_a_problem_that_validates_and_solves_to_the_running_assignment(running_groups, kafka_sandbox, tmp_path):
    """`kafka-assign import` on a classic range group writes a YAML problem that loads as it is."""
    output = tmp_path / "imp-range.problem.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "optimizer", "import", "--bootstrap-server", kafka_sandbox.bootstrap, "--group", "imp-range", "-o", str(output)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "3 members" in done.stderr
    load_problem(output)
    from optimizer.sources.documents import read_document

    _check(read_document(output), "imp-range", running_groups["imp-range"])


def test_import_all_writes_every_running_group_to_its_own_file(running_groups, kafka_sandbox, tmp_path):
    """`import --all --output DIR`: the five groups running at once, each in DIR/<group>.yaml with a
    line saying so, each equal to what runs; exit 0. Other groups of the session's cluster (the other
    modules' Streams applications) are skipped or written, each with its own line."""
    output = tmp_path / "imported"
    done = subprocess.run(
        [sys.executable, "-m", "optimizer", "import", "--bootstrap-server", kafka_sandbox.bootstrap, "--all", "--output", str(output),
         "--timeout", "20"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    from optimizer.sources.documents import read_document

    for group in GROUPS:
        written = output / f"{group}.yaml"
        assert f"wrote {group} (3 members) to {written}" in done.stdout
        _check(read_document(written), group, running_groups[group])
    assert "groups written to" in done.stdout.splitlines()[-1]


def test_a_kafka_url_is_an_input_whose_records_are_the_running_groups(running_groups, kafka_sandbox, tmp_path):
    """`kafka://HOST:PORT` as a source: a Record per running group, equal to what `import` writes;
    the pipeline (its local runner) solves each with Kafka's assignor to the assignment that runs."""
    from optimizer.pipeline.run import run_pipeline
    from optimizer.sources import read_records

    location = f"kafka://{kafka_sandbox.bootstrap}"
    records = {r.name: r for r in read_records(location)}
    assert set(GROUPS) <= set(records)
    for group in GROUPS:
        assert records[group].input_error is None and records[group].source == f"{location}#{group}"
        _check(json.loads(records[group].document), group, running_groups[group])
    result = run_pipeline(location, tmp_path / "out", solvers=["kafka"], runner="local")
    rows = {row["problem"]: row for row in result.summary.to_pylist()}
    assert set(GROUPS) <= set(rows)
    assert all(rows[group]["status"] not in ("invalid", "error") and not rows[group]["error"] for group in GROUPS), {g: rows[g] for g in GROUPS}


def _sasl_config(path, password: str):
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        f'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="{SASL_USER}" password="{password}";\n',
        encoding="utf-8",
    )
    return path


def test_a_secured_listener_is_read_with_the_command_config_and_refuses_a_wrong_password(running_groups, kafka_sandbox, tmp_path):
    """The sandbox's SASL_PLAINTEXT listener (PLAIN): `--command-config` with the right password
    imports the group as the plaintext listener gives it (the Admin client and the raw describe both
    authenticate), and as the `kafka://...?command-config=` input; a wrong password is exit 2, "refused
    the credentials", within the timeout, with no file written and no password printed."""
    from optimizer.sources import read_records
    from optimizer.sources.documents import read_document

    good = _sasl_config(tmp_path / "good.properties", SASL_PASSWORD)
    output = tmp_path / "secured.yaml"
    command = [sys.executable, "-m", "optimizer", "import", "--bootstrap-server", kafka_sandbox.sasl_bootstrap, "--group", "imp-coop", "--timeout", "20"]
    done = subprocess.run([*command, "--command-config", str(good), "-o", str(output)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    _check(read_document(output), "imp-coop", running_groups["imp-coop"])
    assert SASL_PASSWORD not in output.read_text(encoding="utf-8") + done.stdout + done.stderr
    records = {r.name: r for r in read_records(f"kafka://{kafka_sandbox.sasl_bootstrap}?command-config={good}&timeout=20")}
    _check(json.loads(records["imp-coop"].document), "imp-coop", running_groups["imp-coop"])
    assert all(str(good) not in r.source for r in records.values())
    wrong_password = "not-" + SASL_PASSWORD
    wrong = _sasl_config(tmp_path / "wrong.properties", wrong_password)
    refused = tmp_path / "refused.yaml"
    done = subprocess.run([*command, "--command-config", str(wrong), "-o", str(refused)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "refused the credentials" in done.stderr and "Traceback" not in done.stderr
    assert wrong_password not in done.stderr + done.stdout and not refused.exists()


def test_sample_seconds_writes_each_partitions_measured_rate_into_the_imported_problem(running_groups, kafka_sandbox, tmp_path):
    """`import --group G --sample-seconds S` while a `kao.jvm.ProducerRunner` writes 200-byte values
    at 100 and 25 records/s into two partitions of the group's topic: those partitions' rates are
    100 and 25 times the bytes a record takes in the log (200 of value, about 10 of record overhead
    and up to 61 of batch header, as batches hold one record or a few at these rates; 10 % either side
    for the window's edges), their ratio is the producers' (within 25 %: a window of a few seconds
    holds a few hundred records), and every other
    partition of the group's topics reads 0. (The sampling itself is checked against the log's
    segment files in test_sample.py.)"""
    from optimizer.sources.documents import read_document

    orders = _topics("imp-range")
    orders_topic = next(iter(orders))
    spec = {
        "bootstrap": kafka_sandbox.bootstrap,
        "topics": {},
        "producers": [
            {"topic": orders_topic, "partition": 0, "records_per_second": 100, "value_bytes": 200},
            {"topic": orders_topic, "partition": 1, "records_per_second": 25, "value_bytes": 200},
        ],
    }
    producer = subprocess.Popen(
        java("kao.jvm.ProducerRunner", heap_mb=256), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=sandbox.tie_to_parent,
    )  # fmt: skip
    try:
        assert producer.stdin is not None and producer.stdout is not None
        producer.stdin.write(json.dumps(spec) + "\n")
        producer.stdin.flush()
        ready, _, _ = select.select([producer.stdout], [], [], 120)
        assert ready and "started" in json.loads(producer.stdout.readline())
        time.sleep(2)  # past the first batches
        output = tmp_path / "sampled.yaml"
        done = subprocess.run(
            [sys.executable, "-m", "optimizer", "import", "--bootstrap-server", kafka_sandbox.bootstrap, "--group", "imp-range",
             "--sample-seconds", "5", "-o", str(output)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    finally:
        _end(producer)
    document = read_document(output)
    _check(document, "imp-range", running_groups["imp-range"])
    rates = {topic["name"]: topic["partition_bytes_per_second"] for topic in document["topics"]}
    assert set(rates) == set(orders)
    fast, slow = rates[orders_topic][0], rates[orders_topic][1]
    assert 100 * 190 <= fast <= 100 * 300 and 25 * 190 <= slow <= 25 * 300, rates
    assert 3.0 <= fast / slow <= 5.0
    assert all(rate == 0 for rate in rates[orders_topic][2:]) and all(rate == 0 for name, r in rates.items() if name != orders_topic for rate in r)
