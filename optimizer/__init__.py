"""kafka-assignment-optimizer: Kafka-faithful and exact assignments for Kafka Streams and consumers.

User code imports from here only:

    from optimizer import load_problem, evaluate
    problem = load_problem("app.json")
"""

from importlib.metadata import PackageNotFoundError, version

from optimizer.errors import InvalidInputError, KafkaAssignmentError, NoSolutionError, SolverError
from optimizer.evaluate import Evaluation, evaluate
from optimizer.model import (
    ClientAssignment,
    ConsumerProblem,
    Problem,
    Solution,
    StreamsProblem,
    load_problem,
    load_solution,
    normalize,
    problem_from_data,
    save_problem,
    save_solution,
)

try:
    __version__ = version("kafka-assignment-optimizer")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

from optimizer.compare import Comparison, compare  # noqa: E402 - needs __version__ set first
from optimizer.rebalance import next_rebalance  # noqa: E402
from optimizer.sequence import Tolerance  # noqa: E402
from optimizer.solve import solve  # noqa: E402
from plugins.hookspecs import hookimpl  # noqa: E402
from goals.base import Goal, GoalError  # noqa: E402
from optimizer.formulation import LinExpr  # noqa: E402

__all__ = [
    "ClientAssignment",
    "Comparison",
    "Goal",
    "GoalError",
    "LinExpr",
    "Tolerance",
    "compare",
    "hookimpl",
    "ConsumerProblem",
    "Evaluation",
    "InvalidInputError",
    "KafkaAssignmentError",
    "NoSolutionError",
    "SolverError",
    "Problem",
    "Solution",
    "StreamsProblem",
    "__version__",
    "evaluate",
    "load_problem",
    "next_rebalance",
    "load_solution",
    "normalize",
    "problem_from_data",
    "save_problem",
    "save_solution",
    "solve",
]
