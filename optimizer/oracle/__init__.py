"""Kafka's own assignor classes as the oracle: the pinned jars (or another release's) run on the
project's problems, so that `--solver kafka` is checked against the real thing, not only against
frozen answers (tests/kafka/, bench/*_releases.py).

`batch` runs one adapter of the JVM module (`kao.jvm.*`) on many cases in one JVM; `consumer` builds
the consumer groups' cases (classic and KIP-848), `streams` the classic Streams task assignors',
`streams_group` the streams groups' (KIP-1071). The package sits in the layer of what users call,
like `optimizer.testing` (docs/architecture.md): it builds Kafka's inputs with the mappings the
reproductions use, so it may import the assignors.
"""
