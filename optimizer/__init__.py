"""kafka-assignment-optimizer: Kafka-faithful and exact assignments for Kafka Streams and consumers.

User code imports from here only:

    from optimizer import load_problem, evaluate
    problem = load_problem("app.json")

A goal plugin subclasses `Goal`, encodes on the members declared by `StreamsFormulationAPI`,
`ConsumerFormulationAPI` and the flow terms protocols, and registers with `@hookimpl`.
"""

from optimizer.compare import Comparison, ProtocolComparison, compare, compare_protocols
from optimizer.costs import StreamsIndex
from optimizer.engine.sequence import Tolerance
from optimizer.errors import (
    ExitCode,
    GoalError,
    InvalidInputError,
    KafkaAssignmentError,
    NoSolutionError,
    PipelineError,
    PluginError,
    SolverError,
    SolverUnavailableError,
    TimeLimitReached,
    UsageError,
)
from optimizer.evaluate import Evaluation, evaluate
from optimizer.formulation import LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.model import (
    ClientAssignment,
    ConsumerMetrics,
    ConsumerProblem,
    GoalStatus,
    Metrics,
    Problem,
    Solution,
    StreamsMetrics,
    StreamsProblem,
    normalize,
    problem_from_data,
)
from optimizer.model.group_protocol import PROTOCOLS, with_protocol
from optimizer.protocols import (
    ConsumerFlowTermsAPI,
    ConsumerFormulationAPI,
    FlowTermsAPI,
    FormulationAPI,
    LinearModelAPI,
    StreamsFlowTermsAPI,
    StreamsFormulationAPI,
    StreamsVariablesAPI,
)
from optimizer.rebalance import next_rebalance
from optimizer.solve import solve
from optimizer.sources.problem_file import load_problem, load_solution, save_problem, save_solution
from optimizer.version import __version__
from plugins.hookspecs import hookimpl
from plugins.registry import GoalRegistry, PluginGoals

__all__ = [
    "PROTOCOLS",
    "Assignment",
    "ClientAssignment",
    "Comparison",
    "ConsumerFlowTermsAPI",
    "ConsumerFormulationAPI",
    "ConsumerMetrics",
    "ConsumerProblem",
    "Evaluation",
    "ExitCode",
    "FlowTermsAPI",
    "FormulationAPI",
    "Goal",
    "GoalError",
    "GoalRegistry",
    "GoalStatus",
    "InvalidInputError",
    "KafkaAssignmentError",
    "LinExpr",
    "LinearModelAPI",
    "Metrics",
    "NoSolutionError",
    "PipelineError",
    "PluginError",
    "PluginGoals",
    "Problem",
    "ProtocolComparison",
    "Solution",
    "SolverError",
    "SolverUnavailableError",
    "StreamsFlowTermsAPI",
    "StreamsFormulationAPI",
    "StreamsIndex",
    "StreamsMetrics",
    "StreamsProblem",
    "StreamsVariablesAPI",
    "TimeLimitReached",
    "Tolerance",
    "UsageError",
    "__version__",
    "compare",
    "compare_protocols",
    "evaluate",
    "hookimpl",
    "load_problem",
    "load_solution",
    "next_rebalance",
    "normalize",
    "problem_from_data",
    "save_problem",
    "save_solution",
    "solve",
    "with_protocol",
]
