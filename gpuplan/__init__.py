"""gpuplan, the program: the command line, settings, paths, the console and every output format.

The model lives below it in three packages: :mod:`pricing` (catalog data, money, billing),
:mod:`providers` (one adapter per cloud, plus buying) and :mod:`planner` (workloads, the
performance model, plans, TCO); :mod:`launch` takes a chosen option to its provider. This
package only reads settings and files, calls them, and renders what they return.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planner.plan import Plan

# The one place the version lives: pyproject.toml reads it, `gpuplan --version` and the
# "gpuplan_version" key of every --json output print it.
__version__ = "0.2.0"

__all__ = ["__version__", "plan"]


def plan(**kwargs: Any) -> Plan:
    """Plan a job from Python as ``gpuplan plan`` does, with the user's settings and catalog.

    Takes the keywords of :func:`planner.plan.plan_from_options` (``gpu_hours``, ``ref_gpu``,
    constraints such as ``deadline_hours`` or ``providers``); ``settings=`` and ``catalog=``
    replace the ones read from flags, ``GPUPLAN_*`` variables and the config file.
    """
    from gpuplan.settings import load_catalog, load_settings
    from planner.plan import plan_from_options

    settings = kwargs.pop("settings", None) or load_settings()
    catalog = kwargs.pop("catalog", None) or load_catalog(settings)
    return plan_from_options(settings=settings, catalog=catalog, **kwargs)
