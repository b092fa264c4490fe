"""`balance_now`: a cooperative group's sizes as equal as they can be in the round applied now.

Under `cooperative-sticky` (KIP-429) a partition another member still holds is withheld this round
and assigned at the follow-up rebalance, once its holder has revoked it (`withhold_transfers`).
What a member gets now is its target partitions that no other member holds. Equally good targets
(same balance, traffic and moves) can leave the first round very unequal: this goal is the sum
over members of the squared number of partitions each gets now, so that ranked after
`stickiness` (which fixes how many are withheld) it takes the target whose first round is the most
even. Groups that are not cooperative get their whole target at once: the value is `balance`'s.
In the default sequence of cooperative groups, last (optimizer.catalogue.default_goals).
"""

from __future__ import annotations

import numpy as np

from goals.balance import square_sizes
from optimizer.formulation import LinExpr
from optimizer.goal import Assignment, Goal
from optimizer.model.consumer import ConsumerProblem
from optimizer.model.problem import Problem
from optimizer.protocols import ConsumerFormulationAPI, FlowTermsAPI, FormulationAPI


def holders(problem: ConsumerProblem) -> dict[str, set[str]]:
    """Partition id -> the members that hold it now (their owned partitions), for a cooperative
    group; empty for one that is not (every partition is assigned at once)."""
    if not problem.config.cooperative:
        return {}
    held: dict[str, set[str]] = {}
    for member in problem.members:
        for partition in member.owned_partitions:
            held.setdefault(partition, set()).add(member.id)
    return held


class BalanceNow(Goal):
    name = "balance_now"
    summary = "sum of squared member sizes in the round applied now (cooperative groups: partitions in transfer withheld)"
    kinds = ("consumer",)

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        assert isinstance(problem, ConsumerProblem)  # a consumer goal: the engine checks `kinds`
        held = holders(problem)
        total = 0
        for member, assigned in assignment.items():
            now = sum(1 for p in assigned.active if held.get(p, set()) <= {member})
            total += now * now
        return total

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        assert formulation.kind == "consumer"  # a consumer goal: the engine checks `kinds`
        return _encode_now_squares(formulation)

    def flow(self, terms: FlowTermsAPI) -> bool:
        if terms.kind != "consumer" or not terms.problem.config.cooperative:
            return False  # not cooperative: `balance` itself, which the flow writes once
        terms.require_balance_now()
        return True


def _encode_now_squares(formulation: ConsumerFormulationAPI) -> LinExpr:
    """sum_m now_m^2 as `balance` writes sum_m s_m^2 (`square_sizes`), counting only the pairs a
    member may take now."""
    held = holders(formulation.problem)
    members = formulation.members
    pairs_of = zip(formulation.pair_partition.tolist(), formulation.pair_member.tolist(), strict=True)
    now = np.array([held.get(formulation.partitions[p], set()) <= {members[m]} for p, m in pairs_of], dtype=bool)
    return square_sizes(formulation, now)
