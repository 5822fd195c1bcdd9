"""Workloads, the performance model, plans, TCO and reports; the ``gpuplan`` CLI.

The planner never imports a cloud SDK: it sees providers only through
:mod:`providers` offers and quotes, over one :class:`pricing.catalog.Catalog` value that
the caller loads (shipped snapshot < refreshed cache < user files) and passes down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planner.plan import Plan

# The one place the version lives: pyproject.toml reads it, `gpuplan --version` and the
# "gpuplan_version" key of every --json output print it.
__version__ = "0.1.0"


def plan(**kwargs: Any) -> Plan:
    """Plan a job from Python exactly as ``gpuplan plan`` does; see :func:`planner.plan.make_plan`."""
    from planner.plan import plan_from_options
    from planner.settings import load_catalog, load_settings

    settings = kwargs.pop("settings", None) or load_settings()
    catalog = kwargs.pop("catalog", None) or load_catalog(settings)
    return plan_from_options(settings=settings, catalog=catalog, **kwargs)


_api_plan = plan  # kept under a second name: importing planner.plan rebinds `plan` to that module
