"""Problems and solutions: frozen pydantic models with Kafka's field names and config keys."""

from optimizer.model.consumer import AssignmentStrategy, ConsumerConfig, ConsumerProblem, Member, Topic
from optimizer.model.issues import Issue, Severity
from optimizer.model.metrics import ConsumerMetrics, Metrics, StreamsMetrics
from optimizer.model.normalize import Normalized, normalize
from optimizer.model.problem import (
    Problem,
    problem_from_data,
    problem_to_data,
    solution_from_data,
    solution_to_data,
)
from optimizer.model.solution import (
    ClientAssignment,
    GoalResult,
    GoalStatus,
    MemberAssignment,
    PlanRound,
    PluginInfo,
    Solution,
    SolverInfo,
    TransitionPlan,
)
from optimizer.model.streams import (
    Client,
    RackAwareStrategy,
    StreamsConfig,
    StreamsProblem,
    Task,
    TopicPartition,
)

__all__ = [
    "AssignmentStrategy",
    "Client",
    "ClientAssignment",
    "ConsumerConfig",
    "ConsumerMetrics",
    "ConsumerProblem",
    "GoalResult",
    "GoalStatus",
    "Issue",
    "Member",
    "MemberAssignment",
    "Metrics",
    "Normalized",
    "PlanRound",
    "PluginInfo",
    "Problem",
    "RackAwareStrategy",
    "Severity",
    "Solution",
    "SolverInfo",
    "StreamsConfig",
    "StreamsMetrics",
    "StreamsProblem",
    "Task",
    "Topic",
    "TopicPartition",
    "TransitionPlan",
    "normalize",
    "problem_from_data",
    "problem_to_data",
    "solution_from_data",
    "solution_to_data",
]
