"""Kafka's `Graph.solveMinCostFlow` on an assignment graph, pass for pass, in numpy.

KIP-925's min_traffic graph and its standby-swap graph have one shape: a source feeding every
task (capacity 1), an edge from every task to every client (capacity 1, flow 1 to the task's
current client) and an edge from every client to the sink holding its current number of tasks.
Kafka cancels negative cycles of its residual graph one at a time, each found by a Bellman-Ford
run from a dummy node joined to every node; among equally cheap assignments the one it returns
depends on the order of that search. `cancel_cycles_as_kafka` reproduces the search exactly
(the same cycle, cancelled in the same order, hence the same assignment) but relaxes a whole
phase of edges at once:

* the residual graph has edges task -> source (cost 0), task -> client for every client not
  holding it (cost c), client -> task for the tasks it holds (cost -c) and sink -> client; the
  dummy and sink edges never relax after the first pass (every distance is <= 0), the source has
  no edge out, so a cycle alternates clients and tasks and each of its tasks moves to the next
  client;
* a pass visits the nodes in ascending order: the tasks first (source edge, then clients in
  order), which only lower client and source distances, then the clients, which only lower the
  distances of their own tasks. So a pass is two vectorised phases; a node's new parent is the
  first tail reaching its new minimum (Kafka relaxes on strictly shorter distances only), and
  the node Kafka returns in the last pass is the first relaxation of that pass in edge order;
* Kafka always runs `nodes` passes when there is a cycle. Once the state after a pass equals the
  state some `p` passes earlier (distances shifted by one constant, parents equal), every later
  pass repeats that earlier one exactly, so the last pass is read off the history instead of run.

`graph.py` beside this module is the general, edge-by-edge port (used for the other graph shapes
and as this module's reference in the tests).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

DUMMY = -2
# The longest period looked for: the distances of a cycle through k clients repeat every k
# passes; longer periods are simply run pass by pass.
_MAX_PERIOD = 8


@dataclass(frozen=True)
class _Pass:
    distances: np.ndarray  # tasks, then clients, then the source
    parents: np.ndarray
    first: tuple[int, int] | None  # (node, its new parent) of the pass's first relaxation


def cancel_cycles_as_kafka(cost: np.ndarray, holder: np.ndarray) -> np.ndarray:
    """The client of each task after Kafka's cycle canceling, from `holder` (the current one).

    `cost[i, j]`: the edge cost of task i on client j (as Kafka built the graph: fixed at the
    start). Clients are numbered in Kafka's node order."""
    cost = np.asarray(cost, dtype=np.int64)
    holder = np.array(holder, dtype=np.int64)
    n_tasks, n_clients = cost.shape
    if n_tasks == 0 or n_clients < 2:
        return holder
    passes = n_tasks + n_clients + 3  # Kafka's node count: source, tasks, clients, sink, dummy
    while True:
        found = _negative_cycle(cost, holder, passes)
        if found is None:
            return holder
        start, parents = found
        for task, client in _cycle_moves(start, parents, n_tasks):
            holder[task] = client


def _negative_cycle(cost, holder, passes):
    n_tasks, n_clients = cost.shape
    source = n_tasks + n_clients
    tasks = np.arange(n_tasks)
    held = np.zeros((n_tasks, n_clients), dtype=bool)
    held[tasks, holder] = True
    own_cost = cost[tasks, holder]
    # Pass 0 starts with the dummy's edges: every node at distance 0, its parent the dummy.
    distances = np.zeros(n_tasks + n_clients + 1, dtype=np.int64)
    parents = np.full(n_tasks + n_clients + 1, DUMMY, dtype=np.int64)
    history: deque[_Pass] = deque(maxlen=_MAX_PERIOD + 1)
    history.append(_Pass(distances, parents, None))  # the state before pass 0
    for number in range(passes):
        before = history[-1]
        distances, parents = before.distances.copy(), before.parents.copy()
        first = _run_pass(cost, held, holder, own_cost, distances, parents, source)
        if first is None:
            return None  # a pass without relaxation: no later pass relaxes either
        if number == passes - 1:
            return returned(before.parents, first)
        history.append(_Pass(distances, parents, first))
        period = _period(history)
        if period:
            # Pass j repeats pass j - period from here on: the last pass is one already run.
            last = passes - 1
            equivalent = last - period * -(-(last - number) // period)
            back = number - equivalent  # how many passes ago it ran
            repeated = history[-1 - back]
            return returned(history[-2 - back].parents, repeated.first)
    return None


def _run_pass(cost, held, holder, own_cost, distances, parents, source):
    """One Bellman-Ford pass in Kafka's edge order, in place; the pass's first relaxation."""
    n_tasks = cost.shape[0]
    task_distance = distances[:n_tasks]
    events = []  # (task, rank: 0 source 1+j client j, node, parent): first relaxations per target
    # Tasks, each: its edge to the source, then to every client not holding it.
    old_source = distances[source]
    below = np.flatnonzero(task_distance < old_source)
    if below.size:
        events.append((int(below[0]), 0, source, int(below[0])))
        best = int(np.argmin(task_distance))
        distances[source] = task_distance[best]
        parents[source] = best
    candidates = task_distance[:, None] + cost
    candidates[held] = np.iinfo(np.int64).max
    old_clients = distances[n_tasks:source].copy()
    improving = candidates < old_clients[None, :]
    hit = improving.any(axis=0)
    if hit.any():
        first_task = np.argmax(improving, axis=0)
        best_task = np.argmin(candidates, axis=0)  # the first task at the minimum
        for client in np.flatnonzero(hit):
            events.append((int(first_task[client]), 1 + int(client), n_tasks + int(client), int(first_task[client])))
            distances[n_tasks + client] = candidates[best_task[client], client]
            parents[n_tasks + client] = best_task[client]
    first = min(events)[2:] if events else None
    # Clients in order, each lowering its own tasks (they are not read again in this pass).
    offered = distances[n_tasks + holder] - own_cost
    lowered = offered < task_distance
    if lowered.any():
        if first is None:
            ranked = np.flatnonzero(lowered)
            order = np.lexsort((ranked, holder[ranked]))
            task = int(ranked[order[0]])
            first = (task, n_tasks + int(holder[task]))
        task_distance[lowered] = offered[lowered]
        parents[:n_tasks][lowered] = n_tasks + holder[lowered]
    return first


def _period(history) -> int:
    """The smallest p such that the last state is the state p passes earlier shifted."""
    last = history[-1]
    for period in range(1, len(history) - 1):
        earlier = history[-1 - period]
        if earlier.first is None or not np.array_equal(last.parents, earlier.parents):
            continue
        shift = last.distances - earlier.distances
        if (shift == shift[0]).all():
            return period
    return 0


def returned(parents_before, first):
    """The node Kafka returns from its last pass and the parents then: those before the pass, with
    the pass's first relaxation `first` (node, parent) applied."""
    node, parent = first
    parents = parents_before.copy()
    parents[node] = parent
    return node, parents


def cycle_edges(start, parents) -> list[tuple[int, int]]:
    """Walk back from `start` onto the cycle, as Kafka does; the cycle's edges (tail, head)."""
    seen = set()
    node = start
    while node not in seen:
        seen.add(node)
        node = int(parents[node])
        if node == DUMMY:
            raise AssertionError("negative cycle search ended at the dummy node")
    edges = []
    first = node
    while True:
        previous = int(parents[node])
        edges.append((previous, node))
        node = previous
        if node == first:
            return edges


def _cycle_moves(start, parents, n_tasks):
    """Each task on the cycle moves to the client after it."""
    return [(tail, head - n_tasks) for tail, head in cycle_edges(start, parents) if tail < n_tasks]
