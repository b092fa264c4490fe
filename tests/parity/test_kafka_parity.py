"""`--solver kafka` against Apache Kafka's own Java assignors, case by case (issues 11 and 13).

The cases are read from `../shared/kafka-parity/` (see kafka_parity.py); without them every test
here is skipped with the place looked at. The figures are in docs/validation.md ("Kafka parity").
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from optimizer.assignors.streams.group.spec import spec_from_golden
from optimizer.assignors.streams.group.sticky import sticky_assign
from tests.parity.kafka_parity import (
    PARITY_DIR,
    TASK_ORDER_HARNESS,
    check,
    check_kip924,
    consumer_cases,
    kip848_cases,
    kip924_cases,
    streams_cases,
    streams_group_cases,
)

_ABSENT = f"Kafka's golden cases are not at {PARITY_DIR} (set KAO_KAFKA_PARITY to their folder)"


def _params(cases):
    if not cases:
        return [pytest.param(None, marks=pytest.mark.skip(reason=_ABSENT), id="absent")]
    return [pytest.param(path, id=path.name.removesuffix(".json")) for path in cases]


@pytest.mark.parametrize("path", _params(streams_cases() if PARITY_DIR.is_dir() else []))
def test_streams_assignment_is_kafkas(path):
    outcome = check(path)
    assert outcome.status == "exact" or (outcome.status, outcome.detail) == ("documented", TASK_ORDER_HARNESS), outcome.detail


@pytest.mark.parametrize("path", _params(consumer_cases() if PARITY_DIR.is_dir() else []))
def test_consumer_assignment_is_kafkas(path):
    outcome = check(path)
    assert outcome.passed, f"{outcome.status}: {outcome.detail}"


@pytest.mark.parametrize("path", _params(kip924_cases() if PARITY_DIR.is_dir() else []))
def test_kip924_assignment_is_kafkas(path):
    """Exact wherever Kafka's answer does not depend on its JVM's identity hashes; where it does,
    the actives exact and the same standby count per task (decision 55)."""
    outcome = check_kip924(path)
    assert outcome.status in ("exact", "standby-order"), f"{outcome.status}: {outcome.detail}"


@pytest.mark.parametrize("path", _params(kip848_cases() if PARITY_DIR.is_dir() else []))
def test_kip848_assignment_is_kafkas(path):
    """KIP-848's uniform and range; order-sensitive cases on metrics; where the harness filled the
    previous targets' sets one partition at a time (not as the coordinator copies them from its
    records), with sets filled so."""
    outcome = check(path)
    assert outcome.status in ("exact", "metrics", "documented"), f"{outcome.status}: {outcome.detail}"


@pytest.mark.parametrize("path", _params(streams_group_cases() if PARITY_DIR.is_dir() else []))
def test_streams_group_assignment_is_kafkas(path):
    """KIP-1071: per member (stream thread), and per client; order-sensitive cases on metrics."""
    outcome = check(path)
    assert outcome.status in ("exact", "metrics"), f"{outcome.status}: {outcome.detail}"


def _variant_params():
    cases = [p for p in streams_group_cases() if "balanced" not in p.name] if PARITY_DIR.is_dir() else []
    with_variants = [p for p in cases if json.loads(p.read_text()).get("kafka_variants")]
    return _params(with_variants) if cases else _params([])


@pytest.mark.parametrize("path", _variant_params())
def test_streams_group_sticky_under_kafkas_other_member_orders(path):
    """Where Kafka's answer changed with the order members were put into its HashMap, each
    recorded answer is reproduced from the members in that order (the problem format fixes one
    order: clients in order, threads in order)."""
    case = json.loads(path.read_text())
    base = spec_from_golden(case["streams_input"])
    by_id = {m.member_id: m for m in base.members}
    for name, variant in case["kafka_variants"].items():
        got = sticky_assign(dataclasses.replace(base, members=tuple(by_id[i] for i in variant["member_order"])))
        for member in base.members:
            want = variant["members"].get(member.member_id, {})
            for role in ("active", "standby"):
                assert set(getattr(got[member.member_id], role)) == set(want.get(role, ())), (name, member.member_id, role)
