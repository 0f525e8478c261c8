"""The scheduling framework: Status, CycleState, NodeInfo, plugin interfaces, the profile runtime."""
