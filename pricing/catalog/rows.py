"""The catalog's values: GPU specs, instance rows with their prices, card and electricity prices.

Instance rows come by the hundred thousand (a user catalog, a refreshed cache) and the
planner walks them whole, so an :class:`InstanceType` is a named tuple: built in C from
the values the CSV parse has checked (:mod:`pricing.catalog.parse`), as small as a tuple,
read by name. The few values of the shipped data files (GPU specs, card and electricity
prices) validate with pydantic as they are read.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from enum import StrEnum
from typing import NamedTuple

from pricing.billing import BillingMode
from pricing.datafiles import Sourced
from pricing.money import Currency, Money

LOCAL = "local"  # the provider name of buying cards
# A row whose source names no region: not a place anyone can ask for (hints and tables never offer it as one).
UNKNOWN_REGION = "unknown"
# Regions that stand for many real ones: a refreshed row of a real region replaces them.
PSEUDO_REGIONS = frozenset({"cn-mainland", UNKNOWN_REGION, "global"})


class Interconnect(StrEnum):
    """How the GPUs of one machine talk to each other."""

    NVLINK = "nvlink"
    NVLINK_BRIDGE = "nvlink-bridge"  # a 2-GPU bridge: NVLink for pairs, PCIe beyond
    PCIE = "pcie"

    def among(self, count: float) -> Interconnect:
        """How ``count`` GPUs of a model with this interconnect talk inside one machine: a bridge pairs two,
        more talk over PCIe; SXM modules sit on their NVLink baseboard whatever the count."""
        return Interconnect.PCIE if self is Interconnect.NVLINK_BRIDGE and count > 2 else self


class Stock(StrEnum):
    """Whether a zone sells the type now: only live data knows."""

    AVAILABLE = "available"
    SOLD_OUT = "sold_out"
    UNKNOWN = "unknown"


class AsOfKind(StrEnum):
    """What a row's ``as_of`` is: the price's own date, or only the day a copy was read."""

    PRICE_DATE = "price_date"  # the source dates the price, or it was observed live that day
    READ_DATE = "read_date"  # the source gives no date: as_of is when the copy was read


class Layer(StrEnum):
    SHIPPED = "shipped"
    CACHE = "cache"
    USER = "user"
    # Not a source of rows: a discount applied to the rows of the layers below (--discount).
    DISCOUNT = "discount"


class GpuSpec(Sourced):
    key: str
    name: str
    aliases: tuple[str, ...] = ()
    arch: str
    vram_gb: float
    mem_bw_gbs: float | None = None
    fp32_tflops: float | None = None
    tensor_fp16_tflops: float | None = None
    tdp_w: float | None = None
    interconnect: Interconnect = Interconnect.PCIE


# Which field holds each mode's rate: a planner asks for every mode of every row.
RATE_FIELDS = {BillingMode.HOURLY: "hourly", BillingMode.MONTHLY: "monthly", BillingMode.SPOT: "spot",
               BillingMode.RESERVED_1Y: "reserved_1y", BillingMode.RESERVED_3Y: "reserved_3y"}
HIGH_FIELDS = {BillingMode.HOURLY: "hourly_high", BillingMode.MONTHLY: "monthly_high", BillingMode.SPOT: "spot_high"}
# The modes as module names: InstanceType.rates() reads them for every row, and an enum member by attribute is slow.
_HOURLY, _MONTHLY, _SPOT, _RESERVED_1Y, _RESERVED_3Y = RATE_FIELDS


class InstanceType(NamedTuple):
    """A cloud instance type in one region (or one zone, for live rows), with its prices.

    Immutable and hashable; build it by keyword, copy it with ``_replace``. A named tuple
    rather than a frozen dataclass: a 200k-row catalog builds one per row, and a frozen
    dataclass's ``__init__`` (one ``object.__setattr__`` per field) takes ~4 us a row
    where this takes ~0.3 us, at the same ~230 bytes. Values are checked where rows enter:
    the CSV parse for files, the price fetchers for what they read.
    """

    provider: str
    instance_type: str
    family: str
    gpu: str
    gpu_count: float
    vcpu: int
    mem_gb: float
    region: str
    currency: Currency
    source: str
    as_of: date
    zone: str = ""  # set when the price is one zone's (live data); "" for a region-wide row
    zones: tuple[str, ...] = ()
    hourly: Decimal | None = None
    hourly_high: Decimal | None = None
    monthly: Decimal | None = None
    monthly_high: Decimal | None = None
    spot: Decimal | None = None
    spot_high: Decimal | None = None
    reserved_1y: Decimal | None = None
    reserved_3y: Decimal | None = None
    stock: Stock = Stock.UNKNOWN
    layer: Layer = Layer.SHIPPED
    as_of_kind: AsOfKind = AsOfKind.PRICE_DATE
    notes: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        """Rows with the same key are the same offer: a later layer replaces an earlier one."""
        return (self.provider, self.instance_type.lower(), self.region, self.zone)

    def rate(self, mode: BillingMode) -> Decimal | None:
        """The list rate for ``mode``: per hour, or per month for monthly."""
        field = RATE_FIELDS.get(mode)
        return None if field is None else getattr(self, field)  # type: ignore[no-any-return]

    def rates(self) -> dict[BillingMode, Decimal]:
        """Every list rate the row has, in :data:`RATE_FIELDS` order (as ``rate`` over every mode, in one pass)."""
        # One test per field, not a loop over RATE_FIELDS: a plan asks this of every one of 200k rows, and
        # this is 2.5x faster (the tests hold the two to the same answer).
        out: dict[BillingMode, Decimal] = {}
        if (r := self.hourly) is not None:
            out[_HOURLY] = r
        if (r := self.monthly) is not None:
            out[_MONTHLY] = r
        if (r := self.spot) is not None:
            out[_SPOT] = r
        if (r := self.reserved_1y) is not None:
            out[_RESERVED_1Y] = r
        if (r := self.reserved_3y) is not None:
            out[_RESERVED_3Y] = r
        return out

    def rates_high(self) -> dict[BillingMode, Decimal]:
        """Every dearest-zone rate the row has, in BillingMode order."""
        return {m: r for m, f in HIGH_FIELDS.items() if (r := getattr(self, f)) is not None}

    def rate_high(self, mode: BillingMode) -> Decimal | None:
        """The dearest zone's rate where the source gives a spread."""
        field = HIGH_FIELDS.get(mode)
        return None if field is None else getattr(self, field)  # type: ignore[no-any-return]

    @property
    def is_vgpu_slice(self) -> bool:
        return self.gpu_count < 1

    def hourly_money(self) -> Money | None:
        return None if self.hourly is None else Money(amount=self.hourly, currency=self.currency)


FIELDS: tuple[str, ...] = InstanceType._fields
PRICE_FIELDS = ("hourly", "hourly_high", "monthly", "monthly_high", "spot", "spot_high", "reserved_1y",
                "reserved_3y")


class CardPrice(Sourced):
    """What one card costs to buy."""

    gpu: str
    condition: str  # "new" or "used"
    price: Decimal
    currency: Currency

    def money(self) -> Money:
        return Money(amount=self.price, currency=self.currency)


class ElectricityPrice(Sourced):
    region: str
    currency: Currency
    price_per_kwh: Decimal
    customer_class: str = ""
    default: bool = False
