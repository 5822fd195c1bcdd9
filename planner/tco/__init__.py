"""Total cost of ownership: buying cards (in a host) versus renting, month by month over a horizon."""

__all__ = ["compare", "host", "lines", "owned", "rent", "scenario", "work"]
