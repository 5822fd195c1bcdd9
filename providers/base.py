"""The provider interface and the two values it trades in: offers and quotes.

Modelled on Apache Libcloud's drivers and SkyPilot's ``sky/clouds``: the planner only
ever sees :class:`Offer` and :class:`Quote`; how a provider bills stays behind the
adapter, and launching lives in optional capabilities (:mod:`providers.capabilities`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from datetime import date
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict

from pricing.billing import BillingMode
from pricing.bulk import unvalidated
from pricing.catalog import Catalog, Interconnect, Layer, Stock
from pricing.line_items import LineItem
from pricing.money import Currency, Money


class Offer(BaseModel):
    """Something that can run GPU work: a cloud instance type in a region, or cards to buy."""

    model_config = ConfigDict(frozen=True)

    provider: str
    name: str
    family: str
    region: str
    zones: tuple[str, ...] = ()
    gpu: str
    gpu_count: float
    interconnect: Interconnect
    vcpu: int | None = None
    mem_gb: float | None = None
    currency: Currency
    rates: dict[BillingMode, Decimal]
    rates_high: dict[BillingMode, Decimal] = {}
    estimated: frozenset[BillingMode] = frozenset()
    # Live rows only: the zone each rate was taken from, and zones that sell none now.
    rate_zones: dict[BillingMode, str] = {}
    # Every zone's spot price, cheapest first, where the data is per zone: the spread a
    # typical price is picked from, and the cheapest zone `--spot-price cheapest` uses.
    spot_zones: tuple[tuple[str, Decimal], ...] = ()
    sold_out_zones: tuple[str, ...] = ()
    stock: Stock = Stock.UNKNOWN
    layer: Layer = Layer.SHIPPED
    source: str
    as_of: date
    notes: str = ""

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.name}@{self.region}"

    @property
    def live(self) -> bool:
        return self.layer is Layer.CACHE


_OFFER_FIELDS = frozenset(Offer.model_fields)


def bare_offer(fields: dict[str, Any]) -> Offer:
    """An :class:`Offer` from every field's value, of the right type (a catalog row's, already checked), unvalidated.

    Validating an offer costs ~20 us and copying its mutable defaults ~20 us more; a plan
    over 200k catalog rows builds one per row. ``fields`` becomes the offer's own. Tests
    hold such offers equal to validated ones.
    """
    return unvalidated(Offer, fields, _OFFER_FIELDS)


# What a planner's ranking pass reads of an offer, as a plain tuple: built for each of 200k
# catalog rows, an object per row would cost more than the ranking itself.
# (gpu, gpu_count, interconnect, name, family, currency, rates, stock, region, zones, rate_zones, sold_out_zones)
OfferFacts = tuple[str, float, Interconnect, str, str, Currency, dict[BillingMode, Decimal], Stock, str,
                   tuple[str, ...], dict[BillingMode, str], tuple[str, ...]]


def facts_of(o: Offer) -> OfferFacts:
    return (o.gpu, o.gpu_count, o.interconnect, o.name, o.family, o.currency, o.rates, o.stock, o.region, o.zones,
            o.rate_zones, o.sold_out_zones)


class Quote(BaseModel):
    """What an offer costs under one billing mode for a job of ``wall_hours``."""

    model_config = ConfigDict(frozen=True)

    offer: Offer
    billing: BillingMode
    wall_hours: Decimal
    cost: Money
    line_items: tuple[LineItem, ...]
    notes: tuple[str, ...] = ()
    estimate: bool = False
    zone: str | None = None  # the zone whose price this is, where the data names one


class Provider(ABC):
    """One place to get GPUs, seen through one catalog."""

    name: str

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    @abstractmethod
    def list_offers(self) -> list[Offer]:
        """Every offer this provider has in the catalog."""

    def offers(self) -> Sequence[Offer]:
        """The offers of :meth:`list_offers`, in its order; a provider with many may build each when it is read."""
        return self.list_offers()

    def facts(self, offers: Sequence[Offer]) -> Iterator[OfferFacts]:
        """:data:`OfferFacts` of each of ``offers`` (from :meth:`offers`), in order; a provider whose offers are
        built when read may say them without building them."""
        return map(facts_of, offers)

    def rate_coster(self, mode: BillingMode, wall_hours: Decimal, *, family: str,
                    hours_per_month: Decimal) -> Callable[[Decimal], Decimal] | None:
        """For a provider that bills by list rates: :meth:`cost` of every offer of ``family`` as a function of its
        ``mode`` rate, worked out once per job length; None when costs are not a function of one rate."""
        return None

    def cost(self, offer: Offer, mode: BillingMode, wall_hours: Decimal, *, hours_per_month: Decimal) -> Decimal:
        """What :meth:`quote` would charge, as an amount in the offer's currency, without its notes and line items.

        A planner ranks every offer by this and quotes only the options it shows.
        """
        return self.quote(offer, mode, wall_hours, hours_per_month=hours_per_month).cost.amount

    @abstractmethod
    def quote(self, offer: Offer, mode: BillingMode, wall_hours: Decimal, *, hours_per_month: Decimal) -> Quote:
        """The cost of running ``offer`` for ``wall_hours`` under ``mode``."""

    @abstractmethod
    def bills(self, mode: BillingMode) -> bool:
        """Whether this provider has a rule to bill ``mode`` (a user catalog may price one it has not)."""

