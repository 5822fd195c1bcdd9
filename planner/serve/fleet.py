"""``plan --serve``: the cheapest fleet that serves a model at a load and latency, per billing mode.

For every offer (an instance type, or cards to buy) the best layout on its GPUs at the latency
targets gives what one instance serves; the fleet is the fewest instances whose expected
throughput at ``max_load`` covers the peak (average rate x ``peak_ratio``) and whose TTFT
percentile, queueing for a batch slot included, meets the target (:mod:`planner.serve.sizing`);
it would be larger if the model is as slow as the low end of its range (``instances_if_slow``).
A bought build is ranked only when every part of it is priced (an SXM module needs its baseboard).

Each billing mode is costed over the horizon (``months``, 36 by default, as ``gpuplan tco``)
with the provider's own quote for the hours the service runs, then divided by the months:
pay-as-you-go and spot pay the hours served; a monthly subscription pays every month; a
reservation pays its whole term; bought cards are paid once (no resale, no host: the TCO
report's business) plus their energy at TDP for the hours served. Spot runs only where the user
allows interruptions (``allow_spot``): a serving replica that vanishes drops its requests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pricing.billing import BillingMode
from pricing.catalog import Catalog, Interconnect
from pricing.errors import InputError, PriceMissingError
from pricing.money import Money, decimal_json
from pricing.notes import public_note
from providers.base import Offer, Provider
from providers.local import needs_baseboard
from providers.registry import all_providers
from planner.limits import check
from planner.plan.filters import check_regions, offer_filter, places
from planner.plan.model import ESTIMATED_SPOT, Constraints
from planner.serve.calibration import Calibration, shipped
from planner.serve.layout import Layout, best_layout
from planner.serve.sizing import instances_if_slow, size
from planner.serve.spec import ServeWorkload
from planner.settings import Settings

DEFAULT_MONTHS = 36

MAX_INSTANCES = 1000  # a fleet larger than this is a different project: say so rather than price it
SECONDS_PER_HOUR = 3600


@dataclass(frozen=True, slots=True)
class Fleet:
    """One way to serve: ``instances`` x an offer under one billing mode, with its monthly cost."""

    provider: str
    offer: str
    region: str
    gpu: str
    gpu_count: int
    billing: BillingMode
    instances: int
    instances_if_slow: int
    layout: Layout
    capacity_tokens_per_s: float  # the fleet's expected output tokens/s
    load: float  # peak demand over the fleet's capacity
    ttft_s: float  # the workload's percentile of time to first token at the peak, queueing included
    queue_wait_s: float  # of which waiting for a batch slot
    cost_per_month: Money  # display currency
    native_cost_per_month: Money
    cost_per_million_tokens: Money
    cost_per_month_if_slow: Money
    estimate: bool
    live: bool
    notes: tuple[str, ...] = ()
    owned: Any = None  # the Owned build behind a bought fleet's cost (planner.tco.owned), for its month-by-month cash

    def as_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider, "offer": self.offer, "region": self.region, "gpu": self.gpu,
            "gpus_per_instance": self.gpu_count, "billing": str(self.billing), "instances": self.instances,
            "instances_if_slow": self.instances_if_slow, "layout": self.layout.as_json(),
            "capacity_output_tokens_per_s": round(self.capacity_tokens_per_s, 1), "load": round(self.load, 4),
            "ttft_s_at_peak": round(self.ttft_s, 4), "queue_wait_s_at_peak": round(self.queue_wait_s, 4),
            "cost_per_month": self.cost_per_month.as_json(),
            "native_cost_per_month": self.native_cost_per_month.as_json(),
            # a unit price, not an amount: up to 6 places (the JSON contract's rule for rates)
            "cost_per_million_output_tokens": {"amount": decimal_json(self.cost_per_million_tokens.amount),
                                               "currency": str(self.cost_per_million_tokens.currency)},
            "cost_per_month_if_slow": self.cost_per_month_if_slow.as_json(),
            "estimate": self.estimate, "live": self.live, "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True)
class Demand:
    peak_tokens_per_s: float
    average_tokens_per_s: float
    hours_per_month: Decimal  # hours the service runs in a month
    tokens_per_month: float

    def as_json(self) -> dict[str, Any]:
        return {"peak_output_tokens_per_s": round(self.peak_tokens_per_s, 3),
                "average_output_tokens_per_s": round(self.average_tokens_per_s, 3),
                "hours_served_per_month": float(self.hours_per_month),
                "output_tokens_per_month": round(self.tokens_per_month)}


@dataclass(frozen=True, slots=True)
class ServePlan:
    workload: ServeWorkload
    demand: Demand
    months: int
    currency: str
    options: tuple[Fleet, ...]
    excluded: tuple[tuple[str, str, str], ...]  # (provider, offer or offer@mode, reason)
    range_basis: str
    notes: tuple[str, ...] = field(default=())

    @property
    def cheapest(self) -> Fleet:
        return self.options[0]

    def best_by_billing(self) -> dict[str, Fleet]:
        best: dict[str, Fleet] = {}
        for o in self.options:  # already cheapest first
            best.setdefault(str(o.billing), o)
        return best

    def as_json(self, limit: int | None = None) -> dict[str, Any]:
        shown = self.options if not limit else self.options[:limit]
        return {
            "workload": self.workload.as_json(), "demand": self.demand.as_json(), "horizon_months": self.months,
            "currency": self.currency, "range": self.range_basis, "notes": list(self.notes),
            "cheapest_by_billing": {k: {"provider": v.provider, "offer": v.offer, "instances": v.instances,
                                        "cost_per_month": v.cost_per_month.as_json()}
                                    for k, v in self.best_by_billing().items()},
            "options": [o.as_json() for o in shown], "options_total": len(self.options),
            "excluded": [{"provider": p, "offer": o, "reason": r} for p, o, r in self.excluded],
        }


def _demand(w: ServeWorkload, s: Settings) -> Demand:
    if w.rate is None:
        raise InputError("plan --serve needs the load", "give --rate, e.g. --rate 20 (requests per second)")
    hours = s.hours_per_month * Decimal(repr(w.hours_per_day)) / 24
    avg = w.rate * w.output_tokens
    return Demand(avg * w.peak_ratio, avg, hours, avg * float(hours) * SECONDS_PER_HOUR)


def busy_share(load: float, w: ServeWorkload) -> Decimal:
    """The share of a month owned GPUs draw full power: the hours served, at the fleet's load."""
    return Decimal(repr(min(1.0, load) * w.hours_per_day / 24))


def _owned_month(offer: Offer, spec: Any, w: ServeWorkload, s: Settings, catalog: Catalog, months: int,
                 load: float, scenario: Any) -> tuple[Money, list[str], Any]:
    """Owning one instance's cards for a month, as ``gpuplan tco`` counts it: cards and a sized host paid once per
    life less resale, spread over the horizon, plus energy (GPUs busy for the hours served, at the load), upkeep
    and, for a server, colocation. ``scenario`` carries tco's owned-hardware flags (None: the defaults)."""
    from planner.tco.owned import make_owned
    from planner.tco.scenario import Scenario

    condition = offer.name.rsplit("(", 1)[-1].rstrip(")") if "(" in offer.name else None
    sc = (scenario or Scenario()).model_copy(update={"condition": condition})
    owned = make_owned(spec, int(offer.gpu_count), sc, currency=s.currency,
                       fx=s.fx_table(), hours_per_month=s.hours_per_month, catalog=catalog)
    busy = busy_share(load, w)
    month = owned.capex_per_month(months) + owned.opex_per_month(busy)
    notes = [f"owned: cards and a sized host ({owned.host_price}) paid once per {owned.life_months}-month life less "
             f"{owned.resale_fraction:.0%} resale, over {months} months; energy at {busy:.0%} busy, PUE {owned.pue}, "
             f"upkeep {owned.maintenance_fraction:.0%} a year" + (", colocation" if owned.colo_per_kw_month else "")
             + f" ({owned.profile} profile; gpuplan tco for the details)"]
    return Money(amount=month, currency=owned.currency), notes, owned


def _unpriced_part(offer: Offer, scenario: Any) -> str | None:
    """Why buying ``offer`` cannot be costed whole, or None. An SXM module runs only on its baseboard (an
    HGX/DGX-class server) that the catalog has no price for: the cards alone would rank a build nobody can run
    for far less than it costs. A host price the user gives (``tco --serve --host-price``) covers it."""
    if needs_baseboard(offer.gpu) and getattr(scenario, "host_price", None) is None:
        return (f"{offer.gpu} is an SXM module: it needs an SXM baseboard (an HGX/DGX-class server) that has no "
                "price here; `gpuplan tco --serve ... --buy` with --host-price costs it with your server's price")
    return None


def serve_plan(w: ServeWorkload, c: Constraints, s: Settings, *, catalog: Catalog, months: int = DEFAULT_MONTHS,
               allow_spot: bool = False, calibration: Calibration | None = None, owned_scenario: Any = None
               ) -> ServePlan:
    """Every fleet that serves ``w``, cheapest per month first; raises InputError when none can."""
    check("months", Decimal(months))
    cal = calibration or shipped(w.engine)
    demand = _demand(w, s)
    fx = s.fx_table()
    horizon = Decimal(months)
    served = demand.hours_per_month * horizon
    held_all = s.hours_per_month * horizon

    def month(provider: Provider, offer: Offer, spec: Any, mode: BillingMode, load: float
              ) -> tuple[Money, list[str], bool, Any]:
        """One instance's cost a month in ``mode`` (its native currency), notes, estimate flag and owned build;
        PriceMissingError when the offer has no price there."""
        if mode is BillingMode.BUY:
            per_instance, notes, owned = _owned_month(offer, spec, w, s, catalog, months, load, owned_scenario)
            return per_instance, notes, False, owned
        # an instance on a term is held the whole horizon; by the hour it runs only when serving
        held = served if mode in (BillingMode.HOURLY, BillingMode.SPOT) else held_all
        quote = provider.quote(offer, mode, held, hours_per_month=s.hours_per_month)
        return (Money(amount=quote.cost.amount / horizon, currency=quote.cost.currency), list(quote.notes),
                quote.estimate, None)
    budget = None if c.budget is None else fx.convert(c.budget, s.currency).amount  # --budget is per month here
    layouts: dict[tuple[str, int, Interconnect], Layout | str] = {}
    options: list[Fleet] = []
    excluded: list[tuple[str, str, str]] = []
    providers = [p for p in all_providers(catalog, spot_pricing=s.spot_price)
                 if c.providers is None or p.name in c.providers]
    listed = [(p, p.list_offers()) for p in providers]
    check_regions(c.regions, (place for p, offers in listed for place in places(p.name, offers)))
    for provider, offers in listed:
        for offer in offers:
            spec = catalog.gpus[offer.gpu]
            if (why := offer_filter(offer, spec, c)) is not None:
                excluded.append((offer.provider, offer.name, why[1]))
                continue
            n = offer.gpu_count
            if n < 1 or n != int(n):
                excluded.append((offer.provider, offer.name, f"{n:g} GPUs: a share of a GPU serves no replica"))
                continue
            key = (spec.key, int(n), offer.interconnect)
            if key not in layouts:
                layouts[key] = best_layout(w, spec, int(n), offer.interconnect, cal)
            lay = layouts[key]
            if isinstance(lay, str):
                excluded.append((offer.provider, offer.name, lay))
                continue
            sized = size(w, lay, demand.peak_tokens_per_s, MAX_INSTANCES)
            if sized is None:
                excluded.append((offer.provider, offer.name, f"needs over {MAX_INSTANCES:,} instances"))
                continue
            need, load = sized.instances, sized.load
            slow = instances_if_slow(w, lay, demand.peak_tokens_per_s, cal.spread.low, need)
            for mode in offer.rates:
                if c.billing is not None and mode not in c.billing:
                    continue
                label = f"{offer.name} {mode}"
                if mode is BillingMode.SPOT and not allow_spot:
                    excluded.append((offer.provider, label, "spot instances can be taken back mid-request: "
                                                            "add --allow-spot if the service tolerates it"))
                    continue
                if mode in offer.estimated and not c.spot_estimates:
                    excluded.append((offer.provider, label, ESTIMATED_SPOT))
                    continue
                if mode is BillingMode.BUY and (why := _unpriced_part(offer, owned_scenario)):
                    excluded.append((offer.provider, label, why))
                    continue
                try:
                    per_instance, notes, estimate, owned = month(provider, offer, spec, mode, load)
                except PriceMissingError as exc:
                    excluded.append((offer.provider, label, str(exc)))
                    continue
                native = per_instance * need
                cost = fx.convert(native, s.currency)
                if budget is not None and cost.amount > budget:
                    excluded.append((offer.provider, label, f"costs {cost} a month, over the budget {c.budget}"))
                    continue
                per_million = Money(amount=cost.amount / Decimal(repr(demand.tokens_per_month)) * Decimal(1_000_000),
                                    currency=cost.currency) if demand.tokens_per_month > 0 else cost
                if offer_note := public_note(offer.notes):  # the data's research trail stays in its file
                    notes.append(offer_note.rstrip("; "))
                if mode in (BillingMode.MONTHLY, BillingMode.RESERVED_1Y, BillingMode.RESERVED_3Y) \
                        and w.hours_per_day < 24:
                    notes.append(f"pays every hour of the {mode} term for a service that runs "
                                 f"{w.hours_per_day:g} h a day")
                if estimate:
                    notes.append(f"{mode} price is an estimate")
                options.append(Fleet(
                    provider=offer.provider, offer=offer.name, region=offer.region, gpu=offer.gpu,
                    gpu_count=int(n), billing=mode, instances=need, instances_if_slow=slow, layout=lay,
                    capacity_tokens_per_s=lay.tokens_per_s * need, load=load, ttft_s=sized.ttft_s,
                    queue_wait_s=sized.wait_s,
                    cost_per_month=cost, native_cost_per_month=native, cost_per_million_tokens=per_million,
                    cost_per_month_if_slow=fx.convert(per_instance * slow, s.currency), estimate=estimate,
                    live=offer.live, notes=tuple(notes), owned=owned))
    if not options:
        reasons = sorted({r for _, _, r in excluded})
        raise InputError("no offer can serve this", "; ".join(reasons[:3]) or "no offers in the catalog")
    options.sort(key=lambda o: (o.cost_per_month.amount, o.instances, o.provider, o.offer, str(o.billing)))
    borrowed = ((f"no published {w.engine.title} result with its setup stated: its speeds use "
                 f"{cal.borrowed_from.title}'s constants"),) if cal.borrowed_from else ()
    return ServePlan(w, demand, months, str(s.currency), tuple(options), tuple(excluded), cal.spread.basis,
                     notes=(assumptions(w), *borrowed))


def assumptions(w: ServeWorkload) -> str:
    """How the fleets were sized, for the caption and the JSON."""
    return (f"speeds of {w.engine.title} (--engine); "
            f"fleets sized so the peak uses at most {w.max_load:.0%} of their capacity (--max-load) and, with a "
            f"--ttft target, so its {w.percentile} holds with requests arriving at random (Poisson) and waiting "
            "for a batch slot (M/M/c per replica)")
