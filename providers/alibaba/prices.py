"""Alibaba Cloud ECS live prices and stock (``gpuplan catalog refresh --provider alibaba --region cn-shanghai``).

For each GPU type the catalog lists in the region, ECS's DescribePrice gives the list price of the
instance alone (``OriginalPrice`` of the ``instanceType`` line: the catalog compares list prices; what
this account pays is ``gpuplan quote``) per hour and per month, and DescribeAvailableResource the
zones that have it in stock now: a type in stock nowhere is a sold-out row, which plans leave out and
say so. A type ECS does not sell in the region is left out and named (:attr:`skipped`), never guessed;
the GPU model and specs come from the catalog's own row.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pricing.catalog import AsOfKind, Catalog, InstanceType, Layer, Stock
from pricing.errors import InputError
from providers.alibaba.compute import PROVIDER, _rows
from providers.alibaba.ecs_api import AlibabaApiError, EcsApi
from providers.alibaba.quote import _price
from providers.capabilities import PriceFetcher


class AlibabaPriceFetcher(PriceFetcher):
    provider = PROVIDER

    def __init__(self, *, api: EcsApi | None = None) -> None:
        self._api = api
        self.skipped: list[str] = []

    def fetch(self, region: str, catalog: Catalog) -> list[InstanceType]:
        known = {r.instance_type: r for r in catalog.instances if r.provider == PROVIDER and r.region == region}
        if not known:
            regions = sorted({r.region for r in catalog.instances if r.provider == PROVIDER})
            raise InputError(f"the catalog lists no Alibaba GPU type in {region}", f"its regions: {', '.join(regions)}")
        api = self._api or EcsApi(region)
        stocked = self._stock(api)
        read_at = datetime.now(UTC).replace(microsecond=0)
        source = (f"Alibaba Cloud ECS DescribePrice (OriginalPrice, instanceType) and DescribeAvailableResource, "
                  f"read {read_at.isoformat()}")
        rows: list[InstanceType] = []
        self.skipped = []
        for name, base in sorted(known.items()):
            hourly, monthly = self._price(api, name, "Hour"), self._price(api, name, "Month")
            if hourly is None:
                self.skipped.append(name)
                continue
            zones = tuple(sorted(stocked.get(name, ())))
            rows.append(base._replace(
                zone="", zones=zones, hourly=hourly, hourly_high=None, monthly=monthly, monthly_high=None, spot=None,
                spot_high=None, reserved_1y=None, reserved_3y=None,
                stock=Stock.AVAILABLE if zones else Stock.SOLD_OUT, layer=Layer.CACHE, source=source,
                as_of=read_at.date(), as_of_kind=AsOfKind.PRICE_DATE,
                notes=f"in stock now in {', '.join(zones)}" if zones else "no zone has it in stock now"))
        return rows

    @staticmethod
    def _stock(api: EcsApi) -> dict[str, set[str]]:
        """type -> the zones that have it in stock now (pay-as-you-go)."""
        body = api.call("DescribeAvailableResource", {"DestinationResource": "InstanceType",
                                                      "InstanceChargeType": "PostPaid"})
        out: dict[str, set[str]] = {}
        for zone in _rows(body, "AvailableZones", "AvailableZone"):
            for resource in _rows(zone, "AvailableResources", "AvailableResource"):
                for r in _rows(resource, "SupportedResources", "SupportedResource"):
                    if r.get("Status") == "Available" and r.get("StatusCategory") in ("WithStock", "ClosedWithStock"):
                        out.setdefault(str(r.get("Value")), set()).add(str(zone.get("ZoneId")))
        return out

    @staticmethod
    def _price(api: EcsApi, name: str, unit: str) -> Any:
        """The list price of one ``unit`` (Hour, Month) of ``name``; None where ECS does not sell it here."""
        try:
            body = api.call("DescribePrice", {"ResourceType": "instance", "InstanceType": name, "PriceUnit": unit,
                                              "Period": 1, "Amount": 1, "InstanceNetworkType": "vpc"})
        except (InputError, AlibabaApiError) as err:
            if getattr(err, "code", "") in ("InvalidInstanceType.NotFound", "InvalidInstanceType.ValueNotSupported"):
                return None
            raise
        total = (body.get("PriceInfo") or {}).get("Price") if isinstance(body.get("PriceInfo"), dict) else None
        if not isinstance(total, dict):
            return None
        details = total.get("DetailInfos")
        lines = details.get("DetailInfo") if isinstance(details, dict) else None
        item = next((d for d in lines or [] if isinstance(d, dict) and d.get("Resource") == "instanceType"), total)
        return _price(item, "OriginalPrice")
