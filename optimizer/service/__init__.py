"""The assignment service (`kafka-assign serve`): docs/apply.md."""
