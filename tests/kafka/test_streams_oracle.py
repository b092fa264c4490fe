"""The live oracle for Kafka Streams' classic task assignors: Kafka 4.4.0's own classes (the
internal HighAvailabilityTaskAssignor with RackAwareTaskAssignor, KIP-708 client tags and KIP-441
warm-ups; LegacyStickyTaskAssignor; KIP-924's public StickyTaskAssignor, run from the pinned jars
by `kao.jvm.TaskAssignors`) against `--solver kafka` on seeded random applications, client by
client.

What is compared, and why:
* actives per client, and standbys with warm-ups per client (Kafka sends warm-ups as standbys, so
  its answer does not say which are which), and for the HA assignor whether a follow-up (probing)
  rebalance was asked for;
* process ids are UUIDs (`with_process_ids`), entering Kafka's HashMap sorted, as the reproduction
  assumes (in Kafka that order comes from the group's members; it matters only within a hash
  bucket);
* KIP-924's StickyTaskAssignor places standbys task by task in a HashSet of TaskInfo, which has no
  hashCode: the order is the JVM's identity hashes and changes from run to run, so `--solver kafka`
  (which takes task order) is held to Kafka's actives, and the reproduction run in the order
  Kafka's JVM took (the adapter reports it) to the whole answer;
* the legacy sticky assignor walks HashSets of all and of stateful tasks; where TaskIds of two
  subtopologies share a bucket, the order they were added decides. StreamsPartitionAssignor adds
  them subtopology by subtopology in a HashMap of Subtopology's order, and `--solver kafka`
  reproduces that; the frozen parity sets' harness added them in task order, and the
  reproduction in that order (`TASK_ORDER`) is checked against Kafka's class fed so, too.

The applications are up to 30 tasks over 7 clients, and some larger ones (40-150 tasks over 5-20
clients); the reproduction solves KIP-925's graphs by Kafka's own search up to
`KAFKA_TIE_BREAK_WORK` (beyond, contracted cycle canceling, Kafka's cost but not always Kafka's
choice among equally cheap placements, which its notes say).
"""

from __future__ import annotations

import pytest

from optimizer.assignors.streams.sticky_task import TASK_ORDER, sticky_task_assign
from optimizer.generate import varied_problem
from optimizer.model.ids import task_id
from optimizer.model.normalize import normalize
from optimizer.model.streams import StreamsGroupProtocol, StreamsProblem, TaskAssignor
from optimizer.oracle.streams import STRATEGIES, application, disagreements, larger_application, task_assignor_answers, with_process_ids

pytestmark = pytest.mark.kafka

def _varied(count: int) -> list[StreamsProblem]:
    """Small applications of every shape `varied_problem` makes under the classic protocol."""
    found: list[StreamsProblem] = []
    seed = 0
    while len(found) < count:
        problem = varied_problem(seed, "streams")
        seed += 2
        if isinstance(problem, StreamsProblem) and problem.config.group_protocol == StreamsGroupProtocol.CLASSIC:
            found.append(with_process_ids(problem))
    return found


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_kafkas_high_availability_assignor_gives_our_answer(strategy):
    """HighAvailabilityTaskAssignor with each `rack.aware.assignment.strategy`: 100 applications,
    with and without standbys, client tags and rack information."""
    problems = [application(seed, "high_availability", strategy) for seed in range(100)]
    assert {p.config.num_standby_replicas > 0 for p in problems} == {True, False}
    assert {bool(p.config.rack_aware_assignment_tags) for p in problems} == {True, False}
    assert disagreements(problems, task_assignor_answers(problems)) == []


def test_kafkas_legacy_sticky_assignor_gives_our_answer():
    """LegacyStickyTaskAssignor (`task.assignor.class: sticky`), its task sets filled as
    StreamsPartitionAssignor fills them in a rebalance."""
    problems = [application(seed, "sticky", STRATEGIES[seed % 3]) for seed in range(150)]
    assert disagreements(problems, task_assignor_answers(problems, task_sets="grouper")) == []


def test_kafkas_legacy_sticky_assignor_fed_in_task_order_gives_the_reproduction_in_that_order():
    """The frozen parity answers' harness filled the task sets in task order: Kafka's class fed so
    gives the reproduction run with `TASK_ORDER`, and on some of these applications that is not the
    rebalance's answer (the order matters, so the two checks are not the same check)."""
    problems = [application(seed, "sticky", STRATEGIES[seed % 3]) for seed in range(150)]
    fed_in_task_order = task_assignor_answers(problems, task_sets="sorted")
    differing = 0
    for problem, kafka in zip(problems, fed_in_task_order, strict=True):
        assert not isinstance(kafka, str), kafka
        ours = sticky_task_assign(normalize(problem).problem, TASK_ORDER)
        for client in ours.clients:
            assert {task_id(*t) for t in client.active} == kafka.active.get(client.id, frozenset())
            assert {task_id(*t) for t in client.standby} == kafka.standby.get(client.id, frozenset())
        differing += bool(disagreements([problem], [kafka]))
    assert differing > 0


def test_kafkas_kip924_sticky_assignor_gives_our_answer():
    """KIP-924's StickyTaskAssignor at 4.4.0 (KAFKA-20198's room for actives): 150 applications,
    KIP-925 costs configured in a third (its rack-aware optimisation runs only then)."""
    problems = [application(seed, "kip924_sticky", STRATEGIES[seed % 3]) for seed in range(150)]
    assert disagreements(problems, task_assignor_answers(problems)) == []


def test_kafkas_task_assignors_give_our_answer_on_varied_applications():
    """`varied_problem`'s classic applications (each with its own assignor, lags inside and beyond
    `acceptable.recovery.lag`, previous tasks of a client that left, weights Kafka ignores)."""
    problems = _varied(200)
    assert {p.config.task_assignor_class for p in problems} == set(TaskAssignor)
    assert disagreements(problems, task_assignor_answers(problems, task_sets="sorted")) == []


@pytest.mark.parametrize("assignor", ["high_availability", "sticky", "kip924_sticky"])
def test_with_stores_that_log_nothing_kafkas_task_assignors_give_our_answer(assignor):
    """Stateful tasks without changelog partitions (stores with logging disabled), fed as
    StreamsPartitionAssignor feeds them: not stateful to the internal assignors (only tasks with a
    changelog are, `ChangelogTopics.statefulTaskIds`), stateful to KIP-924's `TaskInfo` but without
    a standby (its StickyTaskAssignor places standbys for tasks with a changelog partition only).
    Kafka's answer is ours, and the evaluator accepts it (`--solver kafka` checks it)."""
    problems = [application(seed, assignor, STRATEGIES[seed % 3], unlogged=0.5) for seed in range(60)]
    with_unlogged = [p for p in problems if p.config.num_standby_replicas and any(t.stateful and not t.changelog_partitions for t in p.tasks)]
    assert len(with_unlogged) > 10
    assert disagreements(problems, task_assignor_answers(problems)) == []


@pytest.mark.parametrize("assignor", ["high_availability", "sticky", "kip924_sticky"])
def test_with_zombies_kafkas_task_assignors_give_our_answer(assignor):
    """Tasks reported active by two clients (a zombie after a network partition), each client owning
    the task's partitions as its ClientState holds them: Kafka reads every report (HA: each such
    client caught up; the sticky ones: the last client of their HashMap of process ids), and so
    does `--solver kafka`, whose answer the evaluator accepts."""
    problems = [application(seed, assignor, STRATEGIES[seed % 3], zombies=0.3) for seed in range(80)]
    assert sum(bool(p.zombie_tasks) for p in problems) > 40
    assert disagreements(problems, task_assignor_answers(problems)) == []


@pytest.mark.parametrize("assignor", ["high_availability", "sticky"])
def test_on_larger_applications_kafkas_balance_subtopology_search_gives_our_answer(assignor):
    """40-150 tasks in up to 8 subtopologies over 5-20 clients with `balance_subtopology`: the
    reproduction runs Kafka's max flow and cycle canceling on the (subtopology, client) graph
    (`kip925/balance_graph.py`), so Kafka's choice among equally cheap placements comes out too
    (the contracted canceling it used here before found Kafka's cost, not always its choice)."""
    problems = [larger_application(seed, assignor, "balance_subtopology") for seed in range(100, 120)]
    assert disagreements(problems, task_assignor_answers(problems)) == []
