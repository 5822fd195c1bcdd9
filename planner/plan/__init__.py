"""The ranked plan: every (offer x billing mode) that can do the job, cheapest first.

Rooms: :mod:`~planner.plan.demand` (how long the job runs on an offer), :mod:`~planner.plan.model`
(constraints, options, exclusions, the plan), :mod:`~planner.plan.filters` (what the constraints
drop before costing), :mod:`~planner.plan.nodes` (how many nodes), :mod:`~planner.plan.costing`
(one option in full), :mod:`~planner.plan.ranking` (every option as a number),
:mod:`~planner.plan.ranked` (the lazy sequences a plan holds), :mod:`~planner.plan.make` (the
two passes put together) and :mod:`~planner.plan.offers` (the offer list of ``gpuplan offers``).
"""

from planner.plan.demand import Demand, RefGpuHours, Run
from planner.plan.make import make_plan, plan_from_options
from planner.plan.model import Constraints, Exclusion, ExclusionRule, Option, OptionRange, Plan

__all__ = ["Constraints", "Demand", "Exclusion", "ExclusionRule", "Option", "OptionRange", "Plan", "RefGpuHours", "Run",
           "make_plan", "plan_from_options"]
