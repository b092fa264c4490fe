"""Kafka Streams' task assignors (KIP-441's HighAvailabilityTaskAssignor with its standby and
movement steps, the legacy StickyTaskAssignor), KIP-925's rack-aware optimisation (`rack_aware`,
with Kafka's min-cost-flow machinery in `kip925/`) and the `--solver kip925` reference
(`kip925_reference`)."""
