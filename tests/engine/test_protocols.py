"""The declared contracts: the engine's formulations and flow terms satisfy the protocols a goal
is written against, the goal API is annotated with them, and every public error is one of the
project's, documented with its exit code."""

from __future__ import annotations

import inspect
import typing

import pytest

import optimizer
from optimizer import (
    ConsumerFlowTermsAPI,
    ConsumerFormulationAPI,
    FlowTermsAPI,
    FormulationAPI,
    Goal,
    KafkaAssignmentError,
    LinearModelAPI,
    StreamsFlowTermsAPI,
    StreamsFormulationAPI,
    StreamsVariablesAPI,
    errors,
    load_problem,
    normalize,
)
from optimizer.backends.flow import ConsumerFlowTerms, StreamsFlowTerms, _ConsumerGroup
from optimizer.engine.compressed import CompressedStreamsFormulation
from optimizer.engine.patterns import PatternStreamsFormulation
from optimizer.formulation import formulate
from tests.conftest import EXAMPLES

STREAMS = EXAMPLES / "kip925" / "three-clients-1-2-3-threads.problem.yaml"
CONSUMER = EXAMPLES / "kip54" / "example2-c0-removed-after-sticky.problem.yaml"


def _members(protocol: type) -> set[str]:
    return {name for name in dir(protocol) if not name.startswith("_")} | set(typing.get_type_hints(protocol))


@pytest.fixture(scope="module")
def streams():
    return normalize(load_problem(STREAMS)).problem


@pytest.fixture(scope="module")
def consumer():
    return normalize(load_problem(CONSUMER)).problem


def test_the_streams_formulations_satisfy_what_goals_may_use(streams):
    full = formulate(streams)
    compressed = CompressedStreamsFormulation(streams)
    assert isinstance(full, StreamsVariablesAPI) and isinstance(full.model, LinearModelAPI)
    assert isinstance(compressed, StreamsFormulationAPI) and isinstance(compressed.model, LinearModelAPI)
    # the compressed model has no assignment variables: a goal that uses x or y is not compressible
    assert not isinstance(compressed, StreamsVariablesAPI)
    assert not isinstance(full, ConsumerFormulationAPI)
    # nor has the pattern model (built without the state that would give tasks clients of their own)
    patterns = PatternStreamsFormulation(streams, frozenset({"rack", "tags"}))
    assert isinstance(patterns, StreamsFormulationAPI) and not isinstance(patterns, StreamsVariablesAPI)


def test_the_consumer_formulation_and_flow_terms_satisfy_the_protocols(streams, consumer):
    assert isinstance(formulate(consumer), ConsumerFormulationAPI)
    assert isinstance(StreamsFlowTerms(streams), StreamsFlowTermsAPI)
    assert isinstance(ConsumerFlowTerms(consumer, _ConsumerGroup(consumer)), ConsumerFlowTermsAPI)


def test_the_protocols_declare_every_member_they_document():
    # Every member is typed (a member without a type is invisible to mypy and isinstance) and
    # says what it is: the protocols are the goal author's reference.
    for protocol in (StreamsFormulationAPI, StreamsVariablesAPI, ConsumerFormulationAPI, StreamsFlowTermsAPI, ConsumerFlowTermsAPI):
        assert {"kind", "problem"} <= _members(protocol), protocol.__name__
        for name in _members(protocol):
            member = getattr(protocol, name, None)
            documented = member.fget if isinstance(member, property) else member
            assert inspect.getdoc(documented), f"{protocol.__name__}.{name} has no docstring"


def test_the_goal_api_is_annotated_with_the_protocols():
    hints = {name: typing.get_type_hints(getattr(Goal, name)) for name in ("evaluate", "encode", "flow")}
    assert hints["encode"]["formulation"] == FormulationAPI and hints["encode"]["return"] is optimizer.LinExpr
    assert hints["flow"]["terms"] == FlowTermsAPI and hints["flow"]["return"] is bool
    assert hints["evaluate"]["return"] is int


def test_every_public_error_is_a_kafka_assignment_error_with_its_exit_code():
    public = [getattr(errors, name) for name in errors.__all__ if isinstance(getattr(errors, name), type)]
    raised = [cls for cls in public if issubclass(cls, Exception)]
    assert len(raised) >= 10
    for cls in raised:
        assert issubclass(cls, KafkaAssignmentError), cls.__name__
        doc = inspect.getdoc(cls) or ""
        assert "Who sees it" in doc or cls is KafkaAssignmentError, cls.__name__
        assert f"Exit code {int(cls.exit_code)}" in doc or cls is KafkaAssignmentError, cls.__name__
    # every error optimizer exports is one of these
    exported = {getattr(optimizer, name) for name in optimizer.__all__}
    assert {cls for cls in exported if isinstance(cls, type) and issubclass(cls, Exception)} <= set(raised)
