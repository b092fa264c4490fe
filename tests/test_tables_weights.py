"""The normalised tables carry the weights and the leaders (issue 31, item 3): a problem with
rates, weights, capacities, prices, leader racks and `replica.selector.class`, written as tables
and read back (Parquet and CSV), is the same validated problem and evaluates the same; directories
without the new columns read as before; a bad rate, weight, capacity or price is named by table,
key and column in the validation's words; the files written are the same on every run."""

from __future__ import annotations

import csv
import json
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from optimizer.errors import InvalidInputError
from optimizer.evaluate import evaluate
from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model.problem import problem_from_data
from optimizer.solve import solve
from optimizer.sources.tables.layout import TABLES
from optimizer.sources.tables.reader import read_table_records
from optimizer.sources.tables.writer import write_tables

# Every weight field of docs/file-formats.md ("Weights") and every leader field ("Leaders and
# follower fetching"), in the readers' natural order, so that a problem read back compares equal as
# it is.
STREAMS = {
    "kind": "streams",
    "name": "orders-app",
    "price_per_gb": 0.0125,
    "config": {"replica.selector.class": "RackAwareReplicaSelector"},
    "topic_bytes_per_second": {"orders": 1_000_000, "orders-store-changelog": 2500.5},
    "clients": [
        {"id": "a", "rack": "r1", "capacity": 2, "threads": 2},
        {"id": "b", "rack": "r2", "capacity": 0.75},
        {"id": "c", "rack": "r3"},
    ],
    "tasks": [
        {
            "id": "0_0", "weight": 3.5, "stateful": True,
            "source_partitions": [{"topic": "orders", "partition": 0, "replica_racks": ["r1", "r2"], "bytes_per_second": 2e8, "leader_rack": "r2"}],
            "changelog_partitions": [{"topic": "orders-store-changelog", "partition": 0, "replica_racks": ["r3", "r1"], "leader_rack": "r3"}],
        },
        {
            "id": "0_1", "weight": 0, "stateful": True,
            "source_partitions": [{"topic": "orders", "partition": 1, "replica_racks": ["r2", "r3"]}],
            "changelog_partitions": [{"topic": "orders-store-changelog", "partition": 1, "replica_racks": ["r1"], "bytes_per_second": 0.1}],
        },
        {"id": "1_0", "source_partitions": [{"topic": "clicks", "partition": 0, "replica_racks": ["r3"], "bytes_per_second": 12345.678}]},
        {"id": "1_1", "source_partitions": [{"topic": "clicks", "partition": 1, "leader_rack": "r1"}]},  # a leader, racks unknown
    ],
}  # fmt: skip

CONSUMER = {
    "kind": "consumer",
    "name": "billing",
    "price_per_gb": 1,
    "topics": [
        # A topic rate with per-partition rates over it; racks for some partitions only.
        {"name": "invoices", "partitions": 3, "bytes_per_second": 5000, "partition_bytes_per_second": [1, 5000, 1e13],
         "replica_racks": [["r1", "r2"], [], ["r3"]], "leader_racks": ["r2", None, "r3"]},
        # Per-partition rates and leaders, no racks: the rows of partitions give rates and leaders only.
        {"name": "payments", "partitions": 2, "partition_bytes_per_second": [0, 7.25], "leader_racks": ["r1", None]},
        # A leader for one partition only: the other partition has no row.
        {"name": "refunds", "partitions": 2, "bytes_per_second": 300, "leader_racks": [None, "r2"]},
        {"name": "zz-audit", "partitions": 1},
    ],
    "members": [
        {"id": "m-1", "rack": "r1", "subscriptions": ["invoices", "payments", "refunds"], "capacity": 0.001},
        {"id": "m-2", "rack": "r2", "subscriptions": ["invoices", "payments", "zz-audit"], "capacity": 1000000},
        {"id": "m-10", "rack": "r3", "subscriptions": ["payments", "refunds"]},
    ],
}  # fmt: skip


def _problems() -> list[Any]:
    return [
        problem_from_data(STREAMS),
        problem_from_data(CONSUMER),
        random_streams_problem(11, tasks=16, clients=4, rates=True, weights=True, name="random-streams"),
        random_consumer_problem(12, members=5, topics=6, rates=True, weights=True, name="random-group"),
    ]


def _read_back(directory: Path) -> dict[str, Any]:
    records = read_table_records(directory)
    assert all(record.input_error is None for record in records), [r.input_error for r in records]
    return {record.name: problem_from_data(json.loads(record.document), record.source) for record in records}


@pytest.mark.parametrize("format", ["parquet", "csv"])
def test_weighted_problems_come_back_the_same_and_evaluate_the_same(tmp_path, format):
    problems = _problems()
    assert all(problem.weighted for problem in problems)
    write_tables(problems, tmp_path / format, format=format)
    back = _read_back(tmp_path / format)
    assert sorted(back) == sorted(p.name for p in problems)
    for problem in problems:
        assert back[problem.name] == problem, problem.name  # the validated models, every field
        solution = solve(problem, "kafka")
        original, read = evaluate(problem, solution), evaluate(back[problem.name], solution)
        assert read.model_dump() == original.model_dump(), problem.name
        metrics = read.metrics
        assert (metrics.cross_rack_active_bytes if problem.kind == "streams" else metrics.cross_rack_bytes) is not None
    billing = back["billing"].topic_by_name
    assert billing["invoices"].partition_bytes_per_second == (1, 5000, 1e13) and billing["invoices"].bytes_per_second == 5000
    assert billing["payments"].replica_racks is None and billing["payments"].partition_bytes_per_second == (0, 7.25)
    assert billing["refunds"].partition_bytes_per_second is None
    assert billing["refunds"].leader_racks == (None, "r2") and billing["refunds"].replica_racks is None
    assert billing["invoices"].leader_racks == ("r2", None, "r3")
    assert back["orders-app"].price_per_gb == 0.0125 and back["billing"].price_per_gb == 1
    assert back["orders-app"].config.follower_fetching and not back["billing"].config.follower_fetching
    assert back["orders-app"].tasks[3].source_partitions[0].leader_rack == "r1"


def _csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _write_csv_rows(path: Path, rows: list[dict[str, str]], columns: list[str] | None = None) -> None:
    columns = columns or list(rows[0])
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def test_the_weight_columns_as_written():
    from optimizer.sources.tables.writer import problem_table_rows

    tables = problem_table_rows([problem_from_data(STREAMS), problem_from_data(CONSUMER)])
    assert {r["application"]: r["price_per_gb"] for r in tables["applications"]} == {"orders-app": 0.0125, "billing": 1.0}
    # Defaults (weight and capacity 1) stay empty: an empty cell reads as the default.
    assert [r["weight"] for r in tables["tasks"]] == [3.5, 0.0, None, None]
    assert [r["capacity"] for r in tables["clients"]] == [2.0, 0.75, None]
    assert [r["capacity"] for r in tables["members"]] == [0.001, 1e6, None]
    streams_topics = [(r["topic"], r["partitions"], r["bytes_per_second"]) for r in tables["topics"] if r["application"] == "orders-app"]
    assert streams_topics == [("orders", None, 1e6), ("orders-store-changelog", None, 2500.5)]
    partitions = {
        (r["application"], r["topic"], r["partition"]): (r["replica_racks"], r["bytes_per_second"], r["leader_rack"]) for r in tables["partitions"]
    }
    assert partitions["orders-app", "clicks", 1] == ([], None, "r1")
    assert partitions["billing", "invoices", 1] == ([], 5000.0, None)
    assert partitions["billing", "payments", 1] == (None, 7.25, None)  # no racks: none, not an empty list
    assert partitions["billing", "refunds", 1] == (None, None, "r2")
    assert ("billing", "refunds", 0) not in partitions  # nothing to say: no row (it would say "racks unknown")
    assert ("billing", "zz-audit", 0) not in partitions
    settings = {r["application"]: r.get("replica.selector.class") for r in tables["applications"]}
    assert settings == {"orders-app": "RackAwareReplicaSelector", "billing": None}


def _strip_new_columns(source: Path, target: Path) -> None:
    """`source` (CSV) as the layout was before the weights: none of their columns."""
    new = {"price_per_gb", "bytes_per_second", "capacity", "weight", "leader_rack", "replica.selector.class"}
    target.mkdir()
    for name in TABLES:
        rows = _csv_rows(source / f"{name}.csv")
        with (source / f"{name}.csv").open(encoding="utf-8") as handle:
            header = next(csv.reader(handle))
        _write_csv_rows(target / f"{name}.csv", rows, [c for c in header if c not in new])


def test_directories_without_the_new_columns_read_as_before(tmp_path):
    problems = [
        random_streams_problem(21, tasks=10, clients=3, tags=("zone",), name="plain-streams"),
        random_consumer_problem(22, members=4, topics=4, name="plain-group"),
        random_consumer_problem(23, members=3, topics=2, racks=0, name="no-racks"),
    ]
    write_tables(problems, tmp_path / "now", format="csv")
    _strip_new_columns(tmp_path / "now", tmp_path / "before")
    assert "bytes_per_second" not in (tmp_path / "before" / "partitions.csv").read_text().splitlines()[0]
    old = read_table_records(tmp_path / "before")
    assert [(r.name, r.document, r.input_error) for r in old] == [
        (r.name, r.document, r.input_error) for r in read_table_records(tmp_path / "now")
    ]
    assert {p.name: p for p in problems} == _read_back(tmp_path / "before")
    # Bare rows of partitions (no racks, nothing else) still say a consumer topic has racks, all
    # unknown; rows for some partitions only, [] for the others.
    rows = [r for r in _csv_rows(tmp_path / "before" / "partitions.csv") if r["application"] != "plain-group"]
    rows += [{"application": "plain-group", "topic": "topic-0", "partition": "0", "replica_racks": ""}]
    _write_csv_rows(tmp_path / "before" / "partitions.csv", rows, ["application", "topic", "partition", "replica_racks"])
    group = _read_back(tmp_path / "before")["plain-group"].topic_by_name
    assert group["topic-0"].replica_racks == ((),) * group["topic-0"].partitions
    assert group["topic-1"].replica_racks is None


def _broken_directory(root: Path) -> None:
    write_tables([problem_from_data(STREAMS), problem_from_data(CONSUMER)], root, format="csv")

    def edit(name: str, change) -> None:
        rows = _csv_rows(root / f"{name}.csv")
        for row in rows:
            change(row)
        _write_csv_rows(root / f"{name}.csv", rows)

    def partitions(row: dict[str, str]) -> None:
        if (row["application"], row["topic"], row["partition"]) == ("orders-app", "clicks", "0"):
            row["bytes_per_second"] = "-5"
        if (row["application"], row["topic"], row["partition"]) == ("billing", "payments", "1"):
            row["bytes_per_second"] = "fast"
        if (row["application"], row["topic"], row["partition"]) == ("billing", "invoices", "2"):
            row["bytes_per_second"] = "1e14"

    def tasks(row: dict[str, str]) -> None:
        if row["task"] == "0_0":
            row["weight"] = "1_000"
        if row["task"] == "1_0":
            row["weight"] = "inf"

    edit("partitions", partitions)
    edit("tasks", tasks)
    edit("clients", lambda row: row.update(capacity="0") if row["client"] == "b" else None)
    edit("members", lambda row: row.update(capacity="nan") if row["member"] == "m-1" else None)
    edit("applications", lambda row: row.update(price_per_gb="2000000") if row["application"] == "billing" else None)
    edit("topics", lambda row: row.update(bytes_per_second="true") if row["topic"] == "refunds" else None)


def test_bad_values_are_named_by_table_key_and_column(tmp_path):
    _broken_directory(tmp_path)
    errors = {record.name: record.input_error for record in read_table_records(tmp_path)}
    assert errors["orders-app"] is not None and errors["billing"] is not None
    for name, expected in [
        ("orders-app", "partitions[topic='clicks', partition=0].bytes_per_second: Input should be greater than or equal to 0, got -5.0"),
        ("orders-app", "tasks[task='0_0'].weight: '1_000' is not a number"),
        ("orders-app", "tasks[task='1_0'].weight: 'inf' is not a number"),
        ("orders-app", "clients[client='b'].capacity: Input should be greater than or equal to 0.001, got 0.0"),
        ("billing", "partitions[topic='payments', partition=1].bytes_per_second: 'fast' is not a number"),
        ("billing", "partitions[topic='invoices', partition=2].bytes_per_second: Input should be less than or equal to 10000000000000, got 100000000000000.0"),
        ("billing", "members[member='m-1'].capacity: 'nan' is not a number"),
        ("billing", "applications[application='billing'].price_per_gb: Input should be less than or equal to 1000000, got 2000000.0"),
        ("billing", "topics[topic='refunds'].bytes_per_second: 'true' is not a number"),
    ]:
        assert f"  - {expected}\n" in errors[name] + "\n", (expected, errors[name])
    assert errors["orders-app"].startswith(f"{tmp_path}#orders-app: 4 problems")
    # The payments rate that is not a number leaves partition 1 without one, and the topic gives
    # none for it: said where it is.
    assert (
        "partitions[topic='payments'].bytes_per_second: given for 1 of the topic's 2 partitions: give it for every "
        "partition, or the topic's bytes_per_second in topics for the others (partition 1 without one)"
    ) in errors["billing"]


def test_the_tables_of_a_directory_name_number_columns_of_the_wrong_type(tmp_path):
    write_tables([problem_from_data(STREAMS), problem_from_data(CONSUMER)], tmp_path)
    clients = pq.read_table(tmp_path / "clients.parquet")
    clients = clients.set_column(clients.schema.get_field_index("capacity"), "capacity", pa.array([True, False, None]))
    pq.write_table(clients, tmp_path / "clients.parquet")
    topics = pq.read_table(tmp_path / "topics.parquet").drop_columns(["partitions"])
    pq.write_table(topics, tmp_path / "topics.parquet")
    with pytest.raises(InvalidInputError) as caught:
        read_table_records(tmp_path)
    issues = {str(issue) for issue in caught.value.issues}
    assert issues == {
        "clients.parquet.capacity: the column has type bool; expected numbers",
        "topics.parquet.partitions: missing column: the directory has consumer groups, which need it",
    }


def test_numbers_are_read_from_integer_decimal_and_text_columns(tmp_path):
    problem = problem_from_data(STREAMS)
    write_tables([problem], tmp_path)
    tasks = pq.read_table(tmp_path / "tasks.parquet")
    weights = [None if w is None else Decimal(str(w)) for w in tasks.column("weight").to_pylist()]
    tasks = tasks.set_column(tasks.schema.get_field_index("weight"), "weight", pa.array(weights, pa.decimal128(10, 3)))
    pq.write_table(tasks, tmp_path / "tasks.parquet")
    applications = pq.read_table(tmp_path / "applications.parquet")
    index = applications.schema.get_field_index("price_per_gb")
    pq.write_table(applications.set_column(index, "price_per_gb", pa.array(["0.0125"])), tmp_path / "applications.parquet")
    clients = pq.read_table(tmp_path / "clients.parquet")
    index = clients.schema.get_field_index("capacity")
    pq.write_table(clients.set_column(index, "capacity", pa.array([2, None, None], pa.int32())), tmp_path / "clients.parquet")
    (record,) = read_table_records(tmp_path)
    back = problem_from_data(json.loads(record.document))
    assert back.price_per_gb == 0.0125 and [t.weight for t in back.tasks] == [3.5, 0, 1, 1]
    assert [c.capacity for c in back.clients] == [2, 1, 1]
    # An integer column and a float column give the same document.
    assert '"capacity":2.0' in record.document


def test_streams_topic_rates_from_a_catalogue(tmp_path):
    """Streams applications read only the rates of topics their tasks read from `topics`: rows of
    other topics and the partition counts are a catalogue's, not the application's."""
    write_tables([problem_from_data(STREAMS)], tmp_path, format="csv")
    rows = _csv_rows(tmp_path / "topics.csv")
    rows = [dict(row, partitions="2") for row in rows] + [
        {"application": "orders-app", "topic": "elsewhere", "partitions": "12", "bytes_per_second": "99"}
    ]
    _write_csv_rows(tmp_path / "topics.csv", rows)
    (back,) = _read_back(tmp_path).values()
    assert back == problem_from_data(STREAMS)


def test_consumer_partition_rates_fall_back_on_the_topic_rate(tmp_path):
    write_tables([problem_from_data(CONSUMER)], tmp_path, format="csv")
    rows = [r for r in _csv_rows(tmp_path / "partitions.csv") if (r["topic"], r["partition"]) != ("invoices", "1")]
    _write_csv_rows(tmp_path / "partitions.csv", rows)
    invoices = _read_back(tmp_path)["billing"].topic_by_name["invoices"]
    assert invoices.partition_bytes_per_second == (1, 5000, 1e13)  # partition 1: the topic's 5000
    assert invoices.replica_racks == (("r1", "r2"), (), ("r3",))


def test_leaders_that_the_tables_cannot_hold_or_that_are_wrong(tmp_path):
    unknown = dict(CONSUMER, topics=[dict(CONSUMER["topics"][3], leader_racks=[None])])
    unknown["members"] = [{"id": "m", "subscriptions": ["zz-audit"]}]
    with pytest.raises(ValueError, match=r"topic 'zz-audit' lists leader_racks, every one unknown \(null\), which the tables cannot tell"):
        write_tables([problem_from_data(unknown)], tmp_path / "unknown")
    # A leader outside its replica racks is the validation's error, naming the partition.
    write_tables([problem_from_data(STREAMS), problem_from_data(CONSUMER)], tmp_path / "csv", format="csv")
    rows = _csv_rows(tmp_path / "csv" / "partitions.csv")
    for row in rows:
        if (row["application"], row["topic"], row["partition"]) in {("orders-app", "orders", "0"), ("billing", "invoices", "2")}:
            row["leader_rack"] = "r9"
    _write_csv_rows(tmp_path / "csv" / "partitions.csv", rows)
    for record in read_table_records(tmp_path / "csv"):
        assert record.input_error is None
        with pytest.raises(InvalidInputError) as caught:
            problem_from_data(json.loads(record.document), record.source)
        partition = "orders-0" if record.name == "orders-app" else "invoices-2"
        assert f"the leader's rack 'r9' of partition {partition} is not among its replica racks" in str(caught.value)


def test_csv_refuses_racks_it_could_not_tell_from_none(tmp_path):
    empty_racks = dict(CONSUMER, topics=[{"name": "t", "partitions": 2, "replica_racks": [[], []], "partition_bytes_per_second": [1, 2]}])
    empty_racks["members"] = [{"id": "m", "subscriptions": ["t"]}]
    problem = problem_from_data(empty_racks)
    with pytest.raises(ValueError, match="topic 't': the topic lists replica racks, every one empty, and a rate or leader for every partition"):
        write_tables([problem], tmp_path / "csv", format="csv")
    write_tables([problem], tmp_path / "parquet")  # Parquet holds an empty list as one
    assert _read_back(tmp_path / "parquet")["billing"] == problem
    # With a partition that gives neither rate nor leader, CSV can: its bare row says "racks".
    leaders = dict(empty_racks, topics=[{"name": "t", "partitions": 2, "replica_racks": [[], []], "leader_racks": ["r1", None]}])
    write_tables([problem_from_data(leaders)], tmp_path / "leaders", format="csv")
    assert _read_back(tmp_path / "leaders")["billing"] == problem_from_data(leaders)


@pytest.mark.parametrize("format", ["parquet", "csv"])
def test_tables_are_written_the_same_on_every_run(tmp_path, format):
    for run in ("first", "second"):
        write_tables(_problems(), tmp_path / run, format=format)
    first = sorted(p.name for p in (tmp_path / "first").iterdir())
    assert first == sorted(p.name for p in (tmp_path / "second").iterdir()) and len(first) == len(TABLES)
    for name in first:
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes(), name
    shutil.rmtree(tmp_path / "second")
