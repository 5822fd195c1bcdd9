"""Workloads, the performance model, plans, TCO and reports; the ``gpuplan`` CLI.

The planner never imports a cloud SDK: it sees providers only through
:mod:`providers` offers and quotes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planner.plan import Plan


def plan(**kwargs: Any) -> Plan:
    """Plan a job from Python exactly as ``gpuplan plan`` does; see :func:`planner.plan.make_plan`."""
    from planner.plan import plan_from_options

    return plan_from_options(**kwargs)
