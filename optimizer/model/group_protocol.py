"""The same problem under Kafka's classic protocol and under the new one (KIP-848, KIP-1071).

`with_protocol(problem, "classic")` runs the client-side assignor (`partition.assignment.strategy`,
`task.assignor.class`); `with_protocol(problem, "new")` runs the broker-side one: KIP-848's
`group.remote.assignor` (`uniform` unless configured) for a consumer group, KIP-1071's
`streams.assignor.name` (`sticky` unless configured) for a Streams application. The rest of the
config is kept, so `compare --protocols` and the pipeline's `kafka:classic` / `kafka:new` columns
compare one group under both, each reading only the keys Kafka reads under that protocol.
"""

from __future__ import annotations

from typing import Final, Literal

from optimizer.model.consumer import ConsumerProblem, GroupProtocol
from optimizer.model.problem import Problem, problem_from_data, problem_to_data
from optimizer.model.streams import StreamsGroupProtocol, StreamsProblem

ProtocolName = Literal["classic", "new"]
PROTOCOLS: Final[tuple[ProtocolName, ...]] = ("classic", "new")

def with_protocol(problem: Problem, protocol: ProtocolName) -> Problem:
    """`problem` with its `group.protocol` set to the classic one or to the new one of its kind."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    data = problem_to_data(problem)
    config = data.setdefault("config", {})
    if isinstance(problem, ConsumerProblem):
        config["group.protocol"] = "classic" if protocol == "classic" else "consumer"
        if protocol == "classic":
            config.pop("group.remote.assignor", None)  # Kafka refuses it under the classic protocol
    else:
        config["group.protocol"] = "classic" if protocol == "classic" else "streams"
    # Validated again: a protocol has rules of its own (InvalidInputError naming each problem).
    return problem_from_data(data, problem.name or "<problem>")


def assignor_label(problem: StreamsProblem | ConsumerProblem) -> str:
    """The assignor `--solver kafka` runs for `problem`, as a user would name it."""
    if isinstance(problem, ConsumerProblem):
        consumer = problem.config
        if consumer.group_protocol == GroupProtocol.CONSUMER:
            return f"KIP-848 {consumer.remote_assignor}"
        return f"classic {consumer.partition_assignment_strategy}"
    streams = problem.config
    if streams.group_protocol == StreamsGroupProtocol.STREAMS:
        return f"KIP-1071 {streams.streams_assignor_name}"
    return f"classic {streams.task_assignor_class}"
