"""`subtopology_spread`: the tasks of each subtopology spread over clients (KIP-441, KIP-925).

Client k may hold cap = ceil(S * c_k / C) active tasks of a subtopology of S tasks, c_k being its
threads and C all threads (KIP-925's balance_subtopology caps, with the client's share of the
threads as its share of the tasks). The value is the number of actives beyond the caps, summed
over subtopologies and clients.
"""

from __future__ import annotations

import numpy as np

from goals.common import streams_placement
from optimizer.costs import StreamsIndex
from optimizer.formulation import UNBOUNDED, LinExpr, excess_repair
from optimizer.goal import Assignment, Goal
from optimizer.model.problem import Problem
from optimizer.model.streams import StreamsProblem
from optimizer.protocols import FlowTermsAPI, FormulationAPI


def subtopology_caps(index: StreamsIndex) -> tuple[np.ndarray, np.ndarray]:
    """(group of each task, caps subtopologies x clients)."""
    subtopologies, groups = np.unique(index.subtopology, return_inverse=True)
    sizes = np.bincount(groups, minlength=len(subtopologies))
    threads = index.threads
    caps = -((-np.outer(sizes, threads)) // max(int(threads.sum()), 1))
    return groups, caps


class SubtopologySpread(Goal):
    name = "subtopology_spread"
    summary = "actives of a subtopology beyond ceil(S x threads / all threads) per client (KIP-925 caps)"
    compressible = True
    kinds = ("streams",)

    def apart(self, problem: Problem) -> frozenset[str]:
        return frozenset()  # per (subtopology, client) counts only

    def evaluate(self, problem: Problem, assignment: Assignment) -> int:
        assert isinstance(problem, StreamsProblem)  # a Streams goal: the engine checks `kinds`
        index = StreamsIndex.of(problem)
        placement = streams_placement(index, assignment)
        groups, caps = subtopology_caps(index)
        held = np.zeros_like(caps)
        assigned = placement.active >= 0
        np.add.at(held, (groups[assigned], placement.active[assigned]), 1)
        return int(np.maximum(held - caps, 0).sum())

    def encode(self, formulation: FormulationAPI) -> LinExpr:
        assert formulation.kind == "streams"  # a Streams goal: the engine checks `kinds`
        groups, caps = subtopology_caps(formulation.index)
        sizes = np.bincount(groups, minlength=caps.shape[0])
        over = np.argwhere(sizes[:, None] > caps)  # (group, client) pairs that could exceed
        if not len(over):
            return LinExpr.zero()
        model = formulation.model
        excess = model.add_vars(len(over), 0, int(sizes.max()))
        rows, cols, coefs = [], [], []
        members_of = formulation.group_members(groups, over)
        for r, members in enumerate(members_of):
            rows += [r] * (len(members) + 1)
            cols += [*members.tolist(), int(excess[r])]
            coefs += [1] * len(members) + [-1]
        limits = caps[over[:, 0], over[:, 1]]
        model.add_rows(rows, cols, coefs, np.full(len(over), -UNBOUNDED), limits)
        formulation.repairs.append(excess_repair(excess, members_of, limits))
        return LinExpr.of(excess, 1)

    def flow(self, terms: FlowTermsAPI) -> bool:
        assert terms.kind == "streams"  # a Streams goal: the engine checks `kinds`
        groups, caps = subtopology_caps(terms.index)
        terms.soft_caps(groups, caps)
        return True
