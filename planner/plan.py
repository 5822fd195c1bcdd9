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
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from enum import StrEnum
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, field_serializer

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
    """The ranked options; :func:`make_plan` gives them as a :class:`RankedOptions`, each costed in full when read."""

    currency: Currency
    assumptions: dict[str, Any]
    options: Sequence[Option]
    excluded: Sequence[Exclusion]
    explanation: str

    @field_serializer("options", "excluded")
    def _every(self, items: Sequence[BaseModel]) -> list[BaseModel]:
        return list(items)

    @property
    def cheapest(self) -> Option:
        return self.options[0]

    def cheapest_by_billing(self) -> dict[BillingMode, Option]:
        return {mode: o for mode, (_, o) in self.ranked_by_billing().items()}

    def ranked_by_billing(self) -> dict[BillingMode, tuple[int, Option]]:
        """Each billing mode's cheapest option with its 0-based rank, cheapest mode first."""
        if isinstance(self.options, RankedOptions):
            return self.options.first_by_billing()
        out: dict[BillingMode, tuple[int, Option]] = {}
        for rank, o in enumerate(self.options):
            out.setdefault(o.billing, (rank, o))
        return out


def region_matches(offer: Offer, regions: tuple[str, ...]) -> bool:
    """True when the offer's region or one of its zones starts with one of ``regions``."""
    return _place_matches(offer.region, offer.zones, regions)


def _place_matches(region: str, zones: tuple[str, ...], regions: tuple[str, ...]) -> bool:
    names = [region.lower(), *(z.lower() for z in zones)]
    return any(n.startswith(r.lower()) for r in regions for n in names)


Place = tuple[str, str, tuple[str, ...]]  # an offer's provider, region and zones


def places(provider: Provider, offers: Sequence[Offer]) -> Iterator[Place]:
    """Each of ``offers``' provider, region and zones, read from its facts (so a row's offer is not built)."""
    for *_, region, zones, _rate_zones, _sold_out in provider.facts(offers):
        yield provider.name, region, zones


def check_regions(regions: tuple[str, ...] | None, offered: Iterable[Place]) -> None:
    """Refuse a region or zone prefix that no cloud offer among ``offered`` (see :func:`places`) matches.

    A misspelt region would otherwise drop every cloud offer and leave only the cards to
    buy (which have no region), quietly answering another question.
    """
    if not regions:
        return
    cloud = [p for p in offered if p[0] != LOCAL]
    if not cloud:
        raise InputError("--region filters cloud offers, and no cloud provider is selected",
                         "drop --region, or add a cloud with --provider")
    regions_known = sorted({region for _, region, _ in cloud})
    zones_known = sorted({z for _, _, zones in cloud for z in zones})
    for r in regions:
        if any(_place_matches(region, zones, (r,)) for _, region, zones in cloud):
            continue
        close = difflib.get_close_matches(r.lower(), regions_known + zones_known, n=3, cutoff=0.0)
        providers = ", ".join(dict.fromkeys(p for p, _, _ in cloud))
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
    return _zone(offer.rate_zones, offer.zones, mode)


def _zone(rate_zones: dict[BillingMode, str], zones: tuple[str, ...], mode: BillingMode | None) -> str | None:
    if mode is not None and (zone := rate_zones.get(mode)):
        return zone
    return zones[0] if len(zones) == 1 else None


def _host_note(offer: Offer, spec: GpuSpec) -> str | None:
    if offer.mem_gb is None:
        return None
    vram = spec.vram_gb * offer.gpu_count
    if offer.mem_gb < vram:
        return f"host RAM {offer.mem_gb:g} GB is below total VRAM {vram:g} GB: data loading may starve the GPUs"
    return None


def _cost_story(o: Option) -> str:
    return " + ".join(i.story() for i in o.line_items)


def explain(options: RankedOptions) -> str:
    """One line on why the winner wins."""
    win = options[0]
    head = (
        f"{win.provider} {win.offer} {win.billing} wins at {win.cost}"
        f" ({_cost_story(win)}), finishing in {win.wall_hours:.1f} h"
    )
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


class _Costing:
    """What costing one (offer, billing mode) needs besides the offer: the plan's inputs, once."""

    def __init__(self, demand: Demand, c: Constraints, s: Settings, cat: Catalog) -> None:
        self.demand, self.c, self.s, self.cat = demand, c, s, cat
        self.fx: Fx = s.fx_table()
        self.budget = None if c.budget is None else self.fx.convert(c.budget, s.currency).amount
        # Runs shared between offers of one shape (see shape_key), for demands that declare
        # ``runs_by_shape``: a large catalog has hundreds of shapes for tens of thousands of offers.
        self.shared: dict[tuple[Any, ...], Run | str] | None = {} if getattr(demand, "runs_by_shape", False) else None
        self._rates: dict[Currency, Decimal] = {}

    def fx_rate(self, currency: Currency) -> Decimal:
        """The rate to the display currency, asked of the FX table on first use (which records that it was used)."""
        if (rate := self._rates.get(currency)) is None:
            rate = self._rates[currency] = self.fx.rate(currency, self.s.currency)
        return rate

    def factor(self, mode: BillingMode) -> Decimal:
        return 1 + self.s.spot_overhead if mode is BillingMode.SPOT else Decimal(1)

    def runs(self, offer: Offer, spec: GpuSpec) -> NodeRuns:
        return NodeRuns(self.demand, offer, spec, self.c, self.shared)

    def option(self, provider: Provider, offer: Offer, spec: GpuSpec, mode: BillingMode, runs: NodeRuns,
               first: int) -> Option | tuple[ExclusionRule, str]:
        """The costed option, with its notes, line items and range, or why the constraints drop it.

        :func:`make_plan` ranks with :func:`_rank`, which runs the same rules on bare numbers, and
        calls this only for the options that are read; tests hold the two to the same answer.
        """
        c, s, fx = self.c, self.s, self.fx
        factor = self.factor(mode)
        n, run, why = runs.for_deadline(first, factor)
        if isinstance(run, str):
            return ExclusionRule.WORKLOAD, run
        wall = run.wall_hours * factor
        notes = list(run.notes)
        if n > 1 or why:
            notes.insert(0, f"{n} x {offer.name} ({offer.gpu_count * n:g} x {offer.gpu})" + (f": {why}" if why else ""))
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
        if host := _host_note(offer, spec):
            notes.append(host)
        if n > 1 and (bigger := runs.bigger_note(n, mode, factor, provider, s.hours_per_month, native)):
            notes.append(bigger)
        if (late := _past_deadline(wall, n, c.deadline_hours)) is not None:
            return late
        if self.budget is not None and cost.amount > self.budget:
            return ExclusionRule.BUDGET, f"costs {cost}, over the budget {c.budget}"
        rng = None
        if run.spread is not None:
            # re-quote at each end: billing is not linear in hours (minimums, whole months)
            lo, hi = (wall * Decimal(repr(f)) for f in run.spread)
            lo_cost, hi_cost = (fx.convert(provider.quote(offer, mode, h, hours_per_month=s.hours_per_month).cost * n,
                                           s.currency) for h in (lo, hi))
            count = Decimal(repr(offer.gpu_count * n))
            rng = OptionRange(wall_hours=(lo, hi), gpu_hours=(lo * count, hi * count), cost=(lo_cost, hi_cost))
        return Option(
            provider=offer.provider, offer=offer.name, region=offer.region, gpu=offer.gpu, gpu_count=offer.gpu_count,
            billing=mode, wall_hours=wall, gpu_hours=wall * Decimal(repr(offer.gpu_count * n)), cost=cost,
            native_cost=native, line_items=items, notes=tuple(notes), estimate=quote.estimate, zone=quote.zone,
            live=offer.live, range=rng, nodes=n,
        )


def _past_deadline(wall: Decimal, n: int, deadline: Decimal | None) -> tuple[ExclusionRule, str] | None:
    if deadline is None or wall <= deadline:
        return None
    more = f" on {n} nodes" if n > 1 else ""
    return ExclusionRule.DEADLINE, f"takes {wall:.1f} h{more}, past the {deadline:g} h deadline"


class _Shape:
    """What every offer of one shape (see :func:`shape_key`) of one provider has in common, per billing mode."""

    __slots__ = ("first", "modes", "runs")

    def __init__(self, runs: NodeRuns) -> None:
        self.runs = runs
        self.first = runs.smallest_fitting()
        # mode -> a _Mode, or why no offer of the shape has an option in it (rule, reason), or None: not asked for
        self.modes: dict[BillingMode, _Mode | tuple[ExclusionRule, str] | None] = {}

    def mode(self, mode: BillingMode, family: str, provider: Provider, pi: int,
             costing: _Costing) -> _Mode | tuple[ExclusionRule, str] | None:
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
                if (late := _past_deadline(wall, n, c.deadline_hours)) is not None:
                    answer = late
                else:
                    coster = provider.rate_coster(mode, wall, family=family, hours_per_month=costing.s.hours_per_month)
                    answer = _Mode(wall, float(wall), None if n == 1 else Decimal(n), pi << 40 | _MODE_AT[mode] << 32,
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


_MODES = tuple(BillingMode)
_MODE_AT = {m: i for i, m in enumerate(_MODES)}


class RankedOptions(Sequence[Option]):
    """A plan's options, cheapest first, each costed in full (notes, line items, range) only when read.

    The ranking pass keeps three numbers per option (cost and wall hours as floats, and
    its provider, billing mode and offer packed in one integer); a 200k-offer plan has
    ~400k options, and as pydantic objects they would be ~2 GB. Floats rank as the exact Decimals do: a Decimal to float
    conversion is correctly rounded, hence monotone, and two costs of a plan that differ
    at all differ far above a float's resolution (prices have at most six decimal places).
    """

    def __init__(self, cost: array[float], wall: array[float], source: array[int],
                 build: Callable[[int], Option]) -> None:
        self.cost, self.wall, self.source, self._build = cost, wall, source, build
        order = sorted(range(len(cost)), key=wall.__getitem__)
        order.sort(key=cost.__getitem__)  # stable: cost, then wall hours, then the order options were found in
        self.order = order
        self._built: dict[int, Option] = {}
        self._firsts: list[int] | None = None

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        record = self.order[index]
        if (o := self._built.get(record)) is None:
            o = self._built[record] = self._build(record)
        return o

    def __iter__(self) -> Iterator[Option]:
        # Not kept: --json over a 50k-offer plan reads 100k options once; kept, they would be ~500 MB.
        built, build = self._built, self._build
        return (built[r] if r in built else build(r) for r in self.order)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def first_by_billing(self) -> dict[BillingMode, tuple[int, Option]]:
        """Each billing mode's cheapest option and its 0-based rank."""
        if self._firsts is None:
            source = self.source
            modes = [source[record] >> 32 & 0xFF for record in self.order]
            self._firsts = sorted(modes.index(m) for m in set(modes))  # index() scans in C
        return {self[rank].billing: (rank, self[rank]) for rank in self._firsts}

    def fastest_within(self, bound: Decimal) -> int:
        """The rank of the quickest option costing at most ``bound`` (the cheaper one on a tie)."""
        limit = float(bound)
        best = 0
        key = (self.wall[self.order[0]], self.cost[self.order[0]])
        for rank, record in enumerate(self.order):
            cost = self.cost[record]
            if cost > limit or (cost == limit and self[rank].cost.amount > bound):
                break
            if (self.wall[record], cost) < key:
                best, key = rank, (self.wall[record], cost)
        return best


class Exclusions(Sequence[Exclusion]):
    """Excluded options, kept as tuples and built as :class:`Exclusion` when read (a plan may exclude 100k)."""

    _FIELDS = ("provider", "offer", "region", "zone", "billing", "rule", "reason")

    def __init__(self) -> None:
        self.items: list[tuple[Any, ...]] = []

    def add(self, offer: Offer, rule: ExclusionRule, reason: str, mode: BillingMode | None = None,
            zone: str | None = None) -> None:
        self.items.append((offer.provider, offer.name, offer.region, zone or exclusion_zone(offer, mode), mode, rule,
                           reason))

    def put(self, provider: str, offer: str, region: str, zone: str | None, mode: BillingMode | None,
            rule: ExclusionRule, reason: str) -> None:
        """:meth:`add` from the facts of an offer (see providers.base.OfferFacts), without the offer."""
        self.items.append((provider, offer, region, zone, mode, rule, reason))

    def rules(self) -> list[ExclusionRule]:
        return [e[5] for e in self.items]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return Exclusion.model_construct(**dict(zip(self._FIELDS, self.items[index], strict=True)))

    def __iter__(self) -> Iterator[Exclusion]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def _rank(pi: int, provider: Provider, offers: Sequence[Offer], costing: _Costing, excluded: Exclusions,
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
            excluded.put(name_of, name, region, _zone(rate_zones, zones, None), None, ExclusionRule.WORKLOAD,
                         shape.first)  # type: ignore[arg-type]
            continue
        modes = shape.modes
        fx = costing.fx_rate(currency)
        for mode in rates:
            m = modes[mode] if mode in modes else shape.mode(mode, family, provider, pi, costing)
            if m is None:
                continue
            if m.__class__ is not _Mode:
                excluded.put(name_of, name, region, _zone(rate_zones, zones, mode), mode, *m)  # type: ignore[misc]
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
                excluded.put(name_of, name, region, _zone(rate_zones, zones, mode), mode, ExclusionRule.BUDGET,
                             f"costs {shown}, over the budget {c.budget}")
                continue
            add_cost(float(amount))
            add_wall(hours_f)
            add_source(packed | oi)


def make_plan(
    demand: Demand,
    constraints: Constraints | None = None,
    settings: Settings | None = None,
    *,
    catalog: Catalog,
    providers: list[Provider] | None = None,
) -> Plan:
    """Cost every offer x billing mode for ``demand`` and rank what the constraints allow.

    Two passes: every offer and mode is costed as a bare Decimal and ranked (shared work
    per offer shape, nothing built that is not kept), then the options a reader looks at
    are quoted in full. The second pass runs the same rules on the same numbers.
    """
    c = constraints or Constraints()
    s = settings or load_settings()
    cat = catalog
    costing = _Costing(demand, c, s, cat)
    excluded = Exclusions()
    selected = [p for p in providers or all_providers(cat, spot_pricing=s.spot_price)
                if c.providers is None or p.name in c.providers]
    listed = [(p, p.offers()) for p in selected]
    if c.regions:
        check_regions(c.regions, (place for p, offers in listed for place in places(p, offers)))
    # per option: its cost and wall hours, and its provider, billing mode and offer packed in one integer
    cost, wall, source = array("d"), array("d"), array("q")
    for pi, (provider, offers) in enumerate(listed):
        _rank(pi, provider, offers, costing, excluded, cost, wall, source)

    def build(record: int) -> Option:
        provider, offers = listed[source[record] >> 40]
        offer = offers[source[record] & 0xFFFFFFFF]
        spec = cat.gpus[offer.gpu]
        runs = costing.runs(offer, spec)
        first = runs.smallest_fitting()
        assert isinstance(first, int), "the ranking pass kept an option whose workload does not fit"
        o = costing.option(provider, offer, spec, _MODES[source[record] >> 32 & 0xFF], runs, first)
        assert isinstance(o, Option) and float(o.cost.amount) == cost[record], "the two passes disagree"
        return o

    if not cost:
        if c.billing is not None and all(r is ExclusionRule.NO_PRICE for r in excluded.rules()):
            wanted = ", ".join(sorted(c.billing))
            raise NoOptionError(f"no offer in the catalog has a {wanted} price",
                                "`gpuplan offers` shows which prices each offer has")
        rules = Counter(excluded.rules())
        common = "; ".join(f"{n} {RULE_TEXT[r]}" for r, n in rules.most_common(3))
        raise NoOptionError(
            "no option satisfies the constraints" + (f" ({common})" if common else ""),
            "relax --deadline, --budget, --min-vram, --max-gpus or the filters",
        )
    options = RankedOptions(cost, wall, source, build)
    assumptions: dict[str, Any] = {
        **demand.assumptions(),
        "hours_per_month": str(s.hours_per_month),
        "spot_overhead": str(s.spot_overhead),
        "fx": [r.label() for r in costing.fx.used()],
        "catalog_as_of": cat.as_of.isoformat(),
        "prices_as_of": cat.as_of_statement(c.providers),
        "prices": prices_statement(cat, c.providers),
        "catalog_layers": [f"{layer.layer}: {layer.origin} ({layer.rows} rows)" for layer in cat.layers],
    }
    return Plan.model_construct(currency=s.currency, assumptions=assumptions, options=options, excluded=excluded,
                                explanation=explain(options))


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
