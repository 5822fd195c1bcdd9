"""The ranked plan: every (offer x billing mode) that can do the job, cheapest first.

Data flows one way: a :class:`Demand` says how long the job takes on an offer's GPUs
(or why it cannot run there); each provider quotes every billing mode it has a price
for; costs are converted to one display currency; constraints drop options with a
reason; the rest are sorted by cost, then wall-clock time."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import Any

from pricing.catalog import Catalog
from pricing.errors import InputError, NoOptionError
from pricing.money import money_text
from providers.base import Provider
from providers.registry import all_providers
from planner.limits import bounded
from planner.perf.speed import SpeedPrecision, WorkloadClass
from planner.plan.costing import Costing
from planner.plan.demand import Demand, RefGpuHours
from pricing.bill import Extras
from planner.plan.filters import check_regions, places
from planner.plan.model import RULE_TEXT, Constraints, ExclusionRule, Option, Plan
from planner.plan.ranked import MODES, Exclusions, OptionRecords, RankedOptions
from planner.plan.ranking import rank_offers
from planner.plan.rates import offer_table
from planner.settings import Settings


def _cost_story(o: Option) -> str:
    story = " + ".join(i.story() for i in o.line_items)
    if o.extras:
        total = sum((i.cost.amount for i in o.extras), Decimal(0))
        story += f" + {money_text(total, o.extras[0].cost.currency)} of disks, addresses and traffic"
    return story


def explain(options: RankedOptions) -> str:
    """One line on why the winner wins."""
    win = options[0]
    head = (
        f"{win.provider} {win.offer} {win.billing} wins at {win.cost}"
        f" ({_cost_story(win)}), finishing in {win.wall_hours:.1f} h"
    )
    if win.scaling is not None:
        from planner.plan.layout_choice import words

        head += f"; trains with {words(win.scaling)}"
        if lost := win.scaling.get("alternatives"):
            head += f" (layouts that lost: {'; '.join(lost)})"
    rest = (options[i] for i in range(1, len(options)))  # read one by one: each is costed in full when read
    rival = next((o for o in rest if (o.provider, o.offer) != (win.provider, win.offer)), None)
    if rival is None:
        return head + "; it is the only option left."
    if rival.cost.amount > 0:
        saving = (rival.cost.amount - win.cost.amount) / rival.cost.amount
        head += f"; {saving:.0%} below the next offer, {rival.provider} {rival.offer} {rival.billing} at {rival.cost}"
    # Only options within 3x the winner's cost count as a faster alternative worth naming.
    fastest = options[options.fastest_within(win.cost.amount * 3)]
    if fastest is not win and fastest.wall_hours < win.wall_hours / 2:
        head += (f". Fastest within 3× the cost: {fastest.provider} {fastest.offer} {fastest.billing}, "
                 f"{fastest.wall_hours:.1f} h for {fastest.cost}")
    return head + "."


def make_plan(
    demand: Demand,
    constraints: Constraints | None,
    settings: Settings,
    *,
    catalog: Catalog,
    providers: list[Provider] | None = None,
    extras: Extras | None = None,
) -> Plan:
    """Cost every offer x billing mode for ``demand`` and rank what the constraints allow.

    Two passes: every offer and mode is costed as a bare Decimal and ranked (shared work
    per offer shape, nothing built that is not kept), then the options a reader looks at
    are quoted in full. The second pass runs the same rules on the same numbers. With
    ``extras`` each option is the whole bill (disks, addresses, traffic, set-up) and ranks by it.
    """
    c = constraints or Constraints()
    s = settings
    cat = catalog
    costing = Costing(demand, c, s, cat, extras)
    excluded = Exclusions()
    selected = [p for p in providers or all_providers(cat, spot_pricing=s.spot_price)
                if c.providers is None or p.name in c.providers]
    listed = [(p, offer_table(p)) for p in selected]
    if c.regions:
        check_regions(c.regions, (place for p, offers in listed for place in places(p.name, offers.facts())))
    records = OptionRecords()
    for provider, offers in listed:
        rank_offers(provider, offers, costing, excluded, records)

    def build(record: int) -> Option:
        provider, offers = listed[records.provider(record)]
        offer = offers[records.offer[record]]
        spec = cat.gpus[offer.gpu]
        runs = costing.runs(offer, spec)
        first = runs.smallest_fitting()
        assert isinstance(first, int), "the ranking pass kept an option whose workload does not fit"
        o = costing.option(provider, offer, spec, MODES[records.mode[record]], runs, first)
        assert isinstance(o, Option) and float(o.cost.amount) == records.cost[record], "the two passes disagree"
        return o

    if not records:
        if c.billing is not None and all(r is ExclusionRule.NO_PRICE for r in excluded.rules()):
            wanted = ", ".join(sorted(c.billing))
            raise NoOptionError(f"no offer in the catalog has a {wanted} price",
                                "`gpuplan offers` shows which prices each offer has")
        rules = Counter(excluded.rules())
        common = "; ".join(f"{n} {RULE_TEXT[r]}" for r, n in rules.most_common(3))
        unpriced = rules and rules.most_common(1)[0][0] is ExclusionRule.UNPRICED
        raise NoOptionError(
            "no option satisfies the constraints" + (f" ({common})" if common else ""),
            next(e.reason for e in excluded.items if e.rule is ExclusionRule.UNPRICED) if unpriced
            else "relax --deadline, --budget, --min-vram, --max-gpus or the filters",
        )
    options = RankedOptions(records, build)
    assumptions: dict[str, Any] = {
        **demand.assumptions(),
        "hours_per_month": str(s.hours_per_month),
        "spot_overhead": str(s.spot_overhead),
        "checkpoint_every_hours": str(s.checkpoint_every) if s.checkpoint_every is not None else "1",
        "fx": [r.label() for r in costing.fx.used()],
        "catalog_as_of": cat.as_of.isoformat(),
        "prices_as_of": cat.as_of_statement(c.providers),
        "prices": prices_statement(cat, c.providers),
        "catalog_layers": [f"{layer.layer}: {layer.origin} ({layer.rows} rows)" for layer in cat.layers],
    }
    if extras is not None:
        assumptions["extras"] = extras.assumptions()
    return Plan(currency=s.currency, assumptions=assumptions, options=options, excluded=excluded,
                explanation=explain(options))


def prices_statement(cat: Catalog, providers: frozenset[str] | None) -> str:
    """Which data the prices came from, and what is not live, in one sentence."""
    clouds = [p for p in cat.providers if p != "local" and (providers is None or p in providers)]
    live = [p for p in clouds if p in cat.live_providers]
    parts = []
    through = _read_through(cat)
    if real := [p for p in live if p not in through]:
        parts.append(f"live prices and stock for {', '.join(real)} (gpuplan catalog refresh)")
    for p in (p for p in live if p in through):  # a test endpoint's or a proxy's prices are not the cloud's
        parts.append(f"prices for {p} read through {through[p]}, not {p}'s own API (`gpuplan catalog clear "
                     f"--provider {p}` removes them)")
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
    settings: Settings,
    catalog: Catalog,
    **constraints: Any,
) -> Plan:
    """The Python API behind ``gpuplan plan --gpu-hours``; constraint names as in :class:`Constraints`."""
    s = settings
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


def _read_through(cat: Catalog) -> dict[str, str]:
    """Providers whose refreshed prices were read through an endpoint override, with that endpoint."""
    cached = [layer for layer in cat.layers if layer.layer == "cache"]
    if not cached:  # a plan on the shipped snapshot loads nothing more
        return {}
    from pathlib import Path

    from providers.refresh import cache_origin

    out: dict[str, str] = {}
    for layer in cached:
        if endpoint := cache_origin(Path(layer.origin)).get("endpoint"):
            out.setdefault(Path(layer.origin).parent.name, str(endpoint))  # <cache>/<provider>/<region>.csv
    return out
