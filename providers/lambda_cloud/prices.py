"""Lambda Cloud's live prices and capacity (``gpuplan catalog refresh --provider lambda --region global``).

``GET /instance-types`` answers every type's on-demand price (``price_cents_per_hour``), its specs and
the regions with capacity for it now. Lambda prices a type the same in every region, so the rows keep
the shipped rows' pseudo-region ``global`` (and replace them, as a later layer does) with the regions
that have capacity as their zones; a type with capacity nowhere is a sold-out row, which plans leave
out and say so. The GPU model of a type is taken from the catalog's own row of it: a type the catalog
does not know is left out and named (:attr:`skipped`), never guessed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from pricing.catalog import AsOfKind, Catalog, InstanceType, Layer, Stock
from pricing.errors import InputError, ProviderError
from pricing.money import Currency
from providers.capabilities import PriceFetcher
from providers.lambda_cloud.api import LambdaApi

PROVIDER = "lambda"
REGION = "global"  # the shipped rows' pseudo-region: one price in every region


class LambdaPriceFetcher(PriceFetcher):
    provider = PROVIDER

    def __init__(self, *, api: LambdaApi | None = None) -> None:
        self._api = api
        self.skipped: list[str] = []

    def fetch(self, region: str, catalog: Catalog) -> list[InstanceType]:
        if region != REGION:
            raise InputError(f"Lambda prices a type the same in every region, so it is read as one: not {region}",
                             "gpuplan catalog refresh --provider lambda --region global (the capacity of each "
                             "region is kept with it)")
        api = self._api or LambdaApi()
        data = api.get("/instance-types")
        if not isinstance(data, dict):
            raise ProviderError("Lambda Cloud's /instance-types answered without a map of types", "try again later")
        known = {r.instance_type: r for r in catalog.instances if r.provider == PROVIDER}
        read_at = datetime.now(UTC).replace(microsecond=0)
        source = f"Lambda Cloud API GET /instance-types (price_cents_per_hour), read {read_at.isoformat()}"
        rows: list[InstanceType] = []
        self.skipped = []
        for name, entry in sorted(data.items()):
            row = self._row(name, entry, known, source, read_at)
            if row is not None:
                rows.append(row)
        return rows

    def _row(self, name: str, entry: Any, known: dict[str, InstanceType], source: str,
             read_at: datetime) -> InstanceType | None:
        kind = entry.get("instance_type") if isinstance(entry, dict) else None
        cents = kind.get("price_cents_per_hour") if isinstance(kind, dict) else None
        if not isinstance(cents, int | float) or isinstance(cents, bool) or cents <= 0:
            raise ProviderError(f"Lambda Cloud's /instance-types has no price for {name}", "try again later")
        specs = kind.get("specs") if isinstance(kind.get("specs"), dict) else {}
        if not specs.get("gpus"):
            return None  # a CPU type: not an offer for GPU work
        base = known.get(name)
        if base is None:
            self.skipped.append(name)
            return None
        capacity = tuple(sorted(str(r["name"]) for r in entry.get("regions_with_capacity_available") or []
                                if isinstance(r, dict) and r.get("name")))
        return base._replace(
            region=REGION, zone="", zones=capacity, currency=Currency.USD,
            hourly=(Decimal(str(cents)) / 100).normalize(), hourly_high=None,
            vcpu=int(specs.get("vcpus") or base.vcpu), mem_gb=float(specs.get("memory_gib") or base.mem_gb),
            stock=Stock.AVAILABLE if capacity else Stock.SOLD_OUT, layer=Layer.CACHE, source=source,
            as_of=read_at.date(), as_of_kind=AsOfKind.PRICE_DATE,
            notes=(f"capacity now in {', '.join(capacity)}" if capacity else "no region has capacity now"),
        )
