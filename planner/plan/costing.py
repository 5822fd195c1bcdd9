"""Costing one (offer, billing mode) in full: nodes, notes, line items and range, or why it is dropped."""

from __future__ import annotations

import functools
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pricing.billing import BillingMode
from pricing.catalog import Catalog, GpuSpec
from pricing.line_items import LineItem
from pricing.money import Currency, Fx, Money, money, round_cents
from providers.base import Offer, Provider
from planner.plan.demand import Demand, Run
from pricing.bill import TERM_MODES, Extras, ExtrasBill, billed_hours, rate_free_bill, with_setup
from planner.plan.filters import host_note, past_deadline
from planner.plan.model import ESTIMATED_SPOT, Constraints, ExclusionRule, Option, OptionRange, unpriced_reason
from planner.plan.nodes import NodeRuns
from planner.settings import Settings

def _no_factor(nodes: int) -> Decimal:
    return Decimal(1)


class Costing:
    """What costing one (offer, billing mode) needs besides the offer: the plan's inputs, once."""

    def __init__(self, demand: Demand, c: Constraints, s: Settings, cat: Catalog, extras: Extras | None = None) -> None:
        self.demand, self.c, self.s, self.cat = demand, c, s, cat
        self.extras = extras  # None: the instance alone (library callers that price only compute)
        self.fx: Fx = s.fx_table()
        self.budget = None if c.budget is None else self.fx.convert(c.budget, s.currency).amount
        # Runs shared between offers of one shape (see shape_key), for demands that declare
        # ``runs_by_shape``: a large catalog has hundreds of shapes for tens of thousands of offers.
        self.shared: dict[tuple[Any, ...], Run | str] | None = {} if getattr(demand, "runs_by_shape", False) else None
        self._rates: dict[Currency, Decimal] = {}
        # The extras but set-up, per (cloud, mode, run hours, nodes): a large catalog has the same instance
        # type in tens of regions, and a JSON plan costs each in full.
        self._rate_free: dict[tuple[str, BillingMode, Decimal, int], ExtrasBill] = {}

    def fx_rate(self, currency: Currency) -> Decimal:
        """The rate to the display currency, asked of the FX table on first use (which records that it was used)."""
        if (rate := self._rates.get(currency)) is None:
            rate = self._rates[currency] = self.fx.rate(currency, self.s.currency)
        return rate

    def convert(self, m: Money) -> Money:
        """``fx.convert(m, display currency)``, with the rate asked of the FX table once (:meth:`fx_rate`)."""
        if m.currency == self.s.currency:
            return m
        return money(m.amount * self.fx_rate(m.currency), self.s.currency)

    def factor(self, mode: BillingMode, nodes: int = 1) -> Decimal:
        """Expected run time over the uninterrupted one: 1 but on spot, where it grows with nodes
        (planner.plan.spot)."""
        if mode is not BillingMode.SPOT:
            return Decimal(1)
        from planner.plan.spot import spot_factor

        return spot_factor(self.s.spot_overhead, nodes, self.s.checkpoint_every)

    def factors(self, mode: BillingMode) -> Callable[[int], Decimal]:
        """:meth:`factor` of ``mode`` by node count (spot_factor keeps each count it worked out)."""
        if mode is not BillingMode.SPOT:
            return _no_factor
        return functools.partial(self.factor, mode)

    def _rest_of_bill(self, cloud: str, mode: BillingMode, wall: Decimal, nodes: int) -> ExtrasBill:
        assert self.extras is not None
        key = (cloud, mode, wall, nodes)
        if (rest := self._rate_free.get(key)) is None:
            rest = self._rate_free[key] = rate_free_bill(self.extras, cloud, mode, wall, nodes,
                                                         hours_per_month=self.s.hours_per_month)
        return rest

    def runs(self, offer: Offer, spec: GpuSpec) -> NodeRuns:
        return NodeRuns(self.demand, offer, spec, self.c, self.shared)

    def option(self, provider: Provider, offer: Offer, spec: GpuSpec, mode: BillingMode, runs: NodeRuns,
               first: int) -> Option | tuple[ExclusionRule, str]:
        """The costed option, with its notes, line items and range, or why the constraints drop it.

        :func:`make_plan` ranks with :func:`rank_offers`, which runs the same rules on bare numbers, and
        calls this only for the options that are read; tests hold the two to the same answer.
        """
        c, s = self.c, self.s
        factors = self.factors(mode)
        n, run, why = runs.for_deadline(first, factors)
        if isinstance(run, str):
            return ExclusionRule.WORKLOAD, run
        factor = factors(n)
        wall = run.wall_hours * factor
        notes = list(run.notes)
        if n > 1 or why:
            notes.insert(0, f"{n} x {offer.name} ({offer.gpu_count * n:g} x {offer.gpu})" + (f": {why}" if why else ""))
        if mode is BillingMode.SPOT:
            from planner.plan.spot import spot_note

            notes.append(spot_note(s.spot_overhead, n, s.checkpoint_every, factor))
        quote = provider.quote(offer, mode, billed_hours(self.extras, mode, wall), hours_per_month=s.hours_per_month)
        items = quote.line_items if n == 1 else tuple(
            LineItem.priced(f"{n} nodes x {i.description}", i.quantity * n, _all_nodes(i.unit), i.unit_price)
            for i in quote.line_items)
        instance = quote.cost * n
        bill = None
        native = instance
        if self.extras is not None:
            bill = with_setup(self._rest_of_bill(offer.provider, mode, wall, n), self.extras, mode, n,
                              offer.rates.get(mode), offer.currency)
            # the ranking pass adds in the same order (see ExtrasBill)
            native = money(instance.amount + bill.setup + bill.fixed, instance.currency)
            if bill.not_priced:
                notes.append("not priced (no sourced rate): " + "; ".join(bill.not_priced))
            if self.extras.setup_minutes and mode in TERM_MODES:
                notes.append(f"the {mode} term also covers {self.extras.setup_minutes:g} min of set-up")
        cost = self.convert(native)
        if mode is BillingMode.MONTHLY:
            paid = quote.line_items[0].quantity * s.hours_per_month
            notes.append(f"pays {quote.line_items[0].quantity:g} whole month(s); "
                         f"uses {wall / paid:.0%} of the time paid for")
        if quote.estimate:
            notes.append(f"{mode} price is an estimate")
        notes.extend(quote.notes)
        if host := host_note(offer, spec):
            notes.append(host)
        if n > 1 and (bigger := runs.bigger_note(n, mode, factors, provider, s.hours_per_month, native)):
            notes.append(bigger)
        if (late := past_deadline(wall, n, c.deadline_hours)) is not None:
            return late
        if bill is not None and bill.not_priced:  # as the ranking pass: never ranked as if they were free
            return ExclusionRule.UNPRICED, unpriced_reason(bill.not_priced)
        if self.budget is not None and cost.amount > self.budget and round_cents(cost.amount) > self.budget:
            return ExclusionRule.BUDGET, f"costs {cost}, over the budget {c.budget}"
        if mode in offer.estimated and not c.spot_estimates:
            return ExclusionRule.ESTIMATE, ESTIMATED_SPOT
        rng = None
        if run.spread is not None:
            # re-quote at each end: billing is not linear in hours (minimums, whole months)
            lo, hi = (wall * Decimal(repr(f)) for f in run.spread)
            # the extras are taken at the expected run time: disks and addresses scale little within the range
            more = bill.total if bill is not None else Decimal(0)
            lo_cost, hi_cost = (self.convert(provider.quote(offer, mode, billed_hours(self.extras, mode, h),
                                                            hours_per_month=s.hours_per_month).cost * n
                                             + Money(amount=more, currency=native.currency))
                                for h in (lo, hi))
            count = Decimal(repr(offer.gpu_count * n))
            rng = OptionRange(wall_hours=(lo, hi), gpu_hours=(lo * count, hi * count), cost=(lo_cost, hi_cost))
        return Option(
            provider=offer.provider, offer=offer.name, region=offer.region, gpu=offer.gpu, gpu_count=offer.gpu_count,
            billing=mode, wall_hours=wall, gpu_hours=wall * Decimal(repr(offer.gpu_count * n)), cost=cost,
            native_cost=native, line_items=items, notes=tuple(notes), estimate=quote.estimate, zone=quote.zone,
            live=offer.live, range=rng, nodes=n, scaling=run.scaling,
            extras=bill.items if bill is not None else (), not_priced=bill.not_priced if bill is not None else (),
            instance_cost=self.convert(instance),
        )


def _all_nodes(unit: str) -> str:
    """The unit of a quantity summed over nodes: 1,120 hours of two machines are 1,120 node-hours, not hours."""
    return f"node-{unit}" if unit in ("hours", "months") else f"{unit} (all nodes)"
