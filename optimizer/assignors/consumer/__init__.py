"""The consumer group's partition assignors, one module per Kafka class. Classic protocol:
`range` (RangeAssignor, with KIP-881's rack awareness), `roundrobin` (RoundRobinAssignor),
`sticky` (AbstractStickyAssignor's general and constrained builders, StickyAssignor,
CooperativeStickyAssignor); `group` holds what they share and `strategy` dispatches on
`partition.assignment.strategy`, or on `group.remote.assignor` under KIP-848's consumer protocol:
`kip848` is the group spec the broker's assignors read, `uniform` (with `uniform_heterogeneous`)
and `server_range` are its `uniform` and `range`."""
