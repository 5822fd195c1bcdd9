"""The rest of the bill of one option: disks, public addresses, traffic, stored data and set-up time.

Each item is a line of quantity x sourced rate (``pricing/data/extras.csv``), in the offer's
own currency. An item the data has no rate for is listed as not priced, never as zero.
Per node: disks, addresses, bandwidth and set-up. Per option: egress and stored data.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from pricing.billing import BillingMode, whole_months
from pricing.errors import InputError
from pricing.extras import (
    DEFAULT_BANDWIDTH_MBPS,
    DEFAULT_DISK_GB,
    DEFAULT_DISK_TYPE,
    DEFAULT_STORAGE,
    ExtraRate,
    clouds_priced,
    rates_for,
)
from pricing.line_items import LineItem
from pricing.money import Currency, Money

# Modes whose instance is paid for a whole term: set-up time is quoted inside the term, not as a line.
TERM_MODES = frozenset({BillingMode.MONTHLY, BillingMode.RESERVED_1Y, BillingMode.RESERVED_3Y})


class Extras(BaseModel):
    """What the user says the run needs besides the instance (the flags of ``plan``, ``quote``, ``launch``)."""

    # Built on first validation: a plan without extras flags takes the defaults unchecked (gpuplan.cli.extras_opts).
    model_config = ConfigDict(frozen=True, defer_build=True)

    disk_gb: Decimal = Decimal(DEFAULT_DISK_GB)
    disk_type: str | None = None  # None: each cloud's default (DEFAULT_DISK_TYPE)
    egress_gb: Decimal = Decimal(0)
    storage_gb: Decimal = Decimal(0)
    setup_minutes: Decimal = Decimal(0)
    bandwidth_mbps: Decimal = Decimal(DEFAULT_BANDWIDTH_MBPS)

    @field_validator("disk_gb", "egress_gb", "storage_gb", "setup_minutes", "bandwidth_mbps", mode="before")
    @classmethod
    def _amount(cls, value: Any, info: Any) -> Decimal:
        flag = "--" + info.field_name.replace("_", "-")
        try:
            d = value if isinstance(value, Decimal) else Decimal(str(value).strip())
        except ArithmeticError:
            raise InputError(f"{flag} must be a number, got {value!r}") from None
        if not d.is_finite() or d < 0:
            raise InputError(f"{flag} must be a finite number of zero or more, got {value}")
        if d > Decimal("1e9"):
            raise InputError(f"{flag} {value} is beyond any run this plans for", "give at most 1e9")
        return d

    @property
    def setup_hours(self) -> Decimal:
        return self.setup_minutes / 60

    def disk_type_for(self, cloud: str) -> str | None:
        return self.disk_type or DEFAULT_DISK_TYPE.get(cloud)

    def assumptions(self) -> dict[str, str | None]:
        """The inputs as the plan's assumptions say them (disk_type None: each cloud's default), read back by launch."""
        return {
            "disk_gb": str(self.disk_gb), "disk_type": self.disk_type, "egress_gb": str(self.egress_gb),
            "storage_gb": str(self.storage_gb), "setup_minutes": str(self.setup_minutes),
            "bandwidth_mbps": str(self.bandwidth_mbps),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtraItem(LineItem):
    """One line of the rest of the bill, with the item it prices and the rate's source."""

    item: str
    source: str


@dataclass(frozen=True, slots=True)
class ExtrasBill:
    """The rest of one option's bill, in the offer's currency: ``setup`` + ``fixed`` is the sum of ``items``.

    Kept as two sums, added in this order by both the ranking pass and the full costing, so
    that the two come to the same Decimal (set-up depends on the offer's rate, the rest does not).
    """

    items: tuple[ExtraItem, ...]
    not_priced: tuple[str, ...]
    setup: Decimal
    fixed: Decimal

    priced: bool = True  # False: owned hardware, which has no extras (and no set-up line)

    @property
    def total(self) -> Decimal:
        return self.setup + self.fixed


_NOTHING = ExtrasBill((), (), Decimal(0), Decimal(0), priced=False)


def _line(rate: ExtraRate, description: str, quantity: Decimal) -> ExtraItem:
    return ExtraItem.priced(description, quantity, rate.unit, Money(amount=rate.rate, currency=rate.currency),
                            item=rate.item, source=f"{rate.source}, as of {rate.as_of}")


def _tier_parts(rates: tuple[ExtraRate, ...], amount: Decimal) -> list[tuple[ExtraRate, Decimal]]:
    """``amount`` split over the tiers it reaches: (tier, quantity in it), free allowances left out."""
    out = []
    for r in rates:
        top = amount if r.tier_to is None else min(amount, r.tier_to)
        if top <= r.tier_from:
            break
        if not r.free or r.tier_to is None:
            # an open-ended free tier is the cloud's word that the item is not billed: a zero line says so
            out.append((r, top - r.tier_from))
    return out


def _tier_name(r: ExtraRate) -> str:
    return f"{r.tier_from:g}-{'' if r.tier_to is None else f'{r.tier_to:g}'} {r.unit}"


def _disk_rate(rows: tuple[ExtraRate, ...], gb: Decimal, mode: BillingMode) -> ExtraRate | None:
    """The row that prices a ``gb`` disk in ``mode``: a size tier's disk price (Azure), an hourly rate for a
    pay-as-you-go mode where the cloud has one (Tencent, Alibaba), else the per-GB monthly rate."""
    if not rows:
        return None
    sized = [r for r in rows if r.unit == "disk-month"]
    if sized:  # billed as the smallest size tier that holds the disk
        return next((r for r in sized if r.tier_to is None or gb <= r.tier_to), None)
    hourly = [r for r in rows if r.unit == "GB-hour"]
    monthly = [r for r in rows if r.unit == "GB-month"]
    if hourly and (mode not in TERM_MODES or not monthly):
        return hourly[0]
    return monthly[0] if monthly else None


def _disk_line(r: ExtraRate, gb: Decimal, disk_type: str, hours: Decimal, n: Decimal, each: str,
               hours_per_month: Decimal, mode: BillingMode) -> ExtraItem:
    """One node's disk (times ``n``) for ``hours``: block storage bills for the volume's life, whatever the instance
    mode, but a monthly subscription's disk is bought with it for whole months."""
    text = f"{each}{gb:g} GB {disk_type} disk for {hours:.2f} h"
    if mode is BillingMode.MONTHLY and r.unit == "GB-month":
        months = Decimal(whole_months(hours, hours_per_month))
        return _line(r, f"{each}{gb:g} GB {disk_type} disk x {months:g} month(s)", gb * months * n)
    if r.unit == "GB-hour":
        # shown per GB-month (the hourly rate x the month's hours) so a converted rate keeps its digits in JSON
        per_month = ExtraItem.priced(f"{text} ({r.rate} {r.currency} per GB-hour)", gb * hours / hours_per_month * n,
                                     "GB-month", Money(amount=r.rate * hours_per_month, currency=r.currency),
                                     item=r.item, source=f"{r.source}, as of {r.as_of}")
        return per_month
    if r.unit == "disk-month":
        return _line(r, f"{text} (billed as the {_tier_name(r)} size)", hours / hours_per_month * n)
    return _line(r, text, gb * hours / hours_per_month * n)


def _over(rates: tuple[ExtraRate, ...], amount: Decimal) -> Decimal:
    """How much of ``amount`` lies above the top tier the data prices (0 when the last tier is open)."""
    if not rates or rates[-1].tier_to is None:
        return Decimal(0)
    return max(Decimal(0), amount - rates[-1].tier_to)


def extras_bill(ex: Extras, cloud: str, mode: BillingMode, run_hours: Decimal, nodes: int, *,
                hours_per_month: Decimal, setup_rate: Decimal | None = None,
                currency: Currency | None = None) -> ExtrasBill:
    """The rest of the bill of ``nodes`` nodes of ``cloud`` running ``run_hours`` each in ``mode``.

    ``run_hours`` is the wall time of the work; set-up adds ``ex.setup_hours`` per node. For a
    pay-as-you-go mode set-up is a line at ``setup_rate`` (the instance's rate in that mode);
    a term mode's quote covers it (see :func:`billed_hours`). Owned hardware has no extras here.
    """
    rest = rate_free_bill(ex, cloud, mode, run_hours, nodes, hours_per_month=hours_per_month)
    return with_setup(rest, ex, mode, nodes, setup_rate, currency)


def with_setup(rest: ExtrasBill, ex: Extras, mode: BillingMode, nodes: int, setup_rate: Decimal | None,
               currency: Currency | None) -> ExtrasBill:
    """``rest`` (a :func:`rate_free_bill`) with the set-up line at the instance's rate, where one is billed."""
    if not ex.setup_minutes or mode in TERM_MODES or setup_rate is None or currency is None or not rest.priced:
        return rest
    each = f"{nodes} nodes x " if nodes > 1 else ""
    setup = ExtraItem.priced(f"{each}set-up {ex.setup_minutes:g} min at the instance rate",
                             ex.setup_hours * Decimal(nodes),
                             "hours", Money(amount=setup_rate, currency=currency), item="setup",
                             source="the offer's own rate")
    return ExtrasBill((setup, *rest.items), rest.not_priced, setup.cost.amount, rest.fixed)


def rate_free_bill(ex: Extras, cloud: str, mode: BillingMode, run_hours: Decimal, nodes: int, *,
                   hours_per_month: Decimal) -> ExtrasBill:
    """:func:`extras_bill` but the set-up line: what does not depend on the offer's rate, the same for
    every offer of one cloud, run time, mode and node count (a plan keeps it per those)."""
    if mode is BillingMode.BUY or cloud == "local":
        return _NOTHING
    if cloud not in clouds_priced():
        # a provider of the user's own catalog (an on-premises chargeback, a negotiated reseller): gpuplan has no
        # rates for its disks or traffic, and its row's price is taken as its whole bill (README, the whole bill)
        return _NOTHING
    n = Decimal(nodes)
    hours = run_hours + ex.setup_hours
    items: list[ExtraItem] = []
    missing: list[str] = []
    each = f"{nodes} nodes x " if nodes > 1 else ""
    disk_type = ex.disk_type_for(cloud)
    if ex.disk_gb:
        disk = _disk_rate(rates_for(cloud, f"disk:{disk_type}"), ex.disk_gb, mode)
        if disk is None:
            missing.append(f"disk: {ex.disk_gb:g} GB {disk_type or ''} per node".replace("  ", " "))
        else:
            items.append(_disk_line(disk, ex.disk_gb, disk_type or "", hours, n, each, hours_per_month, mode))
    # What the data has rows for decides the lines, so a cloud added later is priced by adding rows:
    # a cloud that bills bandwidth by the Mbps (Tencent) includes the address and the traffic in it.
    bandwidth = rates_for(cloud, "bandwidth")
    if ipv4 := rates_for(cloud, "ipv4"):
        items.append(_line(ipv4[0], f"{each}public IPv4 address for {hours:.2f} h", hours * n))
    elif not bandwidth:
        missing.append("public IPv4 address")
    if bandwidth and ex.bandwidth_mbps:
        if mode is BillingMode.MONTHLY:
            months = Decimal(whole_months(hours, hours_per_month))
            for r, mbps in _tier_parts(bandwidth, ex.bandwidth_mbps):
                items.append(_line(r, f"{each}{mbps:g} Mbps bandwidth ({_tier_name(r)}) x {months:g} month(s)",
                                   mbps * months * n))
            if (over := _over(bandwidth, ex.bandwidth_mbps)) > 0:
                missing.append(f"bandwidth above {bandwidth[-1].tier_to:g} Mbps ({over:g} Mbps per node)")
        elif traffic := rates_for(cloud, "traffic"):
            # pay-as-you-go: the launch sets traffic billing (no bandwidth charge), so the run pays per GB sent
            if ex.egress_gb:
                items.extend(_line(r, f"traffic to the internet ({_tier_name(r)})", gb)
                             for r, gb in _tier_parts(traffic, ex.egress_gb))
        else:
            missing.append(f"pay-as-you-go bandwidth ({ex.bandwidth_mbps:g} Mbps per node)")
            if ex.egress_gb:
                missing.append(f"egress {ex.egress_gb:g} GB")
    elif ex.egress_gb and not bandwidth:
        egress = rates_for(cloud, "egress")
        if not egress:
            missing.append(f"egress {ex.egress_gb:g} GB")
        else:
            items.extend(_line(r, f"egress to the internet ({_tier_name(r)})", gb)
                         for r, gb in _tier_parts(egress, ex.egress_gb))
            if (over := _over(egress, ex.egress_gb)) > 0:
                missing.append(f"egress above {egress[-1].tier_to:g} GB")
    if ex.storage_gb:
        store = DEFAULT_STORAGE.get(cloud)
        rows = rates_for(cloud, store) if store else ()
        if not rows:
            missing.append(f"object storage {ex.storage_gb:g} GB")
        else:
            items.append(_line(rows[0], f"{ex.storage_gb:g} GB kept in object storage for {hours:.2f} h",
                               ex.storage_gb * hours / hours_per_month))
    fixed = Decimal(0)
    for i in items:
        fixed += i.cost.amount
    return ExtrasBill(tuple(items), tuple(missing), Decimal(0), fixed)


def fixed_total(ex: Extras, cloud: str, mode: BillingMode, run_hours: Decimal, nodes: int, *,
                hours_per_month: Decimal) -> Decimal:
    """The extras that do not depend on the offer's rate: the same for every offer of a shape and mode."""
    return rate_free_bill(ex, cloud, mode, run_hours, nodes, hours_per_month=hours_per_month).fixed


def setup_cost(ex: Extras, mode: BillingMode, rate: Decimal, nodes: int) -> Decimal:
    """Set-up at the instance rate, as :func:`extras_bill` prices it (0 in a term mode, whose quote covers it)."""
    if not ex.setup_minutes or mode in TERM_MODES or mode is BillingMode.BUY:
        return Decimal(0)
    return rate * (ex.setup_hours * Decimal(nodes))  # the ranking pass multiplies in this order too


def billed_hours(ex: Extras | None, mode: BillingMode, run_hours: Decimal) -> Decimal:
    """The hours to quote the instance for: a term mode's months or terms must also cover set-up."""
    if ex is None or not ex.setup_minutes or mode not in TERM_MODES:
        return run_hours
    return run_hours + ex.setup_hours

