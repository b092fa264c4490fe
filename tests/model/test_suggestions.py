"""A misspelt field, config key or goal name gets a "did you mean" for the closest known one."""

from __future__ import annotations

import copy

import pytest

from optimizer.errors import InvalidInputError
from optimizer.model import problem_from_data
from optimizer.model.problem import solution_from_data
from optimizer.model.streams import StreamsConfig, StreamsProblem
from optimizer.model.suggest import did_you_mean, keys_at
from plugins import registry
from plugins.errors import PluginError
from plugins.registry import GoalRegistry
from tests.conftest import CONSUMER, STREAMS


def _issues(base, path, value):
    data = copy.deepcopy(base)
    node = data
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(key, str) else node[key]
    node[path[-1]] = value
    with pytest.raises(InvalidInputError) as caught:
        problem_from_data(data)
    return [str(issue) for issue in caught.value.issues]


@pytest.mark.parametrize(
    ("base", "path", "expected"),
    [
        (
            STREAMS,
            ["clients", 0, "previous_actives"],
            "clients[0] (id 'a').previous_actives: unknown field 'previous_actives' (did you mean 'previous_active'?)",
        ),
        (STREAMS, ["clients", 1, "thread"], "clients[1] (id 'b').thread: unknown field 'thread' (did you mean 'threads'?)"),
        (STREAMS, ["tasks", 0, "statefull"], "tasks[0] (id '0_0').statefull: unknown field 'statefull' (did you mean 'stateful'?)"),
        (STREAMS, ["client"], "client: unknown field 'client' (did you mean 'clients'?)"),
        # Config keys: the suggestion is the key a file writes, Kafka's own, whatever was typed.
        (
            STREAMS,
            ["config", "num.standby.replica"],
            "config.num.standby.replica: unknown field 'num.standby.replica' (did you mean 'num.standby.replicas'?)",
        ),
        (
            STREAMS,
            ["config", "max_warmup_replica"],
            "config.max_warmup_replica: unknown field 'max_warmup_replica' (did you mean 'max.warmup.replicas'?)",
        ),
        (
            STREAMS,
            ["config", "Acceptable.Recovery.Lags"],
            "config.Acceptable.Recovery.Lags: unknown field 'Acceptable.Recovery.Lags' (did you mean 'acceptable.recovery.lag'?)",
        ),
        (
            CONSUMER,
            ["config", "partition.assignment.strategies"],
            "config.partition.assignment.strategies: unknown field 'partition.assignment.strategies' "
            "(did you mean 'partition.assignment.strategy'?)",
        ),
        (
            CONSUMER,
            ["members", 0, "subscription"],
            "members[0] (id 'm1').subscription: unknown field 'subscription' (did you mean 'subscriptions'?)",
        ),
    ],
    ids=["client-field", "client-field-2", "task-field", "top-level", "streams-config", "streams-config-attribute-style",
         "streams-config-case", "consumer-config", "member-field"],
)  # fmt: skip
def test_a_misspelt_field_gets_the_closest_allowed_one(base, path, expected):
    assert expected in _issues(base, path, 1)


@pytest.mark.parametrize(
    ("base", "path", "expected"),
    [
        (STREAMS, ["colour"], "colour: unknown field 'colour'"),
        (STREAMS, ["clients", 0, "hostname"], "clients[0] (id 'a').hostname: unknown field 'hostname'"),
        (STREAMS, ["config", "zookeeper.connect"], "config.zookeeper.connect: unknown field 'zookeeper.connect'"),
        (CONSUMER, ["config", "session.timeout.ms"], "config.session.timeout.ms: unknown field 'session.timeout.ms'"),
    ],
    ids=["top-level", "client", "streams-config", "consumer-config"],
)
def test_a_far_off_field_gets_no_suggestion(base, path, expected):
    assert expected in _issues(base, path, 1)


def test_a_misspelt_solution_field_gets_the_closest_allowed_one():
    with pytest.raises(InvalidInputError) as caught:
        solution_from_data({"assignment": {"a": {"activ": [], "members": {"m": {"standbys": []}}}}})
    assert {str(issue) for issue in caught.value.issues} == {
        "assignment.a.activ: unknown field 'activ' (did you mean 'active'?)",
        "assignment.a.members.m.standbys: unknown field 'standbys' (did you mean 'standby'?)",
    }


def test_keys_at_follow_lists_aliases_and_optional_models():
    assert keys_at(StreamsProblem, ("clients", 3)) == (
        "id", "rack", "client.rack", "threads", "num.stream.threads", "capacity", "tags", "previous_active", "previous_standby", "lags",
        "process_id", "members",
    )  # fmt: skip
    assert "task.assignor.class" in keys_at(StreamsProblem, ("config",))
    assert "internal.task.assignor.class" in keys_at(StreamsConfig, ())
    assert "num_standby_replicas" not in keys_at(StreamsConfig, ())  # accepted, but files use Kafka's key
    assert keys_at(StreamsProblem, ("clients",)) == ()  # a list, not a mapping
    assert keys_at(StreamsProblem, ("nowhere", 1)) == ()


def test_an_unknown_goal_gets_the_closest_goal_and_the_known_list():
    goals = GoalRegistry()
    for name in ("balance", "cross_rack_traffic", "stickiness"):
        goals.goals[name] = type(name, (), {"name": name})
    with pytest.raises(PluginError) as caught:
        goals.get("stickyness")
    assert str(caught.value) == "unknown goal 'stickyness' (did you mean 'stickiness'?); known goals: balance, cross_rack_traffic, stickiness"
    with pytest.raises(PluginError) as caught:
        goals.get("Balance")
    assert str(caught.value) == "unknown goal 'Balance' (did you mean 'balance'?); known goals: balance, cross_rack_traffic, stickiness"
    with pytest.raises(PluginError) as caught:
        goals.get("drain_clients")
    assert str(caught.value) == "unknown goal 'drain_clients'; known goals: balance, cross_rack_traffic, stickiness"


@pytest.mark.parametrize(
    ("name", "choices", "expected"),
    [
        ("stickyness", ["balance", "stickiness"], " (did you mean 'stickiness'?)"),
        ("STICKINESS", ["balance", "stickiness"], " (did you mean 'stickiness'?)"),
        ("balanse", ["balance", "balanced"], " (did you mean 'balance'?)"),  # one suggestion, the closest
        ("movement", ["balance", "stickiness"], ""),
        ("anything", [], ""),
    ],
)
def test_did_you_mean_and_its_copy_in_the_plugin_layer_agree(name, choices, expected):
    assert did_you_mean(name, choices) == expected
    assert registry.did_you_mean(name, choices) == expected
