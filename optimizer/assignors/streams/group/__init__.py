"""KIP-1071 streams groups (`group.protocol: streams`): the broker-side task assignors.

`spec` builds what the broker's assignor is given (members per stream thread, offsets, the
topology describer) from a problem; `sticky` is Kafka's `StickyTaskAssignor` (with
`RackAwareStandbyPicker` for `rack.aware.assignment.tags`), `balanced` the proposed
`BalancedTaskAssignor` (`streams.assignor.name: balanced`, KIP-1357).
"""
