"""The seam for inputs: a location's form chooses the module that reads it, imported on first use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from optimizer.errors import InvalidInputError
from optimizer.sources import (
    DOCUMENT_DIRECTORY,
    FORMS,
    JSON_LINES,
    PROBLEM_FILE,
    TABLE_DIRECTORY,
    form_of,
    open_source,
    read_records,
)
from optimizer.sources.problem_file import load_problem
from optimizer.sources.tables.writer import write_tables
from tests.conftest import EXAMPLES, REPO

PROBLEM = EXAMPLES / "kip54" / "example1-fresh.problem.yaml"


def test_each_form_is_recognised_by_the_location_alone(tmp_path):
    (tmp_path / "fleet.jsonl.gz").write_bytes(b"")
    (tmp_path / "fleet.ndjson").write_text("")
    write_tables([load_problem(PROBLEM)], tmp_path / "tables")
    assert form_of(PROBLEM) is PROBLEM_FILE
    assert form_of(tmp_path / "fleet.jsonl.gz") is JSON_LINES
    assert form_of(tmp_path / "fleet.ndjson") is JSON_LINES
    assert form_of(EXAMPLES) is DOCUMENT_DIRECTORY
    assert form_of(tmp_path / "tables") is TABLE_DIRECTORY
    assert form_of(tmp_path / "missing.json") is None
    assert form_of(REPO / "pyproject.toml") is None


def test_every_form_opens_a_source_of_its_own_module(tmp_path):
    write_tables([load_problem(PROBLEM)], tmp_path / "tables")
    (tmp_path / "fleet.jsonl").write_text("")
    locations = (PROBLEM, tmp_path / "fleet.jsonl", EXAMPLES, tmp_path / "tables", "kafka://127.0.0.1:9092")
    opened = {form_of(location): type(open_source(location)) for location in locations}
    assert set(opened) == set(FORMS)
    assert all(reader.__module__ == form.module and reader.__name__ == form.reader for form, reader in opened.items())


def test_an_unknown_scheme_is_refused_with_the_forms_there_are():
    with pytest.raises(InvalidInputError) as raised:
        read_records("s3://bucket/fleet.jsonl")
    assert raised.value.source == "s3://bucket/fleet.jsonl"
    message = str(raised.value)
    assert "unknown scheme 's3'" in message
    assert all(form.what in message for form in FORMS)


def test_a_missing_location_and_a_file_of_another_kind_say_so():
    with pytest.raises(InvalidInputError, match="no such file or directory"):
        open_source(EXAMPLES / "missing")
    with pytest.raises(InvalidInputError, match=r"expected a \.jsonl"):
        open_source(REPO / "pyproject.toml")


def test_reading_a_problem_file_loads_no_table_reader():
    """The modules of the other forms (pyarrow for tables) are imported when a location of
    their form is opened, not before."""
    code = (
        "import json, sys; from optimizer.sources import read_records; read_records(sys.argv[1]); "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('optimizer.sources.', 'pyarrow')))))"
    )
    run = subprocess.run([sys.executable, "-c", code, str(PROBLEM)], capture_output=True, text=True, cwd=REPO, check=True)
    loaded = json.loads(run.stdout)
    assert "optimizer.sources.problem_file" in loaded
    assert not any(name.startswith(("pyarrow", "optimizer.sources.tables.reader", "optimizer.sources.json_lines")) for name in loaded)


def test_a_kafka_url_is_the_live_cluster_form_and_opening_it_connects_to_nothing():
    """`kafka://HOST:PORT[,HOST:PORT]` is recognised by its scheme; the cluster is read only when
    its records are (tests/kafka/test_import.py reads one)."""
    from optimizer.sources import KAFKA_CLUSTER
    from optimizer.sources.kafka_cluster import KafkaCluster

    assert form_of("kafka://127.0.0.1:9092,127.0.0.1:9093") is KAFKA_CLUSTER
    assert form_of("KAFKA://broker:9092") is KAFKA_CLUSTER
    source = open_source("kafka://127.0.0.1:9092,127.0.0.1:9093/")
    assert isinstance(source, KafkaCluster) and source.bootstrap == "127.0.0.1:9092,127.0.0.1:9093"
    with pytest.raises(InvalidInputError, match="expected kafka://HOST:PORT"):
        read_records("kafka://")


def test_group_ids_become_safe_unique_file_names():
    """`import --all`'s file names: a group id that is safe stays as it is; one with characters a
    file system refuses, a leading dot, or a case-only twin gets a hash of itself, so none collide."""
    from optimizer.sources.kafka_cluster import group_file_names

    groups = ["orders", "Orders", "a/b", "a_b", "..", "x.solution.y", "ö" * 3]
    names = group_file_names(groups)
    assert names["orders"] == "orders.yaml" and names["a_b"] == "a_b.yaml"
    assert len({n.lower() for n in names.values()}) == len(groups)
    for group, name in names.items():
        assert name.endswith(".yaml") and not name.startswith(".") and ".solution." not in name
        assert all(c.isascii() and (c.isalnum() or c in "._-") for c in name), group
    assert names["Orders"] != "Orders.yaml" and names["a/b"].startswith("a_b-")


def test_listed_groups_that_are_neither_consumer_groups_nor_streams_applications_are_skipped_saying_why():
    """`import --all` imports consumer groups (classic, KIP-848) and Kafka Streams applications
    (classic groups of protocol type consumer, streams groups) and skips the rest with a reason:
    share groups, classic groups of another protocol type (Connect), empty groups, unknown types.
    The live import of every kind: tests/kafka/test_import.py and test_import_streams.py."""
    from optimizer.sources.kafka_cluster import _not_importable

    def listed(kind, protocol, state="Stable"):
        return {"group_id": "g", "type": kind, "protocol": protocol, "state": state}

    for kind, protocol in (("CLASSIC", "consumer"), ("CONSUMER", "consumer"), ("STREAMS", "streams")):
        assert _not_importable(listed(kind, protocol)) is None
    assert "share group" in (_not_importable(listed("SHARE", "share")) or "")
    assert "protocol type 'connect'" in (_not_importable(listed("CLASSIC", "connect")) or "")
    assert "empty (state Empty)" in (_not_importable(listed("CLASSIC", "consumer", "Empty")) or "")
    assert "empty" in (_not_importable(listed("CLASSIC", "")) or "")
    assert "type None" in (_not_importable({"group_id": "g", "type": None, "protocol": "", "state": "Stable"}) or "")


def test_a_kafka_url_takes_the_command_config_and_timeout_as_its_query_and_names_every_bad_parameter(tmp_path):
    """`kafka://HOST:PORT?command-config=FILE&timeout=SECONDS`, as `import` takes `--command-config`
    and `--timeout`; the Records never show the query (a path may hold a user name)."""
    from optimizer.sources.kafka_cluster import ImportOptions, KafkaCluster

    properties = tmp_path / "client.properties"
    properties.write_text("security.protocol=PLAINTEXT\n", encoding="utf-8")
    cluster = KafkaCluster(f"kafka://127.0.0.1:9092?command-config={properties}&timeout=12.5")
    assert cluster.bootstrap == "127.0.0.1:9092"
    assert cluster.options() == ImportOptions(command_config=properties, timeout=12.5)
    assert KafkaCluster("kafka://127.0.0.1:9092/").options() == ImportOptions()
    with pytest.raises(InvalidInputError) as raised:
        KafkaCluster("kafka://h:1?timeout=0&colour=red&command-config=/nowhere/x&timeout=5").options()
    messages = [issue.message for issue in raised.value.issues]
    assert any("unknown parameter 'colour'" in m for m in messages)
    assert any("'0' is not a number of seconds" in m for m in messages)
    assert any("'/nowhere/x' is not a readable file" in m for m in messages)
    assert any("'timeout' is given twice" in m for m in messages)
    assert "?" not in raised.value.source


def test_the_cluster_replica_selector_is_set_only_when_every_broker_has_the_same_one():
    """Follower fetching is on only when every broker serves from followers; a mix, or a broker
    whose configuration cannot be read, leaves Kafka's default (the leader serves) with a warning."""
    from optimizer.kafka.describe import RACK_AWARE_SELECTOR, replica_selector

    def brokers(*selectors):
        return [{"id": i, "rack": "abc"[i], "replica_selector": s} for i, s in enumerate(selectors)]

    assert replica_selector(brokers(None, None, None)) == (None, None)
    assert replica_selector(brokers(RACK_AWARE_SELECTOR, RACK_AWARE_SELECTOR)) == (RACK_AWARE_SELECTOR, None)
    for mixed in (brokers(RACK_AWARE_SELECTOR, None), brokers(RACK_AWARE_SELECTOR, "unknown")):
        value, warning = replica_selector(mixed)
        assert value is None and warning is not None and "broker 1:" in warning and "counted from the leaders" in warning


def test_an_described_consumer_group_maps_its_leaders_selector_and_rates_into_the_problem():
    """The adapter's JSON (as `kao.jvm.Describe` gives it) to the problem: replica and leader racks
    from the brokers' racks, the brokers' common selector, and measured rates per partition."""
    from optimizer.kafka.describe import RACK_AWARE_SELECTOR
    from optimizer.model.problem import problem_from_data
    from optimizer.sources.kafka_cluster import consumer_problem

    described = {
        "group_id": "g", "type": "CONSUMER", "state": "Stable", "assignor": "uniform",
        "brokers": [{"id": 1, "rack": "a", "replica_selector": RACK_AWARE_SELECTOR}, {"id": 2, "rack": "b", "replica_selector": RACK_AWARE_SELECTOR}],
        "topics": {"t": {"partitions": [{"partition": 0, "leader": 2, "replicas": [2, 1]}, {"partition": 1, "leader": 1, "replicas": [1]}]}},
        "members": [{"member_id": "m", "rack": "a", "subscriptions": ["t"], "assignment": [["t", 0], ["t", 1]]}],
    }  # fmt: skip
    document = consumer_problem(described, "h:1", rates={("t", 0): 1500.0, ("t", 1): 0.0})
    problem = problem_from_data(document, "g")
    (topic,) = problem.topics
    assert topic.replica_racks == (("b", "a"), ("a",)) and topic.leader_racks == ("b", "a")
    assert problem.config.follower_fetching
    assert document["topics"][0]["partition_bytes_per_second"] == [1500.0, 0.0]
    del described["brokers"][1]["replica_selector"]  # one broker unset: the leader serves
    assert "replica.selector.class" not in consumer_problem(described, "h:1")["config"]


def test_a_broker_without_rack_leaves_its_replicas_out_and_is_named():
    """As Kafka's rack-aware assignors do (they keep the racks they know), a replica on a broker
    without `broker.rack` is left out of its partition's `replica_racks`; the import says which
    brokers, and the description keeps the sampling's warnings for outputs that print none."""
    from optimizer.kafka.sample import Rate
    from optimizer.sources.kafka_cluster import ImportOptions, _Described, _mapped

    described = {
        "group_id": "g", "type": "CONSUMER", "state": "Stable", "assignor": "uniform",
        "brokers": [{"id": 1, "rack": "a", "replica_selector": None}, {"id": 2, "rack": None, "replica_selector": None}],
        "topics": {"t": {"partitions": [{"partition": 0, "leader": 2, "replicas": [2, 1]}, {"partition": 1, "leader": 2, "replicas": [2]}]}},
        "members": [{"member_id": "m", "rack": "a", "subscriptions": ["t"], "assignment": [["t", 0], ["t", 1]]}],
    }  # fmt: skip
    rates = {("t", 0): Rate(10.0, False, None), ("t", 1): Rate(5.0, True, "the log shrank: estimated from offsets")}
    imported = _mapped(_Described("g", described, False), "h:1", ImportOptions(), rates)
    assert imported.document is not None
    (topic,) = imported.document["topics"]
    assert topic["replica_racks"] == [["a"], []] and "leader_racks" not in topic
    assert any("brokers 2 have no broker.rack" in w for w in imported.warnings)
    estimated = [w for w in imported.warnings if "estimated" in w]
    assert len(estimated) == 1 and "t-1 (the log shrank" in estimated[0] and estimated[0] in imported.document["description"]
    # A partition that could not be measured (no leader at an end of the window): its topic gets no
    # rates, the group a warning, and the import goes on.
    partial = _mapped(_Described("g", described, False), "h:1", ImportOptions(), {("t", 0): rates[("t", 0)]}, ["t-1 (no leader at the end)", "u-0 (x)"])
    assert partial.document is not None and "partition_bytes_per_second" not in partial.document["topics"][0]
    (missing,) = [w for w in partial.warnings if "could not be measured" in w]
    assert "t-1 (no leader at the end)" in missing and "u-0" not in missing


def test_a_location_is_shown_without_its_query():
    """The pipeline's progress lines show `kafka://HOST:PORT`, never the command config's path."""
    from optimizer.sources import shown_location

    assert shown_location("kafka://h:1,h:2?command-config=/home/alice/admin.properties&timeout=5") == "kafka://h:1,h:2"
    assert shown_location(Path("/data/fleet?.jsonl")) == "/data/fleet?.jsonl"


def test_a_group_running_the_projects_plug_in_imports_as_its_fallback_with_a_warning():
    """A group that chose the project's plug-in (`group.remote.assignor=optimizer`, or the classic
    `optimizer` protocol) is reproduced as the plug-in's fallback, Kafka's default, and says so."""
    from optimizer.model.problem import problem_from_data
    from optimizer.sources.kafka_cluster import ImportOptions, _Described, _mapped

    for kind, key, fallback in (("CONSUMER", "group.remote.assignor", "uniform"), ("CLASSIC", "partition.assignment.strategy", "cooperative-sticky")):
        described = {
            "group_id": "g", "type": kind, "state": "Stable", "assignor": "optimizer",
            "brokers": [{"id": 1, "rack": "a", "replica_selector": None}],
            "topics": {"t": {"partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]}},
            "members": [{"member_id": "m", "rack": "a", "subscriptions": ["t"], "assignment": [["t", 0]], "generation": 2}],
        }  # fmt: skip
        imported = _mapped(_Described("g", described, False), "h:1", ImportOptions(), {})
        assert imported.document is not None and imported.document["config"][key] == fallback
        problem_from_data(imported.document, "g")
        assert any(f"the project's plug-in (optimizer): --solver kafka reproduces its fallback, Kafka's {fallback}" in w for w in imported.warnings)
