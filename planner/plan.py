"""The ranked plan: every (offer x billing mode) that can do the job, cheapest first.

Data flows one way: a :class:`Demand` says how long the job takes on an offer's GPUs
(or why it cannot run there); each provider quotes every billing mode it has a price
for; costs are converted to one display currency; constraints drop options with a
reason; the rest are sorted by cost, then wall-clock time.
"""

from __future__ import annotations

import difflib
import sys
import types
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from pricing.billing import BillingMode
from pricing.catalog import LOCAL, Catalog, GpuSpec, Stock
from pricing.errors import InputError, NoOptionError
from pricing.line_items import LineItem
from pricing.money import Currency, Fx, Money
from providers.base import Offer, Provider
from providers.registry import all_providers
from planner.demand import Demand, RefGpuHours, Run
from planner.perf import SpeedPrecision, WorkloadClass
from planner.settings import Settings, load_settings
from planner.limits import bounded


DEFAULT_MAX_NODES = 64


class Constraints(BaseModel):
    model_config = ConfigDict(frozen=True)

    deadline_hours: Decimal | None = None
    budget: Money | None = None
    min_vram_gb: float | None = None
    providers: frozenset[str] | None = None
    billing: frozenset[BillingMode] | None = None
    regions: tuple[str, ...] | None = None
    gpus: frozenset[str] | None = None
    max_gpus: float | None = None  # across all nodes of an option
    nodes: int | None = None  # pin the node count; None searches 1 .. max_nodes
    max_nodes: int = DEFAULT_MAX_NODES


class OptionRange(BaseModel):
    """Low and high ends of an option's calibrated range (its expected values are the option's own)."""

    model_config = ConfigDict(frozen=True)

    wall_hours: tuple[Decimal, Decimal]
    gpu_hours: tuple[Decimal, Decimal]
    cost: tuple[Money, Money]


class Option(BaseModel):
    """One way to do the job, costed."""

    model_config = ConfigDict(frozen=True)

    provider: str
    offer: str
    region: str
    gpu: str
    gpu_count: float
    billing: BillingMode
    wall_hours: Decimal
    gpu_hours: Decimal
    cost: Money
    native_cost: Money
    line_items: tuple[LineItem, ...]
    notes: tuple[str, ...]
    estimate: bool = False
    zone: str | None = None  # the zone whose price this is (live data), for launch --from-plan
    live: bool = False  # priced from refreshed (live) data rather than the shipped snapshot
    range: OptionRange | None = None  # model workloads: calibrated low/high (ranking stays on the expected values)
    nodes: int = 1  # identical nodes of the offer working as one cluster

    @property
    def gpus_total(self) -> float:
        return self.gpu_count * self.nodes


class ExclusionRule(StrEnum):
    """Which constraint or fact excluded an option: the key that summaries group by."""

    GPU = "gpu"
    MIN_VRAM = "min_vram"
    MAX_GPUS = "max_gpus"
    REGION = "region"
    NO_PRICE = "no_price"
    WORKLOAD = "workload"
    DEADLINE = "deadline"
    BUDGET = "budget"
    SOLD_OUT = "sold_out"


RULE_TEXT = {
    ExclusionRule.GPU: "not a selected GPU", ExclusionRule.MIN_VRAM: "below --min-vram", ExclusionRule.MAX_GPUS: "above --max-gpus",
    ExclusionRule.REGION: "outside --region", ExclusionRule.NO_PRICE: "without a public price", ExclusionRule.WORKLOAD: "where the workload does not fit",
    ExclusionRule.DEADLINE: "past the deadline", ExclusionRule.BUDGET: "over the budget", ExclusionRule.SOLD_OUT: "sold out in every zone",
}


class Exclusion(BaseModel):
    model_config = ConfigDict(frozen=True)

    provider: str
    offer: str
    region: str
    zone: str | None = None  # where the data names one: the zone of the excluded price, or the offer's only zone
    billing: BillingMode | None = None
    rule: ExclusionRule
    reason: str


class Plan(BaseModel):
    currency: Currency
    assumptions: dict[str, Any]
    options: list[Option]
    excluded: list[Exclusion]
    explanation: str

    @property
    def cheapest(self) -> Option:
        return self.options[0]

    def cheapest_by_billing(self) -> dict[BillingMode, Option]:
        out: dict[BillingMode, Option] = {}
        for o in self.options:
            out.setdefault(o.billing, o)
        return out


def region_matches(offer: Offer, regions: tuple[str, ...]) -> bool:
    """True when the offer's region or one of its zones starts with one of ``regions``."""
    names = [offer.region.lower(), *(z.lower() for z in offer.zones)]
    return any(n.startswith(r.lower()) for r in regions for n in names)


def check_regions(regions: tuple[str, ...] | None, offers: list[Offer]) -> None:
    """Refuse a region or zone prefix that no cloud offer among ``offers`` matches.

    A misspelt region would otherwise drop every cloud offer and leave only the cards to
    buy (which have no region), quietly answering another question.
    """
    if not regions:
        return
    cloud = [o for o in offers if o.provider != LOCAL]
    if not cloud:
        raise InputError("--region filters cloud offers, and no cloud provider is selected",
                         "drop --region, or add a cloud with --provider")
    regions_known = sorted({o.region for o in cloud})
    zones_known = sorted({z for o in cloud for z in o.zones})
    for r in regions:
        if any(region_matches(o, (r,)) for o in cloud):
            continue
        close = difflib.get_close_matches(r.lower(), regions_known + zones_known, n=3, cutoff=0.0)
        providers = ", ".join(dict.fromkeys(o.provider for o in cloud))
        zones = f"; a zone prefix such as {zones_known[0]} works too" if zones_known else ""
        raise InputError(f"--region {r!r} matches no offer of {providers}; closest known: {', '.join(close)}",
                         f"regions: {', '.join(regions_known)}{zones}")


def offer_filter(offer: Offer, spec: GpuSpec, c: Constraints, *, priced: bool = True) -> tuple[ExclusionRule, str] | None:
    """Why ``c`` excludes ``offer`` before any costing, or None; ``priced=False`` keeps unpriced offers."""
    vram = spec.vram_gb * min(offer.gpu_count, 1)
    if c.gpus is not None and offer.gpu not in c.gpus:
        return ExclusionRule.GPU, "GPU not selected (--gpu)"
    if c.min_vram_gb is not None and vram < c.min_vram_gb:
        return ExclusionRule.MIN_VRAM, f"{vram:g} GB VRAM per GPU is below --min-vram {c.min_vram_gb:g}"
    if c.max_gpus is not None and offer.gpu_count > c.max_gpus:
        return ExclusionRule.MAX_GPUS, f"{offer.gpu_count:g} GPUs is above --max-gpus {c.max_gpus:g}"
    if c.regions and offer.region != "local" and not region_matches(offer, c.regions):
        return ExclusionRule.REGION, "not in the selected regions (--region)"
    if not priced:
        return None
    if offer.stock is Stock.SOLD_OUT:
        zones = ", ".join(offer.sold_out_zones)
        return ExclusionRule.SOLD_OUT, f"sold out in every zone of {offer.region} ({zones}; live data of {offer.as_of})"
    if not offer.rates:
        return ExclusionRule.NO_PRICE, "no public price in the catalog"
    if c.billing is not None and not c.billing & offer.rates.keys():
        wanted = ", ".join(sorted(c.billing))
        return ExclusionRule.NO_PRICE, f"no {wanted} price in the catalog"
    return None


def exclusion_zone(offer: Offer, mode: BillingMode | None) -> str | None:
    """The zone an exclusion is about, where the data says: the rate's zone, else the offer's only zone."""
    if mode is not None and (zone := offer.rate_zones.get(mode)):
        return zone
    return offer.zones[0] if len(offer.zones) == 1 else None


def _host_note(offer: Offer, spec: GpuSpec) -> str | None:
    if offer.mem_gb is None:
        return None
    vram = spec.vram_gb * offer.gpu_count
    if offer.mem_gb < vram:
        return f"host RAM {offer.mem_gb:g} GB is below total VRAM {vram:g} GB: data loading may starve the GPUs"
    return None


def _cost_story(o: Option) -> str:
    return " + ".join(i.story() for i in o.line_items)


def explain(options: list[Option]) -> str:
    """One line on why the winner wins."""
    win = options[0]
    head = (
        f"{win.provider} {win.offer} {win.billing} wins at {win.cost}"
        f" ({_cost_story(win)}), finishing in {win.wall_hours:.1f} h"
    )
    rival = next((o for o in options[1:] if (o.provider, o.offer) != (win.provider, win.offer)), None)
    if rival is None:
        return head + "; it is the only option left."
    if rival.cost.amount > 0:
        saving = (rival.cost.amount - win.cost.amount) / rival.cost.amount
        head += f"; {saving:.0%} below the next offer, {rival.provider} {rival.offer} {rival.billing} at {rival.cost}"
    # Only options within 3x the winner's cost count as a faster alternative worth naming.
    affordable = [o for o in options if o.cost.amount <= win.cost.amount * 3]
    fastest = min(affordable, key=lambda o: (o.wall_hours, o.cost.amount))
    if fastest is not win and fastest.wall_hours < win.wall_hours / 2:
        head += f". Fastest within 3× the cost: {fastest.provider} {fastest.offer} {fastest.billing}, {fastest.wall_hours:.1f} h for {fastest.cost}"
    return head + "."


def shape_key(offer: Offer, spec: GpuSpec, nodes: int) -> tuple[Any, ...]:
    """Everything a ``runs_by_shape`` demand reads from an offer: two offers with one key run alike.

    The GPU, its count and interconnect on one node; across nodes also the instance type's
    network (looked up by provider and type), so only multi-node runs are keyed on the type.
    """
    network = (offer.provider, offer.name.lower()) if nodes > 1 else None
    return spec.key, offer.gpu_count, offer.interconnect, nodes, network


class NodeRuns:
    """Run times of one offer on 1 .. max_nodes identical nodes, computed lazily and cached.

    More nodes never cost less (every billing mode charges node-time, and scaling across
    nodes is below 100%), so the cheapest cluster of an offer is the smallest that fits the
    memory and meets the deadline. Fit and speed only improve with nodes, so that smallest
    count is found by bisection: a handful of runs per offer, not max_nodes.
    """

    def __init__(self, demand: Demand, offer: Offer, spec: GpuSpec, c: Constraints,
                 shared: dict[tuple[Any, ...], Run | str] | None = None) -> None:
        self.demand, self.offer, self.spec = demand, offer, spec
        # Runs shared between offers of one shape (see shape_key), for demands that declare
        # ``runs_by_shape``: a large catalog has hundreds of shapes for tens of thousands of offers.
        self.shared = shared
        cloud = offer.provider != LOCAL and offer.gpu_count >= 1
        most = c.max_nodes if cloud else 1
        if c.max_gpus is not None:
            most = max(1, min(most, int(c.max_gpus // max(offer.gpu_count, 1))))
        self.lo = self.hi = c.nodes if (c.nodes is not None and cloud) else 1
        if c.nodes is None:
            self.hi = most
        self.deadline = c.deadline_hours
        self._runs: dict[int, Run | str] = {}

    def run(self, n: int) -> Run | str:
        if n not in self._runs:
            key = shape_key(self.offer, self.spec, n) if self.shared is not None else None
            if key is not None and self.shared is not None and key in self.shared:
                self._runs[n] = self.shared[key]
                return self._runs[n]
            self._runs[n] = self.demand.run(self.offer, self.spec, n) if n > 1 else self.demand.run(self.offer,
                                                                                                   self.spec)
            if key is not None and self.shared is not None:
                self.shared[key] = self._runs[n]
        return self._runs[n]

    def _smallest(self, lo: int, ok: Callable[[Run | str], bool]) -> int | None:
        if ok(self.run(lo)):
            return lo
        if lo >= self.hi or not ok(self.run(self.hi)):
            return None
        bad, good = lo, self.hi
        while good - bad > 1:
            mid = (bad + good) // 2
            bad, good = (bad, mid) if ok(self.run(mid)) else (mid, good)
        return good

    def smallest_fitting(self) -> int | str:
        n = self._smallest(self.lo, lambda r: not isinstance(r, str))
        if n is None:
            why = self.run(self.hi)
            assert isinstance(why, str)
            return why if self.hi == 1 else f"{why} (also on {self.hi} nodes)"
        return n

    def for_deadline(self, first: int, factor: Decimal) -> tuple[int, Run | str, str]:
        """(nodes, run, why that many) for one billing mode: the fewest that meet the deadline, else ``first``."""
        why = f"memory needs {first} nodes" if first > 1 else ""
        if self.deadline is None:
            return first, self.run(first), why
        deadline = self.deadline

        def ok(r: Run | str) -> bool:
            return not isinstance(r, str) and r.wall_hours * factor <= deadline

        n = self._smallest(first, ok)
        if n is None:
            return self.hi, self.run(self.hi), why  # too slow even on the most nodes: the deadline check says so
        if n > first:
            before = self.run(n - 1)
            took = f" ({n - 1} would take {before.wall_hours * factor:,.0f} h)" if not isinstance(before, str) else ""
            why = f"the {deadline:g} h deadline needs {n} nodes{took}"
        return n, self.run(n), why

    def bigger_note(self, n: int, mode: BillingMode, factor: Decimal, provider: Provider, hours_per_month: Decimal,
                    cost: Money) -> str | None:
        """Why a cluster twice the size lost: poorer scaling makes the same work cost more."""
        m = min(2 * n, self.hi)
        r = self.run(m) if m > n else None
        if r is None or isinstance(r, str):
            return None
        q = provider.quote(self.offer, mode, r.wall_hours * factor, hours_per_month=hours_per_month)
        other = q.cost * m
        if cost.amount <= 0:
            return None
        return (f"{m} nodes would finish in {r.wall_hours * factor:,.0f} h but cost {other.amount:,.2f} "
                f"{other.currency} ({other.amount / cost.amount - 1:+.0%}): scaling falls as nodes are added")


def make_plan(
    demand: Demand,
    constraints: Constraints | None = None,
    settings: Settings | None = None,
    *,
    catalog: Catalog,
    providers: list[Provider] | None = None,
) -> Plan:
    """Cost every offer x billing mode for ``demand`` and rank what the constraints allow."""
    c = constraints or Constraints()
    s = settings or load_settings()
    cat = catalog
    fx: Fx = s.fx_table()
    options: list[Option] = []
    excluded: list[Exclusion] = []
    selected = [p for p in providers or all_providers(cat, spot_pricing=s.spot_price)
                if c.providers is None or p.name in c.providers]
    listed = [(p, p.list_offers()) for p in selected]  # built once: an offer is a pydantic model per row
    check_regions(c.regions, [o for _, offers in listed for o in offers])
    shared: dict[tuple[Any, ...], Run | str] | None = {} if getattr(demand, "runs_by_shape", False) else None
    for provider, offers in listed:
        for offer in offers:
            spec = cat.gpus[offer.gpu]

            def drop(rule: ExclusionRule, reason: str, mode: BillingMode | None = None, _o: Offer = offer,
                     zone: str | None = None) -> None:
                excluded.append(
                    Exclusion(provider=_o.provider, offer=_o.name, region=_o.region,
                              zone=zone or exclusion_zone(_o, mode), billing=mode, rule=rule, reason=reason)
                )

            if (rejected := offer_filter(offer, spec, c)) is not None:
                drop(*rejected)
                continue
            for zone in offer.sold_out_zones:  # the offer stands in its other zones; say which were skipped
                drop(ExclusionRule.SOLD_OUT, f"sold out in {zone} (live data of {offer.as_of}); priced in "
                     f"{', '.join(offer.zones)}", zone=zone)
            host = _host_note(offer, spec)
            runs = NodeRuns(demand, offer, spec, c, shared)
            first = runs.smallest_fitting()
            if isinstance(first, str):
                drop(ExclusionRule.WORKLOAD, first)
                continue
            for mode in offer.rates:
                if c.billing is not None and mode not in c.billing:
                    continue
                if not provider.bills(mode):
                    # a user catalog may price a mode its provider's billing rules do not cover
                    drop(ExclusionRule.NO_PRICE, f"{offer.provider} has no {mode} billing rule: add "
                         f"[{offer.provider}.{mode}] to the billing rules to plan with this price", mode)
                    continue
                factor = 1 + s.spot_overhead if mode is BillingMode.SPOT else Decimal(1)
                n, run, why = runs.for_deadline(first, factor)
                if isinstance(run, str):
                    drop(ExclusionRule.WORKLOAD, run, mode)
                    continue
                wall = run.wall_hours * factor
                notes = list(run.notes)
                if n > 1 or why:
                    notes.insert(0, f"{n} x {offer.name} ({offer.gpu_count * n:g} x {offer.gpu})" + (
                        f": {why}" if why else ""))
                if mode is BillingMode.SPOT:
                    notes.append(f"assumes {s.spot_overhead:.0%} extra run time to restart after interruptions")
                quote = provider.quote(offer, mode, wall, hours_per_month=s.hours_per_month)
                items = quote.line_items if n == 1 else tuple(
                    LineItem.priced(f"{n} nodes x {i.description}", i.quantity * n, i.unit, i.unit_price)
                    for i in quote.line_items)
                native = quote.cost * n
                cost = fx.convert(native, s.currency)
                if mode is BillingMode.MONTHLY:
                    paid = quote.line_items[0].quantity * s.hours_per_month
                    notes.append(f"pays {quote.line_items[0].quantity:g} whole month(s); uses {wall / paid:.0%} of the time paid for")
                if quote.estimate:
                    notes.append(f"{mode} price is an estimate")
                notes.extend(quote.notes)
                if host:
                    notes.append(host)
                if n > 1 and (bigger := runs.bigger_note(n, mode, factor, provider, s.hours_per_month, native)):
                    notes.append(bigger)
                if c.deadline_hours is not None and wall > c.deadline_hours:
                    more = f" on {n} nodes" if n > 1 else ""
                    drop(ExclusionRule.DEADLINE, f"takes {wall:.1f} h{more}, past the {c.deadline_hours:g} h deadline",
                         mode)
                    continue
                if c.budget is not None and cost.amount > fx.convert(c.budget, s.currency).amount:
                    drop(ExclusionRule.BUDGET, f"costs {cost}, over the budget {c.budget}", mode)
                    continue
                rng = None
                if run.spread is not None:
                    # re-quote at each end: billing is not linear in hours (minimums, whole months)
                    lo, hi = (wall * Decimal(repr(f)) for f in run.spread)
                    lo_cost, hi_cost = (fx.convert(provider.quote(offer, mode, h, hours_per_month=s.hours_per_month).cost * n,
                                                   s.currency) for h in (lo, hi))
                    count = Decimal(repr(offer.gpu_count * n))
                    rng = OptionRange(wall_hours=(lo, hi), gpu_hours=(lo * count, hi * count), cost=(lo_cost, hi_cost))
                options.append(
                    Option(
                        provider=offer.provider,
                        offer=offer.name,
                        region=offer.region,
                        gpu=offer.gpu,
                        gpu_count=offer.gpu_count,
                        billing=mode,
                        wall_hours=wall,
                        gpu_hours=wall * Decimal(repr(offer.gpu_count * n)),
                        cost=cost,
                        native_cost=native,
                        line_items=items,
                        notes=tuple(notes),
                        estimate=quote.estimate,
                        zone=quote.zone,
                        live=offer.live,
                        range=rng,
                        nodes=n,
                    )
                )
    if not options:
        if c.billing is not None and all(e.rule is ExclusionRule.NO_PRICE for e in excluded):
            wanted = ", ".join(sorted(c.billing))
            raise NoOptionError(f"no offer in the catalog has a {wanted} price",
                                "`gpuplan offers` shows which prices each offer has")
        rules = Counter(e.rule for e in excluded)
        common = "; ".join(f"{n} {RULE_TEXT[r]}" for r, n in rules.most_common(3))
        raise NoOptionError(
            "no option satisfies the constraints" + (f" ({common})" if common else ""),
            "relax --deadline, --budget, --min-vram, --max-gpus or the filters",
        )
    options.sort(key=lambda o: (o.cost.amount, o.wall_hours))
    assumptions: dict[str, Any] = {
        **demand.assumptions(),
        "hours_per_month": str(s.hours_per_month),
        "spot_overhead": str(s.spot_overhead),
        "fx": [r.label() for r in fx.used()],
        "catalog_as_of": cat.as_of.isoformat(),
        "prices_as_of": cat.as_of_statement(c.providers),
        "prices": prices_statement(cat, c.providers),
        "catalog_layers": [f"{layer.layer}: {layer.origin} ({layer.rows} rows)" for layer in cat.layers],
    }
    return Plan(currency=s.currency, assumptions=assumptions, options=options, excluded=excluded, explanation=explain(options))


def prices_statement(cat: Catalog, providers: frozenset[str] | None) -> str:
    """Which data the prices came from, and what is not live, in one sentence."""
    clouds = [p for p in cat.providers if p != "local" and (providers is None or p in providers)]
    live = [p for p in clouds if p in cat.live_providers]
    parts = []
    if live:
        parts.append(f"live prices and stock for {', '.join(live)} (gpuplan catalog refresh)")
    stale = [p for p in clouds if p not in live]
    if stale:
        parts.append(f"list prices from the shipped snapshot for {', '.join(stale)}: regions, zones and spot are "
                     "not live (`gpuplan catalog refresh --provider NAME --region REGION` reads them)")
    if any(layer.layer == "user" for layer in cat.layers):
        parts.append("user catalog files override both")
    return "; ".join(parts) + "; estimates are marked" if parts else "estimates are marked"


def plan_from_options(
    *,
    gpu_hours: float | Decimal | str,
    ref_gpu: str | None = None,
    workload_class: str = "transformer",
    precision: str = "mixed",
    settings: Settings | None = None,
    catalog: Catalog,
    **constraints: Any,
) -> Plan:
    """The Python API behind ``gpuplan plan --gpu-hours``; constraint names as in :class:`Constraints`."""
    s = settings or load_settings()
    cat = catalog
    try:
        cls, prec = WorkloadClass(workload_class), SpeedPrecision(precision)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    demand = RefGpuHours(
        gpu_hours=bounded(gpu_hours, "gpu_hours", f"gpu_hours {gpu_hours}"),
        ref_gpu=cat.gpu(ref_gpu or s.ref_gpu).key,
        catalog=cat,
        workload_class=cls,
        precision=prec,
    )
    return make_plan(demand, Constraints(**constraints), s, catalog=cat)


class _PlanModule(types.ModuleType):
    """This module, callable as the package's API function.

    ``planner.plan(...)`` is the documented Python API, but importing this submodule makes
    Python rebind the package attribute ``planner.plan`` to the module; calling the module
    does what the function does, so the API works before and after that import.
    """

    def __call__(self, **kwargs: Any) -> Plan:
        import planner

        return planner.__dict__["_api_plan"](**kwargs)


sys.modules[__name__].__class__ = _PlanModule
