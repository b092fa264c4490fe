"""One local SparkSession for the whole test session (starting one costs seconds)."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="session")
def spark():
    if shutil.which("java") is None:
        pytest.skip("Java is not installed: the Spark tests need Java 17 (the local runner tests still run)")
    from optimizer.pipeline.spark import spark_session

    session = spark_session("local[2]")
    yield session
    session.stop()
