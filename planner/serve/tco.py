"""``tco --serve``: owning the cards that serve a model against renting the fleet, month by month.

The fleets come from :func:`planner.serve.fleet.serve_plan` (the same sizing and costs as
``plan --serve``): by default the cheapest owned fleet and the cheapest rented fleet of each billing
mode; ``--buy 4xH100`` and ``--vs p5.48xlarge`` pick fleets of those builds and instance types.
An owned fleet pays as ``gpuplan tco`` counts cash (:meth:`planner.tco.owned.Owned.monthly_costs`):
cards and host in month 1 (and again at each new life), energy, upkeep and colocation every month,
resale back at the end. A rented fleet pays its monthly cost every month. The break-even month is the
first whose cumulative cost of owning is at or below the rental's.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pricing.billing import BillingMode
from pricing.catalog import Catalog
from pricing.errors import InputError
from pricing.money import decimal_json, money_json, money_text
from providers.local import needs_baseboard
from planner.serve.fleet import Fleet, ServePlan, busy_share
from planner.tco.compare import breakeven_month
from planner.tco.lines import cumulative
from planner.tco.owned import parse_buy


@dataclass(frozen=True, slots=True)
class ServeTcoOption:
    fleet: Fleet
    monthly: list[Decimal]
    cumulative: list[Decimal]
    tokens: float  # output tokens served over the horizon

    @property
    def name(self) -> str:
        f = self.fleet
        return f"{'buy ' if f.billing is BillingMode.BUY else ''}{f.instances} x {f.offer}" + (
            "" if f.billing is BillingMode.BUY else f" {f.billing}")

    @property
    def total(self) -> Decimal:
        return self.cumulative[-1]

    @property
    def per_million(self) -> Decimal:
        return self.total / Decimal(repr(self.tokens)) * 1_000_000 if self.tokens else Decimal(0)


@dataclass(frozen=True, slots=True)
class ServeTco:
    plan: ServePlan
    options: list[ServeTcoOption]
    breakeven: list[tuple[str, str, int | None]]  # (owned option, rental, month)
    verdict: str

    def as_json(self) -> dict[str, Any]:
        cur = self.plan.currency
        return {
            "workload": self.plan.workload.as_json(), "demand": self.plan.demand.as_json(),
            "months": self.plan.months, "currency": cur, "verdict": self.verdict, "range": self.plan.range_basis,
            "options": [{
                "name": o.name, "provider": o.fleet.provider, "offer": o.fleet.offer, "region": o.fleet.region,
                "billing": str(o.fleet.billing),
                "instances": o.fleet.instances, "gpu": o.fleet.gpu, "gpus_per_instance": o.fleet.gpu_count,
                "total": money_json(o.total), "per_million_output_tokens": decimal_json(o.per_million),
                "monthly": [money_json(m) for m in o.monthly], "cumulative": [money_json(c) for c in o.cumulative],
                "notes": list(o.fleet.notes),
            } for o in self.options],
            "breakeven": [{"buy": b, "vs": v, "month": m} for b, v, m in self.breakeven],
        }


def _pick(plan: ServePlan, catalog: Catalog, buy: list[str], vs: list[str]) -> list[Fleet]:
    owned = [o for o in plan.options if o.billing is BillingMode.BUY]
    rented = [o for o in plan.options if o.billing is not BillingMode.BUY]
    picked: list[Fleet] = []
    if buy:
        for text in buy:
            count, name = parse_buy(text)
            key = catalog.gpu(name).key
            match = [o for o in owned if o.gpu == key and o.gpu_count == count]
            if not match and needs_baseboard(key) and not any(o.gpu == key for o in owned):
                raise InputError(f"{key} is an SXM module: it needs a baseboard server (HGX/DGX-class) that "
                                 "gpuplan has no price for", "give that server's price with --host-price")
            if not match:
                raise InputError(f"no owned fleet of {count}x {key} can serve this",
                                 "`gpuplan plan --serve ... --explain` says why; try more or larger cards")
            picked.append(match[0])  # cheapest condition first
    elif owned:
        picked.append(owned[0])
    if vs:
        for name in vs:
            match = [o for o in rented if o.offer.lower() == name.strip().lower()]
            if not match:
                raise InputError(f"no rented fleet of {name} can serve this (or it has no allowed price)",
                                 "`gpuplan plan --serve ... --explain` says why")
            seen: set[str] = set()
            for o in match:  # cheapest per billing mode
                if str(o.billing) not in seen:
                    seen.add(str(o.billing))
                    picked.append(o)
    else:
        seen = set()
        for o in rented:
            if str(o.billing) not in seen:
                seen.add(str(o.billing))
                picked.append(o)
    if not picked:
        raise InputError("nothing to compare", "the plan has no owned or rented fleet for these filters")
    return picked


def serve_tco(plan: ServePlan, catalog: Catalog, *, buy: list[str], vs: list[str]) -> ServeTco:
    months = plan.months
    tokens = plan.demand.tokens_per_month * months
    options = []
    for f in _pick(plan, catalog, buy, vs):
        if f.billing is BillingMode.BUY:
            busy = busy_share(f.load, plan.workload)
            monthly = [m * f.instances for m in f.owned.monthly_costs(busy, months)]
        else:
            monthly = [f.cost_per_month.amount] * months
        options.append(ServeTcoOption(f, monthly, cumulative(monthly), tokens))
    options.sort(key=lambda o: o.total)
    owned = [o for o in options if o.fleet.billing is BillingMode.BUY]
    rented = [o for o in options if o.fleet.billing is not BillingMode.BUY]
    breakeven = [(b.name, r.name, breakeven_month(b.cumulative, r.cumulative)) for b in owned for r in rented]
    return ServeTco(plan, options, breakeven, _verdict(plan, options, breakeven))


def _verdict(plan: ServePlan, options: list[ServeTcoOption], breakeven: list[tuple[str, str, int | None]]) -> str:
    cur, w = plan.currency, plan.workload
    best = options[0]
    head = (f"Over {plan.months} months serving {w.arch.name} at {w.rate:g} requests/s, {w.hours_per_day:g} h a day, "
            f"the cheapest is {best.name} at {money_text(best.total, cur)} "
            f"({money_text(best.per_million, cur, places=3)} per million output tokens).")
    if not breakeven:
        return head
    buy = next(o.name for o in options if o.fleet.billing is BillingMode.BUY)  # options are cheapest first
    mine = [(v, m) for b, v, m in breakeven if b == buy]
    paid = sorted((m, v) for v, m in mine if m is not None)
    never = [v for v, m in mine if m is None]
    if paid and not never:
        return f"{head} Owning pays for itself against every rental, soonest in month {paid[0][0]} vs {paid[0][1]}."
    if paid:
        return (f"{head} {buy} overtakes {', '.join(f'{v} in month {m}' for m, v in paid[:3])}; it never catches "
                f"up with {', '.join(never)} within {plan.months} months.")
    return f"{head} {buy} never catches up with any rental within {plan.months} months."
