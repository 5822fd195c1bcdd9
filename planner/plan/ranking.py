"""The ranking pass: every (offer x billing mode) costed as one number, shared work per offer shape."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any, NamedTuple

from pricing.billing import BillingMode
from pricing.catalog import Stock
from pricing.money import Money
from providers.base import Offer, Provider
from planner.plan.costing import Costing
from planner.plan.filters import offer_filter, past_deadline, zone_of
from planner.plan.model import ExclusionRule
from planner.plan.nodes import NodeRuns
from planner.plan.ranked import MODE_AT, Exclusions

class _Shape:
    """What every offer of one shape (see :func:`shape_key`) of one provider has in common, per billing mode."""

    __slots__ = ("first", "modes", "runs")

    def __init__(self, runs: NodeRuns) -> None:
        self.runs = runs
        self.first = runs.smallest_fitting()
        # mode -> a _Mode, or why no offer of the shape has an option in it (rule, reason), or None: not asked for
        self.modes: dict[BillingMode, _Mode | tuple[ExclusionRule, str] | None] = {}

    def mode(self, mode: BillingMode, family: str, provider: Provider, pi: int,
             costing: Costing) -> _Mode | tuple[ExclusionRule, str] | None:
        """The answer for ``mode``, worked out on the first offer that asks and kept in :attr:`modes`."""
        assert isinstance(self.first, int)
        c = costing.c
        answer: _Mode | tuple[ExclusionRule, str] | None
        if c.billing is not None and mode not in c.billing:
            answer = None
        elif not provider.bills(mode):
            # a user catalog may price a mode its provider's billing rules do not cover
            answer = ExclusionRule.NO_PRICE, (f"{provider.name} has no {mode} billing rule: add [{provider.name}.{mode}]"
                                              " to the billing rules to plan with this price")
        else:
            factor = costing.factor(mode)
            n, run, _ = self.runs.for_deadline(self.first, factor)
            if isinstance(run, str):
                answer = ExclusionRule.WORKLOAD, run
            else:
                wall = run.wall_hours * factor
                if (late := past_deadline(wall, n, c.deadline_hours)) is not None:
                    answer = late
                else:
                    coster = provider.rate_coster(mode, wall, family=family, hours_per_month=costing.s.hours_per_month)
                    answer = _Mode(wall, float(wall), None if n == 1 else Decimal(n), pi << 40 | MODE_AT[mode] << 32,
                                   family, coster)
        self.modes[mode] = answer
        return answer


class _Mode(NamedTuple):
    """How one shape's offers cost in one billing mode: all but the rate."""

    hours: Decimal
    hours_f: float
    nodes: Decimal | None  # None: one node
    source: int  # provider and billing mode, packed as RankedOptions.source keeps them
    family: str  # the family the coster is for (billing tiers go by family)
    coster: Callable[[Decimal], Decimal] | None  # rate -> cost; None: ask the provider offer by offer


def rank_offers(pi: int, provider: Provider, offers: Sequence[Offer], costing: Costing, excluded: Exclusions,
          cost: array[float], wall: array[float], source: array[int]) -> None:
    """The ranking pass over one provider's offers: each option's cost and wall hours, or why it is excluded.

    The hot loop of a large plan (~400k options at 200k offers): what depends only on an
    offer's shape (run time, nodes, deadline) or on a job length (billed units) is worked
    out once and looked up; per option there are a few Decimal products and three numbers kept.
    """
    c, s, cat = costing.c, costing.s, costing.cat
    hpm, budget = s.hours_per_month, costing.budget
    # With no filter that reads the offer, only its stock and prices can exclude it before costing.
    filtered = c.gpus is not None or c.min_vram_gb is not None or c.max_gpus is not None or bool(c.regions) \
        or c.billing is not None
    shapes: dict[tuple[Any, ...], _Shape] = {}
    by_shape = costing.shared is not None
    add_cost, add_wall, add_source = cost.append, wall.append, source.append
    name_of = provider.name
    for oi, (gpu, count, link, name, family, currency, rates, stock, region, zones, rate_zones,
             sold_out) in enumerate(provider.facts(offers)):
        spec = cat.gpus[gpu]
        if filtered or stock is Stock.SOLD_OUT or not rates:
            if (rejected := offer_filter(offers[oi], spec, c)) is not None:
                excluded.add(offers[oi], *rejected)
                continue
        for zone in sold_out:  # the offer stands in its other zones; say which were skipped
            excluded.add(offers[oi], ExclusionRule.SOLD_OUT, f"sold out in {zone} (live data of {offers[oi].as_of}); "
                         f"priced in {', '.join(zones)}", zone=zone)
        # what a run reads of an offer (see shape_key); the name as written: it stands for the network
        key = (gpu, count, link, name) if by_shape else (oi,)
        if (shape := shapes.get(key)) is None:
            shape = shapes[key] = _Shape(costing.runs(offers[oi], spec))
        if shape.first.__class__ is str:
            excluded.put(name_of, name, region, zone_of(rate_zones, zones, None), None, ExclusionRule.WORKLOAD,
                         shape.first)  # type: ignore[arg-type]
            continue
        modes = shape.modes
        fx = costing.fx_rate(currency)
        for mode in rates:
            m = modes[mode] if mode in modes else shape.mode(mode, family, provider, pi, costing)
            if m is None:
                continue
            if m.__class__ is not _Mode:
                excluded.put(name_of, name, region, zone_of(rate_zones, zones, mode), mode, *m)  # type: ignore[misc]
                continue
            hours, hours_f, nodes, packed, fam, coster = m  # type: ignore[misc]
            if fam != family:  # one instance type name in two families (a user catalog may do that)
                coster = provider.rate_coster(mode, hours, family=family, hours_per_month=hpm)
            amount = coster(rates[mode]) if coster is not None else provider.cost(offers[oi], mode, hours,
                                                                                   hours_per_month=hpm)
            # x 1 changes no value: skipped, as the full costing's products come to the same number
            if nodes is not None:
                amount *= nodes
            if fx != 1:
                amount *= fx
            if budget is not None and amount > budget:
                shown = Money(amount=amount, currency=s.currency)
                excluded.put(name_of, name, region, zone_of(rate_zones, zones, mode), mode, ExclusionRule.BUDGET,
                             f"costs {shown}, over the budget {c.budget}")
                continue
            add_cost(float(amount))
            add_wall(hours_f)
            add_source(packed | oi)
