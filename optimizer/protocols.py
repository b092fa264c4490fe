"""What a goal may use: the members of the formulations and flow terms handed to it.

`Goal.encode` receives a `StreamsFormulationAPI` or a `ConsumerFormulationAPI` (tell them apart
by `kind`), `Goal.flow` a `StreamsFlowTermsAPI` or a `ConsumerFlowTermsAPI`. Everything else on
the objects the engine passes is internal and may change without notice. The engine's own
classes (`optimizer.formulation`, `optimizer.engine.compressed`, `optimizer.backends.flow`) satisfy
these protocols; `tests/engine/test_protocols.py` checks that they do.

Variables are numbered (numpy int64 arrays of variable indices); costs, coefficients and bounds
are integers. A bound at or beyond `UNBOUNDED` in size means "no bound".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol, TypeAlias, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optimizer.costs import StreamsIndex
from optimizer.formulation import LinExpr
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.streams import StreamsProblem

Variables: TypeAlias = NDArray[np.int64]
"""Indices of model variables."""

Repair: TypeAlias = Callable[[NDArray[np.int64]], None]
"""Sets a goal's auxiliary variables, in place, to their least feasible values given the
assignment variables of a solution vector (see `Formulation.repairs`)."""


@runtime_checkable
class LinearModelAPI(Protocol):
    """The back-end-neutral integer model a goal adds auxiliary variables and rows to."""

    @property
    def n_vars(self) -> int:
        """Variables so far."""
        ...

    def add_vars(self, count: int, lower: ArrayLike = 0, upper: ArrayLike = 1) -> Variables:
        """`count` new integer variables within [lower, upper] (scalars or one bound each)."""
        ...

    def add_rows(self, rows: ArrayLike, cols: ArrayLike, coefs: ArrayLike, lo: ArrayLike, hi: ArrayLike) -> NDArray[np.int64]:
        """Rows `lo[r] <= sum(coefs * x[cols]) <= hi[r]`, `rows` numbering them from 0 in this
        call (one entry per term); returns the rows' indices."""
        ...

    def add_expr_row(self, expr: LinExpr, lo: int, hi: int) -> int:
        """One row `lo <= expr <= hi`; returns its index."""
        ...


@runtime_checkable
class StreamsFormulationAPI(Protocol):
    """A Streams problem as decision variables: one active copy per task, `standbys` standby
    copies per stateful task, never two copies of a task on one client.

    A goal written with these members only (never `x`/`y` of `StreamsVariablesAPI`) may declare
    `compressible = True`: the engine may then hand it the compressed formulation, where
    clients of one class (same rack and tags) share variables.
    """

    @property
    def kind(self) -> Literal["streams"]:
        """Tells Streams from consumer."""
        ...

    @property
    def problem(self) -> StreamsProblem:
        """The normalised problem."""
        ...

    @property
    def index(self) -> StreamsIndex:
        """Tasks and clients in canonical order: rows and columns of every cost matrix."""
        ...

    @property
    def model(self) -> LinearModelAPI:
        """The integer model: add auxiliary variables and rows here."""
        ...

    @property
    def repairs(self) -> list[Repair]:
        """Append a repair when the goal adds auxiliary variables."""
        ...

    @property
    def n_tasks(self) -> int:
        """Tasks, rows of an actives cost matrix."""
        ...

    @property
    def n_clients(self) -> int:
        """Clients, columns of every cost matrix."""
        ...

    @property
    def stateful_rows(self) -> NDArray[np.int64]:
        """Rows (tasks, in index order) of the stateful tasks: the rows of standby costs."""
        ...

    @property
    def standbys(self) -> int:
        """Standby copies per stateful task (0 when there is none)."""
        ...

    def active_cost(self, cost: NDArray[np.int64]) -> LinExpr:
        """Sum of cost[t, k] over tasks t active on client k (cost: tasks x clients)."""
        ...

    def standby_cost(self, cost: NDArray[np.int64]) -> LinExpr:
        """Sum of cost[i, k] over standbys of task `stateful_rows[i]` on client k."""
        ...

    def client_members(self, which: Literal["active", "stateful"]) -> list[Variables]:
        """Per client, variables whose sum is its number of actives (`"active"`) or of stateful
        copies, actives and standbys (`"stateful"`)."""
        ...

    def group_members(self, groups: NDArray[np.int64], pairs: NDArray[np.int64]) -> list[Variables]:
        """For each (group, client) row of `pairs`, variables whose sum is the number of actives
        of that group (`groups`: one group per task) on that client."""
        ...

    def copies_in(self, clients: NDArray[np.int64]) -> list[Variables]:
        """For each stateful task (`stateful_rows` order), variables whose sum is its number of
        copies (active and standbys) on `clients`."""
        ...

    def copies_beyond(self, clients: NDArray[np.int64], allowed: int = 1) -> LinExpr:
        """Sum over stateful tasks of max(0, its copies on `clients` - `allowed`): what sharing a
        rack or tag value costs. Prefer it to `copies_in`, which the pattern model cannot give
        (task by task), when that is what the goal prices."""
        ...


@runtime_checkable
class StreamsVariablesAPI(StreamsFormulationAPI, Protocol):
    """The full Streams formulation: its assignment variables too (a goal that uses them is not
    compressible)."""

    @property
    def x(self) -> NDArray[np.int64]:
        """tasks x clients: 1 when the task is active on the client."""
        ...

    @property
    def y(self) -> NDArray[np.int64]:
        """stateful tasks x clients: 1 when a standby of the task is on the client."""
        ...


@runtime_checkable
class ConsumerFormulationAPI(Protocol):
    """A consumer group as decision variables: one variable per (partition, subscribed member)
    pair, one member per partition."""

    @property
    def kind(self) -> Literal["consumer"]:
        """Tells consumer from Streams."""
        ...

    @property
    def problem(self) -> ConsumerProblem:
        """The normalised problem."""
        ...

    @property
    def model(self) -> LinearModelAPI:
        """The integer model: add auxiliary variables and rows here."""
        ...

    @property
    def repairs(self) -> list[Repair]:
        """Append a repair when the goal adds auxiliary variables."""
        ...

    @property
    def members(self) -> list[str]:
        """Member ids, sorted: member positions."""
        ...

    @property
    def partitions(self) -> list[str]:
        """Assignable partition ids (`topic-N`): partition positions."""
        ...

    @property
    def partition_position(self) -> dict[str, int]:
        """Position of each partition id in `partitions`."""
        ...

    @property
    def member_position(self) -> dict[str, int]:
        """Position of each member id in `members`."""
        ...

    @property
    def x(self) -> Variables:
        """One variable per pair: 1 when the pair's member reads the pair's partition."""
        ...

    @property
    def pair_partition(self) -> NDArray[np.int64]:
        """Partition position of each pair."""
        ...

    @property
    def pair_member(self) -> NDArray[np.int64]:
        """Member position of each pair."""
        ...

    def member_sizes(self) -> list[LinExpr]:
        """Per member, its number of partitions."""
        ...

    def pair_of(self) -> dict[tuple[int, int], int]:
        """The variable of each (partition position, member position) pair."""
        ...


FormulationAPI: TypeAlias = StreamsFormulationAPI | ConsumerFormulationAPI
"""What `Goal.encode` receives."""


@runtime_checkable
class StreamsFlowTermsAPI(Protocol):
    """What a goal contributes to the Streams min-cost-flow network: arc costs by rack, a few
    per-client discounts, soft caps per group, or the balance requirement."""

    @property
    def kind(self) -> Literal["streams"]:
        """Tells Streams from consumer."""
        ...

    @property
    def problem(self) -> StreamsProblem:
        """The normalised problem."""
        ...

    @property
    def index(self) -> StreamsIndex:
        """Tasks and clients in canonical order: rows of every cost matrix."""
        ...

    @property
    def rack_columns(self) -> int:
        """Columns of a rack cost matrix: the index's racks, then clients without a rack."""
        ...

    def with_rackless(self, by_rack: NDArray[np.int64]) -> NDArray[np.int64]:
        """A tasks x racks array with the column of clients without rack (cost 0) added."""
        ...

    def rack_cost(self, matrix: NDArray[np.int64]) -> None:
        """Add a tasks x `rack_columns` cost for an active on a client of each rack."""
        ...

    def pair_cost(self, rows: ArrayLike, clients: ArrayLike, values: ArrayLike) -> None:
        """Add costs (zero or negative: discounts) for particular (task, client) pairs."""
        ...

    def soft_caps(self, groups: NDArray[np.int64], caps: NDArray[np.int64]) -> None:
        """Cost 1 per active of a group beyond its cap on one client (`groups`: per task)."""
        ...

    def require_balance(self, narrowest: bool = True) -> None:
        """The goal is `balance`: the network keeps every client within its balance box, at the
        narrowest width the counts allow (`narrowest`), else at KIP-441's one task per thread."""
        ...


@runtime_checkable
class ConsumerFlowTermsAPI(Protocol):
    """What a goal contributes to a consumer group's min-cost-flow network."""

    @property
    def kind(self) -> Literal["consumer"]:
        """Tells consumer from Streams."""
        ...

    @property
    def problem(self) -> ConsumerProblem:
        """The normalised problem."""
        ...

    def partition_cross_by_rack(self) -> NDArray[np.int64]:
        """partitions x rack columns: 1 where reading the partition from that rack crosses racks."""
        ...

    def partition_bytes_by_rack(self) -> NDArray[np.int64]:
        """partitions x rack columns: the partition's bytes per second (`rate_of`) where reading
        it from that rack crosses racks, else 0."""
        ...

    def rack_cost(self, matrix: NDArray[np.int64]) -> None:
        """Add a partitions x rack columns cost for a member of each rack."""
        ...

    def owner_discount(self, value: int) -> None:
        """Cost `value` for every owned partition not given back to its owner."""
        ...

    def require_balance(self, narrowest: bool = True) -> None:
        """The goal is `balance`: partition counts as equal as the subscriptions allow
        (`narrowest` is for Streams; consumers' sizes are always the most equal)."""
        ...

    def require_balance_now(self) -> None:
        """The goal is `balance_now`: the convex cost of each member's size in the round applied
        now (a cooperative group's partitions that another member holds are not counted)."""
        ...


FlowTermsAPI: TypeAlias = StreamsFlowTermsAPI | ConsumerFlowTermsAPI
"""What `Goal.flow` receives."""
