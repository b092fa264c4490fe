"""Kafka itself, from Python: the JVM module with Kafka's pinned jars (`jvm`) and a local KRaft
cluster on loopback built from them (`sandbox`).

This package is in the core layer: it imports the errors and nothing above, so the importer (a
form of `optimizer.sources`) and the assignment service can both use it (docs/architecture.md).
"""
