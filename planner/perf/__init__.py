"""How fast a job runs: each GPU's relative speed, scaling inside a node, and clusters of nodes."""

__all__ = ["cluster", "scaling", "speed"]
