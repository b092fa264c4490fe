"""`weighted_balance`: the highest load per unit of capacity over clients (members).

A client's load is the sum of its actives' processing weights (`Task.weight`, 1 by default); its
capacity is `threads x capacity` (a thread of a default instance is the unit, so that without
weights this is KIP-441's tasks per thread). A consumer member's load is the bytes per second of
its partitions (`rate_of`; one thousand per partition when the group gives no rate), its capacity
its `capacity`. The value is max over clients of ceil(1000 x load / capacity), weights and
capacities taken in whole thousandths: thousandths of a default task per thread for Streams,
bytes per second per unit of capacity for consumers with rates (thousandths of a partition
without).

It balances load, not counts: ranked after `balance`, the counts stay KIP-441 balanced (or as
equal as the subscriptions allow) and the load is spread among the assignments that keep them;
`--tolerance balance=N` lets the counts stray by N tasks for a better load (docs/goals.md).
"""

from __future__ import annotations

import math

import numpy as np

from goals.common import streams_placement
from optimizer.costs import StreamsIndex
from optimizer.errors import SolverUnavailableError
from optimizer.formulation import UNBOUNDED, LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import MILLI, milli
from optimizer.model.problem import Problem
from optimizer.protocols import FormulationAPI, StreamsVariablesAPI


def consumer_load(problem: ConsumerProblem, partition: str) -> int:
    """What reading `partition` weighs: its bytes per second, or 1000 (one partition) when the
    group gives no rate."""
    return problem.rate_of(partition) if problem.has_rates else MILLI


def load_per_capacity(loads: np.ndarray, capacities: np.ndarray) -> int:
    """max over clients of ceil(MILLI x load / capacity), loads and capacities as whole numbers
    (0 without clients)."""
    if not len(loads):
        return 0
    return int((-((-MILLI * loads.astype(object)) // capacities.astype(object))).max())


class WeightedBalance(Goal):
    name = "weighted_balance"
    summary = "highest load per unit of capacity: task weights per thread x capacity, or bytes per member capacity"

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        if problem.kind == "consumer":
            members = sorted(problem.members, key=lambda m: m.id)
            loads = np.array(
                [sum(consumer_load(problem, p) for p in assignment[m.id].active) if m.id in assignment else 0 for m in members],
                dtype=np.int64,
            )
            return load_per_capacity(loads, np.array([milli(m.capacity) for m in members], dtype=np.int64))
        index = StreamsIndex.of(problem)
        placement = streams_placement(index, assignment)
        placed = placement.active >= 0
        loads = np.bincount(placement.active[placed], weights=index.task_weight[placed], minlength=len(index.clients))
        return load_per_capacity(np.rint(loads).astype(np.int64), index.client_capacity)

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        if formulation.kind == "consumer":
            problem = formulation.problem
            weights = np.array([consumer_load(problem, p) for p in formulation.partitions], dtype=np.int64)[formulation.pair_partition]
            by_member = {m.id: milli(m.capacity) for m in problem.members}
            capacities = np.array([by_member[m] for m in formulation.members], dtype=np.int64)
            members = [np.flatnonzero(formulation.pair_member == m) for m in range(len(capacities))]
            columns = [formulation.x[pairs] for pairs in members]
            loads = [weights[pairs] for pairs in members]
        else:
            assert isinstance(formulation, StreamsVariablesAPI), "weighted_balance is written for the full model"
            index = formulation.index
            capacities = index.client_capacity
            columns = [formulation.x[:, k] for k in range(formulation.n_clients)]
            loads = [index.task_weight] * formulation.n_clients
        return _max_load_rows(formulation, columns, loads, capacities)


def _max_load_rows(formulation: FormulationAPI, columns: list[np.ndarray], loads: list[np.ndarray], capacities: np.ndarray) -> LinExpr:
    """A variable v with MILLI x sum(load x column) <= capacity x v per client (each row divided
    by the gcd of its coefficients): v is at least the highest ceil(MILLI x load / capacity)."""
    model = formulation.model
    most = max((int(load.sum()) for load in loads), default=0)
    bound = max((-(-MILLI * most // int(c)) for c in capacities), default=0)
    level = model.add_vars(1, 0, bound)[0]
    rows: list[int] = []
    cols: list[int] = []
    coefs: list[int] = []
    for row, (variables, load, capacity) in enumerate(zip(columns, loads, capacities.tolist(), strict=True)):
        divisor = math.gcd(MILLI * math.gcd(*load.tolist()) if len(load) else 0, capacity)
        rows.extend([row] * (len(variables) + 1))
        cols.extend([*variables.tolist(), level])
        reduced = MILLI * load // divisor
        if int(reduced.sum()) + capacity // divisor * bound >= UNBOUNDED:
            raise SolverUnavailableError(
                "goal 'weighted_balance': the loads are too large for the integer models to count exactly "
                f"(above {UNBOUNDED:,} in one row); give rates or weights in coarser units"
            )
        coefs.extend([*reduced.tolist(), -(capacity // divisor)])
    model.add_rows(rows, cols, coefs, np.full(len(columns), -UNBOUNDED), np.zeros(len(columns)))

    def fix(solution: np.ndarray) -> None:
        held = np.array([int(np.dot(load, solution[variables])) for variables, load in zip(columns, loads, strict=True)], dtype=np.int64)
        solution[level] = min(load_per_capacity(held, capacities), bound)

    formulation.repairs.append(fix)
    return LinExpr.of([level], [1])
