"""docs/tutorial.md runs as written, block after block, and shows what it says."""

from __future__ import annotations

import re

from tests.conftest import REPO


def test_the_tutorial_runs(monkeypatch, capsys):
    text = (REPO / "docs" / "tutorial.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 5
    monkeypatch.chdir(REPO)
    namespace: dict = {"__name__": "tutorial"}
    for number, code in enumerate(blocks, 1):
        exec(compile(code, f"docs/tutorial.md block {number}", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "kip925-three-clients" in printed or "clients," in printed
    assert "Kafka heuristic vs exact" in printed
    # The custom goal ran through the engine and helped.
    assert namespace["careful"].goals[2].name == "restore_records"
    assert namespace["after"] <= namespace["before"]
    # The exact engine matched or beat the reference on the reference's own cost.
    assert namespace["ours"].goals[1].value <= namespace["kip925"].goals[0].value
    # The plans' figures the text quotes are the ones the code gives.
    flat = " ".join(text.split())
    kafka_plan, exact_plan = namespace["comparison"].kafka.plan, namespace["comparison"].exact.plan
    assert f"Kafka's plan needs {kafka_plan.followup_rebalances} probing rebalances" in flat
    assert f"{kafka_plan.warmups} warm-ups to reach its target, the exact one {exact_plan.followup_rebalances} and {exact_plan.warmups}." in flat
