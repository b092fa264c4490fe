"""`--solver kafka` against Apache Kafka's own Java assignors, case by case (issues 11 and 13).

The cases are read from `../shared/kafka-parity/` (see kafka_parity.py); without them every test
here is skipped with the place looked at. The figures are in docs/validation.md ("Kafka parity").
"""

from __future__ import annotations

import pytest

from tests.parity.kafka_parity import PARITY_DIR, check, consumer_cases, streams_cases, streams_group_cases

_ABSENT = f"Kafka's golden cases are not at {PARITY_DIR} (set KAO_KAFKA_PARITY to their folder)"


def _params(cases):
    if not cases:
        return [pytest.param(None, marks=pytest.mark.skip(reason=_ABSENT), id="absent")]
    return [pytest.param(path, id=path.name.removesuffix(".json")) for path in cases]


@pytest.mark.parametrize("path", _params(streams_cases() if PARITY_DIR.is_dir() else []))
def test_streams_assignment_is_kafkas(path):
    outcome = check(path)
    assert outcome.status == "exact", outcome.detail


@pytest.mark.parametrize("path", _params(consumer_cases() if PARITY_DIR.is_dir() else []))
def test_consumer_assignment_is_kafkas(path):
    outcome = check(path)
    assert outcome.passed, f"{outcome.status}: {outcome.detail}"


@pytest.mark.parametrize("path", _params(streams_group_cases() if PARITY_DIR.is_dir() else []))
def test_streams_group_assignment_is_kafkas(path):
    """KIP-1071: per member (stream thread), and per client; order-sensitive cases on metrics."""
    outcome = check(path)
    assert outcome.status in ("exact", "metrics"), f"{outcome.status}: {outcome.detail}"
