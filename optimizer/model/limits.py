"""The largest inputs accepted: sanity bounds, checked up front, listed in docs/validation.md.

Kafka sets none of these; they are far above real applications and groups, and they keep every
step whose time grows with the input (reading, validating, Kafka's assignors, checking a result,
building an exact model) within the time a command is given, instead of letting a typo (one
client with two billion threads, a topic with a million partitions) run for minutes or exhaust
memory.
"""

from __future__ import annotations

MAX_DOCUMENT_BYTES = 64 * 2**20
"""A JSON problem or solution file, or one line of a fleet's JSON Lines."""

MAX_YAML_BYTES = 8 * 2**20
"""A YAML problem or solution file (YAML reads at about 1 MB/s and holds about 55 bytes of
memory per byte of file while it is read; JSON reads at about 20 MB/s)."""

MAX_NAME_LENGTH = 1_000
"""An id, name, rack or tag value, in characters."""

MAX_THREADS = 1_000
"""`threads` (num.stream.threads) of one Streams client."""

MAX_CLIENTS = 10_000
"""Clients of a Streams application."""

MAX_TASKS = 100_000
"""Tasks of a Streams application."""

MAX_TASK_CLIENT_PAIRS = 100_000_000
"""Tasks x clients of a Streams application (the exact engine and some goals hold arrays of
that size)."""

MAX_MEMBERS = 10_000
"""Members of a consumer group."""

MAX_PARTITIONS = 100_000
"""Partitions of all topics of a consumer problem together."""

MAX_MODEL_VARIABLES = 5_000_000
"""Variables of an exact integer model; a larger one is not built: loaded into HiGHS a variable
takes 0.4 KB (a consumer group's model, 1.5 entries each) to 1.5 KB (a Streams model, 11 entries
each; measured at a million variables), and solving takes more, so 20 million did not fit this
project's 24 GB machine. The exact engine then returns its first point (issue 49)."""
