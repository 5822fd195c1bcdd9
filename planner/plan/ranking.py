"""The ranking pass: every (offer x billing mode) costed as one number, shared work per offer shape."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pricing.billing import BillingMode
from pricing.catalog import LOCAL, Stock
from pricing.money import Money, round_cents
from providers.base import Provider
from providers.bulk import OfferTable
from providers.local import needs_baseboard
from planner.plan.costing import Costing
from pricing.bill import billed_hours, rate_free_bill, setup_cost
from planner.plan.filters import offer_filter, past_deadline, unwhole_build, zone_of
from planner.plan.model import ESTIMATED_SPOT, ExclusionRule, unpriced_reason
from planner.plan.nodes import NodeRuns
from planner.plan.ranked import MODE_AT, Exclusions, OptionRecords
from planner.plan.rates import quoted_cost, rate_coster


class _Shape:
    """What every offer of one shape (see :func:`shape_key`) of one provider has in common, per billing mode."""

    __slots__ = ("first", "modes", "runs")

    def __init__(self, runs: NodeRuns) -> None:
        self.runs = runs
        self.first = runs.smallest_fitting()
        # mode -> a _Mode, or why no offer of the shape has an option in it (rule, reason), or None: not asked for
        self.modes: dict[BillingMode, _Mode | tuple[ExclusionRule, str] | None] = {}

    def mode(self, mode: BillingMode, family: str, provider: Provider,
             costing: Costing) -> _Mode | tuple[ExclusionRule, str] | None:
        """The answer for ``mode``, worked out on the first offer that asks and kept in :attr:`modes`."""
        assert isinstance(self.first, int)
        c = costing.c
        answer: _Mode | tuple[ExclusionRule, str] | None
        if c.billing is not None and mode not in c.billing:
            answer = None
        elif not provider.bills(mode):
            # a user catalog may price a mode its provider's billing rules do not cover
            answer = ExclusionRule.NO_PRICE, (
                f"{provider.name} has no {mode} billing rule: add [{provider.name}.{mode}]"
                " to the billing rules to plan with this price")
        else:
            factors = costing.factors(mode)
            n, run, _ = self.runs.for_deadline(self.first, factors)
            if isinstance(run, str):
                answer = ExclusionRule.WORKLOAD, run
            else:
                wall = run.wall_hours * factors(n)
                if (late := past_deadline(wall, n, c.deadline_hours)) is not None:
                    answer = late
                else:
                    hpm, ex = costing.s.hours_per_month, costing.extras
                    rest = None if ex is None else rate_free_bill(ex, provider.name, mode, wall, n, hours_per_month=hpm)
                    if rest is not None and rest.not_priced:
                        # an item with no sourced rate would rank the option cheaper than its bill: excluded, named
                        answer = ExclusionRule.UNPRICED, unpriced_reason(rest.not_priced)
                    else:
                        billed = billed_hours(ex, mode, wall)
                        coster = rate_coster(provider, mode, billed, family=family, hours_per_month=hpm)
                        setup = setup_cost(ex, mode, Decimal(1), n) if ex is not None else Decimal(0)
                        answer = _Mode(hours=wall, hours_f=float(wall), nodes=None if n == 1 else Decimal(n),
                                       mode_at=MODE_AT[mode], family=family, coster=coster, billed=billed,
                                       setup=setup or None, fixed=None if rest is None else rest.fixed)
        self.modes[mode] = answer
        return answer


@dataclass(frozen=True, slots=True)
class _Mode:
    """How one shape's offers cost in one billing mode: all but the rate (one per shape and mode, read per option)."""

    hours: Decimal
    hours_f: float
    nodes: Decimal | None  # None: one node
    mode_at: int  # the billing mode as OptionRecords.mode keeps it
    family: str  # the family the coster is for (billing tiers go by family)
    coster: Callable[[Decimal], Decimal] | None  # rate -> cost; None: quote offer by offer
    billed: Decimal  # the hours the instance is quoted for (a term also covers set-up)
    setup: Decimal | None  # set-up hours x nodes, billed at the rate; None: no set-up line
    fixed: Decimal | None  # the extras that do not depend on the rate; None: no extras asked for


def rank_offers(provider: Provider, offers: OfferTable, costing: Costing, excluded: Exclusions,
                records: OptionRecords) -> None:
    """The ranking pass over one provider's offers: each option's cost and wall hours, or why it is excluded.

    The hot loop of a large plan (~400k options at 200k offers): what depends only on an
    offer's shape (run time, nodes, deadline) or on a job length (billed units) is worked
    out once and looked up; per option there are a few Decimal products and four numbers kept.
    """
    c, s, cat = costing.c, costing.s, costing.cat
    hpm, budget = s.hours_per_month, costing.budget
    # With no filter that reads the offer, only its stock and prices can exclude it before costing.
    filtered = c.gpus is not None or c.min_vram_gb is not None or c.max_gpus is not None or bool(c.regions) \
        or c.billing is not None
    shapes: dict[tuple[Any, ...], _Shape] = {}
    by_shape = costing.shared is not None
    records.start_provider()
    add_cost, add_wall, add_mode, add_offer = records.cost.append, records.wall.append, records.mode.append, \
        records.offer.append
    name_of = provider.name
    for oi, f in enumerate(offers.facts()):
        spec = cat.gpus[f.gpu]
        if filtered or f.stock is Stock.SOLD_OUT or not f.rates or (f.region == LOCAL and needs_baseboard(f.gpu)):
            if (rejected := offer_filter(f, spec, c) or unwhole_build(f)) is not None:
                excluded.put(name_of, f.name, f.region, zone_of(f.rate_zones, f.zones, None), None, *rejected)
                continue
        for zone in f.sold_out_zones:  # the offer stands in its other zones; say which were skipped
            excluded.put(name_of, f.name, f.region, zone, None, ExclusionRule.SOLD_OUT,
                         f"sold out in {zone} (live data of {f.as_of}); priced in {', '.join(f.zones)}")
        # what a run reads of an offer (see shape_key); the name as written: it stands for the network
        key = (f.gpu, f.gpu_count, f.interconnect, f.name) if by_shape else (oi,)
        if (shape := shapes.get(key)) is None:
            shape = shapes[key] = _Shape(costing.runs(offers[oi], spec))
        if shape.first.__class__ is str:
            excluded.put(name_of, f.name, f.region, zone_of(f.rate_zones, f.zones, None), None,
                         ExclusionRule.WORKLOAD, shape.first)  # type: ignore[arg-type]
            continue
        modes = shape.modes
        fx = costing.fx_rate(f.currency)
        rates, family = f.rates, f.family
        guessed = f.estimated if not c.spot_estimates else ()
        for mode in rates:
            m = modes[mode] if mode in modes else shape.mode(mode, family, provider, costing)
            if not isinstance(m, _Mode):
                if m is not None:  # why no offer of this shape has an option in this mode
                    excluded.put(name_of, f.name, f.region, zone_of(f.rate_zones, f.zones, mode), mode, *m)
                continue
            coster = m.coster
            if m.family != family:  # one instance type name in two families (a user catalog may do that)
                coster = rate_coster(provider, mode, m.billed, family=family, hours_per_month=hpm)
            if coster is not None:
                amount = coster(rates[mode])
            else:
                amount = quoted_cost(provider, offers[oi], mode, m.billed, hours_per_month=hpm)
            # x 1 changes no value: skipped, as the full costing's products come to the same number
            if m.nodes is not None:
                amount *= m.nodes
            if m.fixed is not None:  # the whole bill, added in the full costing's order (see ExtrasBill)
                if m.setup is not None:
                    amount = amount + rates[mode] * m.setup
                amount = amount + m.fixed
            if fx != 1:
                amount *= fx
            if budget is not None and amount > budget and round_cents(amount) > budget:
                shown = Money(amount=amount, currency=s.currency)
                excluded.put(name_of, f.name, f.region, zone_of(f.rate_zones, f.zones, mode), mode,
                             ExclusionRule.BUDGET, f"costs {shown}, over the budget {c.budget}")
                continue
            if mode in guessed:  # after every other rule, as the full costing says it (see Costing.option)
                excluded.put(name_of, f.name, f.region, zone_of(f.rate_zones, f.zones, mode), mode,
                             ExclusionRule.ESTIMATE, ESTIMATED_SPOT)
                continue
            add_cost(float(amount))
            add_wall(m.hours_f)
            add_mode(m.mode_at)
            add_offer(oi)
