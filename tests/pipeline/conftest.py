"""One local SparkSession for the whole test session (starting one costs seconds)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model.problem import problem_to_data


@pytest.fixture(scope="session")
def spark():
    if shutil.which("java") is None:
        pytest.skip("Java is not installed: the Spark tests need Java 17 (the local runner tests still run)")
    from optimizer.pipeline.spark import spark_session

    session = spark_session("local[2]")
    yield session
    session.stop()


def small_fleet(directory: Path, count: int) -> Path:
    """`count` small Streams applications and as many consumer groups, quick to solve with Kafka's
    assignor, as JSON Lines in `directory`."""
    documents = [problem_to_data(random_streams_problem(seed, tasks=4, clients=2, name=f"app-{seed}")) for seed in range(count)]
    documents += [
        problem_to_data(random_consumer_problem(seed, members=2, topics=1, partitions=(1, 3), name=f"group-{seed}")) for seed in range(count)
    ]
    path = directory / "fleet.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in documents))
    return path
