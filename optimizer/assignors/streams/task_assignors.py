"""Which of Kafka Streams' classic task assignors runs: `task.assignor.class`.

`high_availability` is KIP-441's HighAvailabilityTaskAssignor (Kafka's default), `sticky` the legacy
StickyTaskAssignor, `kip924_sticky` KIP-924's public StickyTaskAssignor
(`org.apache.kafka.streams.processor.assignment.assignors`).
"""

from __future__ import annotations

from collections.abc import Callable

from optimizer.assignors.streams.high_availability import StreamsAssignorResult, high_availability_assign
from optimizer.assignors.streams.kip924_sticky import kip924_sticky_assign, kip924_sticky_assign_4_4
from optimizer.assignors.streams.sticky_task import sticky_task_assign
from optimizer.assignors.table import AssignorTable
from optimizer.model.releases import EARLIEST
from optimizer.model.streams import StreamsProblem, TaskAssignor

TaskAssignorRun = Callable[[StreamsProblem], StreamsAssignorResult]

TASK_ASSIGNORS: AssignorTable[TaskAssignor, TaskAssignorRun] = AssignorTable(
    "task.assignor.class",
    {
        (TaskAssignor.HIGH_AVAILABILITY, EARLIEST): high_availability_assign,
        (TaskAssignor.STICKY, EARLIEST): sticky_task_assign,
        (TaskAssignor.KIP924_STICKY, EARLIEST): kip924_sticky_assign,
        (TaskAssignor.KIP924_STICKY, (4, 4, 0)): kip924_sticky_assign_4_4,
    },
)
"""The classic protocol's task assignors, run by the group leader's StreamsPartitionAssignor."""
