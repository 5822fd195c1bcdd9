"""Live Tencent CVM GPU prices and stock per zone, as catalog rows.

One DescribeZoneInstanceConfigInfos call per region answers, for every (zone, instance type,
charge type), the list price and whether the zone sells it. Fields read from each
``InstanceTypeQuotaSet`` item (CVM API 2017-03-12, ``InstanceTypeQuotaItem`` / ``ItemPrice``):

- ``Zone``, ``InstanceType``, ``InstanceFamily``, ``InstanceChargeType``, ``Cpu``, ``Memory`` (GB),
  ``GpuCount`` (float, below 1 for a vGPU slice; ``Gpu`` when it is missing), ``Status``
  (SELL / SOLD_OUT), ``StatusCategory`` (EnoughStock ... WithoutStock);
- POSTPAID_BY_HOUR ``Price.UnitPrice`` -> ``hourly``. ``UnitPrice`` is the list price and
  ``UnitPriceDiscount`` the price after the account's own discount; the catalog compares
  providers at list prices, so ``hourly`` is ``UnitPrice`` and a different discounted price
  is only mentioned in the notes. When ``UnitPriceSecondStep``/``ThirdStep`` are given,
  ``UnitPrice`` covers hours 0-96 only; the tiers go into the notes;
- PREPAID ``Price.OriginalPrice`` -> ``monthly``: the list price of one month (not
  ``DiscountPrice``, for the same reason);
- SPOTPAID ``Price.UnitPriceDiscount`` -> ``spot``: for spot the "discount" is the market
  price itself (``Discount`` ~20 = pay 20 % of ``UnitPrice``, the pay-as-you-go price), so the
  discounted field is the spot price; ``UnitPrice`` only when no discounted price is given.

Prices carry no currency: the API answers in the account's billing currency, and accounts of
the mainland site (cloud.tencent.com) pay in CNY, so rows default to CNY; an international-site
account (USD) passes ``currency=Currency.USD``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from pricing.catalog import Catalog, InstanceType, Layer, Stock
from pricing.errors import ProviderError
from pricing.money import Currency
from providers.capabilities import PriceFetcher
from providers.tencent import PROVIDER
from providers.tencent.charge import POSTPAID, PREPAID, SPOTPAID, price
from providers.tencent.client import ApiFactory, CvmApi, default_api

ACTION = "DescribeZoneInstanceConfigInfos"
CHARGE_TYPES = (POSTPAID, PREPAID, SPOTPAID)
_MAX_FILTER_VALUES = 100  # "Filter.Values 的上限为100" (DescribeZoneInstanceConfigInfosRequest)
_LABEL = {POSTPAID: "pay-as-you-go", PREPAID: "monthly", SPOTPAID: "spot"}


def _chunks(values: list[str], size: int) -> Iterable[list[str]]:
    for i in range(0, len(values), size):
        yield values[i:i + size]


class GpuMap:
    """GPU model keys for Tencent instance types, from the catalog's Tencent rows."""

    def __init__(self, catalog: Catalog) -> None:
        rows = [r for r in catalog.instances if r.provider == PROVIDER]
        self.families = sorted({r.family for r in rows})
        self._by_type = {r.instance_type.lower(): r.gpu for r in rows}
        by_size: dict[tuple[str, float], set[str]] = defaultdict(set)
        for r in rows:
            by_size[(r.family.lower(), float(r.gpu_count))].add(r.gpu)
        # A family + GPU count that maps to two models is ambiguous: leave it out rather than guess.
        self._by_size = {k: next(iter(v)) for k, v in by_size.items() if len(v) == 1}

    def gpu(self, instance_type: str, family: str, gpu_count: float) -> str | None:
        return self._by_type.get(instance_type.lower()) or self._by_size.get((family.lower(), float(gpu_count)))


class TencentPriceFetcher(PriceFetcher):
    """Reads one region's GPU offers: one row per (instance type, zone), all charge types combined."""

    provider = PROVIDER

    def __init__(
        self,
        *,
        currency: Currency = Currency.CNY,
        api: ApiFactory = default_api,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.currency = currency
        self._api = api
        self._clock = clock or (lambda: datetime.now(UTC))
        self.skipped: list[str] = []  # "TYPE@ZONE" rows left out in the last fetch, for reports

    def fetch(self, region: str, catalog: Catalog) -> list[InstanceType]:
        gpus = GpuMap(catalog)
        self.skipped = []
        if not gpus.families:
            return []
        api = self._api(region)
        items: list[Mapping[str, Any]] = []
        for families in _chunks(gpus.families, _MAX_FILTER_VALUES):
            items += self._items(api, families)
        read_at = self._clock().astimezone(UTC).replace(microsecond=0)
        return self._rows(region, items, gpus, read_at)

    def _items(self, api: CvmApi, families: list[str]) -> list[Mapping[str, Any]]:
        response = api.call(ACTION, {"Filters": [
            {"Name": "instance-family", "Values": families},
            {"Name": "instance-charge-type", "Values": list(CHARGE_TYPES)},
        ]})
        items = response.get("InstanceTypeQuotaSet")
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise ProviderError(f"Tencent CVM {ACTION} answered without an InstanceTypeQuotaSet list "
                                f"(RequestId {response.get('RequestId')})", "try again later")
        for item in items:
            if not all(isinstance(item.get(k), str) and item.get(k) for k in ("Zone", "InstanceType")):
                raise ProviderError(f"Tencent CVM {ACTION} answered an item without Zone or InstanceType "
                                    f"(RequestId {response.get('RequestId')})", "try again later")
        return items

    def _rows(self, region: str, items: list[Mapping[str, Any]], gpus: GpuMap,
              read_at: datetime) -> list[InstanceType]:
        grouped: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = defaultdict(dict)
        for item in items:
            charge = str(item.get("InstanceChargeType") or "")
            if charge in CHARGE_TYPES:
                grouped[(item["InstanceType"], item["Zone"])][charge] = item
        source = f"Tencent CVM {ACTION}, {region}, read {read_at.isoformat().replace('+00:00', 'Z')}"
        rows: list[InstanceType] = []
        unknown: list[str] = []
        for (kind, zone), by_charge in sorted(grouped.items()):
            base = next(by_charge[c] for c in CHARGE_TYPES if c in by_charge)
            family = str(base.get("InstanceFamily") or kind.split(".")[0])
            gpu_count = _number(base.get("GpuCount")) or _number(base.get("Gpu")) or 0.0
            if gpu_count <= 0:
                continue  # a CPU type in a GPU family's listing: not an offer for GPU work
            gpu = gpus.gpu(kind, family, gpu_count)
            if gpu is None:
                unknown.append(f"{kind}@{zone}")
                continue
            rows.append(InstanceType(
                provider=PROVIDER,
                instance_type=kind,
                family=family,
                gpu=gpu,
                gpu_count=gpu_count,
                vcpu=int(_number(base.get("Cpu")) or 0),
                mem_gb=_number(base.get("Memory")) or 0.0,
                region=region,
                zone=zone,
                zones=(zone,),
                currency=self.currency,
                hourly=price(by_charge.get(POSTPAID, {}).get("Price"), "UnitPrice"),
                monthly=price(by_charge.get(PREPAID, {}).get("Price"), "OriginalPrice"),
                spot=_spot(by_charge.get(SPOTPAID, {}).get("Price")),
                stock=_stock(by_charge),
                layer=Layer.CACHE,
                source=source,
                as_of=read_at.date(),
                notes="; ".join(_notes(by_charge, self.currency)),
            ))
        self.skipped = unknown
        if unknown:
            note = (f"{len(unknown)} offer(s) of this read left out: GPU model unknown to the catalog "
                    f"({', '.join(sorted({u.split('@')[0] for u in unknown}))})")
            rows = [r._replace(notes="; ".join(n for n in (r.notes, note) if n)) for r in rows]
        return rows


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _spot(item: Mapping[str, Any] | None) -> Decimal | None:
    return price(item, "UnitPriceDiscount") or price(item, "UnitPrice")


def _stock(by_charge: Mapping[str, Mapping[str, Any]]) -> Stock:
    statuses = {str(i.get("Status") or "") for i in by_charge.values()}
    if "SELL" in statuses:
        return Stock.AVAILABLE
    if statuses == {"SOLD_OUT"}:
        return Stock.SOLD_OUT
    return Stock.UNKNOWN


def _notes(by_charge: Mapping[str, Mapping[str, Any]], currency: Currency) -> list[str]:
    notes: list[str] = []
    sold_out = [_LABEL[c] for c in CHARGE_TYPES if by_charge.get(c, {}).get("Status") == "SOLD_OUT"]
    if sold_out and len(sold_out) < len(by_charge):
        notes.append(f"sold out for {', '.join(sold_out)}")
    categories = {str(i.get("StatusCategory")) for i in by_charge.values() if i.get("StatusCategory")}
    if "UnderStock" in categories:
        notes.append("stock running low (UnderStock)")
    post = by_charge.get(POSTPAID, {}).get("Price")
    first, second, third = (price(post, f) for f in ("UnitPrice", "UnitPriceSecondStep", "UnitPriceThirdStep"))
    if first is not None and (second is not None or third is not None):
        steps = [f"0-96 h {first}"] + ([f"96-360 h {second}"] if second else []) + (
            [f"over 360 h {third}"] if third else [])
        notes.append(f"pay-as-you-go tiers {currency}/h: {', '.join(steps)}")
    paid = price(post, "UnitPriceDiscount")
    if first is not None and paid is not None and paid != first:
        notes.append(f"this account pays {paid} {currency}/h after its discount (list {first})")
    pre = by_charge.get(PREPAID, {}).get("Price")
    month, month_paid = price(pre, "OriginalPrice"), price(pre, "DiscountPrice")
    if month is not None and month_paid is not None and month_paid != month:
        notes.append(f"this account pays {month_paid} {currency}/month after its discount (list {month})")
    return notes
