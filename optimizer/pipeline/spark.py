"""The SparkSession the pipeline runs on: local by default, any cluster with `--master`.

Local masters get the offline settings this job needs on a single machine: the driver on the
loopback address, no web UI, and the driver's own Python (the project's virtualenv) for the Python
workers. On a cluster the executors get this environment packed (`archive`, made by
`optimizer.pipeline.ship`; docs/pipeline.md) unless PYSPARK_PYTHON names a Python of theirs; the
plugin allowlist variable is passed on to them.

The JVM's own output (`Using incubator modules`, log4j's start-up lines, Hadoop's
`NativeCodeLoader` warning, task failures) is not the user's: given a `log` file, the JVM this
module starts writes its stdout and stderr there, and `SparkStartError` and the pipeline's errors
quote its last lines (`log_tail`) with its path.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from optimizer.errors import PipelineError
from plugins.manager import ALLOWLIST_ENV

DEFAULT_MASTER = "local[*]"
TAIL_LINES = 20
"""Lines of the JVM's log an error quotes."""

_STACK_FRAME = re.compile(r"\s+(at \S|\.\.\. \d+ more)")

_log: Path | None = None
"""Where the JVM this process started writes its output (None: the terminal, or not started here)."""


def requested_master(master: str | None = None) -> str:
    """The master `spark_session(master)` asks for: `master`, else `local[*]`; empty when started
    by spark-submit without one (its --master and its settings apply)."""
    if master is None and "PYSPARK_GATEWAY_PORT" in os.environ:
        return ""
    return master or DEFAULT_MASTER


def ships_environment(master: str) -> bool:
    """Whether a session for `master` (as `requested_master` gives it) gets this environment
    packed for its executors (`optimizer.pipeline.ship`): on a cluster master the pipeline starts
    itself, unless PYSPARK_PYTHON names the executors' Python already (the cluster's own)."""
    return bool(master) and not master.startswith("local") and "PYSPARK_PYTHON" not in os.environ


def spark_session(
    master: str | None = None, app_name: str = "kafka-assignment-optimizer", *, log: Path | None = None, archive: Path | None = None
):
    """A SparkSession for `master` (default `local[*]`), reusing a running one.

    `log`: the file the JVM's stdout and stderr go to, when this call starts the JVM (not under
    spark-submit, which started it, nor when one runs already: `spark_log()` says where that one
    writes). PipelineError when the JVM does not start, with the log's last lines.

    `archive`: a packed environment (`ship.executor_archive`) the executors unpack (Spark's
    `spark.archives`) and run their Python from (PYSPARK_PYTHON, which PySpark reads when the
    context is created)."""
    from pyspark.sql import SparkSession

    master = requested_master(master)
    settings = {
        "spark.app.name": app_name,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.python.worker.reuse": "true",
        "spark.sql.execution.pyspark.udf.faulthandler.enabled": "true",
    }
    if master:
        settings["spark.master"] = master
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        settings |= {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}
    if os.environ.get(ALLOWLIST_ENV) is not None:
        settings[f"spark.executorEnv.{ALLOWLIST_ENV}"] = os.environ[ALLOWLIST_ENV]
    if archive is not None:
        from optimizer.pipeline.ship import ALIAS, EXECUTOR_PYTHON

        settings["spark.archives"] = f"{archive}#{ALIAS}"
        os.environ["PYSPARK_PYTHON"] = EXECUTOR_PYTHON
    if log is not None:
        _start_jvm(settings, log)
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    # Warnings go to the log file when there is one; else only errors reach the terminal.
    session.sparkContext.setLogLevel("WARN" if _log is not None else "ERROR")
    return session


def _start_jvm(settings: dict[str, str], log: Path) -> None:
    """Start Spark's JVM (py4j's gateway) with its output in `log`, as PySpark's own
    `launch_gateway` offers (its `popen_kwargs`); nothing when a JVM runs already."""
    global _log
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return
    conf = SparkConf(loadDefaults=False)
    for key, value in settings.items():
        conf.set(key, value)
    log.parent.mkdir(parents=True, exist_ok=True)
    _log = log  # from now on: a JVM that exits at once has said why there
    with open(log, "ab") as output:  # the JVM keeps its own descriptor: this one can close
        try:
            gateway = launch_gateway(conf, popen_kwargs={"stdout": output, "stderr": output})
        except Exception as error:  # noqa: BLE001 - PySpark says only that the JVM exited: the log says why
            raise SparkStartError(f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else 'no reason given'}", log) from None
    SparkContext._ensure_initialized(gateway=gateway)


class SparkStartError(PipelineError):
    """Spark's JVM did not start (no Java, a bad setting): the message quotes the end of its log."""

    def __init__(self, reason: str, log: Path) -> None:
        super().__init__(f"Spark did not start ({reason}){log_tail(log)}")
        self.reason = reason
        self.log = log


def spark_log() -> Path | None:
    """The file the JVM this process started writes to (None: it writes to the terminal)."""
    return _log


def moved_log(path: Path) -> None:
    """The JVM's log file was renamed to `path` (the JVM writes on into it)."""
    global _log
    _log = path


def log_tail(log: Path | None = None, lines: int = TAIL_LINES) -> str:
    """`\\nSpark's log (PATH) ends with:\\n  ...` quoting its last `lines` lines but the frames of
    Java's stack traces (`at ...`, `... 28 more`: the messages and their causes say what failed),
    or that there is no log, or nothing in it."""
    log = log or _log
    if log is None:
        return ""
    try:
        with open(log, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 64 * 1024))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return f"\n(Spark's log {log} cannot be read)"
    last = [line for line in text.splitlines() if line.strip() and not _STACK_FRAME.match(line)][-lines:]
    if not last:
        return f"\n(Spark's log {log} is empty)"
    return f"\nSpark's log ({log}) ends with:\n" + "\n".join(f"  {line}" for line in last)
