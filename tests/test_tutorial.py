"""docs/tutorial.md runs as written, block after block, and shows what it says."""

from __future__ import annotations

import re

from optimizer.money import hours_text
from optimizer.text import whole
from tests.conftest import REPO
from tests.docs_figures import unchecked_numbers


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
    # Every figure the text quotes is the one the code gives, and the text quotes no other.
    comparison = namespace["comparison"]
    goal = {g.name: g for g in comparison.goals}
    skew = comparison.figures()["load_skew"]
    kafka_plan, exact_plan = comparison.kafka.plan, comparison.exact.plan
    balance, cross, standby = goal["balance"], goal["cross_rack_traffic"], goal["standby_rack_diversity"]
    claims = [
        f"its balance now is off ({whole(balance.kafka_now)} against the exact {whole(balance.exact_now)})",
        f"active tasks per thread differ by {whole(skew['exact'])} against Kafka's {whole(skew['kafka'])})",
        f"Kafka's target reads fewer partitions across racks ({whole(cross.kafka)} against {whole(cross.exact)})",
        f"puts {whole(standby.kafka)} standbys on a rack that already has a copy of their task, where the exact target puts "
        + ("none" if standby.exact == 0 else whole(standby.exact)),
        f"the exact value {whole(cross.exact)} is proven optimal only under the earlier goals",
        f"beside Kafka's {whole(cross.kafka)}.",
        f"Kafka's plan needs {kafka_plan.followup_rebalances} probing rebalances (at least {hours_text(kafka_plan.seconds_to_target)}) "
        f"and {kafka_plan.warmups} warm-ups to reach its target, the exact one {exact_plan.followup_rebalances} and "
        f"{exact_plan.warmups} (at least {hours_text(exact_plan.seconds_to_target)})",
    ]
    assert unchecked_numbers(text, claims) == ([], [])
