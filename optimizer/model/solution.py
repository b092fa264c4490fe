"""Solutions: who holds what, plus how it was found (goals, solver, plugins) and its metrics."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Literal

from pydantic import Field, TypeAdapter, ValidationError, field_validator

from optimizer.model.base import FrozenModel
from optimizer.model.ids import Name, StrictBool
from optimizer.model.issues import Issue
from optimizer.model.metrics import Metrics

SOLUTION_FORMAT: Final = "kafka-assignment-solution/v1"
_METRICS: TypeAdapter[Metrics] = TypeAdapter(Metrics)


class MemberAssignment(FrozenModel):
    """What one member (stream thread) of a KIP-1071 streams group holds."""

    active: tuple[Name, ...] = ()
    """Active task ids."""
    standby: tuple[Name, ...] = ()
    """Standby task ids."""
    warmup: tuple[Name, ...] = ()
    """Warm-up task ids."""


class ClientAssignment(FrozenModel):
    """What one client (Streams) or member (consumer) holds."""

    active: tuple[Name, ...] = ()
    """Active task ids (Streams) or partition ids like `orders-3` (consumer)."""
    standby: tuple[Name, ...] = ()
    """Standby task ids (Streams only)."""
    warmup: tuple[Name, ...] = ()
    """Warm-up task ids: extra standbys moving a task to this client (KIP-441; Streams only)."""
    members: dict[Name, MemberAssignment] = Field(default_factory=dict)
    """Streams groups (KIP-1071) only: member id -> what that stream thread holds. The client's
    lists are the unions over its members."""


class GoalStatus(StrEnum):
    """How far a goal's value is proven. `feasible` and `optimal` are never conflated. The exact
    engine's stages (and its back-ends) use optimal, feasible, time_limit and infeasible; `heuristic`
    marks a value of Kafka's assignment."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    HEURISTIC = "heuristic"
    INFEASIBLE = "infeasible"
    TIME_LIMIT = "time_limit"


class GoalResult(FrozenModel):
    """One goal's outcome in a solve."""

    name: Name
    """Goal name, for example `cross_rack_traffic`."""
    value: float | None = None
    """The goal's value on the target: the assignment the plan ends at (`Solution.target`, or the
    assignment itself when it has none); lower is better."""
    value_now: float | None = None
    """The goal's value on the assignment applied now (`Solution.assignment`)."""
    status: GoalStatus
    """Whether `value` is proven optimal, only feasible, from a heuristic, or missing."""
    bound: float | None = None
    """Best proven lower bound, when the solver reports one."""
    gap: float | None = None
    """(value - bound) / max(1, |value|): 0 when proven optimal."""
    seconds: float = Field(0.0, ge=0)
    """Wall time spent on this goal."""
    unit: Name | None = None
    """What `value` counts, the goal's `value_unit`: `bytes_per_second`, `partitions`, `offsets`; unset
    for a plain count or score."""


class PluginInfo(FrozenModel):
    """A plugin that was loaded while solving."""

    name: Name
    version: str = ""


class SolverInfo(FrozenModel):
    """Which solver produced the solution, with which options and plugins."""

    name: Name
    """`kafka`, `kip925`, `exact`, `cpsat`, `milp`, `flow`, or `input` for a hand-written file."""
    version: str = ""
    """Version of kafka-assignment-optimizer that produced it."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Options the solver ran with (goals, time limit, ...)."""
    plugins: tuple[PluginInfo, ...] = ()
    """Plugins loaded (name, version)."""


class PlanRound(FrozenModel):
    """One rebalance on the way to the target: round 1 is the rebalance now, the others are the
    follow-up (probing) rebalances that Kafka schedules while warm-ups remain."""

    round: int = Field(ge=1)
    """1: the assignment applied now; 2, 3, ...: each follow-up rebalance."""
    warmups: dict[Name, tuple[Name, ...]] = Field(default_factory=dict)
    """Client -> tasks given a warm-up replica this round (at most `max.warmup.replicas` in all)."""
    moves: int = Field(0, ge=0)
    """Actives (Streams tasks, consumer partitions) on another client than the round before."""
    restore_offsets: int = Field(0, ge=0)
    """Changelog offsets clients start replaying this round (new actives, standbys, warm-ups)."""


class TransitionPlan(FrozenModel):
    """How the assignment applied now reaches the target (docs/transition.md)."""

    rounds: tuple[PlanRound, ...] = ()
    """Every rebalance from now until the target holds; the last one applies the target."""
    followup_rebalances: int = Field(0, ge=0)
    """Rebalances after this one until the target holds (Streams: probing rebalances)."""
    warmups: int = Field(0, ge=0)
    """Warm-up replicas over all rounds."""
    restore_offsets: int = Field(0, ge=0)
    """Changelog offsets replayed over all rounds (where known)."""
    restore_unknown: int = Field(0, ge=0)
    """Copies whose restore volume is unknown (the task's `changelog_end_offset` is not given)."""
    seconds_to_target: float = Field(0.0, ge=0)
    """Follow-up rebalances x `probing.rebalance.interval.ms` (Streams; consumers rejoin at
    once: 0). A lower bound: it assumes every warm-up catches up within one interval."""


class Solution(FrozenModel):
    """An assignment for one problem, with how it was obtained."""

    format: Literal["kafka-assignment-solution/v1"] = SOLUTION_FORMAT
    """File format and version."""
    problem: Name | None = None
    """Name of the problem this solves."""
    kind: Literal["streams", "consumer"] | None = None
    """Kind of the problem this solves."""
    assignment: dict[Name, ClientAssignment]
    """Client or member id -> what it holds."""
    followup_rebalance: StrictBool = False
    """Whether a follow-up (probing) rebalance is needed: warm-ups or withheld partitions remain."""
    target: dict[Name, ClientAssignment] | None = None
    """The assignment the plan leads to, when it is not `assignment` itself (goal values are the
    target's; `metrics` are those of `assignment`, the one applied now)."""
    plan: TransitionPlan | None = None
    """Rounds, warm-ups and restore volume from `assignment` to the target."""
    target_metrics: Metrics | None = None
    """The evaluator's metrics of `target` (None when there is none: `metrics` are the target's)."""
    goals: tuple[GoalResult, ...] = ()
    """Per goal: value, status, bound, seconds."""
    metrics: Metrics | None = None
    """Evaluator metrics of this assignment: `StreamsMetrics` or `ConsumerMetrics`, None until
    it has been evaluated."""
    solver: SolverInfo | None = None
    """Who produced it."""
    warnings: tuple[Issue, ...] = ()
    """Warnings about the problem (things Kafka tolerates) met while solving."""

    @field_validator("metrics", "target_metrics", mode="before")
    @classmethod
    def _unknown_metrics_are_none(cls, value: Any) -> Any:
        # Metrics are the evaluator's output, recomputed whenever they matter: a file's metrics
        # that are not a complete set of today's (`{}`, the old default; a hand-written subset; a
        # set from another version) read as "not evaluated" rather than rejecting the solution.
        if not isinstance(value, dict):
            return value  # a model already, None, or not an object at all (rejected as such)
        try:
            return _METRICS.validate_python(value)
        except ValidationError:
            return None
