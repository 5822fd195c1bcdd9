"""The provider interface and the two values it trades in: offers and quotes.

Modelled on Apache Libcloud's drivers and SkyPilot's ``sky/clouds``: the planner only
ever sees :class:`Offer` and :class:`Quote`; how a provider bills stays behind the
adapter. A provider lists its offers, quotes one under a billing mode, and says which
modes it bills; what a planner needs to rank many offers fast is an optional capability
(:mod:`providers.bulk`), and launching lives in others (:mod:`providers.capabilities`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from pricing.billing import BillingMode
from pricing.catalog import Catalog, Interconnect, Layer, Stock
from pricing.frozen import quick_init
from pricing.line_items import LineItem
from pricing.money import Currency, Money


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True, init=False)  # quick_init writes __init__
class Offer:
    """Something that can run GPU work: a cloud instance type in a region, or cards to buy.

    A plain value built by providers from catalog rows and card prices, which were checked
    where they entered (the catalog parse, the data files): nothing here validates again.
    """

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
    rates_high: dict[BillingMode, Decimal] = field(default_factory=dict)
    estimated: frozenset[BillingMode] = frozenset()
    # Live rows only: the zone each rate was taken from, and zones that sell none now.
    rate_zones: dict[BillingMode, str] = field(default_factory=dict)
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


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True, init=False)  # quick_init writes __init__
class Quote:
    """What an offer costs under one billing mode for a job of ``wall_hours``."""

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

    @abstractmethod
    def quote(self, offer: Offer, mode: BillingMode, wall_hours: Decimal, *, hours_per_month: Decimal) -> Quote:
        """The cost of running ``offer`` for ``wall_hours`` under ``mode``."""

    @abstractmethod
    def bills(self, mode: BillingMode) -> bool:
        """Whether this provider has a rule to bill ``mode`` (a user catalog may price one it has not)."""
