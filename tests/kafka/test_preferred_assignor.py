"""How Kafka 4.4's group coordinator picks a KIP-848 group's server assignor while members switch to
`group.remote.assignor=optimizer`, on Kafka's own `ConsumerGroup` class (`kao.jvm.PreferredAssignor`).

The coordinator keeps, per group, how many members name each server assignor; the preferred one is
the most named (`ConsumerGroup.preferredServerAssignor`). From 4.4 (KAFKA-20434), every heartbeat
computes it again over a copy of those counts (`computePreferredServerAssignor`) and bumps the group
epoch when the two differ (`GroupMetadataManager.hasPreferredServerAssignorChanged`). When two
assignors are named by as many members, each of the two picks the first maximum in its own map's
order, and the orders differ: the group epoch is bumped at every heartbeat and the group does not
settle (seen on the sandbox: docs/apply.md, "Rolling out"). These tests pin down what docs/apply.md
says about it: where the tie breaks differently (Kafka's own assignors included), and that the
rollout it gives never reaches such a tie.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from optimizer.kafka import jvm

pytestmark = pytest.mark.kafka

PLUGIN = "optimizer"
"""The name `kao.plugin.OptimizerConsumerGroupAssignor` gives itself (Plugin.NAME)."""
SIZES = range(1, 13)
"""Group sizes tried."""


def _run(scenarios: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """Each scenario's steps run on a fresh ConsumerGroup: per step, the current preferred assignor and each member's
    recomputed one."""
    output = jvm.run_java("kao.jvm.PreferredAssignor", stdin="".join(json.dumps(steps) + "\n" for steps in scenarios))
    return [json.loads(line) for line in output.splitlines() if line.strip()]


def _flips(after: dict[str, Any]) -> list[str]:
    """The members whose heartbeats bump the group epoch after this step: their recomputed assignor is not the current one."""
    return sorted(member for member, recomputed in after["recomputed"].items() if recomputed != after["current"])


def _rolling(size: int, old: str | None, new: str | None, join_first: bool) -> list[dict[str, Any]]:
    """A group of `size` members naming `old` (None: no assignor), then each replaced by one naming `new`: the new one
    joins before the old one leaves (`join_first`), or after."""
    steps: list[dict[str, Any]] = [{"join": f"old-{i:02}", "assignor": old} for i in range(size)]
    for i in range(size):
        replace: list[dict[str, Any]] = [{"join": f"new-{i:02}", "assignor": new}, {"leave": f"old-{i:02}"}]
        steps += replace if join_first else replace[::-1]
    return steps


def test_a_tie_between_uniform_and_the_plugin_bumps_the_epoch_at_every_heartbeat() -> None:
    """The stall seen on the sandbox: three members naming uniform replaced one by one; at two against two, every
    member's heartbeat recomputes "optimizer" while the group's preferred assignor stays "uniform"."""
    [steps] = _run([_rolling(3, "uniform", PLUGIN, join_first=True)])
    tie = steps[5]  # after the three joined, new-00 joined, old-00 left and new-01 joined: two of each
    assert sorted(tie["recomputed"]) == ["new-00", "new-01", "old-01", "old-02"]
    assert tie["current"] == "uniform" and _flips(tie) == sorted(tie["recomputed"]), tie
    assert all(not _flips(after) for number, after in enumerate(steps) if number != 5), steps


def test_kafkas_own_assignors_tie_the_same_way() -> None:
    """Not the plug-in's name: one member naming range and one naming uniform, and the range member's heartbeats
    recompute range while the group's preferred assignor is uniform."""
    [steps] = _run([[{"join": "r", "assignor": "range"}, {"join": "u", "assignor": "uniform"}]])
    assert steps[-1]["current"] == "uniform" and _flips(steps[-1]) == ["r"], steps


def test_members_that_name_no_assignor_switch_one_by_one_without_a_tie() -> None:
    """The rollout docs/apply.md gives for members that name no assignor (Kafka's default): replaced one by one by
    members naming the plug-in, in either order, at every size: no step has a member whose heartbeats bump the epoch,
    and the plug-in is the group's assignor from the first member that names it to the end."""
    scenarios = [_rolling(size, None, PLUGIN, join_first) for size in SIZES for join_first in (True, False)]
    for scenario, steps in zip(scenarios, _run(scenarios), strict=True):
        flipped = [(number, _flips(after)) for number, after in enumerate(steps) if _flips(after)]
        assert not flipped, (scenario, flipped)
        named = next(number for number, step in enumerate(scenario) if step.get("assignor") == PLUGIN)
        assert [after["current"] for after in steps] == [None] * named + [PLUGIN] * (len(steps) - named), steps


def test_members_that_name_an_assignor_switch_in_two_rolls_without_a_tie() -> None:
    """The two-roll rollout for members that name an assignor (uniform or range): first each replaced by one naming
    none, then each of those by one naming the plug-in. No step has a member whose heartbeats bump the epoch; the
    group keeps the named assignor until its last member leaves. The one roll from uniform to the plug-in reaches a tie
    that bumps the epoch, at every size from two (at one, only when the old member leaves first)."""
    scenarios = []
    for old in ("uniform", "range"):
        for size in SIZES:
            first = _rolling(size, old, None, join_first=True)
            second = [{**step, "join": step["join"].replace("new-", "next-")} if "join" in step else {"leave": step["leave"].replace("old-", "new-")}
                      for step in _rolling(size, None, PLUGIN, join_first=True)[size:]]  # fmt: skip
            scenarios.append(first + second)
    results = _run(scenarios)
    for scenario, steps in zip(scenarios, results, strict=True):
        flipped = [(number, _flips(after)) for number, after in enumerate(steps) if _flips(after)]
        assert not flipped, (scenario, flipped)
        size = sum(1 for step in scenario if str(step.get("join", "")).startswith("old-"))
        old = scenario[0]["assignor"]
        last_old_leaves = size + 2 * size - 1
        assert all(after["current"] == old for after in steps[:last_old_leaves]), steps
        assert steps[last_old_leaves]["current"] is None and steps[-1]["current"] == PLUGIN, steps
    one_roll = _run([_rolling(size, "uniform", PLUGIN, join_first) for size in SIZES if size > 1 for join_first in (True, False)])
    assert all(any(_flips(after) for after in steps) for steps in one_roll), "a one-roll switch from uniform to the plug-in with no tie"


def test_rolling_back_to_no_assignor_never_ties() -> None:
    """docs/apply.md's rollback: consumers naming the plug-in replaced one by one by consumers naming none. No step
    has a member whose heartbeats bump the epoch; the plug-in stays the group's assignor until its last member leaves."""
    scenarios = [_rolling(size, PLUGIN, None, join_first) for size in SIZES for join_first in (True, False)]
    for scenario, steps in zip(scenarios, _run(scenarios), strict=True):
        assert not [after for after in steps if _flips(after)], scenario
        last = max(number for number, step in enumerate(scenario) if step.get("leave", "").startswith("old-"))
        assert all(after["current"] == PLUGIN for after in steps[:last]) and steps[last]["current"] is None, steps
