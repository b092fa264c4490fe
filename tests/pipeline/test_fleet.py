"""The sample fleet is what its generator writes, and it is varied enough to be a sample."""

from __future__ import annotations

import gzip
import json

from optimizer.pipeline.fleet import sample_fleet, write_sample_fleet
from tests.conftest import EXAMPLES


def test_the_bundled_fleet_is_the_generators_output(tmp_path):
    written = tmp_path / "fleet.jsonl.gz"
    assert write_sample_fleet(written, seed=2026, applications=200, groups=100, broken=2) == 302
    assert written.read_bytes() == (EXAMPLES / "fleet" / "fleet.jsonl.gz").read_bytes()


def test_the_fleet_is_varied():
    documents = list(sample_fleet(seed=2026, applications=200, groups=100, broken=2))
    with gzip.open(EXAMPLES / "fleet" / "fleet.jsonl.gz", "rt") as lines:
        assert [json.loads(line) for line in lines] == documents
    streams = [d for d in documents if d["kind"] == "streams" and not d["name"].startswith("broken")]
    groups = [d for d in documents if d["kind"] == "consumer" and not d["name"].startswith("broken")]
    assert len(streams) == 200 and len(groups) == 100
    assert len({d["name"] for d in documents}) == len(documents)
    sizes = sorted(len(d["tasks"]) for d in streams)
    assert sizes[0] <= 8 and sizes[-1] >= 100
    config = [d.get("config", {}) for d in streams]  # Kafka's defaults are left out
    assert {c.get("num.standby.replicas", 0) for c in config} == {0, 1, 2}
    assert any(c.get("rack.aware.assignment.tags") for c in config)
    assert any(all("rack" not in c for c in d["clients"]) for d in streams)
    assert {d.get("config", {}).get("partition.assignment.strategy", "range") for d in groups} == {"sticky", "cooperative-sticky", "range", "roundrobin"}
