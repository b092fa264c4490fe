"""Kafka's identifiers: task ids `<subtopology>_<partition>` and partition ids `<topic>-<partition>`.

Numbers are written without leading zeros so that every task and partition has exactly one
spelling; that keeps sets of ids comparable and results deterministic. A task id read with them
(`0_05`, which Kafka's TaskId.parse reads as 0_5) is kept as Kafka writes it. Ids are built and
split only here: `task_id` and `partition_id` build them, `parse_task_id` and `parse_partition_id`
check and split ids from outside, `task_key` and `partition_key` split ids already checked (and
are their sort keys). The module also holds the checked field types of names and numbers.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
import uuid
from collections.abc import Iterable
from typing import Annotated, Any, NamedTuple

from pydantic import AfterValidator, BeforeValidator, Field, Strict, StringConstraints

from optimizer.model.limits import MAX_NAME_LENGTH

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

# The patterns are used with fullmatch (`^...$` would also accept a trailing newline).
_NUMBER = r"(?:0|[1-9][0-9]*)"
# Kafka's TaskId.parse reads each number with Integer.parseInt: leading zeros allowed ('0_05' is 0_5)
_TASK_ID = re.compile(r"([0-9]+)_([0-9]+)")
# Both numbers at most 9 digits, so within a Java int: the usual id, checked without parsing it.
_SHORT_TASK_ID = re.compile(r"(?:0|[1-9][0-9]{0,8})_(?:0|[1-9][0-9]{0,8})")
# Topic names may themselves contain '-': the partition number is what follows the last '-'.
_PARTITION_ID = re.compile(rf"(.+)-({_NUMBER})")
# Kafka's legal topic characters (Topic.validate): ASCII alphanumerics, '.', '_' and '-', at most 249.
_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]{1,249}")


class TaskKey(NamedTuple):
    """A task id split; keys sort as Kafka's TaskId does."""

    subtopology: int
    partition: int


class PartitionKey(NamedTuple):
    """A partition id split; keys sort by topic, then partition number."""

    topic: str
    partition: int


def parse_task_id(task_id: object) -> TaskKey:
    """Split `"1_3"` into `TaskKey(1, 3)`; ValueError for anything else."""
    match = _TASK_ID.fullmatch(task_id) if isinstance(task_id, str) else None
    if match is None:
        raise ValueError(
            f"malformed task id {shown(task_id)}: expected '<subtopology>_<partition>' with whole "
            "numbers, for example '0_3'"
        )
    key = TaskKey(int(match.group(1)), int(match.group(2)))
    if max(key) > INT32_MAX:
        raise ValueError(f"task id {shown(task_id)}: subtopology and partition are Java ints (at most {INT32_MAX})")
    return key


def parse_partition_id(partition_id: object) -> PartitionKey:
    """Split `"orders-eu-3"` into `PartitionKey("orders-eu", 3)`; ValueError for anything else."""
    match = _PARTITION_ID.fullmatch(partition_id) if isinstance(partition_id, str) else None
    if match is None or not _TOPIC_NAME.fullmatch(match.group(1)):
        raise ValueError(
            f"malformed partition id {shown(partition_id)}: expected '<topic>-<partition>', for "
            "example 'orders-3'"
        )
    key = PartitionKey(match.group(1), int(match.group(2)))
    if key.partition > INT32_MAX:
        raise ValueError(f"partition id {shown(partition_id)}: the partition is a Java int (at most {INT32_MAX})")
    return key


# The two splits below return plain tuples, equal to the keys (and hashing alike): building a
# NamedTuple costs more than the split itself, and they run over every partition of a group.


def task_key(task_id: str) -> tuple[int, int]:
    """`(subtopology, partition)` of a task id known to be well formed (a `TaskId` field, or built
    by `task_id`): split without checking, for loops over many ids; `parse_task_id` checks ids
    from outside. Also the sort key of task ids: Kafka's TaskId order."""
    subtopology, _, partition = task_id.partition("_")
    return int(subtopology), int(partition)


def partition_key(partition_id: str) -> tuple[str, int]:
    """`(topic, partition)` of a partition id known to be well formed (a `PartitionId` field, or
    built by `partition_id`): split at the last '-' without checking, for loops over many ids;
    `parse_partition_id` checks ids from outside. Also the sort key of partition ids: topic, then
    partition number."""
    topic, _, partition = partition_id.rpartition("-")
    return topic, int(partition)


def task_id(subtopology: int, partition: int) -> str:
    """`task_id(1, 3)` is `"1_3"`; `task_id(*key)` for a `TaskKey`."""
    return f"{subtopology}_{partition}"


def partition_id(topic: str, partition: int) -> str:
    """`partition_id("orders-eu", 3)` is `"orders-eu-3"`; `partition_id(*key)` for a `PartitionKey`."""
    return f"{topic}-{partition}"


def name_uuid_bytes(text: str) -> bytes:
    """`java.util.UUID.nameUUIDFromBytes(text.getBytes(UTF_8))` as 16 bytes (an MD5, version 3)."""
    digest = bytearray(hashlib.md5(text.encode("utf-8"), usedforsecurity=False).digest())
    digest[6] = (digest[6] & 0x0F) | 0x30
    digest[8] = (digest[8] & 0x3F) | 0x80
    return bytes(digest)


def kafka_uuid_text(raw: bytes) -> str:
    """Kafka's `Uuid.toString()`: URL-safe base64 without padding (22 characters)."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def kafka_uuid_bytes(text: str) -> bytes:
    """The 16 bytes of a Kafka `Uuid` in its `toString()` form (`Uuid.fromString`); ValueError
    when `text` is not one."""
    if len(text) != 22 or not re.fullmatch(r"[A-Za-z0-9_-]{22}", text):
        raise ValueError("22 characters of URL-safe base64")
    raw = base64.urlsafe_b64decode(text + "==")
    if kafka_uuid_text(raw) != text:
        raise ValueError("not the canonical form of 16 bytes")
    return raw


def _check_topic_id(value: str) -> str:
    try:
        kafka_uuid_bytes(value)
    except ValueError as error:
        shown = value if len(value) <= 60 else f"{value[:60]}..."
        raise ValueError(f"{shown!r} is not a topic id as Kafka writes one (Uuid.toString(): {error})") from None
    return value


TopicUuid = Annotated[str, AfterValidator(_check_topic_id)]
"""A Kafka topic id (`Uuid.toString()`: 22 characters of URL-safe base64)."""


def process_id_of(client: str) -> str:
    """The process id a streams-group member of `client` reports: `UUID.nameUUIDFromBytes("process:"
    + client)` in its 36-character form."""
    return str(uuid.UUID(bytes=name_uuid_bytes(f"process:{client}")))


_PROCESS_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _check_process_id(value: str) -> str:
    if _PROCESS_ID.fullmatch(value) is None:
        shown = value if len(value) <= 60 else f"{value[:60]}..."
        raise ValueError(f"{shown!r} is not a process id as Kafka Streams writes one (a UUID: 8-4-4-4-12 lowercase hexadecimal digits)")
    return value


ProcessId = Annotated[str, AfterValidator(_check_process_id)]
"""A Kafka Streams process id (`UUID.toString()`)."""


def member_id_of(client: str, thread: int) -> str:
    """The member id of thread `thread` of `client` in a streams group, when the client does not
    list its members: `Uuid(UUID.nameUUIDFromBytes("member:" + client + ":" + thread))`."""
    return kafka_uuid_text(name_uuid_bytes(f"member:{client}:{thread}"))


def _check_task_id(value: str) -> str:
    """`value` as Kafka writes it: '0_05' (which Kafka's TaskId.parse reads) becomes '0_5'."""
    if _SHORT_TASK_ID.fullmatch(value) is None:
        return task_id(*parse_task_id(value))  # raises for a malformed id
    return value


def distinct_task_keys(value: object) -> object:
    """A mapping keyed by task ids as it is, unless two keys are one task as Kafka reads them
    ('0_05' and '0_5'), where validation would keep one and drop the other without a word."""
    if isinstance(value, dict):
        seen: dict[TaskKey, str] = {}
        for key in value:
            try:
                parsed = parse_task_id(key)
            except ValueError:
                continue  # reported by the key's own validation
            if parsed in seen:
                raise ValueError(f"task {task_id(*parsed)} is given twice, as {shown(seen[parsed])} and {shown(key)}")
            seen[parsed] = key
    return value


def _check_partition_id(value: str) -> str:
    parse_partition_id(value)
    return value


def _check_topic_name(value: str) -> str:
    if not _TOPIC_NAME.fullmatch(value) or value in (".", ".."):
        raise ValueError(
            f"illegal topic name {shown(value)}: Kafka allows 1 to 249 characters of a-z, A-Z, 0-9, "
            "'.', '_' and '-'"
        )
    return value


TaskId = Annotated[str, AfterValidator(_check_task_id)]
PartitionId = Annotated[str, AfterValidator(_check_partition_id)]
TopicName = Annotated[str, AfterValidator(_check_topic_name)]
# C0 and C1 control characters, and the invisible format characters that reorder or hide text
# (bidirectional overrides such as U+202E, zero-width spaces, the byte-order mark): ids are
# printed in terminals, tables and reports, where these would recolour, move or hide the text.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def shown(value: object, limit: int = 60) -> str:
    """`value` as it is quoted in messages: repr() (which escapes control and invisible
    characters), shortened past `limit` characters with the full length said."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value):,} characters)"
    text = repr(value)
    return text if len(text) <= limit + 2 else f"{text[:limit]}... ({len(text):,} characters)"


def described(value: object) -> str:
    """What a parsed JSON or YAML value is, in words: `a mapping`, `a list`, `a text`, ..."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    names = {dict: "a mapping", list: "a list", tuple: "a list", str: "a single text", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def escape_unprintable(text: str) -> str:
    """`text` with control and invisible format characters written as escapes (for paths and
    other text that is not an id but is printed)."""
    return _UNPRINTABLE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def check_name(value: str) -> str:
    """`value` if it can be an id, name, rack or tag (see `Name`); ValueError saying why not."""
    if len(value) > MAX_NAME_LENGTH:
        raise ValueError(f"is {len(value):,} characters long: at most {MAX_NAME_LENGTH:,}")
    bad = _UNPRINTABLE.search(value)
    if bad is not None:
        raise ValueError(
            f"{shown(value)} contains the control character U+{ord(bad.group()):04X} at position "
            f"{bad.start()}: ids, names, racks and tags are printed in terminals and reports"
        )
    return value


Name = Annotated[str, StringConstraints(min_length=1), AfterValidator(check_name)]
"""An id, name, rack or tag: 1 to MAX_NAME_LENGTH characters, none of them a control character."""


# Data fields are strict: `threads: true` or `stateful: "yes"` is a wrong type, not a 1 or a True.
StrictBool = Annotated[bool, Strict()]
Int32 = Annotated[int, Strict(), Field(ge=0, le=INT32_MAX)]
Int64 = Annotated[int, Strict(), Field(ge=0, le=INT64_MAX)]


def _kafka_number(value: object) -> object:
    # Kafka configs come from properties files, where "1" is the number 1; true and 1.5 are not.
    if isinstance(value, bool) or isinstance(value, float):
        raise ValueError(f"expected a whole number, got {shown(value)}")
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return value


KafkaInt = Annotated[int, BeforeValidator(_kafka_number), Strict()]


MAX_BYTES_PER_SECOND = 10**13
"""Sanity bound of a partition's or topic's throughput (10 TB/s)."""
MAX_WEIGHT = 10**6
"""Sanity bound of a task's processing weight and of a client's (member's) capacity."""


def _real_number(value: object) -> object:
    # A weight is a number in the file: true, "5" or null-like strings are wrong types, not numbers.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {shown(value)}")
    if not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {value}")
    return float(value)


BytesPerSecond = Annotated[
    float, BeforeValidator(_real_number), Field(ge=0, le=MAX_BYTES_PER_SECOND, allow_inf_nan=False)
]
"""Bytes per second into a partition (or into each partition of a topic): 0 to 10 TB/s."""
Weight = Annotated[float, BeforeValidator(_real_number), Field(ge=0, le=MAX_WEIGHT, allow_inf_nan=False)]
"""A task's processing weight (1: an ordinary task), 0 to 1,000,000."""
Capacity = Annotated[float, BeforeValidator(_real_number), Field(ge=0.001, le=MAX_WEIGHT, allow_inf_nan=False)]
"""A client's (member's) capacity as a multiple of the default instance (1), at least 0.001
(capacities are counted in whole thousandths)."""
MAX_PRICE = 10**6
"""Sanity bound of a price per gigabyte."""
Price = Annotated[float, BeforeValidator(_real_number), Field(ge=0, le=MAX_PRICE, allow_inf_nan=False)]
"""A price per gigabyte of cross-zone traffic (any currency), 0 to 1,000,000."""


def _currency_code(value: Any) -> Any:
    # ISO 4217 codes are written in capitals; `usd` is read as USD.
    return value.strip().upper() if isinstance(value, str) else value


Currency = Annotated[str, BeforeValidator(_currency_code), StringConstraints(pattern=r"^[A-Z]{3}$")]
"""The currency of a price: an ISO 4217 code such as USD or EUR (any letter case; kept in capitals)."""
MILLI = 1000
"""Weights, capacities and loads per capacity are counted in thousandths in the integer models."""


def whole_rate(rate: float) -> int:
    """A rate in whole bytes per second, as every goal, metric and report counts it (halves up)."""
    return math.floor(rate + 0.5)


def mean_rate(rates: Iterable[float | None]) -> float:
    """The mean of the known rates (None: unknown), 1 when none is known: what a partition without
    a rate counts for (docs/decisions.md, "Partitions without a rate")."""
    known = [rate for rate in rates if rate is not None]
    return sum(known) / len(known) if known else 1.0


def milli(value: float) -> int:
    """`value` in whole thousandths (halves up): weights and capacities in the integer models."""
    return math.floor(value * MILLI + 0.5)


_DIGIT_RUNS = re.compile(r"([0-9]+)")


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key that compares digit runs as numbers: `client-2` < `client-10`, `0_9` < `0_10`.

    Ties (`01` and `1`) are broken by the text itself, so the order is total.
    """
    parts = _DIGIT_RUNS.split(text)
    return tuple(int(part) if odd else part for odd, part in zip([0, 1] * len(parts), parts, strict=False)), text
