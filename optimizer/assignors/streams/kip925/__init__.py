"""KIP-925's min-cost-flow machinery as Kafka runs it: its `Graph` step for step (`graph`), the
same search in numpy on assignment-shaped graphs (`kafka_graph`), cycle canceling to the proven
optimum (`cycle_canceling`), and `optimizeActiveTasks` (`optimize`)."""
