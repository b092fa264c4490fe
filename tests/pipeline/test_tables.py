"""Normalised tables as pipeline input: round trips, CSV = Parquet = Spark, errors."""

from __future__ import annotations

import csv
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from optimizer.errors import InvalidInputError
from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model.consumer import ConsumerConfig
from optimizer.model.ids import natural_key, parse_partition_id
from optimizer.model.problem import problem_from_data, problem_to_data
from optimizer.model.streams import StreamsConfig
from optimizer.pipeline.tables import spark_table_records
from optimizer.sources import read_records
from optimizer.sources.tables.directory import is_table_directory
from optimizer.sources.tables.layout import CONSUMER_CONFIG, STREAMS_CONFIG, TABLES
from optimizer.sources.tables.reader import read_table_records
from optimizer.sources.tables.writer import problem_table_rows, write_tables

DOCS = Path(__file__).resolve().parents[2] / "docs" / "pipeline-tables.md"


def _edited(problem, edit) -> Any:
    data = problem_to_data(problem)
    edit(data)
    return problem_from_data(data)


def _streams_without_racks(data: dict[str, Any]) -> None:
    # Some clients without a rack, some partitions with unknown racks, every optional field set.
    for client in data["clients"][::2]:
        client.pop("rack", None)
    for task in data["tasks"][::3]:
        for partition in task["source_partitions"]:
            partition.pop("replica_racks", None)
    data["tasks"][0].pop("changelog_end_offset", None)
    data["description"] = 'payments, the "big" one;\nsecond line'
    data["config"].update(
        {
            "acceptable.recovery.lag": 5000,
            "max.warmup.replicas": 3,
            "probing.rebalance.interval.ms": 120000,
            "rack.aware.assignment.traffic_cost": 7,
            "rack.aware.assignment.non_overlap_cost": 2,
            "task.assignor.class": "sticky",
        }
    )


def _consumer_with_gaps(data: dict[str, Any]) -> None:
    # Topic names with dots and dashes; a topic whose racks are known for some partitions only.
    renamed = {topic["name"]: f"orders-eu.v{i}" for i, topic in enumerate(data["topics"])}
    for topic in data["topics"]:
        topic["name"] = renamed[topic["name"]]
    data["topics"][0]["replica_racks"] = [
        [] if p % 2 else ["rack-b", "rack-a"] for p in range(data["topics"][0]["partitions"])
    ]
    for member in data["members"]:
        member["subscriptions"] = [renamed[t] for t in member["subscriptions"]]
        member["owned_partitions"] = [
            f"{renamed[parse_partition_id(p).topic]}-{parse_partition_id(p).partition}"
            for p in member.get("owned_partitions", [])
        ]
    data["members"][0].pop("rack", None)


def _priced(data: dict[str, Any]) -> None:
    """A price, leaders and the brokers' replica selector (issue 31)."""
    data["price_per_gb"] = 0.02
    data["config"]["replica.selector.class"] = "RackAwareReplicaSelector" if data["kind"] == "streams" else "com.example.Nearest"
    for task in data.get("tasks", [])[:3]:  # partitions with their own rate, over their topic's
        for partition in task["source_partitions"]:
            partition["bytes_per_second"] = 1234567.125
            partition["leader_rack"] = partition["replica_racks"][-1]
    for topic in data.get("topics", [])[:2]:
        topic["leader_racks"] = [None if p % 3 == 1 else racks[0] for p, racks in enumerate(topic["replica_racks"])]
    for member in data.get("members", [])[:2]:  # static members (group.instance.id): some, not all
        member["group_instance_id"] = f"static-{member['id']}"
    for number, topic in enumerate(data.get("topics", [])[1:3]):  # Kafka's topic ids (issue 32): some topics, not all
        topic["topic_id"] = ["3UeLhZSXR2CHnwn1b1pOaw", "XCoefwO5TSGo4G8dLDtKWQ"][number]


def _problems() -> list[Any]:
    # orders-app and billing carry every weight of their kind (docs/file-formats.md, "Weights").
    return [
        _edited(
            random_streams_problem(1, tasks=14, clients=4, tags=("zone", "cluster"), rates=True, weights=True, name="orders-app"),
            _priced,
        ),
        _edited(
            random_streams_problem(2, tasks=12, clients=5, standby_replicas=2, name="payments"),
            _streams_without_racks,
        ),
        random_streams_problem(3, tasks=0, clients=2, strategy="none", previous=False, name="empty-streams"),
        _edited(
            random_consumer_problem(
                4, members=5, topics=12, equal_subscriptions=False, strategy="cooperative-sticky", rates=True, weights=True, name="billing"
            ),
            _priced,
        ),
        random_consumer_problem(5, members=3, topics=2, racks=0, strategy="range", name="zahlungen-ä"),
        _edited(random_consumer_problem(6, members=4, topics=3, name="audit"), _consumer_with_gaps),
    ]


def _canonical(problem) -> dict[str, Any]:
    """The problem's document with every list in the readers' natural order."""
    data = problem_to_data(problem)

    def partition_order(p: dict[str, Any]) -> tuple[Any, ...]:
        return natural_key(p["topic"]), p["partition"]

    for key in ("clients", "tasks", "members"):
        data.get(key, []).sort(key=lambda entry: natural_key(entry["id"]))
    data.get("topics", []).sort(key=lambda topic: natural_key(topic["name"]))
    for entry in data.get("clients", []) + data.get("members", []):
        for key in ("previous_active", "previous_standby", "subscriptions"):
            entry.get(key, []).sort(key=natural_key)
        if "owned_partitions" in entry:
            entry["owned_partitions"].sort(
                key=lambda p: (natural_key(parse_partition_id(p).topic), parse_partition_id(p).partition)
            )
    for task in data.get("tasks", []):
        for key in ("source_partitions", "changelog_partitions"):
            task.get(key, []).sort(key=partition_order)
    return problem_to_data(problem_from_data(data))


@pytest.fixture(scope="module")
def problems() -> list[Any]:
    return _problems()


@pytest.fixture(scope="module")
def tables(tmp_path_factory, problems) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tables")
    write_tables(problems, root / "parquet")
    write_tables(problems, root / "csv", format="csv")
    return {"parquet": root / "parquet", "csv": root / "csv"}


def _pairs(records) -> list[tuple[str, str]]:
    return [(record.name, record.document) for record in records]


def test_round_trip_gives_the_problems_back(tables, problems):
    records = read_table_records(tables["parquet"])
    assert [r.name for r in records] == sorted(p.name for p in problems)
    assert all(r.input_error is None for r in records)
    originals = {p.name: _canonical(p) for p in problems}
    for record in records:
        data = json.loads(record.document)
        assert problem_to_data(problem_from_data(data, record.source)) == originals[record.name]
        assert record.source == f"{tables['parquet']}#{record.name}"
    # The fields the variety is for really are there.
    documents = {r.name: json.loads(r.document) for r in records}
    assert any("tags" in c for c in documents["orders-app"]["clients"])
    assert "rack" not in documents["payments"]["clients"][0]
    assert documents["payments"]["description"].endswith("second line")
    assert documents["audit"]["topics"][0]["replica_racks"][1] == []
    assert "replica_racks" not in documents["zahlungen-ä"]["topics"][0]
    for name in ("orders-app", "billing"):
        assert problem_from_data(documents[name]).weighted and documents[name]["price_per_gb"] == 0.02
    assert documents["orders-app"]["tasks"][0]["source_partitions"][0]["bytes_per_second"] == 1234567.125
    assert documents["orders-app"]["tasks"][0]["source_partitions"][0]["leader_rack"]
    assert documents["billing"]["config"]["replica.selector.class"] == "com.example.Nearest"


def test_csv_gives_the_same_documents_as_parquet(tables):
    assert _pairs(read_table_records(tables["csv"])) == _pairs(read_table_records(tables["parquet"]))


def test_documents_do_not_depend_on_row_order_or_part_files(tmp_path, tables, problems):
    rng = random.Random(7)
    for name, rows in problem_table_rows(problems).items():
        rows = list(rows)
        rng.shuffle(rows)
        schema = pq.read_schema(tables["parquet"] / f"{name}.parquet")
        # Spark's way: a directory of part files with a _SUCCESS marker.
        (tmp_path / name).mkdir()
        (tmp_path / name / "_SUCCESS").touch()
        half = len(rows) // 2
        for part, chunk in enumerate((rows[:half], rows[half:])):
            pq.write_table(
                pa.Table.from_pylist(chunk, schema=schema), tmp_path / name / f"part-{part:05d}.parquet"
            )
    assert _pairs(read_table_records(tmp_path)) == _pairs(read_table_records(tables["parquet"]))


def test_read_records_recognises_a_table_directory(tmp_path, tables):
    assert is_table_directory(tables["parquet"]) and is_table_directory(tables["csv"])
    assert read_records(tables["csv"]) == read_table_records(tables["csv"])
    # A directory of problem files with a subdirectory that happens to be called applications.
    (tmp_path / "applications").mkdir()
    (tmp_path / "applications" / "a.problem.json").write_text("{}")
    assert not is_table_directory(tmp_path)
    assert not is_table_directory(tables["parquet"] / "applications.parquet")


def test_stored_types_are_read_leniently(tmp_path, tables):
    """Whole numbers as pandas writes them (float64 with NaN, index stored as a column) or as
    text; lists as ;-separated text."""
    import pandas as pd

    shutil.copytree(tables["parquet"], tmp_path, dirs_exist_ok=True)
    clients = pd.read_parquet(tmp_path / "clients.parquet")
    clients.loc[clients.index % 2 == 1, "threads"] = None  # now float64 with NaN
    clients.index = pd.Index([f"row-{i}" for i in range(len(clients))])  # stored as __index_level_0__
    assert clients["threads"].dtype == "float64"
    clients.to_parquet(tmp_path / "clients.parquet")
    assert "__index_level_0__" in pq.read_schema(tmp_path / "clients.parquet").names
    partitions = pq.read_table(tmp_path / "partitions.parquet").to_pylist()
    pq.write_table(
        pa.table(
            {
                "application": [r["application"] for r in partitions],
                "topic": [r["topic"] for r in partitions],
                "partition": [str(r["partition"]) for r in partitions],
                "replica_racks": [" ; ".join(r["replica_racks"]) for r in partitions],
                "bytes_per_second": [None if r["bytes_per_second"] is None else str(r["bytes_per_second"]) for r in partitions],
                "leader_rack": [r["leader_rack"] for r in partitions],
            }
        ),
        tmp_path / "partitions.parquet",
    )
    expected = {r.name: json.loads(r.document) for r in read_table_records(tables["parquet"])}
    for record in read_table_records(tmp_path):
        assert record.input_error is None
        document = json.loads(record.document)
        for client, original in zip(
            document.get("clients", []), expected[record.name].get("clients", []), strict=True
        ):
            assert client.get("threads") in (None, original["threads"])
            client.pop("threads", None)
            original.pop("threads")
        assert document == expected[record.name]


def _rewrite_csv(path: Path, edit) -> None:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    rows = edit(rows)
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)


def test_table_problems_are_one_error_naming_each(tmp_path, tables):
    shutil.copytree(tables["csv"], tmp_path, dirs_exist_ok=True)
    (tmp_path / "members.csv").unlink()  # required: the directory has consumer groups
    _rewrite_csv(tmp_path / "tasks.csv", lambda rows: [row[:1] + row[2:] for row in rows])  # no task column
    _rewrite_csv(tmp_path / "lags.csv", lambda rows: [rows[0] + ["note"]] + [row + ["x"] for row in rows[1:]])
    _rewrite_csv(
        tmp_path / "owned.csv", lambda rows: rows + [["ghost-app", "m", "t", "0"], ["", "m", "t", "1"]]
    )
    pq.write_table(
        pa.table({"application": ["audit"], "topic": [["not", "text"]], "partitions": [3]}),
        tmp_path / "topics.parquet",
    )
    (tmp_path / "topics.csv").unlink()
    with pytest.raises(InvalidInputError) as caught:
        read_table_records(tmp_path)
    issues = {str(issue) for issue in caught.value.issues}
    text = str(caught.value)
    assert any(i.startswith("members: missing table") for i in issues), text
    assert "tasks.csv.task: missing required column" in issues, text
    assert any(i.startswith("lags.csv.note: unknown column") for i in issues), text
    assert any(
        i.startswith("topics.parquet.topic: the column has type list<element: string>") for i in issues
    ), text
    assert any("application 'ghost-app' is not in applications (row" in i for i in issues), text
    assert any(i.startswith("owned.csv.application: row") and "no application" in i for i in issues), text


def test_missing_applications_table_and_duplicates(tmp_path, tables):
    shutil.copytree(tables["csv"], tmp_path, dirs_exist_ok=True)
    _rewrite_csv(tmp_path / "applications.csv", lambda rows: rows + [rows[1]])
    with pytest.raises(
        InvalidInputError, match=r"application '[^']+' is listed more than once \(rows 1, 7\)"
    ):
        read_table_records(tmp_path)
    (tmp_path / "applications.csv").unlink()
    with pytest.raises(InvalidInputError, match="applications: missing table"):
        read_table_records(tmp_path)


def _break_applications(root: Path) -> None:
    """Application-level problems in three applications; the others stay valid."""

    def task_partitions(rows):
        header = rows[0]
        for row in rows[1:]:
            record = dict(zip(header, row, strict=True))
            if record["application"] == "orders-app" and record["role"] == "source":
                row[header.index("partition")] = "9999"
                break
        return rows

    def applications(rows):
        header = rows[0]
        for row in rows[1:]:
            if row[0] == "billing":
                row[header.index("kind")] = "consumers"
            if row[0] == "audit":
                row[header.index("num.standby.replicas")] = "1"
        return rows

    def lags(rows):
        for row in rows[1:]:
            if row[0] == "payments":
                row[-1] = "lots"
                break
        return rows + [["payments", "nobody", "0_0", "5"]]

    def topics(rows):
        header = rows[0]
        for row in rows[1:]:
            if row[0] == "audit":
                row[header.index("topic_id")] = "orders-topic-id"
                break
        return rows

    _rewrite_csv(root / "task_partitions.csv", task_partitions)
    _rewrite_csv(root / "applications.csv", applications)
    _rewrite_csv(root / "topics.csv", topics)
    _rewrite_csv(root / "lags.csv", lags)


def test_application_problems_become_invalid_records(tmp_path, tables):
    shutil.copytree(tables["csv"], tmp_path, dirs_exist_ok=True)
    _break_applications(tmp_path)
    records = {r.name: r for r in read_table_records(tmp_path)}
    assert len(records) == 6  # nothing dropped
    errors = {name: record.input_error for name, record in records.items()}
    assert errors["empty-streams"] is None and errors["zahlungen-ä"] is None
    assert "partition s" in errors["orders-app"] and "-9999 is not in partitions" in errors["orders-app"]
    assert errors["orders-app"].startswith(f"{tmp_path}#orders-app: 1 problem")
    assert "unknown kind 'consumers'" in errors["billing"]
    assert "num.standby.replicas: is a streams setting" in errors["audit"]
    assert "].topic_id: 'orders-topic-id' is not a topic id as Kafka writes one" in errors["audit"], errors["audit"]
    assert "'lots' is not a whole number" in errors["payments"]
    assert "lags[client='nobody', task='0_0'].client: client 'nobody' is not in clients" in errors["payments"]
    # The document is still there, with its kind, for the pipeline's invalid row.
    assert json.loads(records["orders-app"].document)["kind"] == "streams"


def test_key_listed_twice_and_rows_of_the_other_kind(tmp_path, tables):
    shutil.copytree(tables["csv"], tmp_path, dirs_exist_ok=True)
    _rewrite_csv(tmp_path / "clients.csv", lambda rows: rows + [["orders-app", "client-0001", "", "3", ""]])
    _rewrite_csv(tmp_path / "members.csv", lambda rows: rows + [["payments", "m-1", "", "", "", ""]])
    records = {r.name: r for r in read_table_records(tmp_path)}
    assert "clients[client='client-0001']: 2 rows have this key" in records["orders-app"].input_error
    assert "members: 1 row for this streams application" in records["payments"].input_error


def test_write_tables_refuses_what_the_layout_cannot_hold(tmp_path, tables, problems):
    with pytest.raises(FileExistsError):
        write_tables(problems, tables["parquet"])
    semicolon = _edited(
        problems[3], lambda d: d["topics"][0].update(replica_racks=[["a;b"]] * d["topics"][0]["partitions"], leader_racks=None)
    )
    with pytest.raises(ValueError, match="CSV cannot hold the list item 'a;b'"):
        write_tables([semicolon], tmp_path / "csv", format="csv")
    write_tables([semicolon], tmp_path / "parquet")  # Parquet can
    assert json.loads(read_table_records(tmp_path / "parquet")[0].document)["topics"][0]["replica_racks"][
        0
    ] == ["a;b"]
    unnamed = _edited(problems[0], lambda d: d.pop("name"))
    with pytest.raises(ValueError, match="needs a name"):
        write_tables([unnamed], tmp_path / "unnamed")
    streams = next(p for p in problems if p.kind == "streams")
    threads = _edited(streams, lambda d: d["clients"][0].update(members=[{"id": "m"}], threads=1, previous_active=[], previous_standby=[]))
    with pytest.raises(ValueError, match="lists its members, which the tables cannot hold"):
        write_tables([threads], tmp_path / "members")

    def two_rates(data: dict[str, Any]) -> None:
        # The same partition read by two tasks (the source of one, the changelog of another).
        first, second = data["tasks"][0], next(t for t in data["tasks"][1:] if t.get("stateful"))
        shared = dict(first["source_partitions"][0], bytes_per_second=5)
        first["source_partitions"][0] = shared
        second["changelog_partitions"] = [*second.get("changelog_partitions", []), dict(shared, bytes_per_second=7)]

    with pytest.raises(ValueError, match=r"has bytes_per_second 5.0 in task 0_0 and 7.0 in task \S+; the partitions table holds one row"):
        write_tables([_edited(streams, two_rates)], tmp_path / "rates")


def test_protocol_keys_go_through_the_tables(tmp_path, problems):
    consumer = next(p for p in problems if p.kind == "consumer")
    streams = next(p for p in problems if p.kind == "streams")
    kip848 = _edited(consumer, lambda d: d.setdefault("config", {}).update({"group.protocol": "consumer", "group.remote.assignor": "range"}))
    kip1071 = _edited(streams, lambda d: d.setdefault("config", {}).update({"group.protocol": "streams", "streams.assignor.name": "balanced"}))
    write_tables([kip848, kip1071], tmp_path / "t")
    back = {r.name: problem_from_data(json.loads(r.document)) for r in read_table_records(tmp_path / "t")}
    assert back[kip848.name].config == kip848.config and back[kip1071.name].config == kip1071.config


def test_natural_order():
    ids = ["client-10", "client-2", "client-02", "0_10", "0_9", "1_0", "b", "a10b", "a9b"]
    assert sorted(ids, key=natural_key) == [
        "0_9",
        "0_10",
        "1_0",
        "a9b",
        "a10b",
        "b",
        "client-02",
        "client-2",
        "client-10",
    ]


def test_layout_matches_the_models_and_the_docs():
    def aliases(model) -> set[str]:
        return {f.serialization_alias or f.alias for f in model.model_fields.values()}

    assert {key for key, _ in STREAMS_CONFIG} == aliases(StreamsConfig)
    assert {key for key, _ in CONSUMER_CONFIG} == aliases(ConsumerConfig)
    text = DOCS.read_text(encoding="utf-8")
    for name, spec in TABLES.items():
        assert f"### {name}" in text or f"**{name}**" in text, name
        for column in spec.column_names:
            assert column in text, (name, column)


def test_spark_builds_the_same_records(spark, tmp_path, tables):
    """Spark's records equal the pyarrow reader's, byte for byte, errors included.

    One directory mixes Parquet tables (list and integer columns) and CSV tables (text cells),
    with application-level problems and rows in another order.
    """
    shutil.copytree(tables["parquet"], tmp_path, dirs_exist_ok=True)
    for name in ("applications", "task_partitions", "lags", "owned", "topics"):
        (tmp_path / f"{name}.parquet").unlink()
        shutil.copy(tables["csv"] / f"{name}.csv", tmp_path / f"{name}.csv")
    _break_applications(tmp_path)
    _rewrite_csv(tmp_path / "owned.csv", lambda rows: [rows[0]] + rows[:0:-1])
    expected = [(r.name, r.document, r.source, r.input_error) for r in read_table_records(tmp_path)]
    assert sum(error is not None for *_, error in expected) == 4
    clean = dict(_pairs(read_table_records(tables["parquet"])))
    assert all(document == clean[name] for name, document, _, error in expected if error is None)
    got = spark_table_records(spark, tmp_path).collect()
    assert [tuple(row) for row in got] == expected


def test_spark_reports_table_problems(spark, tmp_path, tables):
    shutil.copytree(tables["csv"], tmp_path, dirs_exist_ok=True)
    _rewrite_csv(tmp_path / "tasks.csv", lambda rows: [row[:1] + row[2:] for row in rows])
    _rewrite_csv(tmp_path / "owned.csv", lambda rows: rows + [["ghost-app", "m", "t", "0"]])
    with pytest.raises(InvalidInputError) as caught:
        spark_table_records(spark, tmp_path)
    issues = {str(issue) for issue in caught.value.issues}
    assert "tasks.csv.task: missing required column" in issues
    assert "owned.csv.application: application 'ghost-app' is not in applications (1 row)" in issues
