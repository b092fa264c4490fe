"""The installed version of kafka-assignment-optimizer, recorded in every solution."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kafka-assignment-optimizer")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"
