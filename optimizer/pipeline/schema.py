"""The pipeline's tables: what every run writes, whichever runner wrote it.

An output directory holds five Parquet tables:

* `summary/`: one row per (problem, solver): how it went (`status`, `error`), sizes, the headline
  metrics in columns of their own, as applied now and (`target_*`) where the plan ends, the plan's
  rounds and restore volume, every goal (target value and value now) and every metric as JSON,
  the solve time;
* `assignments/`: one row per task or partition copy: (problem, solver, client, task, role);
* `targets/`: the same for the target each plan reaches (the assignment itself when it is the
  target): what the report's solution files and "what moves where" read;
* `problems/`: (problem, document): each valid problem's document as read, for the report's
  racks and clients;
* `plugins/`: the plugins loaded (name, version), the same on the driver and every worker.

Statuses: a solver's own (`optimal`, `feasible`, `time_limit`, `infeasible`, `heuristic`: the worst
over its goals; `heuristic` for `kafka` and `kip925`), or `invalid` (the problem document was
rejected: `error` names every problem in it) or `error` (the solver could not run on it: `error`
says why). A row exists for every (problem, solver) pair of the input, whatever happened.
"""

from __future__ import annotations

import pyarrow as pa

SUMMARY_COLUMNS: list[tuple[str, pa.DataType, str]] = [
    ("problem", pa.string(), "the problem's name (unique within the input)"),
    ("kind", pa.string(), "streams or consumer (null when the document has no valid kind)"),
    ("solver", pa.string(), "kafka, kip925, exact, cpsat, milp or flow"),
    ("status", pa.string(), "worst goal status, or invalid / error"),
    ("error", pa.string(), "why there is no assignment (null when there is one)"),
    ("tasks", pa.int64(), "tasks (Streams) or partitions (consumer)"),
    ("clients", pa.int64(), "clients (Streams) or members (consumer)"),
    ("racks", pa.int64(), "distinct racks of the clients or members"),
    ("seconds", pa.float64(), "wall time of solve(): normalising, solving, scoring the goals and the evaluator's check (not parsing the document)"),
    ("followup_rebalance", pa.bool_(), "whether a probing rebalance is needed (warm-ups or withheld partitions)"),
    ("cross_rack_partitions", pa.int64(), "partitions read across racks by actives, standbys and warm-ups (consumer: assignments)"),
    ("moves", pa.int64(), "Streams: active + standby moves; consumer: owned partitions moved"),
    ("load_skew", pa.float64(), "Streams: active load skew per thread; consumer: max - min partitions"),
    ("kip925_cost", pa.int64(), "KIP-925's cost of the actives (Streams only)"),
    ("warmups", pa.int64(), "warm-up replicas started now (Streams only)"),
    ("target_cross_rack_partitions", pa.int64(), "cross_rack_partitions of the target, where the plan ends (docs/transition.md)"),
    ("target_moves", pa.int64(), "moves of the target (from the previous assignment)"),
    ("target_load_skew", pa.float64(), "load_skew of the target"),
    ("followup_rebalances", pa.int64(), "rebalances after this one until the target holds (Streams: probing rebalances)"),
    ("plan_warmups", pa.int64(), "warm-up replicas over the whole plan (Streams only)"),
    ("restore_offsets", pa.int64(), "changelog offsets restored over the whole plan (Streams only; where known)"),
    ("seconds_to_target", pa.float64(), "follow-up rebalances x probing.rebalance.interval.ms (a lower bound; consumers: 0)"),
    ("plan", pa.string(), "JSON: the transition plan (rounds: warm-ups, moves, restore offsets)"),
    ("cross_rack_bytes", pa.int64(), "bytes per second read across racks by actives, standbys and warm-ups (null when the problem gives no rate)"),
    ("target_cross_rack_bytes", pa.int64(), "cross_rack_bytes of the target"),
    ("zone_bytes", pa.string(), "JSON object: the target's cross-rack bytes per second by reader rack, then rack read from (empty without rates)"),
    ("price_per_gb", pa.float64(), "the problem's own price per GB of cross-zone traffic (null: the run's --price-per-gb applies)"),
    ("currency", pa.string(), "the problem's own currency of price_per_gb, ISO 4217 (null: the run's --currency, else USD)"),
    ("config_change", pa.string(), "kafka rows: a configuration change alone that Kafka's assignor would read less across racks with (null: none)"),
    ("config_target_cross_rack_partitions", pa.int64(), "target_cross_rack_partitions of Kafka's assignor with config_change"),
    ("config_target_cross_rack_bytes", pa.int64(), "target_cross_rack_bytes of Kafka's assignor with config_change"),
    ("config_moves", pa.int64(), "moves of Kafka's assignor with config_change, as applied now"),
    ("config_followup_rebalances", pa.int64(), "followup_rebalances of Kafka's plan with config_change"),
    ("config_restore_offsets", pa.int64(), "restore_offsets of Kafka's plan with config_change"),
    ("config_seconds_to_target", pa.float64(), "seconds_to_target of Kafka's plan with config_change"),
    ("goals", pa.string(), "JSON list of {name, value, status, bound, gap, seconds}"),
    ("metrics", pa.string(), "JSON object: every evaluator metric"),
    ("rack_traffic", pa.string(), "JSON object: rack -> partitions read across racks by its clients"),
    ("warnings", pa.string(), "JSON list of the problem's warnings (what Kafka tolerates)"),
    ("plugins", pa.string(), "plugins loaded by the process that solved it: name==version, comma-separated"),
]

ASSIGNMENT_FIELDS: list[tuple[str, pa.DataType]] = [
    ("client", pa.string()),
    ("task", pa.string()),
    ("role", pa.string()),
]

SUMMARY_SCHEMA = pa.schema([(name, type_) for name, type_, _ in SUMMARY_COLUMNS])
"""The summary table."""

ASSIGNMENT_STRUCT = pa.struct(ASSIGNMENT_FIELDS)

WORKER_SCHEMA = pa.schema(
    [
        *SUMMARY_SCHEMA,
        pa.field("assignment", pa.list_(ASSIGNMENT_STRUCT)),
        pa.field("target", pa.list_(ASSIGNMENT_STRUCT)),
        pa.field("document", pa.string()),
    ]
)
"""What a worker builds per (problem, solver): a summary row with its copies applied now and at
the target nested, and on the first row of a valid problem its document."""

RECEIPT_SCHEMA = pa.schema([("problem", pa.string()), ("solver", pa.string()), ("part", pa.string())])
"""What a Spark task hands back per summary row it wrote: which part file holds it."""

ASSIGNMENTS_SCHEMA = pa.schema([("problem", pa.string()), ("solver", pa.string()), *ASSIGNMENT_FIELDS])
"""The assignments table (each answer applied now) and the targets table (where each plan ends;
the assignment itself when it is the target): role is active, standby or warmup."""

PROBLEMS_SCHEMA = pa.schema([("problem", pa.string()), ("document", pa.string())])
"""The problems table: each valid problem's document as read (JSON text), for the report."""

TABLES = ("summary", "assignments", "targets", "problems")
"""The tables a worker writes parts of under the stage."""

PLUGINS_SCHEMA = pa.schema([("name", pa.string()), ("version", pa.string())])
"""The plugins table."""

INPUT_SCHEMA = pa.schema([("name", pa.string()), ("document", pa.string()), ("input_error", pa.string())])
"""What workers receive: the problem's name, its document as JSON text, and why the reader
already rejected it (null when it did not)."""
