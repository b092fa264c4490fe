"""Kafka's own assignor classes as the oracle: the pinned jars run on the project's problems, so
that `--solver kafka` is checked against the real thing, not only against frozen answers.

`classic_consumer_answers(problems)` runs each group's `partition.assignment.strategy` (the
client's RangeAssignor, RoundRobinAssignor, StickyAssignor or CooperativeStickyAssignor) through
the adapter `kao.jvm.ConsumerAssignors`, all groups in one JVM. Kafka's inputs are built from the
problem's fields as the group leader has them: the members' subscriptions, `client.rack`, owned
partitions and generation (the eager sticky assignor's as its user data, as its consumers send
them), the partitions' replicas in their racks; members enter the leader's HashMap in the
problem's order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from optimizer.kafka.jvm import run_java
from optimizer.model.consumer import ConsumerProblem, GroupProtocol
from optimizer.model.ids import partition_id, partition_key

Answer = dict[str, tuple[str, ...]] | str
"""Each member's partitions (ids, sorted as Kafka returned them), or the error Kafka raised."""


def _case(problem: ConsumerProblem) -> dict[str, Any]:
    if problem.config.group_protocol != GroupProtocol.CLASSIC:
        raise ValueError(f"{problem.name}: the classic consumer assignors run under group.protocol=classic only")
    return {
        "assignor": str(problem.config.partition_assignment_strategy),
        "topics": [
            {"name": t.name, "partitions": t.partitions, "replica_racks": None if t.replica_racks is None else [list(r) for r in t.replica_racks]}
            for t in problem.topics
        ],
        "members": [
            {
                "id": m.id,
                "rack": m.rack,
                "subscriptions": list(m.subscriptions),
                "owned": [list(partition_key(p)) for p in m.owned_partitions],
                "generation": m.generation,
            }
            for m in problem.members
        ],
    }


def classic_consumer_answers(problems: Sequence[ConsumerProblem], timeout: float = 300.0) -> list[Answer]:
    """Kafka's classic assignor's answer for each problem (as given, not normalised), in order."""
    if not problems:
        return []
    request = json.dumps({"cases": [_case(p) for p in problems]})
    output = run_java("kao.jvm.ConsumerAssignors", [], timeout=timeout, heap_mb=512, stdin=request)
    answers: list[Answer] = []
    for answer in json.loads(output)["answers"]:
        if "error" in answer:
            answers.append(str(answer["error"]))
        else:
            answers.append({member: tuple(partition_id(t, p) for t, p in parts) for member, parts in answer["assignment"].items()})
    return answers
