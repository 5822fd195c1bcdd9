"""The one adapter for every cloud that publishes list prices (Tencent Cloud, AWS, ...).

Configured by data, not code: the catalog's rows for the provider and its billing rules
(``pricing/data/billing_rules.toml``), including a spot estimate where the provider
publishes no spot price. Adding a list-price cloud is one CSV under
``pricing/data/instances/`` plus its billing-rule entries.

Per-zone rows (the shipped AWS snapshot, and live rows from ``gpuplan catalog refresh``)
are folded into one offer per (instance type, region): hourly, monthly and reserved take
the cheapest zone that sells the type (you can pick that zone), spot takes the median
over selling zones (a spot price is a moving market: the cheapest zone's price now is
not what a run pays; with an even count the dearer middle zone, so the price is always a
real zone's), and every rate names its zone. ``spot_pricing="cheapest"`` takes the
cheapest zone's spot instead. Zones that are sold out are kept aside for ``--explain``.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from enum import StrEnum
from typing import NamedTuple

from pricing.billing import BillingMode, BillingRule, rate_cost, rule_for
from pricing.catalog import Catalog, InstanceType, Interconnect, Stock
from pricing.catalog.rows import RATE_FIELDS
from pricing.errors import PriceMissingError
from pricing.line_items import LineItem
from pricing.money import money
from providers.base import Offer, Provider, Quote
from providers.bulk import BulkOffers, OfferFacts, OfferTable, RateBilled

_UNITS = {
    BillingMode.HOURLY: "hours",
    BillingMode.SPOT: "hours",
    BillingMode.MONTHLY: "months",
    BillingMode.RESERVED_1Y: "hours",
    BillingMode.RESERVED_3Y: "hours",
}
RENT_MODES = tuple(_UNITS)
RentAt = tuple[tuple[BillingMode, int], ...]  # (mode, the index of its rate in a row)
_RENT_AT: RentAt = tuple((m, InstanceType._fields.index(RATE_FIELDS[m])) for m in RENT_MODES)
_SOLD_OUT = Stock.SOLD_OUT


class SpotPricing(StrEnum):
    """How a spot rate is read from several zones (--spot-price)."""

    TYPICAL = "typical"  # the median over zones that sell the type
    CHEAPEST = "cheapest"  # the cheapest zone's price now


class ListPriceProvider(Provider, BulkOffers, RateBilled):
    """Offers and quotes from a provider's catalog rows and billing rules.

    Its offers are catalog rows (:class:`BulkOffers`) and it bills a rule applied to one
    list rate (:class:`RateBilled`): what a planner needs to rank 200k of them fast.
    """

    def __init__(self, name: str, catalog: Catalog, *, spot_pricing: SpotPricing = SpotPricing.TYPICAL) -> None:
        super().__init__(catalog)
        self.name = name
        self.spot_pricing = spot_pricing
        rule = rule_for(name, BillingMode.SPOT)
        self._spot_fraction = rule.spot_fraction_estimate if rule else None
        self._links: dict[tuple[str, float], Interconnect] = {}  # (GPU, count) -> interconnect, worked out once

    def _estimates(self, hourly: Decimal | None, has_spot: bool) -> dict[BillingMode, Decimal]:
        if self._spot_fraction is None or hourly is None or has_spot:
            return {}
        return {BillingMode.SPOT: hourly * self._spot_fraction}

    def _rates_of(self, row: InstanceType) -> tuple[dict[BillingMode, Decimal], frozenset[BillingMode]]:
        """A row's rates, with the estimated spot rate where the rules give one, and which are estimates."""
        rates = row.rates()
        listed = BillingMode.SPOT in rates
        if listed and not _discounted(row):
            del rates[BillingMode.SPOT]
        extra = self._estimates(rates.get(BillingMode.HOURLY), listed)
        return ({**extra, **rates}, _SPOT_ONLY) if extra else (rates, _NONE)

    def _link_of(self, gpu: str, count: float) -> Interconnect:
        if (link := self._links.get((gpu, count))) is None:
            link = self._links[(gpu, count)] = self.catalog.gpus[gpu].interconnect.among(count)
        return link

    def _from_row(self, row: InstanceType) -> Offer:
        rates, estimated = self._rates_of(row)
        return Offer(
            provider=row.provider, name=row.instance_type, family=row.family, region=row.region, zones=row.zones,
            gpu=row.gpu, gpu_count=row.gpu_count, interconnect=self._link_of(row.gpu, row.gpu_count), vcpu=row.vcpu,
            mem_gb=row.mem_gb, currency=row.currency, rates=rates,
            rates_high=row.rates_high(), estimated=estimated,
            stock=row.stock, layer=row.layer, source=row.source, as_of=row.as_of, notes=row.notes,
        )

    def _fold(self, rows: list[InstanceType], rent_at: RentAt = _RENT_AT) -> _Folded:
        # Written for speed (a JSON plan over a 50k-row catalog folds ~37k offers): each mode's (rate, zone)
        # pairs are listed once and compared as tuples, which orders as rate then zone, the documented tie-break.
        selling = [r for r in rows if r.stock is not _SOLD_OUT]
        sold_out = () if len(selling) == len(rows) else tuple(sorted(r.zone for r in rows if r.stock is _SOLD_OUT))
        pool = selling or rows
        rates: dict[BillingMode, Decimal] = {}
        highs: dict[BillingMode, Decimal] = {}
        zones: dict[BillingMode, str] = {}
        spots = [(s, r.zone) for r in pool if (s := r.spot) is not None and (r.hourly is None or s < r.hourly)]
        spots.sort()  # (the list is _discounted's rows, written inline)
        for mode, at in rent_at:  # the modes with a price in some row (RowOffers), in _RENT_AT's order
            if mode is BillingMode.SPOT:
                priced = spots
                if not priced:
                    continue
                # The median zone; with an even count the dearer middle one, so the price is always a real
                # zone's (a run is launched in one zone) and, with two zones, "median" does not mean "cheapest".
                pick = priced[len(priced) // 2] if self.spot_pricing == SpotPricing.TYPICAL else priced[0]
                top = priced[-1][0]
            else:
                priced = [(v, r.zone) for r in pool if (v := r[at]) is not None]
                if not priced:
                    continue
                pick = min(priced)
                top = max(priced)[0]
            rates[mode], zones[mode] = pick
            if top != pick[0]:
                highs[mode] = top
        extra = self._estimates(rates.get(BillingMode.HOURLY), bool(spots) or any(r.spot is not None for r in pool))
        return _Folded(tuple(sorted(r.zone for r in selling)), {**extra, **rates} if extra else rates, highs,
                       frozenset(extra) if extra else _NONE, zones, spots, sold_out,
                       Stock.AVAILABLE if selling else Stock.SOLD_OUT, max(r.as_of for r in rows))

    def _from_zones(self, rows: list[InstanceType], rent_at: RentAt = _RENT_AT, f: _Folded | None = None) -> Offer:
        """The offer of one (type, region)'s per-zone rows; ``f``: their fold, where it was kept."""
        first = rows[0]
        if f is None:
            f = self._fold(rows, rent_at)
        return Offer(
            provider=first.provider, name=first.instance_type, family=first.family, region=first.region,
            zones=f.zones, gpu=first.gpu, gpu_count=first.gpu_count,
            interconnect=self._link_of(first.gpu, first.gpu_count), vcpu=first.vcpu, mem_gb=first.mem_gb,
            currency=first.currency, rates=f.rates, rates_high=f.highs, estimated=f.estimated,
            rate_zones=f.rate_zones, spot_zones=tuple((z, p) for p, z in f.spots), sold_out_zones=f.sold_out,
            stock=f.stock, layer=first.layer, source=first.source, as_of=f.as_of, notes=first.notes,
        )

    def _facts_of_zones(self, rows: list[InstanceType], f: _Folded) -> OfferFacts:
        """``OfferFacts.of(self._from_zones(rows, f=f))`` without building the offer: the ranking pass reads \
every one."""
        first = rows[0]
        return OfferFacts(first.instance_type, first.family, first.region, f.zones, first.gpu, first.gpu_count,
                          self._link_of(first.gpu, first.gpu_count), first.currency, f.rates, f.stock, f.rate_zones,
                          f.sold_out, f.as_of, f.estimated)

    def list_offers(self) -> list[Offer]:
        return list(self.offer_table())

    def offer_table(self) -> RowOffers:
        """Region-wide rows one offer each, then per-zone rows folded into one per (type, region)."""
        whole: list[InstanceType] = []
        by_zone: dict[tuple[str, str], list[InstanceType]] = {}
        for row in self.catalog.instances_by_provider.get(self.name, ()):
            if row.zone:
                by_zone.setdefault((row.instance_type, row.region), []).append(row)
            else:
                whole.append(row)
        return RowOffers(self, whole, list(by_zone.values()))

    def billing_rule(self, mode: BillingMode) -> BillingRule | None:
        return rule_for(self.name, mode)

    def bills(self, mode: BillingMode) -> bool:
        return self.billing_rule(mode) is not None

    def quote(self, offer: Offer, mode: BillingMode, wall_hours: Decimal, *, hours_per_month: Decimal) -> Quote:
        rate = offer.rates.get(mode)
        rule = self.billing_rule(mode)
        if rate is None or rule is None:
            raise PriceMissingError(f"{offer.label} has no {mode} price in the catalog")
        cost = rate_cost(rule, rate, wall_hours, family=offer.family, hours_per_month=hours_per_month)
        unit_price = money(rate, offer.currency)
        notes = [rule.note] if rule.note else []
        zone = offer.rate_zones.get(mode)
        if zone is not None:
            notes.append(self._zone_note(offer, mode, zone))
        elif (high := offer.rates_high.get(mode)) is not None:
            notes.append(f"cheapest zone's list price; up to {high} {offer.currency} in other zones")
        item = LineItem.priced(f"{offer.name} {mode}", cost / rate, _UNITS[mode], unit_price)
        return Quote(offer=offer, billing=mode, wall_hours=wall_hours, cost=money(cost, offer.currency),
                     line_items=(item,), notes=tuple(notes), estimate=mode in offer.estimated, zone=zone)

    def _zone_note(self, offer: Offer, mode: BillingMode, zone: str) -> str:
        """Which zone's price this is, and how it sits among the other zones' prices."""
        cur = offer.currency
        live = "live " if offer.live else ""
        if mode is BillingMode.SPOT and len(offer.spot_zones) > 1:
            lo_zone, lo = offer.spot_zones[0]
            hi_zone, hi = offer.spot_zones[-1]
            span = f"{_num(lo)} ({lo_zone}) to {_num(hi)} {cur} ({hi_zone}) over {len(offer.spot_zones)} zones"
            if self.spot_pricing == SpotPricing.TYPICAL:
                return (f"{live}spot priced at the median zone, {zone} ({_num(offer.rates[mode])} {cur}); "
                        f"spot ranges {span}; --spot-price cheapest plans with {lo_zone}")
            return f"{live}spot priced at the cheapest zone now, {zone}; spot ranges {span}"
        if mode is BillingMode.SPOT and offer.spot_zones:
            return f"{live}spot price of {zone}, the only zone of {offer.region} with one"
        high = offer.rates_high.get(mode)
        if high is None:
            return f"{live}price of {zone} (the same in every zone that sells it)"
        return f"{live}price of {zone}, the cheapest zone that sells it; up to {_num(high)} {cur} in other zones"


class RowOffers(OfferTable):
    """A list-price provider's offers, each built from its catalog row(s) when it is read.

    A plan over a 200k-row catalog reads every offer's facts once and builds the offers of
    the few options it shows. Reading one twice builds two equal offers.
    """

    __slots__ = ("folds", "provider", "rent_at", "whole", "zoned")

    def __init__(self, provider: ListPriceProvider, whole: list[InstanceType], zoned: list[list[InstanceType]]) -> None:
        self.provider, self.whole, self.zoned = provider, whole, zoned
        # Each (type, region)'s fold of its zone rows, kept from the ranking pass (facts) for building its offers,
        # which folded them again: a JSON plan over a 50k-row catalog (12k zoned offers, 37k options built from them)
        # folded 37k times. Kept where the provider has at most KEPT_FOLDS, so that keeping costs at most ~45 MB
        # (a fold is 0.7-1.1 kB: +9 MB at peak for those 12k); keeping only some would help only their options.
        self.folds: list[_Folded] = []
        # The modes some per-zone row has a price for: a fold looks for no other (a 50k-row catalog's zone rows
        # have hourly and spot prices, and each of its ~37k folds looked through them for three more modes).
        rows = list(itertools.chain.from_iterable(zoned))
        self.rent_at: RentAt = tuple((mode, at) for mode, at in _RENT_AT if any(map(
            operator.is_not, map(operator.itemgetter(at), rows), itertools.repeat(None))))  # in C, to the first price

    def __len__(self) -> int:
        return len(self.whole) + len(self.zoned)

    def _build(self, index: int) -> Offer:
        if index < len(self.whole):
            return self.provider._from_row(self.whole[index])
        at = index - len(self.whole)
        return self.provider._from_zones(self.zoned[at], self.rent_at, self.folds[at] if at < len(self.folds) else None)

    def __iter__(self) -> Iterator[Offer]:
        yield from map(self.provider._from_row, self.whole)
        yield from map(self._build, range(len(self.whole), len(self)))

    def facts(self) -> Iterator[OfferFacts]:
        """A region-wide row's facts without building its offer (what ``_from_row`` would say); a folded offer's
        from the offer."""
        rates_of, link_of = self.provider._rates_of, self.provider._link_of
        for row in self.whole:
            rates, estimated = rates_of(row)
            yield OfferFacts(row.instance_type, row.family, row.region, row.zones, row.gpu, row.gpu_count,
                             link_of(row.gpu, row.gpu_count), row.currency, rates, row.stock, _NO_ZONES,
                             (), row.as_of, estimated)
        fold, facts, folds = self.provider._fold, self.provider._facts_of_zones, self.folds
        keep = len(self.zoned) <= KEPT_FOLDS
        for i, rows in enumerate(self.zoned):
            if i < len(folds):  # kept by an earlier read
                f = folds[i]
            else:
                f = fold(rows, self.rent_at)
                if keep and i == len(folds):  # in order: folds[i] is zoned[i]'s
                    folds.append(f)
            yield facts(rows, f)


def _discounted(row: InstanceType) -> bool:
    """A spot price below on-demand. AWS caps spot at the on-demand price, and a zone's spot at that cap
    (p5.48xlarge in use1-az1 at 55.04, p3.16xlarge in euw2 at 28.712) is no offer: the same price,
    interruptible. It is left out, as a zone without spot is."""
    return row.spot is not None and (row.hourly is None or row.spot < row.hourly)


KEPT_FOLDS = 40_000  # the most zoned offers of one provider whose folds RowOffers keeps
_SPOT_ONLY = frozenset({BillingMode.SPOT})
_NONE: frozenset[BillingMode] = frozenset()


class _Folded(NamedTuple):
    """What the per-zone rows of one (instance type, region) come to, before they are an offer or its facts."""

    zones: tuple[str, ...]  # the zones that sell it, sorted
    rates: dict[BillingMode, Decimal]  # each mode's picked rate, estimates included
    highs: dict[BillingMode, Decimal]  # the dearest zone's rate where it differs
    estimated: frozenset[BillingMode]
    rate_zones: dict[BillingMode, str]  # the zone each rate is from
    spots: list[tuple[Decimal, str]]  # every zone's spot price, cheapest first
    sold_out: tuple[str, ...]
    stock: Stock
    as_of: date
_NO_ZONES: dict[BillingMode, str] = {}  # every region-wide row's facts' rate_zones: read only, so shared


def _num(d: Decimal) -> str:
    """A price as written in the source, without trailing zeros (0.720100 -> 0.7201)."""
    return format(d.normalize(), "f")
