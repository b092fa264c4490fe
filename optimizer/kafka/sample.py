"""Bytes per second into each partition of some topics, measured on a live cluster over a window by
the adapter `kao.jvm.Sample` (docs/import-design.md, section 6): the growth of each partition's
leader replica's log (Admin describeLogDirs, the on-disk bytes that fetches send), with its earliest
offset and its log end offset to see what else happened to the log. The window is cut into intervals
of about a second (at most 30). An interval where the log shrank (retention, compaction) or the
leader moved is estimated: its records count at the bytes per record measured over the other
intervals. One where the earliest offset moved while the log grew (deleteRecords frees no bytes until
a later retention check) keeps its growth. Either way the partition's rate says so.

`sample_rates` raises:

* `UsageError` for arguments that cannot be sampled (no topics, a name Kafka cannot have, a window
  not in (0, MAX_SAMPLE_SECONDS], a timeout not above 0);
* `InvalidInputError` for topics the cluster does not know (naming them), also when deleted while
  sampling;
* `KafkaUnavailableError` when the brokers cannot be reached (or refuse the credentials) within
  `timeout`, or when a partition had no leader at an end of the window (naming it: retry later).

The optional `command_config` is a properties file as Kafka's CLI tools take it (`--command-config`):
only its path is passed to the JVM, never its contents.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optimizer.errors import InvalidInputError, KafkaUnavailableError, UsageError
from optimizer.kafka.describe import run_adapter
from optimizer.model.ids import MAX_BYTES_PER_SECOND
from optimizer.model.issues import Issue, Severity

ADAPTER = "kao.jvm.Sample"
MAX_SAMPLE_SECONDS = 3600.0
"""The longest window: an hour (the adapter holds one snapshot of every partition per interval)."""

DECIMALS = 1
"""Rates are rounded to 0.1 byte per second: below what a window of seconds can resolve, and
short in a problem file."""

_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]{1,249}")
"""A name Kafka accepts for a topic (`org.apache.kafka.common.internals.Topic.validate`)."""


@dataclass(frozen=True)
class Rate:
    """One partition's rate over the sampling window."""

    bytes_per_second: float
    """Bytes appended to the partition's log per second (its leader replica's on-disk bytes: what
    fetches send, compressed when the producers compressed), rounded to 0.1."""
    estimated: bool
    """Whether the rate is not a plain measurement of the leader's log growth: part of the window
    counted from offsets (the log shrank, the leader moved, or the leader, its size or its offsets
    were missing at a snapshot), or the earliest offset moved while the log grew (deleteRecords, or a
    retention that deleted less than was written meanwhile)."""
    why: str | None
    """What happened and what the rate rests on, when estimated; None otherwise."""


def sample_rates(
    bootstrap: str, topics: Iterable[str], seconds: float, command_config: Path | None = None, timeout: float = 30.0,
    unmeasured: list[str] | None = None,
) -> dict[tuple[str, int], Rate]:  # fmt: skip
    """Every partition of `topics` on the cluster at `bootstrap` (`HOST:PORT[,HOST:PORT]`) with its
    rate over a window of `seconds`, in topic and partition order. Takes about `seconds` plus a JVM's
    start; `timeout` bounds each request to the brokers."""
    names = checked_arguments(topics, seconds, timeout)
    arguments = [bootstrap, "--topics", ",".join(names), "--seconds", repr(float(seconds)), "--timeout-ms", str(max(1, int(timeout * 1000)))]
    if command_config is not None:
        arguments += ["--command-config", str(command_config)]
    source = f"kafka://{bootstrap}"
    shown = ", ".join(names) if len(names) <= 5 else f"{', '.join(names[:5])} and {len(names) - 5} more topics"
    try:
        # run_adapter allows 3 x its timeout (+ a JVM's start): the window comes on top of the requests' timeout
        data = run_adapter(ADAPTER, arguments, timeout + seconds / 3, bootstrap, "", f"sampling {shown} on {bootstrap}")
    except InvalidInputError as error:  # the adapter's unknown-topic error names the topics in quotes
        unknown = [name for name in names if f"'{name}'" in str(error)]
        if not unknown:
            raise InvalidInputError(source, [_error(f"a topic of {shown} does not exist on {bootstrap} (deleted while sampling?): {error}")]) from None
        listed = ", ".join(repr(name) for name in unknown)
        if len(unknown) > 1:
            message = f"topics {listed} do not exist on {bootstrap} (or were deleted while sampling)"
        else:
            message = f"topic {listed} does not exist on {bootstrap} (or was deleted while sampling)"
        raise InvalidInputError(source, [_error(message)]) from None
    return rates_from_sample(data, bootstrap, unmeasured)


def checked_arguments(topics: Iterable[str], seconds: float, timeout: float) -> list[str]:
    """The topic names, sorted and without repeats, once `topics`, `seconds` and `timeout` are
    known to be usable; UsageError naming what is not."""
    if isinstance(topics, str):
        raise UsageError(f"topics must be a list of topic names, not the string {topics!r}")
    names = sorted(set(topics))
    if not names:
        raise UsageError("no topics to sample: name at least one")
    for name in names:
        if not isinstance(name, str) or not _TOPIC_NAME.fullmatch(name) or name in (".", ".."):
            raise UsageError(f"{name!r} is not a topic name Kafka accepts (1 to 249 of the characters a-z, A-Z, 0-9, '.', '_' and '-')")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 < seconds <= MAX_SAMPLE_SECONDS:
        raise UsageError(f"the sampling window must be more than 0 and at most {MAX_SAMPLE_SECONDS:g} seconds, not {seconds!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < math.inf:
        raise UsageError(f"the timeout must be a number of seconds above 0, not {timeout!r}")
    return names


def rates_from_sample(data: Mapping[str, Any], bootstrap: str, unmeasured: list[str] | None = None) -> dict[tuple[str, int], Rate]:
    """The adapter's answer as rates, in topic and partition order. A partition whose rate could
    not be measured (no leader at an end of the window) is appended to `unmeasured` as
    `TOPIC-PARTITION (why)` and left out; without that list, KafkaUnavailableError names them."""
    rates: dict[tuple[str, int], Rate] = {}
    missing: list[str] = []
    for entry in sorted(data["partitions"], key=lambda p: (p["topic"], p["partition"])):
        key = (str(entry["topic"]), int(entry["partition"]))
        if entry.get("bytes_per_second") is None:
            missing.append(f"{key[0]}-{key[1]} ({entry.get('why')})")
            continue
        value = min(float(MAX_BYTES_PER_SECOND), round(max(0.0, float(entry["bytes_per_second"])), DECIMALS))
        rates[key] = Rate(bytes_per_second=value, estimated=bool(entry["estimated"]), why=entry.get("why"))
    if missing and unmeasured is None:
        plural = "s" if len(missing) > 1 else ""
        raise KafkaUnavailableError(f"the rate of partition{plural} {', '.join(missing)} could not be measured on {bootstrap}: retry later")
    if unmeasured is not None:
        unmeasured.extend(missing)
    return rates


def _error(message: str) -> Issue:
    return Issue(severity=Severity.ERROR, message=message)
