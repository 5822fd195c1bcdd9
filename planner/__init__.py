"""Workloads, the performance model, plans and TCO: what a job needs and what each way of doing it costs.

Rooms by subject: :mod:`planner.workload` (what is run: model, memory, fit, estimate),
:mod:`planner.perf` (how fast a GPU, a node and a cluster run it), :mod:`planner.serve` (what serving a
model takes on a machine), :mod:`planner.plan` (the
ranked options over the catalog's offers) and :mod:`planner.tco` (buying against renting).
The planner never imports a cloud SDK nor the launcher, reads no settings file and no
environment: its callers pass the settings and the one :class:`pricing.catalog.Catalog`.
"""

__all__ = ["limits", "perf", "plan", "serve", "settings", "tco", "units", "workload"]
