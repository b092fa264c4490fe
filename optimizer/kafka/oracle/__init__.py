"""Kafka's own assignor classes as the oracle: the pinned jars run on the project's problems, so
that `--solver kafka` is checked against the real thing, not only against frozen answers.

`batch` runs one adapter of the JVM module (`kao.jvm.*`) on many cases in one JVM; `consumer` builds
the consumer groups' cases (classic and KIP-848).
"""
