"""Live AWS GPU prices as catalog rows: the Price List API for on-demand and reserved, EC2 for spot.

**Price List** (``pricing`` client, always us-east-1): ``GetProducts`` for ServiceCode
AmazonEC2, one query per instance type the catalog knows, filtered to the region
(``regionCode``), Linux, shared tenancy, no pre-installed software and ``capacitystatus``
Used. Each ``PriceList`` item is a JSON *string* holding one product document; the
parser re-checks those attributes itself (and drops Capacity Block SKUs) so a loosened
filter can never mix a Windows or dedicated price into a row.

**Reserved rates** are read from each Reserved term's ``termAttributes``
(``LeaseContractLength`` 1yr/3yr, ``OfferingClass``, ``PurchaseOption``), never from
hard-coded offer-term codes. The rate reported is the *standard No Upfront* one: it is
the only option billed purely per hour with no cash up front, so it compares like for
like with the on-demand rate, and standard is the cheaper class for a fixed instance
type. When a term has no No Upfront offer, Partial and then All Upfront are used, with
the upfront fee spread evenly over the term's hours (8760 per year, no discounting),
and the row's notes say so; convertible offers are used only when no standard one
exists, again with a note.

**Spot** comes from ``DescribeSpotPriceHistory`` (Linux/UNIX, the GPU types,
``StartTime`` now, which returns the price in effect now in each zone). One row is
written per (instance type, zone) with a spot price, carrying that zone's spot price and
the region's on-demand and reserved rates; a type with no spot price anywhere gets one
row with zone "". GPU model and count come from ``DescribeInstanceTypes`` where EC2
reports a GPU the catalog knows, else from the catalog's own AWS rows; a type whose GPU
the catalog does not know is left out and counted in :attr:`AwsPriceFetcher.notes`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from pricing.catalog import Catalog, InstanceType, Layer, Stock
from pricing.errors import GpuplanError
from pricing.money import Currency
from providers.aws.instance_types import (
    TypeInfo,
    chunks,
    describe_types,
    gpu_key,
    offered_zones,
)
from providers.aws.session import (
    DEFAULT_MAX_ATTEMPTS,
    PRICING_REGION,
    aws_errors,
    make_client,
    make_session,
)
from providers.capabilities import PriceFetcher

log = logging.getLogger(__name__)

PROVIDER = "aws"
HOURS_PER_YEAR = Decimal(8760)
SPOT_PRODUCTS = ("Linux/UNIX", "Linux/UNIX (Amazon VPC)")  # the second appears on EC2-Classic-era accounts
_PRODUCT_ATTRIBUTES = {  # attribute -> value a plain Linux on-demand box must have (filter and re-check)
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
}
_PURCHASE_ORDER = ("No Upfront", "Partial Upfront", "All Upfront")
_CLASS_ORDER = ("standard", "convertible")


@dataclass(frozen=True)
class ReservedRate:
    """The effective hourly rate of one Reserved Instance offer, and how it was obtained."""

    years: int
    hourly: Decimal
    offering_class: str
    purchase_option: str
    upfront: Decimal = Decimal(0)

    @property
    def amortised(self) -> bool:
        return self.upfront > 0

    def describe(self) -> str:
        text = f"reserved_{self.years}y: {self.offering_class} {self.purchase_option}"
        if self.amortised:
            text += f", upfront {self.upfront} USD spread over {self.years * 8760} h"
        return text


@dataclass(frozen=True)
class ProductPrices:
    """The prices and shape of one Price List product (one instance type in one region)."""

    sku: str
    instance_type: str
    region: str
    on_demand: Decimal | None
    reserved: dict[int, ReservedRate] = field(default_factory=dict)
    vcpu: int | None = None
    mem_gb: float | None = None
    gpu_count: int | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class SpotPrice:
    price: Decimal
    timestamp: datetime


def price_list_filters(region: str, instance_type: str) -> list[dict[str, str]]:
    """GetProducts filters for one instance type's Linux, shared-tenancy, on-demand-capacity product."""
    pairs = [("regionCode", region), ("instanceType", instance_type), *_PRODUCT_ATTRIBUTES.items()]
    return [{"Type": "TERM_MATCH", "Field": f, "Value": v} for f, v in pairs]


def plain(amount: Decimal) -> Decimal:
    """'3.0600000000' as 3.06 and '100.00' as 100: the Price List pads to ten places."""
    reduced = amount.normalize()
    exponent = reduced.as_tuple().exponent
    return reduced.quantize(Decimal(1)) if isinstance(exponent, int) and exponent > 0 else reduced


def _usd(dimension: Mapping[str, Any]) -> Decimal | None:
    value = (dimension.get("pricePerUnit") or {}).get("USD")
    if value is None:
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _on_demand_rate(terms: Mapping[str, Any]) -> Decimal | None:
    rates = []
    for term in (terms.get("OnDemand") or {}).values():
        for dim in (term.get("priceDimensions") or {}).values():
            if str(dim.get("unit", "")).lower() in ("hrs", "hours") and str(dim.get("beginRange", "0")) == "0":
                rate = _usd(dim)
                if rate is not None:
                    rates.append(rate)
    # Several OnDemand terms for one SKU would be a format change: take the dearest, never a
    # cheaper rate the user may not get. Zero means "no such offer" here, not free.
    positive = [r for r in rates if r > 0]
    return plain(max(positive)) if positive else None


def _lease_years(text: str) -> int | None:
    digits = "".join(ch for ch in text if ch.isdigit())
    return int(digits) if digits and "yr" in text.replace(" ", "").lower() else None


def reserved_rates(terms: Mapping[str, Any]) -> tuple[dict[int, ReservedRate], tuple[str, ...]]:
    """The chosen Reserved rate per lease length (1, 3 years), and notes on any fallback used."""
    offers: dict[tuple[int, str, str], ReservedRate] = {}
    for term in (terms.get("Reserved") or {}).values():
        attrs = term.get("termAttributes") or {}
        years = _lease_years(str(attrs.get("LeaseContractLength", "")))
        offering_class = str(attrs.get("OfferingClass", "")).lower()
        purchase = str(attrs.get("PurchaseOption", ""))
        if years is None or offering_class not in _CLASS_ORDER or purchase not in _PURCHASE_ORDER:
            continue
        hourly = Decimal(0)
        upfront = Decimal(0)
        seen_hourly = False
        for dim in (term.get("priceDimensions") or {}).values():
            amount = _usd(dim)
            if amount is None:
                continue
            unit = str(dim.get("unit", "")).lower()
            if unit in ("hrs", "hours"):
                hourly += amount
                seen_hourly = True
            elif unit == "quantity":  # the "Upfront Fee" dimension
                upfront += amount
        if not seen_hourly and upfront == 0:
            continue
        effective = hourly + upfront / (HOURS_PER_YEAR * years)
        # An amortised rate has no natural precision: a millionth of a dollar is well below any bill.
        offers[(years, offering_class, purchase)] = ReservedRate(
            years=years, hourly=plain(effective.quantize(Decimal("0.000001")) if upfront else effective),
            offering_class=offering_class, purchase_option=purchase, upfront=plain(upfront))
    chosen: dict[int, ReservedRate] = {}
    notes: list[str] = []
    for years in (1, 3):
        for offering_class in _CLASS_ORDER:
            pick = next((offers[(years, offering_class, p)] for p in _PURCHASE_ORDER
                         if (years, offering_class, p) in offers), None)
            if pick is not None:
                chosen[years] = pick
                if (pick.offering_class, pick.purchase_option) != ("standard", "No Upfront"):
                    notes.append(pick.describe() + " (no standard No Upfront offer)")
                break
    return chosen, tuple(notes)


def _int_attr(text: Any) -> int | None:
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


def _memory_gb(text: Any) -> float | None:
    # "244 GiB", "1,152 GiB"
    try:
        return float(str(text).split()[0].replace(",", ""))
    except (IndexError, ValueError):
        return None


def parse_product(document: str | Mapping[str, Any], region: str | None = None) -> ProductPrices | None:
    """Prices of one Price List item (the JSON string as returned, or its parsed dict).

    Returns None for a product that is not a plain Linux, shared-tenancy, on-demand-capacity
    box in ``region`` (Capacity Block SKUs, other OSes, other regions).
    """
    doc = json.loads(document) if isinstance(document, str) else document
    product = doc.get("product") or {}
    attrs = product.get("attributes") or {}
    if any(attrs.get(k, v) != v for k, v in _PRODUCT_ATTRIBUTES.items()):
        return None
    if attrs.get("marketoption", "OnDemand") != "OnDemand":  # CapacityBlock SKUs price a different product
        return None
    if region is not None and attrs.get("regionCode", region) != region:
        return None
    instance_type = attrs.get("instanceType")
    if not instance_type:
        return None
    terms = doc.get("terms") or {}
    reserved, notes = reserved_rates(terms)
    return ProductPrices(
        sku=str(product.get("sku", "")),
        instance_type=str(instance_type),
        region=str(attrs.get("regionCode", region or "")),
        on_demand=_on_demand_rate(terms),
        reserved=reserved,
        vcpu=_int_attr(attrs.get("vcpu")),
        mem_gb=_memory_gb(attrs.get("memory")),
        gpu_count=_int_attr(attrs.get("gpu")),
        notes=notes,
    )


def _timestamp(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    text = str(value).replace("Z", "+00:00")
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def latest_spot_prices(records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], SpotPrice]:
    """The newest Linux spot price per (instance type, zone) in DescribeSpotPriceHistory records."""
    latest: dict[tuple[str, str], SpotPrice] = {}
    for r in records:
        if str(r.get("ProductDescription", "")) not in SPOT_PRODUCTS:
            continue
        zone = str(r.get("AvailabilityZone", ""))
        try:
            price = Decimal(str(r["SpotPrice"]))
        except (KeyError, InvalidOperation):
            continue
        if not zone or price <= 0:
            continue
        seen = SpotPrice(price=plain(price), timestamp=_timestamp(r.get("Timestamp")))
        key = (str(r["InstanceType"]), zone)
        if key not in latest or seen.timestamp > latest[key].timestamp:
            latest[key] = seen
    return latest


def _utcnow() -> datetime:
    return datetime.now(UTC)


class AwsPriceFetcher(PriceFetcher):
    """Reads live AWS prices for the GPU instance types the catalog knows.

    Args:
        profile: an AWS profile name (``--profile``); None uses the default chain.
        session: a boto3 session to build clients from (tests).
        pricing_client, ec2_client: ready clients (tests; ``ec2_client`` must be for the
            region passed to :meth:`fetch`).
        instance_types: extra types to price besides the catalog's AWS rows.
        now: the clock, for the ``source`` stamp and the spot ``StartTime``.
        max_attempts: bound on botocore's retries of throttled calls.
    """

    provider = PROVIDER

    def __init__(self, *, profile: str | None = None, session: Any = None, pricing_client: Any = None,
                 ec2_client: Any = None, instance_types: Sequence[str] = (),
                 now: Callable[[], datetime] = _utcnow, max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> None:
        self._profile = profile
        self._session = session
        self._pricing = pricing_client
        self._ec2 = ec2_client
        self._extra_types = tuple(instance_types)
        self._now = now
        self._max_attempts = max_attempts
        self.notes: tuple[str, ...] = ()  # what the last fetch skipped or assumed, for the CLI to show

    def _clients(self, region: str) -> tuple[Any, Any]:
        if self._pricing is not None and self._ec2 is not None:
            return self._pricing, self._ec2
        with aws_errors():
            session = self._session if self._session is not None else make_session(self._profile, region)
        pricing = self._pricing or make_client("pricing", region=PRICING_REGION, session=session,
                                               max_attempts=self._max_attempts)
        ec2 = self._ec2 or make_client("ec2", region=region, session=session, max_attempts=self._max_attempts)
        return pricing, ec2

    def instance_types(self, catalog: Catalog) -> list[str]:
        """The types priced: every AWS type in the catalog (any region) plus the extra ones."""
        return sorted({i.instance_type for i in catalog.instances if i.provider == PROVIDER} | set(self._extra_types))

    def products(self, pricing: Any, region: str, instance_types: Sequence[str]) -> dict[str, ProductPrices]:
        """Price List products per instance type in ``region`` (a type not sold there is absent)."""
        found: dict[str, list[ProductPrices]] = {}
        paginator = pricing.get_paginator("get_products")
        with aws_errors(service="pricing"):
            for instance_type in instance_types:
                pages = paginator.paginate(ServiceCode="AmazonEC2", FormatVersion="aws_v1",
                                           Filters=price_list_filters(region, instance_type))
                for page in pages:
                    for item in page.get("PriceList", []):
                        parsed = parse_product(item, region)
                        if parsed is not None and parsed.instance_type == instance_type:
                            found.setdefault(instance_type, []).append(parsed)
        out: dict[str, ProductPrices] = {}
        for instance_type, items in found.items():
            priced = [p for p in items if p.on_demand is not None] or items
            best = max(priced, key=lambda p: (p.on_demand or Decimal(0), p.sku))
            if len(priced) > 1:
                matched = f"{len(priced)} Price List products matched; used SKU {best.sku}, the dearest"
                best = replace(best, notes=(*best.notes, matched))
            out[instance_type] = best
        return out

    def spot_prices(self, ec2: Any, instance_types: Sequence[str], start: datetime) -> dict[tuple[str, str], SpotPrice]:
        """The spot price in effect at ``start`` per (type, zone)."""
        records: list[Mapping[str, Any]] = []
        paginator = ec2.get_paginator("describe_spot_price_history")
        with aws_errors():
            for chunk in chunks(list(instance_types)):
                for page in paginator.paginate(InstanceTypes=chunk, ProductDescriptions=list(SPOT_PRODUCTS),
                                               StartTime=start):
                    records.extend(page.get("SpotPriceHistory", []))
        return latest_spot_prices(records)

    def _type_facts(self, ec2: Any, instance_types: Sequence[str]) -> tuple[dict[str, TypeInfo],
                                                                           dict[str, tuple[str, ...]], list[str]]:
        # Enrichment only: the catalog and the Price List cover a refusal here, so note it and go on.
        notes: list[str] = []
        try:
            with aws_errors():
                infos = describe_types(ec2, instance_types)
        except GpuplanError as exc:
            infos = {}
            notes.append(f"DescribeInstanceTypes failed ({exc.message}); GPUs taken from the catalog")
        try:
            with aws_errors():
                zones = offered_zones(ec2, instance_types)
        except GpuplanError as exc:
            zones = {}
            notes.append(f"DescribeInstanceTypeOfferings failed ({exc.message}); zones left empty")
        return infos, zones, notes

    def fetch(self, region: str, catalog: Catalog) -> list[InstanceType]:
        now = self._now().astimezone(UTC).replace(microsecond=0)
        pricing, ec2 = self._clients(region)
        types = self.instance_types(catalog)
        products = self.products(pricing, region, types)
        spot = self.spot_prices(ec2, types, now)
        infos, zones, notes = self._type_facts(ec2, types)
        source = (f"AWS Price List API (AmazonEC2, {PRICING_REGION}) and EC2 DescribeSpotPriceHistory, "
                  f"read {now.isoformat().replace('+00:00', 'Z')}")
        aws_rows = [i for i in catalog.instances if i.provider == PROVIDER]
        rows: list[InstanceType] = []
        unknown_gpu: list[str] = []
        not_sold: list[str] = []
        from_catalog: list[str] = []
        for instance_type in types:
            product = products.get(instance_type)
            type_spot = {z: p for (t, z), p in spot.items() if t == instance_type}
            if product is None and not type_spot:
                not_sold.append(instance_type)
                continue
            info = infos.get(instance_type)
            known = [r for r in aws_rows if r.instance_type == instance_type]
            known.sort(key=lambda r: r.region != region)  # this region's row first
            family = instance_type.split(".")[0]
            prefer = [r.gpu for r in known] + [r.gpu for r in aws_rows if r.family == family]
            gpu, gpu_count, why = None, 0.0, ""
            if info is not None and len({(g.name, g.memory_mib) for g in info.gpus}) == 1:
                gpu, why = gpu_key(info.gpus[0], catalog, prefer)
                gpu_count = float(info.gpu_count)
            if gpu is None and known:
                gpu, gpu_count = known[0].gpu, known[0].gpu_count
                why = "catalog row" + (f" ({why})" if why else "")
                from_catalog.append(instance_type)
            if gpu is None:
                unknown_gpu.append(f"{instance_type}: {why or 'no GPU reported'}")
                continue
            vcpu = (info.vcpu if info else None) or (product.vcpu if product else None) or (
                known[0].vcpu if known else 0)
            mem_gb = (info.mem_gb if info else None) or (product.mem_gb if product else None) or (
                known[0].mem_gb if known else 0.0)
            row_notes = [f"gpu: {why}"]
            if product is not None:
                row_notes.append(f"Price List SKU {product.sku}")
                row_notes.extend(product.notes)
            else:
                row_notes.append("no Price List product: on-demand and reserved unknown")
            base: dict[str, Any] = {
                "provider": PROVIDER, "instance_type": instance_type, "family": family, "gpu": gpu,
                "gpu_count": gpu_count, "vcpu": int(vcpu or 0), "mem_gb": float(mem_gb or 0.0), "region": region,
                "currency": Currency.USD, "stock": Stock.UNKNOWN, "layer": Layer.CACHE, "source": source,
                "as_of": now.date(),
                "hourly": product.on_demand if product else None,
                "reserved_1y": product.reserved[1].hourly if product and 1 in product.reserved else None,
                "reserved_3y": product.reserved[3].hourly if product and 3 in product.reserved else None,
            }
            if not type_spot:
                rows.append(InstanceType(**base, zone="", zones=zones.get(instance_type, ()),
                                         notes="; ".join([*row_notes, "no spot price in any zone"])))
                continue
            for zone, price in sorted(type_spot.items()):
                spot_note = f"spot as of {price.timestamp.astimezone(UTC).isoformat().replace('+00:00', 'Z')}"
                rows.append(InstanceType(**base, zone=zone, zones=(zone,), spot=price.price,
                                         notes="; ".join([*row_notes, spot_note])))
        if unknown_gpu:
            notes.append(f"{len(unknown_gpu)} instance type(s) skipped, GPU not mapped to the catalog: "
                         + "; ".join(unknown_gpu))
        if not_sold:
            notes.append(f"{len(not_sold)} instance type(s) have no Linux price in {region}: {', '.join(not_sold)}")
        if from_catalog:
            notes.append(f"GPU model taken from the catalog for {', '.join(from_catalog)} "
                         "(DescribeInstanceTypes gave no usable GpuInfo)")
        self.notes = tuple(notes)
        for note in notes:
            log.info("aws prices %s: %s", region, note)
        return rows
