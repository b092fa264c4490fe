"""The demo's own arithmetic (optimizer/service/demo.py), without a cluster: which bytes are
cross-rack, what a window received, whether a group runs what the service answered. The demo itself
runs in bench/demo.py (minutes per mode), its figures in docs/benchmarks.md."""

from __future__ import annotations

import json
from pathlib import Path

from optimizer.service.demo import APPLICATION, GROUP, _applied_as_answered, _cross_rack, _delta, _restores, table


def test_a_byte_is_cross_rack_when_the_broker_is_in_another_rack_than_the_client() -> None:
    brokers = {1: "a", 2: "b", 3: "c"}
    received = {"0": {"1": 100, "2": 30}, "1": {"2": 50, "3": 7}}
    assert _cross_rack(received, {"0": "a", "1": "b"}, brokers) == (30 + 7, 187)


def test_a_window_is_the_counters_growth_and_a_client_new_in_it_counts_whole() -> None:
    before = {"0": {"1": 100}}
    after = {"0": {"1": 150, "2": 10}, "1": {"3": 5}}
    assert _delta(after, before) == {"0": {"1": 50, "2": 10}, "1": {"3": 5}}


def test_the_group_runs_what_the_service_answered_last(tmp_path: Path) -> None:
    answers = tmp_path / "answers"
    answers.mkdir()

    def record(name: str, kind: str, assignment: dict[str, object], source: str = "exact") -> None:
        answer = {"kind": kind, "source": source, "assignment": assignment}
        (answers / name).write_text(json.dumps({"answer": answer}), encoding="utf-8")

    record("1.json", "consumer_group", {"members": {"m1": [["ID", 0]], "m2": [["ID", 1]]}})
    record("2.json", "consumer_group", {"members": {"m1": [["ID", 1]], "m2": [["ID", 0]]}})
    record("3.json", "consumer_group", {"members": {"m1": [], "m2": []}}, source="kafka")  # not applied by the plug-ins
    record("4.json", "streams_task_assignor", {"clients": {"p1": {"active": ["0_0"], "standby": ["0_1"]}}, "followup_rebalance_ms": None})
    group = {"members": [{"member_id": "m1", "assignment": [["clicks", 1]]}, {"member_id": "m2", "assignment": [["clicks", 0]]}], "topic_ids": {"clicks": "ID"}}
    streams = {"instances": [{"process_id": "p1", "running": True, "active": ["0_0"], "standby": ["0_1"]}]}
    assert _applied_as_answered(tmp_path, streams, group) == {APPLICATION: True, GROUP: True}
    group["members"][0]["assignment"] = [["clicks", 0], ["clicks", 1]]
    assert _applied_as_answered(tmp_path, streams, group)[GROUP] is False


def test_the_table_has_a_row_per_group_and_assignor() -> None:
    row = {"cross_rack_bytes": 2_000_000, "bytes": 5_000_000, "predicted_cross_rack_bytes": 1_900_000}
    run = {
        "kafka": {"groups": {APPLICATION: row, GROUP: row}, "streams_instances": {"rebalances": 3, "restored_records": 0, "restore_seconds": 1.5}},
        "plugins": {"groups": {APPLICATION: row, GROUP: row}, "streams_instances": {"rebalances": 9, "restored_records": 10, "restore_seconds": 2.0}},
        "applied_as_answered": {APPLICATION: True, GROUP: False},
    }
    lines = table({"modes": {"on": run}})
    assert len(lines) == 5 and "2.00 MB" in lines[1] and "1.90 MB" in lines[1] and lines[4].endswith("NO")
    assert _restores({"instances": [{"rebalances": 5, "restored_records": 7, "restore_seconds": 1.25}]}, None)["rebalances"] == 5
