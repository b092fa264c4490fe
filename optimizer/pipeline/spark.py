"""The SparkSession the pipeline runs on: local by default, any cluster with `--master`.

Local masters get the offline settings this job needs on a single machine: the driver on the
loopback address, no web UI, and the driver's own Python (the project's virtualenv) for the Python
workers. On a cluster, the executors need the package and the same plugins installed (see
docs/pipeline.md); the plugin allowlist variable is passed on to them.
"""

from __future__ import annotations

import os
import sys

from plugins.manager import ALLOWLIST_ENV

DEFAULT_MASTER = "local[*]"


def requested_master(master: str | None = None) -> str:
    """The master `spark_session(master)` asks for: `master`, else `local[*]`; empty when started
    by spark-submit without one (its --master and its settings apply)."""
    if master is None and "PYSPARK_GATEWAY_PORT" in os.environ:
        return ""
    return master or DEFAULT_MASTER


def spark_session(master: str | None = None, app_name: str = "kafka-assignment-optimizer"):
    """A SparkSession for `master` (default `local[*]`), reusing a running one."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    master = requested_master(master)
    if master:
        builder = builder.master(master)
    builder = (
        builder.appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.python.worker.reuse", "true")
        .config("spark.sql.execution.pyspark.udf.faulthandler.enabled", "true")
    )
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    if os.environ.get(ALLOWLIST_ENV) is not None:
        builder = builder.config(f"spark.executorEnv.{ALLOWLIST_ENV}", os.environ[ALLOWLIST_ENV])
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
