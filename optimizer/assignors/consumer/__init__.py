"""The consumer group's partition assignors of the classic protocol, one module per Kafka class:
`range` (RangeAssignor, with KIP-881's rack awareness), `roundrobin` (RoundRobinAssignor),
`sticky` (AbstractStickyAssignor's general and constrained builders, StickyAssignor,
CooperativeStickyAssignor); `group` holds what they share and `strategy` dispatches on
`partition.assignment.strategy`."""
