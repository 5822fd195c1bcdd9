"""The provider interface and the two values it trades in: offers and quotes.

Modelled on Apache Libcloud's drivers and SkyPilot's ``sky/clouds``: the planner only
ever sees :class:`Offer` and :class:`Quote`; how a provider bills, launches or tears
down stays behind the adapter.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import date
from decimal import Decimal
from typing import Any, Self

from pydantic import BaseModel, ConfigDict

from pricing.billing import BillingMode, BillingRule, rate_cost, rule_for
from pricing.catalog import Catalog, InstanceType, Interconnect, ProviderName
from pricing.errors import GpuplanError, PriceMissingError
from pricing.money import Currency, Money


class Offer(BaseModel):
    """Something that can run GPU work: a cloud instance type in a region, or cards to buy."""

    model_config = ConfigDict(frozen=True)

    provider: ProviderName
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
    source: str
    as_of: date
    notes: str = ""

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.name}@{self.region}"


class LineItem(BaseModel):
    """quantity x unit price = cost, as cost reports show it."""

    model_config = ConfigDict(frozen=True)

    description: str
    quantity: Decimal
    unit: str
    unit_price: Money
    cost: Money

    @classmethod
    def priced(cls, description: str, quantity: Decimal, unit: str, unit_price: Money, **extra: Any) -> Self:
        """An item whose cost is exactly quantity x unit price."""
        return cls(description=description, quantity=quantity, unit=unit, unit_price=unit_price,
                   cost=unit_price * quantity, **extra)


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


class Provider(ABC):
    """One place to get GPUs. Later adapters add launch, describe and terminate."""

    name: ProviderName

    @abstractmethod
    def list_offers(self, catalog: Catalog) -> list[Offer]:
        """Every offer this provider has in the catalog."""

    @abstractmethod
    def quote(self, offer: Offer, mode: BillingMode, wall_hours: Decimal, *, hours_per_month: Decimal) -> Quote:
        """The cost of running ``offer`` for ``wall_hours`` under ``mode``."""

    def launch(self, offer: Offer, mode: BillingMode) -> str:
        raise GpuplanError(f"launching on {self.name} is not supported yet", "use the provider's console")

    def describe(self, instance_id: str) -> dict[str, str]:
        raise GpuplanError(f"describing {self.name} instances is not supported yet")

    def terminate(self, instance_id: str) -> None:
        raise GpuplanError(f"terminating {self.name} instances is not supported yet")


def instance_offer(inst: InstanceType, gpu_interconnect: Interconnect, extra: dict[BillingMode, Decimal]) -> Offer:
    """An offer from a catalog row; ``extra`` adds rates a provider derives (estimates)."""
    rates = {m: r for m in BillingMode if (r := inst.rate(m)) is not None}
    highs = {m: r for m in BillingMode if (r := inst.rate_high(m)) is not None}
    interconnect = gpu_interconnect
    if interconnect is Interconnect.NVLINK_BRIDGE and inst.gpu_count > 2:
        interconnect = Interconnect.PCIE
    return Offer(
        provider=inst.provider,
        name=inst.instance_type,
        family=inst.family,
        region=inst.region,
        zones=inst.zones,
        gpu=inst.gpu,
        gpu_count=inst.gpu_count,
        interconnect=interconnect,
        vcpu=inst.vcpu,
        mem_gb=inst.mem_gb,
        currency=inst.currency,
        rates={**extra, **rates},
        rates_high=highs,
        estimated=frozenset(m for m in extra if m not in rates),
        source=inst.source,
        as_of=inst.as_of,
        notes=inst.notes,
    )


_UNITS = {
    BillingMode.HOURLY: "hours",
    BillingMode.SPOT: "hours",
    BillingMode.MONTHLY: "months",
    BillingMode.RESERVED_1Y: "hours",
    BillingMode.RESERVED_3Y: "hours",
}


def rule_quote(offer: Offer, mode: BillingMode, wall_hours: Decimal, *, hours_per_month: Decimal) -> Quote:
    """Quote a cloud offer by its provider's billing rule for ``mode``."""
    rule: BillingRule | None = rule_for(offer.provider.value, mode)
    rate = offer.rates.get(mode)
    if rule is None or rate is None:
        raise PriceMissingError(f"{offer.label} has no {mode} price in the catalog")
    cost = rate_cost(rule, rate, wall_hours, family=offer.family, hours_per_month=hours_per_month)
    quantity = cost / rate
    unit_price = Money(amount=rate, currency=offer.currency)
    notes = [n for n in (rule.note,) if n]
    high = offer.rates_high.get(mode)
    if high is not None:
        notes.append(f"cheapest zone's list price; up to {high} {offer.currency} in other zones")
    item = LineItem(
        description=f"{offer.name} {mode}",
        quantity=quantity,
        unit=_UNITS[mode],
        unit_price=unit_price,
        cost=Money(amount=cost, currency=offer.currency),
    )
    return Quote(
        offer=offer,
        billing=mode,
        wall_hours=wall_hours,
        cost=item.cost,
        line_items=(item,),
        notes=tuple(notes),
        estimate=mode in offer.estimated,
    )
