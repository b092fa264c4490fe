"""`weighted_balance`: the highest load per unit of capacity over clients (members).

A client's load is the sum of its actives' processing weights (`Task.weight`, 1 by default); its
capacity is `threads x capacity` (a thread of a default instance is the unit, so that without
weights this is KIP-441's tasks per thread). A consumer member's load is the bytes per second of
its partitions (`rate_of`; one thousand per partition when the group gives no rate), its capacity
its `capacity`. The value is max over clients of ceil(1000 x load / capacity), weights and
capacities taken in whole thousandths: thousandths of a default task per thread for Streams,
bytes per second per unit of capacity for consumers with rates (thousandths of a partition
without).

Any numbers that validate are solved. Where the integer models could not hold them (a row of
`1000 x load` against `capacity x value` beyond `UNBOUNDED`), each load (a partition's rate, a
task's weight in thousandths) counts in whole units of u, rounded up, u the smallest power of two
that brings every row within range (`load_unit`): the value is then in those units, the same in
`evaluate` and in the encoding, and the solution's notes say so (decision 107).

It balances load, not counts: ranked after `balance`, the counts stay KIP-441 balanced (or as
equal as the subscriptions allow) and the load is spread among the assignments that keep them;
`--tolerance balance=N` lets the counts stray by N tasks for a better load (docs/goals.md).
"""

from __future__ import annotations

import math

import numpy as np

from goals.common import streams_placement
from optimizer.costs import StreamsIndex
from optimizer.formulation import UNBOUNDED, LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.model.base import derived
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.ids import MILLI, milli
from optimizer.model.problem import Problem
from optimizer.model.streams import StreamsProblem
from optimizer.protocols import FormulationAPI, StreamsVariablesAPI


def consumer_load(problem: ConsumerProblem, partition: str) -> int:
    """What reading `partition` weighs: its bytes per second, or 1000 (one partition) when the
    group gives no rate."""
    return problem.rate_of(partition) if problem.has_rates else MILLI


def in_units(loads: np.ndarray, unit: int) -> np.ndarray:
    """`loads` in whole units of `unit`, each rounded up (a load above 0 never counts 0)."""
    loads = np.asarray(loads, dtype=np.int64)
    return loads if unit == 1 else -(-loads // unit)


def load_per_capacity(loads: np.ndarray, capacities: np.ndarray) -> int:
    """max over clients of ceil(MILLI x load / capacity), loads and capacities as whole numbers
    (0 without clients)."""
    if not len(loads):
        return 0
    return int((-((-MILLI * loads.astype(object)) // capacities.astype(object))).max())


def load_row(loads: np.ndarray, capacity: int) -> tuple[int, int, int]:
    """(divisor, capacity coefficient, highest value) of the row MILLI x load <= capacity x v of a
    client that may hold `loads` (whole numbers, in units): v at most ceil(MILLI x all / capacity);
    where that is 1 (a capacity beyond every load) the row only says that any load costs 1, which
    a capacity of MILLI x all says too, with smaller numbers. The row is divided by the gcd of its
    coefficients."""
    most = int(loads.sum())
    if most == 0:
        return 1, 1, 0
    capped = min(capacity, MILLI * most)
    divisor = math.gcd(MILLI * math.gcd(*loads.tolist()), capped)
    return divisor, capped, -(-MILLI * most // capacity)


def row_magnitude(loads: np.ndarray, capacity: int) -> int:
    """The largest absolute value the client's row can take (its coefficients times their ranges)."""
    divisor, capped, highest = load_row(loads, capacity)
    return (MILLI * int(loads.sum()) + capped * highest) // divisor


def load_unit(pools: list[tuple[np.ndarray, np.ndarray]]) -> int:
    """The smallest power of two u such that, with every load in whole units of u rounded up, the
    row of each client stays below `UNBOUNDED`; `pools`: (loads, capacities) for groups of clients
    that may hold the same loads. Larger units shrink every row (to at most three times MILLI times
    the number of loads once every load is one unit), so there is one."""
    unit = 1
    while any(row_magnitude(in_units(loads, unit), int(c)) >= UNBOUNDED for loads, capacities in pools for c in np.unique(capacities).tolist()):
        unit *= 2
    return unit


class WeightedBalance(Goal):
    name = "weighted_balance"
    summary = "highest load per unit of capacity: task weights per thread x capacity, or bytes per member capacity"

    def unit(self, problem: Problem) -> int:
        """The load one unit of the value's loads stands for (1 where the models count exactly)."""
        return _consumer_unit(problem) if isinstance(problem, ConsumerProblem) else _streams_unit(problem)

    def notes(self, problem: Problem) -> list[str]:
        unit = self.unit(problem)
        if unit == 1:
            return []
        if isinstance(problem, StreamsProblem):
            what = f"{unit:,} thousandths of a task weight, each task's weight rounded up"
        elif problem.has_rates:
            what = f"{unit:,} bytes per second, each partition's rate rounded up"
        else:
            what = f"{unit:,} thousandths of a partition"
        return [f"goal {self.name!r} counts loads in units of {what}: the loads are too large for the integer models to count one by one"]

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        unit = self.unit(problem)
        if problem.kind == "consumer":
            members = sorted(problem.members, key=lambda m: m.id)
            held = [
                int(in_units(np.array([consumer_load(problem, p) for p in assignment[m.id].active], dtype=np.int64), unit).sum()) if m.id in assignment else 0
                for m in members
            ]
            return load_per_capacity(np.array(held, dtype=np.int64), np.array([milli(m.capacity) for m in members], dtype=np.int64))
        index = StreamsIndex.of(problem)
        placement = streams_placement(index, assignment)
        placed = np.flatnonzero(placement.active >= 0)
        loads = np.zeros(len(index.clients), dtype=np.int64)
        np.add.at(loads, placement.active[placed], in_units(index.task_weight, unit)[placed])
        return load_per_capacity(loads, index.client_capacity)

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        unit = self.unit(formulation.problem)
        if formulation.kind == "consumer":
            problem = formulation.problem
            weights = np.array([consumer_load(problem, p) for p in formulation.partitions], dtype=np.int64)[formulation.pair_partition]
            by_member = {m.id: milli(m.capacity) for m in problem.members}
            capacities = np.array([by_member[m] for m in formulation.members], dtype=np.int64)
            members = [np.flatnonzero(formulation.pair_member == m) for m in range(len(capacities))]
            columns = [formulation.x[pairs] for pairs in members]
            loads = [in_units(weights[pairs], unit) for pairs in members]
        else:
            assert isinstance(formulation, StreamsVariablesAPI), "weighted_balance is written for the full model"
            index = formulation.index
            capacities = index.client_capacity
            columns = [formulation.x[:, k] for k in range(formulation.n_clients)]
            loads = [in_units(index.task_weight, unit)] * formulation.n_clients
        return _max_load_rows(formulation, columns, loads, capacities)


@derived
def _consumer_unit(problem: ConsumerProblem) -> int:
    """`load_unit` of a group: each set of subscriptions is a pool of the partitions of its topics."""
    loads = {t.name: np.array([consumer_load(problem, p) for p in t.partition_ids()], dtype=np.int64) for t in problem.topics}
    pools: dict[tuple[str, ...], list[int]] = {}
    for member in problem.members:
        pools.setdefault(tuple(sorted(t for t in member.subscriptions if t in loads)), []).append(milli(member.capacity))
    return load_unit([
        (np.concatenate([loads[t] for t in topics]) if topics else np.zeros(0, dtype=np.int64), np.array(capacities, dtype=np.int64))
        for topics, capacities in pools.items()
    ])  # fmt: skip


@derived
def _streams_unit(problem: StreamsProblem) -> int:
    """`load_unit` of an application: every client may run every task."""
    index = StreamsIndex.of(problem)
    return load_unit([(index.task_weight, index.client_capacity)])


def _max_load_rows(formulation: FormulationAPI, columns: list[np.ndarray], loads: list[np.ndarray], capacities: np.ndarray) -> LinExpr:
    """A variable v_k per client with MILLI x sum(load x column) <= capacity x v_k (`load_row`:
    each row divided by the gcd of its coefficients, v_k at most what the client can reach), and
    v >= v_k: v is at least the highest ceil(MILLI x load / capacity). A variable per client keeps
    each row's numbers to its own client's range (a client of a millionfold capacity next to
    one of 1 would otherwise multiply the other's range)."""
    model = formulation.model
    shapes = [load_row(load, int(c)) for load, c in zip(loads, capacities.tolist(), strict=True)]
    highest = np.array([h for _, _, h in shapes], dtype=np.int64)
    level = model.add_vars(1, 0, int(highest.max(initial=0)))[0]
    per_client = model.add_vars(len(columns), 0, highest)
    rows: list[int] = []
    cols: list[int] = []
    coefs: list[int] = []
    for row, (variables, load, (divisor, capped, _)) in enumerate(zip(columns, loads, shapes, strict=True)):
        rows.extend([row] * (len(variables) + 1))
        cols.extend([*variables.tolist(), int(per_client[row])])
        coefs.extend([*(MILLI * w // divisor for w in load.tolist()), -(capped // divisor)])  # Python ints: MILLI x load may pass 64 bits
    for k in range(len(columns)):
        rows.extend([len(columns) + k] * 2)
        cols.extend([int(per_client[k]), level])
        coefs.extend([1, -1])
    model.add_rows(rows, cols, coefs, np.full(2 * len(columns), -UNBOUNDED), np.zeros(2 * len(columns)))

    def fix(solution: np.ndarray) -> None:
        held = [int(np.dot(load, solution[variables])) for variables, load in zip(columns, loads, strict=True)]
        values = [-(-MILLI * h // int(c)) for h, c in zip(held, capacities.tolist(), strict=True)]
        solution[per_client] = np.minimum(values, highest)
        solution[level] = min(max(values, default=0), int(highest.max(initial=0)))

    formulation.repairs.append(fix)
    return LinExpr.of([level], [1])
