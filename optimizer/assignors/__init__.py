"""Kafka's own assignors, reproduced to give Kafka's answer (`--solver kafka`): Kafka Streams'
task assignors in `streams/`, the consumer group's partition assignors in `consumer/`, and the
Java collection and hash orders both depend on in `java.py`. This layer imports the engine's core
only, never the exact engine or the goals."""
