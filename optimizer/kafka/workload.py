"""Applications to run on a sandbox, so that importing, solving and reporting can be tried on a real
cluster without writing any (`kafka-assign sandbox workload`): producers at set rates, consumer
groups and Kafka Streams applications, each kind in its own JVM, the project's test workloads
(`kao.jvm.ProducerRunner`, `kao.jvm.ConsumerGroupRunner`, `kao.jvm.StreamsAppRunner`, whose
Javadoc documents each spec).

A workload spec is a mapping with any of:

* `producers`: ProducerRunner's spec without `bootstrap` (`topics` to create, `producers` with their
  partition, records per second and value size);
* `consumer_groups`: a list of ConsumerGroupRunner specs without `bootstrap`;
* `streams_applications`: a list of StreamsAppRunner specs without `bootstrap` and `state_dir`
  (each application gets its own state directory under the workload's directory).

`start(sandbox, spec, directory)` starts every part, waits until each reports that it runs (its
group stable, its producers sending), and gives the running `Workload`; `Workload.stop()` ends them
(closing their stdin, the runners' signal to close their clients and exit; killed after a grace
period). The JVMs are tied to this process: they end with it, even when it is killed.
"""

from __future__ import annotations

import copy
import json
import select
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optimizer.errors import KafkaUnavailableError, UsageError
from optimizer.kafka.jvm import java
from optimizer.kafka.sandbox import Sandbox, tie_to_parent

READY_SECONDS = 240.0
"""How long the parts together may take to report that they run (Streams applications settle in
tens of seconds; a loaded 2-core machine needs more)."""

_PARTS = {"producers": "kao.jvm.ProducerRunner", "consumer_groups": "kao.jvm.ConsumerGroupRunner", "streams_applications": "kao.jvm.StreamsAppRunner"}

DEFAULT_SPEC: dict[str, Any] = {
    "producers": {
        "topics": {
            "orders": {"partitions": 6, "replication_factor": 2},
            "payments": {"partitions": 3, "replication_factor": 2},
            "clicks-input": {"partitions": 6, "replication_factor": 2},
        },
        "producers": [
            *({"topic": "orders", "partition": p, "records_per_second": rate, "value_bytes": 500} for p, rate in enumerate((400, 200, 100, 50, 50, 20))),
            *({"topic": "payments", "partition": p, "records_per_second": 30, "value_bytes": 300} for p in range(3)),
            *({"topic": "clicks-input", "partition": p, "records_per_second": 40, "value_bytes": 200, "key": f"user-{p}"} for p in range(6)),
        ],
    },
    "consumer_groups": [
        {
            "group": "billing", "protocol": "classic", "assignor": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
            "topics": {"orders": 6, "payments": 3}, "replication_factor": 2,
            "members": [{"rack": "a", "topics": ["orders", "payments"]}, {"rack": "b", "topics": ["orders", "payments"]}, {"rack": "c", "topics": ["orders"]}],
        },
        {
            "group": "audit", "protocol": "consumer", "assignor": "uniform", "topics": {"orders": 6, "payments": 3}, "replication_factor": 2,
            "members": [{"rack": "a", "topics": ["orders", "payments"]}, {"rack": "c", "topics": ["orders", "payments"]}],
        },
    ],
    "streams_applications": [
        {
            "application_id": "clicks", "protocol": "classic", "input_topic": "clicks-input", "partitions": 6, "replication_factor": 2,
            "num_standby_replicas": 1, "rack_aware_assignment_tags": ["zone"], "records": 300, "keys": 30,
            "instances": [
                {"rack": "a", "tags": {"zone": "a"}, "threads": 2}, {"rack": "b", "tags": {"zone": "b"}, "threads": 1},
                {"rack": "c", "tags": {"zone": "c"}, "threads": 1},
            ],
        },
    ],
}  # fmt: skip
"""`kafka-assign sandbox workload`'s default: the path docs/import.md walks through. Three groups
reading skewed topics over racks a, b and c with two replicas per partition (so leaders and replica
racks differ between partitions), and a classic Kafka Streams application with a standby."""


@dataclass
class Workload:
    """The running parts: their JVMs and what each reported when it ran."""

    processes: dict[str, subprocess.Popen[str]] = field(default_factory=dict)
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)

    def stop(self, grace: float = 60.0) -> None:
        """End every part: close its stdin, wait up to `grace` seconds in all, kill what is left."""
        for process in self.processes.values():
            if process.stdin is not None and not process.stdin.closed:
                try:
                    process.stdin.close()
                except OSError:
                    pass
        deadline = time.monotonic() + grace
        for process in self.processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def parts(sandbox: Sandbox, spec: dict[str, Any], directory: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, main class, the runner's spec) of every part of `spec`, in the order they start;
    UsageError naming what is not a workload spec."""
    if not isinstance(spec, dict):
        raise UsageError(f"a workload spec is a mapping of {', '.join(_PARTS)}, not {type(spec).__name__}")
    unknown = sorted(set(spec) - set(_PARTS))
    if unknown:
        raise UsageError(f"unknown workload part(s) {', '.join(map(repr, unknown))}: a spec has {', '.join(_PARTS)}")
    found: list[tuple[str, str, dict[str, Any]]] = []
    if spec.get("producers"):
        if not isinstance(spec["producers"], dict):
            raise UsageError("producers: expected a mapping (ProducerRunner's spec)")
        found.append(("producers", _PARTS["producers"], {**copy.deepcopy(spec["producers"]), "bootstrap": sandbox.bootstrap}))
    for kind, key in (("consumer_groups", "group"), ("streams_applications", "application_id")):
        entries = spec.get(kind) or []
        if not isinstance(entries, list):
            raise UsageError(f"{kind}: expected a list")
        for number, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get(key), str):
                raise UsageError(f"{kind}[{number}]: expected a mapping with {key!r}")
            runner = {**copy.deepcopy(entry), "bootstrap": sandbox.bootstrap}
            if kind == "streams_applications":
                runner["state_dir"] = str(directory / f"state-{entry[key]}")
            found.append((entry[key], _PARTS[kind], runner))
    names = [name for name, _, _ in found]
    if len(set(names)) != len(names):
        raise UsageError(f"workload parts must have distinct names: {', '.join(names)}")
    return found


def start(sandbox: Sandbox, spec: dict[str, Any], directory: Path, ready_seconds: float = READY_SECONDS) -> Workload:
    """Start every part of `spec` on `sandbox` and wait until each reports that it runs;
    KafkaUnavailableError naming the part (and the end of its log) when one fails or does not run
    within `ready_seconds`, after stopping what started."""
    directory.mkdir(parents=True, exist_ok=True)
    workload = Workload()
    deadline = time.monotonic() + ready_seconds
    every = parts(sandbox, spec, directory)
    try:  # the groups first: a Streams runner settles once it processed its input, which producers would keep growing
        for phase in ([part for part in every if part[0] != "producers"], [part for part in every if part[0] == "producers"]):
            for name, main, runner in phase:
                with (directory / f"{name}.log").open("w", encoding="utf-8") as log:
                    process = subprocess.Popen(
                        java(main, heap_mb=384), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, preexec_fn=tie_to_parent,
                    )  # fmt: skip
                assert process.stdin is not None
                process.stdin.write(json.dumps(runner) + "\n")
                process.stdin.flush()
                workload.processes[name] = process
            for name, _, _ in phase:
                workload.reports[name] = _report(workload.processes[name], name, directory, deadline, ready_seconds)
    except BaseException:
        workload.stop(grace=20.0)
        raise
    return workload


def _report(process: subprocess.Popen[str], name: str, directory: Path, deadline: float, ready_seconds: float) -> dict[str, Any]:
    """The part's first line, once it runs; KafkaUnavailableError with the end of its log otherwise."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
    line = process.stdout.readline() if ready else ""
    if not line:
        log = (directory / f"{name}.log").read_text(encoding="utf-8", errors="replace").strip().splitlines()[-10:]
        raise KafkaUnavailableError(f"workload part {name!r} did not run within {ready_seconds:g} s:\n" + "\n".join(log))
    report: dict[str, Any] = json.loads(line)
    return report


class RunnerError(KafkaUnavailableError):
    """A workload runner gave no answer in time, or answered `{"error": ...}`."""


class Runner:
    """One workload runner JVM driven command by command (`kao.jvm.ConsumerGroupRunner`,
    `kao.jvm.StreamsAppRunner`, `kao.jvm.ProducerRunner`): its spec on stdin, then one JSON line
    per command; its stderr in `log`. Tied to this process: it ends with it."""

    def __init__(self, main: str, spec: dict[str, Any], log: Path, heap_mb: int = 384, properties: dict[str, str] | None = None):
        self.name = str(spec.get("group") or spec.get("application_id") or main.rsplit(".", 1)[-1])
        self.log = log
        with log.open("w", encoding="utf-8") as err:
            self.process = subprocess.Popen(
                java(main, heap_mb=heap_mb, properties=properties), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                preexec_fn=tie_to_parent,
            )  # fmt: skip
        self.send(spec)

    def send(self, data: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(data) + "\n")
        self.process.stdin.flush()

    def line(self, what: str = "its start", seconds: float = READY_SECONDS) -> dict[str, Any]:
        """The runner's next answer; RunnerError (with the end of its log) when there is none within
        `seconds`, or when it is an error."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], seconds)
        text = self.process.stdout.readline() if ready else ""
        if not text:
            raise RunnerError(f"{self.name}: no answer to {what} within {seconds:g} s (log {self.log}):\n{self.tail()}")
        answer: dict[str, Any] = json.loads(text)
        if "error" in answer:
            raise RunnerError(f"{self.name}: {what}: {answer['error']} (log {self.log})\n{self.tail()}")
        return answer

    def ask(self, command: dict[str, Any], seconds: float = READY_SECONDS) -> dict[str, Any]:
        self.send(command)
        return self.line(json.dumps(command), seconds)

    def tail(self, lines: int = 25) -> str:
        return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])

    def end(self, grace: float = 60.0) -> None:
        """Close its stdin (the runners' signal to close their clients and exit); killed after `grace`."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
