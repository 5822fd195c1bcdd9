"""What the user runs: the workload's description, its parameters and shape, memory fit and run-time estimate."""

__all__ = ["accuracy", "estimate", "fit", "memory", "params", "ranges", "shapes", "spec"]
