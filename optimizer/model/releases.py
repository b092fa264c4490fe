"""Kafka releases: which Kafka's behaviour a problem asks for (`kafka.version`).

Kafka's assignors change between releases (docs/assignors/releases.md lists what changed where), so
"what Kafka would do" depends on the release a group runs. A problem names it with `kafka.version`:
a release line (`4.4`, the newest patch of that line the project knows), a release (`4.0.0`), or
`trunk`: Kafka's code after the newest release as the project reproduces it, unreleased changes and
open proposals included (per assignor in docs/assignors/). The default is the release the project
pins and runs in its tests (`DEFAULT_KAFKA_VERSION`).
"""

from __future__ import annotations

import re
from typing import Annotated, Protocol

from pydantic import BeforeValidator

KafkaRelease = tuple[int, ...]
"""A Kafka release as numbers, `(4, 4, 0)` for 4.4.0; `TRUNK` after every release."""

TRUNK: KafkaRelease = (9999,)
"""Kafka's trunk (and open pull requests the project reproduces): after every release."""

EARLIEST: KafkaRelease = ()
"""Before every release: an assignor's variant keyed so applies to every release the project
covers unless a later variant says otherwise."""

NEWEST_PATCH: dict[tuple[int, int], int] = {(3, 9): 2, (4, 0): 2, (4, 1): 2, (4, 2): 2, (4, 3): 1, (4, 4): 0}
"""The release lines the project covers, each with its newest patch release on Maven Central
(2026-11-25): `4.0` means 4.0.2."""

STREAMS_GROUPS_SINCE: KafkaRelease = (4, 1, 0)
"""KIP-1071's streams groups (`group.protocol: streams`) first ship in 4.1."""

DEFAULT_KAFKA_VERSION = "4.4"
"""The release the project reproduces by default: the one its JVM module pins (jvm/pom.xml)."""

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def parse_kafka_version(text: str) -> KafkaRelease:
    """`4.4` → (4, 4, 0) (the line's newest patch), `4.0.0` → (4, 0, 0), `trunk` → TRUNK; ValueError
    naming the lines the project covers otherwise."""
    value = text.strip().lower()
    if value == "trunk":
        return TRUNK
    match = _VERSION.fullmatch(value)
    lines = ", ".join(f"{major}.{minor}" for major, minor in NEWEST_PATCH)
    if match is None:
        raise ValueError(f"{text!r} is not a Kafka release: give a release line ({lines}), a release such as 4.0.0, or trunk")
    major, minor = int(match[1]), int(match[2])
    if (major, minor) not in NEWEST_PATCH:
        raise ValueError(f"Kafka {major}.{minor} is not covered: the project reproduces the release lines {lines} and trunk")
    patch = NEWEST_PATCH[(major, minor)] if match[3] is None else int(match[3])
    return (major, minor, patch)


def release_text(release: KafkaRelease) -> str:
    """The release as Kafka writes it: `4.4.0`, `trunk`, or `every release` for EARLIEST."""
    if release == TRUNK:
        return "trunk"
    return ".".join(map(str, release)) or "every release"


def kafka_version_text(value: object) -> str:
    """The `kafka.version` a problem gives, checked, in its written form (`4.4`, `4.0.0`, `trunk`).
    Problem files keep a number as written (`kafka.version: 4.10` is 4.10:
    `optimizer.sources.documents.TEXT_KEYS`); a float given from Python is read in its shortest
    form."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError("must be a Kafka release such as 4.4 or 4.0.0, or trunk")
    text = repr(value) if isinstance(value, float) else str(value)
    parse_kafka_version(text)
    return text.strip().lower()


def unchecked_patch(version: str) -> str | None:
    """What to say when `version` is a patch release newer than the newest the project checked on
    its line (`4.4.1`): it gets that line's latest variant, unchecked; None otherwise."""
    release = parse_kafka_version(version)
    if release == TRUNK or release[2] <= NEWEST_PATCH[(release[0], release[1])]:
        return None
    checked = f"{release[0]}.{release[1]}.{NEWEST_PATCH[(release[0], release[1])]}"
    asked = release_text(release)
    return f"Kafka {asked} is newer than the releases checked (up to {checked}): --solver kafka answers with {checked}'s assignors, unchecked against {asked}'s"


KafkaVersion = Annotated[str, BeforeValidator(kafka_version_text)]
"""The type of both kinds' `kafka.version` config field (`kafka_version_text` checks it)."""


class _Versioned(Protocol):
    @property
    def kafka_version(self) -> str: ...


class ReleaseOf:
    """Mixin of the configs with a `kafka_version` field: that field as a release."""

    @property
    def release(self: _Versioned) -> KafkaRelease:
        """`kafka.version` as a release."""
        return parse_kafka_version(self.kafka_version)
