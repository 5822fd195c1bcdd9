"""What a cloud bills besides the instance, with sources: disks, public addresses, traffic, storage.

Read from ``pricing/data/extras.csv``. An item a cloud has no row for is not priced: callers
say so instead of counting it as free. A row with rate ``free`` is an allowance the source
states is not billed (AWS's first 100 GB of internet egress a month).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import lru_cache

from pricing.datafiles import data_rows
from pricing.errors import PriceMissingError
from pricing.money import Currency

# What a launch creates and the exports ask for when the user gives no size: SkyPilot's
# default disk, big enough for an image, a checkpoint and a dataset shard.
DEFAULT_DISK_GB = 256
# Tencent bills public bandwidth by the Mbps of the cap; 5 Mbps is the top of the tier the data prices.
DEFAULT_BANDWIDTH_MBPS = 5
# The block storage type each cloud's launch creates when --disk-type is not given.
DEFAULT_DISK_TYPE = {"aws": "gp3", "tencent": "cloud_premium", "gcp": "pd-balanced", "azure": "premium-ssd",
                     "lambda": "included", "alibaba": "cloud_essd"}
# The object storage each cloud's --storage-gb is priced as.
DEFAULT_STORAGE = {"aws": "storage:s3-standard", "gcp": "storage:gcs-standard", "azure": "storage:blob-hot-lrs",
                   "lambda": "storage:filesystem"}


@dataclass(frozen=True, slots=True)
class ExtraRate:
    """One sourced rate: ``rate`` per ``unit`` from ``tier_from`` up to ``tier_to`` (None: no top)."""

    cloud: str
    item: str
    unit: str
    tier_from: Decimal
    tier_to: Decimal | None
    rate: Decimal  # 0 only for a free allowance (``free``)
    free: bool
    currency: Currency
    source: str
    as_of: date
    note: str


def _decimal(text: str, what: str) -> Decimal:
    try:
        return Decimal(text)
    except ArithmeticError:
        raise PriceMissingError(f"extras.csv: cannot read {what} {text!r}") from None


@lru_cache(maxsize=1)
def extra_rates() -> tuple[ExtraRate, ...]:
    """Every shipped row, in file order."""
    out = []
    for r in data_rows("extras.csv"):
        free = r["rate"].strip().lower() == "free"
        rate = Decimal(0) if free else _decimal(r["rate"], "rate")
        if not free and rate <= 0:
            raise PriceMissingError(f"extras.csv: {r['cloud']} {r['item']} has rate {rate}; a missing rate has no row")
        out.append(ExtraRate(
            cloud=r["cloud"].strip(), item=r["item"].strip(), unit=r["unit"].strip(),
            tier_from=_decimal(r["tier_from"] or "0", "tier_from"),
            tier_to=_decimal(r["tier_to"], "tier_to") if r["tier_to"].strip() else None,
            rate=rate, free=free, currency=Currency(r["currency"].strip()), source=r["source"].strip(),
            as_of=date.fromisoformat(r["as_of"].strip()), note=r["note"].strip(),
        ))
    return tuple(out)


@lru_cache(maxsize=1)
def clouds_priced() -> frozenset[str]:
    """The clouds the shipped data prices any bill line for: a provider of the user's own catalog is not one."""
    return frozenset(r.cloud for r in extra_rates())


@lru_cache(maxsize=256)
def rates_for(cloud: str, item: str) -> tuple[ExtraRate, ...]:
    """The rows of one item, lowest tier first; empty when the item is not priced for ``cloud``.

    Kept per (cloud, item): a JSON plan asks for each option's disk, address and traffic rows.
    """
    return tuple(sorted((r for r in extra_rates() if r.cloud == cloud and r.item == item), key=lambda r: r.tier_from))
