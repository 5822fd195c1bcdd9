"""SkyPilot and dstack as launchers (``gpuplan launch --via``): their CLIs run as compute clients, gpuplan keeps the
ledger, budgets and TTL."""

__all__ = ["base", "dstack", "skypilot"]
