"""The provider interface and the two values it trades in: offers and quotes.

Modelled on Apache Libcloud's drivers and SkyPilot's ``sky/clouds``: the planner only
ever sees :class:`Offer` and :class:`Quote`; how a provider bills stays behind the
adapter, and launching lives in optional capabilities (:mod:`providers.capabilities`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import date
from decimal import Decimal

from pydantic import BaseModel, ConfigDict

from pricing.billing import BillingMode
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

    @abstractmethod
    def quote(self, offer: Offer, mode: BillingMode, wall_hours: Decimal, *, hours_per_month: Decimal) -> Quote:
        """The cost of running ``offer`` for ``wall_hours`` under ``mode``."""

    @abstractmethod
    def bills(self, mode: BillingMode) -> bool:
        """Whether this provider has a rule to bill ``mode`` (a user catalog may price one it has not)."""

