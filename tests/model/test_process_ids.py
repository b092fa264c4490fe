"""A streams-group client's process id: Kafka's own, when a problem (an imported one) gives it."""

from __future__ import annotations

import pytest


def test_a_streams_group_client_keeps_the_process_id_it_is_given():
    """An imported streams-group client names Kafka's process id (the coordinator breaks ties by
    it); without one it is derived from the client id, as before; anything but a UUID is refused."""
    from optimizer.errors import InvalidInputError
    from optimizer.model.ids import process_id_of
    from optimizer.model.problem import problem_from_data

    def problem(**client):
        return problem_from_data(
            {"kind": "streams", "config": {"group.protocol": "streams"}, "clients": [{"id": "c1", **client}],
             "tasks": [{"id": "0_0", "source_partitions": [{"topic": "t", "partition": 0}]}]},
            "p",
        )  # fmt: skip

    uuid_text = "8d0b89e6-5f7c-4d0e-9a7b-2c1d3e4f5a6b"
    assert problem(process_id=uuid_text).clients[0].kafka_process_id == uuid_text
    assert problem().clients[0].kafka_process_id == process_id_of("c1")
    with pytest.raises(InvalidInputError, match="is not a process id"):
        problem(process_id="8D0B89E6-5F7C-4D0E-9A7B-2C1D3E4F5A6B")


def test_two_clients_cannot_give_the_same_process_id():
    from optimizer.errors import InvalidInputError
    from optimizer.model.problem import problem_from_data

    same = "8d0b89e6-5f7c-4d0e-9a7b-2c1d3e4f5a6b"
    with pytest.raises(InvalidInputError, match="duplicate client process_id '8d0b89e6-5f7c-4d0e-9a7b-2c1d3e4f5a6b'"):
        problem_from_data(
            {"kind": "streams", "config": {"group.protocol": "streams"},
             "clients": [{"id": "c1", "process_id": same}, {"id": "c2", "process_id": same}],
             "tasks": [{"id": "0_0", "source_partitions": [{"topic": "t", "partition": 0}]}]},
            "p",
        )  # fmt: skip
