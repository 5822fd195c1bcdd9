"""Launching what the planner chose, without ever losing a machine: the ledger and the launch service.

Depends on :mod:`providers` (compute clients, offers, quotes) and :mod:`pricing`; used by the
CLI. The planner never imports it.
"""

__all__ = ["boot", "ledger", "service"]
