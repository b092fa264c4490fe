"""Running on a cluster (issue 34, item 6): a Spark standalone cluster started here from
pyspark's own jars (a master and two workers on 127.0.0.1) whose workers do not have the driver's
virtualenv (no venv on PATH, no PYSPARK_PYTHON, nothing of it on PYTHONPATH), so the executors can
only solve with what the pipeline ships them: this environment packed (`optimizer.pipeline.ship`),
unpacked by Spark as `./environment`, with the goal plug-in the driver loads (the example `drain`
package, installed beside the virtualenv on the driver's PYTHONPATH). A worker is killed (with
its executor) mid-job; every problem is in the tables exactly once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.find_spark_home import _find_spark_home

from optimizer.generate import random_consumer_problem, random_streams_problem
from optimizer.model.problem import problem_to_data
from optimizer.pipeline.ship import environment_files

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("java") is None, reason="Java is not installed: Spark needs Java 17")]

PYSPARK_HOME = Path(_find_spark_home())
REPOSITORY = Path(__file__).resolve().parents[2]
PROBLEMS = 30


def _version() -> str:
    from optimizer import __version__

    return __version__


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _spark_installation(directory: Path) -> Path:
    """A Spark installation of the cluster's own, outside the driver's virtualenv: pyspark's
    scripts, jars and Python zips (hard links: the same files, nothing copied)."""
    for part in ("bin", "jars", "python"):
        shutil.copytree(PYSPARK_HOME / part, directory / part, copy_function=os.link)
    return directory


def _worker_environment(spark_home: Path) -> dict[str, str]:
    """What a cluster machine has: Java, Spark, a shell; not the driver's virtualenv."""
    environment = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "SPARK_HOME": str(spark_home)}
    environment |= {"SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1", "LANG": "C.UTF-8"}
    if "JAVA_HOME" in os.environ:
        environment["JAVA_HOME"] = os.environ["JAVA_HOME"]
    assert not any(str(Path(sys.prefix)) in value for value in environment.values())
    return environment


class Cluster:
    """A standalone master and workers, each a JVM in a process group of its own."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.spark_home = _spark_installation(directory / "spark")
        self.port = _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, *arguments: str) -> None:
        log = open(self.directory / f"{name}.log", "wb")  # the process has its own descriptor: closed below
        self.processes[name] = subprocess.Popen(
            [str(self.spark_home / "bin" / "spark-class"), *arguments], env=_worker_environment(self.spark_home), stdout=log, stderr=subprocess.STDOUT,
            cwd=self.directory, start_new_session=True,
        )  # fmt: skip
        log.close()

    def start_all(self, workers: int) -> None:
        """Start the master and `workers` workers, without waiting for them (`registered` does)."""
        self.start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(self.port), "--webui-port", "0")
        for number in range(1, workers + 1):
            work = self.directory / f"worker-{number}"
            work.mkdir()
            self.start(
                f"worker-{number}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
                "--work-dir", str(work), "--webui-port", "0", self.url,
            )  # fmt: skip

    def registered(self, workers: int, seconds: float = 120) -> None:
        """Until the master lists `workers` workers; AssertionError with its log when they do not register in time."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            registered = (self.directory / "master.log").read_text(errors="replace").count("Registering worker")
            if registered >= workers:
                return
            time.sleep(0.5)
        raise AssertionError(f"the workers did not register: {(self.directory / 'master.log').read_text(errors='replace')[-2000:]}")

    def kill(self, name: str) -> None:
        """The worker and everything it started (its executor): a machine lost."""
        os.killpg(self.processes[name].pid, signal.SIGKILL)
        self.processes[name].wait()

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture
def cluster(tmp_path):
    """The master and two workers, starting: the test waits for them (`Cluster.registered`) once the driver runs,
    whose packing of the environment takes longer than their start-up (a driver that comes first waits for the
    master, as Spark's client retries)."""
    cluster = Cluster(tmp_path)
    try:
        cluster.start_all(workers=2)
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def fleet(tmp_path) -> Path:
    """Problems that take Kafka's assignor and the exact engine a moment each, so that the job
    lasts the seconds a worker needs to be killed in."""
    documents = [problem_to_data(random_streams_problem(seed, tasks=24, clients=4, name=f"app-{seed:03d}")) for seed in range(PROBLEMS // 2)]
    documents += [
        problem_to_data(random_consumer_problem(seed, members=4, topics=2, partitions=(4, 12), name=f"group-{seed:03d}")) for seed in range(PROBLEMS // 2)
    ]
    path = tmp_path / "fleet.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in documents))
    return path


def _plugin_beside_the_venv(tmp_path: Path) -> Path:
    """docs/examples/drain-goal installed into a folder of its own (offline), as tests/engine does."""
    source, target = tmp_path / "drain-goal", tmp_path / "site"
    shutil.copytree(REPOSITORY / "docs" / "examples" / "drain-goal", source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index", "--target", str(target), str(source)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    return target


def test_executors_without_the_drivers_environment_solve_with_the_one_shipped_through_a_lost_worker(cluster, fleet, tmp_path):
    # A worker's machine has a Python, but not the package: executors left to it could not solve.
    worker = _worker_environment(cluster.spark_home)
    bare = subprocess.run(["python3", "-c", "import optimizer"], env=worker, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert bare.returncode != 0 and "No module named 'optimizer'" in bare.stderr
    output = tmp_path / "out"
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("PYSPARK_", "SPARK_"))}
    environment["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # packed by this run, not taken from an earlier one
    environment["SPARK_LOCAL_IP"] = "127.0.0.1"  # the driver on loopback too
    environment["PYTHONPATH"] = str(_plugin_beside_the_venv(tmp_path))  # the driver loads `drain`; the workers never see this path
    environment.pop("KAFKA_ASSIGNMENT_OPTIMIZER_PLUGINS", None)
    command = [
        sys.executable, "-m", "optimizer", "pipeline", "--input", str(fleet), "--output", str(output), "--master", cluster.url,
        "--solvers", "kafka,exact", "--batch-size", "2",
    ]  # fmt: skip
    driver = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        cluster.registered(workers=2)
    except BaseException:
        driver.kill()
        driver.wait()
        raise
    lines: list[str] = []
    killed = threading.Event()

    def read() -> None:
        assert driver.stderr is not None
        lines.extend(line.rstrip("\n") for line in driver.stderr)

    def drain() -> None:  # the summary on stdout, read so that the pipe never fills
        assert driver.stdout is not None
        driver.stdout.read()

    def kill_mid_job() -> None:
        # Once worker-1 runs an executor and some problems are solved, not all (the executors' marks
        # under the staging directory; the driver's progress lines are too sparse to wait for: a
        # first one may come only when everything is done).
        while driver.poll() is None and not killed.is_set():
            started = any(tmp_path.glob("worker-1/app-*/*/environment/bin/python"))
            solved = sum(len(mark.read_text().splitlines()) for mark in tmp_path.glob(".out.partial-*/progress/*") if mark.is_file())
            if started and 0 < solved < PROBLEMS:
                cluster.kill("worker-1")
                killed.set()
            time.sleep(0.1)

    watchers = [threading.Thread(target=read), threading.Thread(target=drain), threading.Thread(target=kill_mid_job)]
    for watcher in watchers:
        watcher.start()
    try:
        driver.wait(timeout=600)
    finally:
        if driver.poll() is None:
            driver.kill()
        for watcher in watchers:
            watcher.join()
    assert driver.returncode == 0, "\n".join(lines)
    assert killed.is_set(), "\n".join(lines)
    assert any("the executors' environment:" in line for line in lines)
    # Every problem once per solver, whatever the lost worker had done.
    summary = pq.read_table(output / "summary").to_pylist()
    expected = {(f"{kind}-{seed:03d}", solver): 1 for kind in ("app", "group") for seed in range(PROBLEMS // 2) for solver in ("kafka", "exact")}
    assert Counter((r["problem"], r["solver"]) for r in summary) == Counter(expected)
    assert all(r["status"] not in ("invalid", "error") for r in summary), [r["error"] for r in summary if r["error"]][:3]
    # Every row was solved with the plug-in loaded (the run checks the executors' set is the driver's).
    assert {r["plugins"] for r in summary} == {f"builtin=={_version()},drain==1.0.0"}
    copies = [(r["problem"], r["solver"], r["client"], r["task"], r["role"]) for r in pq.read_table(output / "assignments").to_pylist()]
    assert len(copies) == len(set(copies))
    # The executors ran the shipped Python (each unpacked it), and Spark lost one of them.
    shipped = sorted(tmp_path.glob("worker-*/app-*/*/environment/bin/python"))
    assert {p.parts[len(tmp_path.parts)] for p in shipped} == {"worker-1", "worker-2"}, shipped
    log = (output / "spark.log").read_text(errors="replace")
    assert "Lost executor" in log or "ExecutorLostFailure" in log or "worker lost" in log.lower(), log[-3000:]


def test_the_archive_holds_the_package_its_solvers_and_plugins_but_not_spark_nor_a_pointer_to_the_checkout():
    files = dict((target, source) for source, target in environment_files(Path(sys.prefix)))
    site = next(target.split("/optimizer/")[0] for target in files if target.endswith("/optimizer/cli.py"))
    for module in ("optimizer/pipeline/worker.py", "goals/builtin.py", "plugins/manager.py"):  # copied from the editable install
        assert f"{site}/{module}" in files and Path(files[f"{site}/{module}"]).is_file()
    assert any(target.startswith(f"{site}/kafka_assignment_optimizer-") and target.endswith("/entry_points.txt") for target in files)
    tops = {target[len(site) + 1 :].split("/")[0] for target in files if target.startswith(site + "/")}
    assert {"highspy", "ortools", "pulp", "scipy", "pyarrow", "pandas", "pydantic", "pluggy"} <= tops
    assert not tops & {"pyspark", "py4j", "pytest", "playwright", "mypy"}
    assert not any("__editable__" in target for target in files) and "bin/python" in files
