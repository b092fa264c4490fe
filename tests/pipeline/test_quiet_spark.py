"""Quiet by default (issue 34, item 5): a Spark the pipeline starts writes its JVM's output (the
incubator modules, log4j's start-up lines, Hadoop's NativeCodeLoader warning) to OUTPUT/spark.log,
not to the terminal; a failed job or a Spark that does not start quotes the log's end and keeps it
beside the output. Each test runs `kafka-assign pipeline` in a process of its own: the JVM it
starts is its own (the tests' shared session started without a log file)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pipeline.conftest import small_fleet

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="Java is not installed: Spark needs Java 17")


@pytest.fixture
def fleet(tmp_path) -> Path:
    return small_fleet(tmp_path, 3)


def _pipeline(fleet: Path, output: Path, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "optimizer", "pipeline", "--input", str(fleet), "--output", str(output), "--solvers", "kafka", "--master", "local[1]"]
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("PYSPARK_", "SPARK_"))}
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment | env, check=False)


def test_spark_start_up_goes_to_the_log_in_the_output_not_to_the_terminal(fleet, tmp_path):
    output = tmp_path / "out"
    run = _pipeline(fleet, output)
    assert run.returncode == 0, run.stderr
    assert run.stderr and all(line.startswith("pipeline: ") for line in run.stderr.splitlines()), run.stderr
    assert "pipeline: 6/6 problems (100 %)" in run.stderr
    log = (output / "spark.log").read_text()
    assert "Using incubator modules" in log and "log4j" in log and "NativeCodeLoader" in log
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fleet.jsonl", "out"]


def test_a_failed_spark_job_quotes_the_end_of_its_log_and_keeps_it(fleet, tmp_path):
    output = tmp_path / "out"
    run = _pipeline(fleet, output, PYSPARK_PYTHON=str(tmp_path / "no-python"))  # no executor can start Python
    assert run.returncode == 2, run.stderr
    kept = tmp_path / "out.spark.log"
    assert "the Spark job failed" in run.stderr and f"Spark's log ({kept}) ends with:" in run.stderr
    assert "no-python" in kept.read_text() and "no-python" in run.stderr.split("ends with:")[1]
    assert "Traceback" not in run.stderr and not output.exists()


def test_a_spark_that_does_not_start_says_why(fleet, tmp_path):
    run = _pipeline(fleet, tmp_path / "out", JAVA_HOME=str(tmp_path / "no-java"))
    assert run.returncode == 2, run.stderr
    assert "Spark did not start" in run.stderr and f"{tmp_path / 'no-java'}/bin/java" in run.stderr
    assert "Traceback" not in run.stderr and (tmp_path / "out.spark.log").exists()
