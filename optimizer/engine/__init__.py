"""The exact engine: goals solved one after another, each proven optimal and frozen before the next.

* `sequence`: `run_sequence`, the lexicographic engine's entry; it chooses the back-end.
* `models`: which integer model a sequence runs on (full, compressed, pattern) and their sizes.
* `compressed`, `patterns`: the merged Streams models.
* `stages`: the stage loop on one model; `relaxed`: its relaxed pass (every stage at once).
* `run`: what a run carries (`Run`, `Tolerance`, `Progress`).
* `transition`: the assignment applied now and the plan to the target (KIP-441 warm-ups,
  cooperative revocations).
* `policy`: what the exact solvers return: the deadline, the fallback to Kafka's answer (handed in,
  never imported: the engine sits below Kafka's assignors), the step applied now.

The engine imports the core (model, formulation, the goal contract) and its own layer's back-ends
and catalogue, never Kafka's assignors, `solve` or what users call (tests/test_layers.py).
"""
