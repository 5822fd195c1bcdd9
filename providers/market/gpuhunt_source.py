"""``gpuplan catalog refresh --source gpuhunt``: gpuhunt's catalogs as rows of the refreshed cache layer.

gpuhunt publishes one catalog per cloud (``{base}/{provider}/version``, then
``{base}/{provider}/{version}/catalog.zip``; ``base`` is ``GPUHUNT_CATALOG_URL`` when set) with one
item per instance type and location, spot prices as separate items. Each (type, location) becomes one
row with its on-demand and spot price. A location that is a zone (GCP's ``us-central1-a``) is kept as
the row's zone under its region, as the AWS per-zone rows are.

Which price an item is (on-demand, spot, a reservation that is left out) and which of the catalog's GPUs it
carries: :mod:`providers.market.mapping`. gpuhunt reduces AWS's per-zone spot prices to the cheapest zone's
(``providers/aws.py``, ``_add_spots_worker``); taken as the region's spot price it would turn the "typical
zone" rule (``--spot-price typical``, the median zone) into the cheapest zone's. So an AWS row keeps each
zone's own spot price from the rows it replaces (the shipped per-zone rows), and where there are none the
cheapest-zone figure is left out and counted.

Only gpuhunt's offline providers are read (their catalogs are files); its online ones query live APIs
with the user's keys and are not gpuplan's business.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from pricing.catalog import AsOfKind, Catalog, InstanceType, Layer, Stock
from pricing.errors import NotSupportedError, ProviderError, UnknownNameError
from pricing.money import Currency
from providers.market.mapping import GpuMatch, GpuMatcher, Kind, kind_of

# gpuhunt's provider names that gpuplan spells otherwise (SkyPilot's and the registry's "lambda").
GPUPLAN_NAMES = {"lambdalabs": "lambda"}
GPUHUNT_NAMES = {v: k for k, v in GPUPLAN_NAMES.items()}
_ZONE = re.compile(r"^([a-z]+-[a-z]+\d+)-[a-z]$")  # GCP zones: us-central1-a


@dataclass
class MarketRows:
    """What a gpuhunt read gives: rows by (gpuplan provider, region), and what was left out and why."""

    rows: dict[tuple[str, str], list[InstanceType]] = field(default_factory=dict)
    unknown_gpus: dict[str, set[str]] = field(default_factory=dict)  # provider -> "name memory GB"
    left_out: dict[str, dict[str, int]] = field(default_factory=dict)  # provider -> why -> how many items
    versions: dict[str, str] = field(default_factory=dict)


def offline_providers() -> list[str]:
    return list(_hunt().OFFLINE_PROVIDERS)


def _hunt() -> Any:
    try:
        from gpuhunt._internal import catalog as hunt
    except ImportError:
        raise NotSupportedError("reading the market needs gpuhunt, which is not installed",
                                "pip install 'gpuplan[market]'") from None
    return hunt


def gpuhunt_name(provider: str) -> str:
    """The gpuhunt name of a provider given in either spelling; an InputError for one gpuhunt has no catalog of."""
    name = GPUHUNT_NAMES.get(provider.strip().lower(), provider.strip().lower())
    offline = offline_providers()
    if name not in offline:
        raise UnknownNameError("gpuhunt catalog", provider, [GPUPLAN_NAMES.get(o, o) for o in offline],
                               "gpuplan catalog refresh --help")
    return name


def _place(provider: str, location: str) -> tuple[str, str]:
    m = _ZONE.match(location) if provider == "gcp" else None
    return (m.group(1), location) if m else (location, "")


def _family(name: str) -> str:
    return name.split(".")[0] if "." in name else name.rsplit("-", 1)[0]


def _spot_origin(row: InstanceType) -> str:
    """Where a row's spot price came from: its source, or, for a row an earlier refresh carried it into, that one."""
    return row.source.split(SPOT_FROM, 1)[1] if SPOT_FROM in row.source else row.source


SPOT_FROM = "; spot per zone: "
CHEAPEST_ZONE_ONLY = ("AWS spot of the cheapest zone only (gpuhunt keeps one spot price per region): "
                      "each zone's own spot price kept from the rows it replaces")
CHEAPEST_ZONE_LEFT_OUT = ("AWS spot of the cheapest zone only (gpuhunt keeps one spot price per region), "
                          "with no per-zone rows to keep: left out")
ZONES_COLLAPSED = frozenset({"aws"})  # gpuhunt providers whose spot price is the minimum over a region's zones


def rows_from_items(items: Iterable[Any], catalog: Catalog, *, source: str, read: date,
                    current: Iterable[InstanceType] = ()) -> MarketRows:
    """Catalog items (gpuhunt ``CatalogItem``s, or anything with their fields) as rows, grouped by provider and
    region. ``current``: the rows a refresh replaces (the shipped snapshot and earlier refreshes, no user files or
    discounts), whose per-zone AWS spot prices are kept and whose GPU per instance type settles PCIe or SXM."""
    current = list(current)
    out = MarketRows()
    matcher = GpuMatcher(catalog, [r for r in current if r.layer is Layer.SHIPPED])
    offers: dict[tuple[str, str, str], dict[str, Any]] = {}
    for it in items:
        if not it.gpu_count:
            continue
        provider = GPUPLAN_NAMES.get(it.provider, it.provider)
        kind, why = kind_of(it)
        if kind is Kind.LEFT_OUT:
            _count(out, provider, why)
            continue
        gpu = matcher.match(provider, it.instance_name, it.gpu_name, it.gpu_memory)
        if isinstance(gpu, str):
            memory = f" {it.gpu_memory:g} GB" if it.gpu_memory else ""
            out.unknown_gpus.setdefault(provider, set()).add(f"{it.gpu_name}{memory}")
            continue
        o = offers.setdefault((provider, it.instance_name, it.location), {
            "provider": provider, "item": it, "gpu": gpu, "hourly": None, "spot": None})
        price = Decimal(repr(it.price))
        mode = "spot" if kind is Kind.SPOT else "hourly"
        o[mode] = price if o[mode] is None else min(o[mode], price)
    zoned: dict[tuple[str, str, str], list[InstanceType]] = {}
    for r in current:
        if r.zone and r.spot is not None:
            zoned.setdefault((r.provider, r.instance_type.lower(), r.region), []).append(r)
    for (provider, name, location), o in sorted(offers.items()):
        it = o["item"]
        region, zone = _place(it.provider, location)
        match: GpuMatch = o["gpu"]
        row = InstanceType(
            provider=provider, instance_type=name, family=_family(name), gpu=match.key, gpu_count=float(it.gpu_count),
            vcpu=int(it.cpu), mem_gb=float(it.memory), region=region, zone=zone, zones=(zone,) if zone else (),
            currency=Currency.USD, hourly=o["hourly"], spot=o["spot"], stock=Stock.UNKNOWN, layer=Layer.CACHE,
            as_of_kind=AsOfKind.READ_DATE, source=source.format(provider=it.provider), as_of=read,
            notes=(f"gpuhunt {it.gpu_name} {it.gpu_memory:g} GB is {match.key} ({match.how}); "
                   "the price is gpuhunt's, read on as_of"))
        rows = [row]
        if it.provider in ZONES_COLLAPSED and o["spot"] is not None:
            rows = _per_zone(out, row, zoned.get((provider, name.lower(), region), []))
        out.rows.setdefault((provider, region), []).extend(rows)
    return out


def _per_zone(out: MarketRows, row: InstanceType, zones: list[InstanceType]) -> list[InstanceType]:
    """An AWS row whose spot price is gpuhunt's cheapest zone: one row per zone with that zone's own spot price
    from the rows it replaces, or the row without a spot price where there are none."""
    if not zones:
        _count(out, row.provider, CHEAPEST_ZONE_LEFT_OUT)
        return [row._replace(spot=None, notes=f"{row.notes}; gpuhunt's spot price {row.spot} is the cheapest "
                                                 "zone's, left out (no per-zone prices to keep)")]
    _count(out, row.provider, CHEAPEST_ZONE_ONLY)
    kept = []
    for z in sorted(zones, key=lambda r: r.zone):
        origin = _spot_origin(z)
        kept.append(row._replace(
            zone=z.zone, zones=(z.zone,), spot=z.spot, source=f"{row.source}{SPOT_FROM}{origin}",
            as_of=min(row.as_of, z.as_of),  # the older of the two prices' dates: the row is no newer than that
            notes=(f"{row.notes}; gpuhunt's spot price {row.spot} is the cheapest zone's, so each zone's own spot "
                   f"price ({z.spot} in {z.zone}) is kept from {origin} as of {z.as_of}, and --spot-price typical "
                   "still means the median zone")))
    return kept


def _count(out: MarketRows, provider: str, why: str) -> None:
    counts = out.left_out.setdefault(provider, {})
    counts[why] = counts.get(why, 0) + 1


def fetch(providers: list[str], catalog: Catalog, *, today: date | None = None,
          current: Iterable[InstanceType] = ()) -> MarketRows:
    """Load gpuhunt's catalogs of ``providers`` (gpuhunt or gpuplan names) and turn them into rows (``current``:
    the rows they replace, see :func:`rows_from_items`)."""
    hunt = _hunt()
    names = [gpuhunt_name(p) for p in dict.fromkeys(providers)]
    base = hunt._get_base_url()
    hc = hunt.Catalog(balance_resources=False, auto_reload=False)
    versions: dict[str, str] = {}
    items: list[Any] = []
    for name in names:
        try:
            version = hunt._get_latest_version(base, name)
            loaded = hc._load_provider(base, name, version)
        except Exception as exc:  # urllib, zip and CSV errors alike: nothing is written
            raise ProviderError(f"could not read gpuhunt's {name} catalog from {base}: {exc}",
                                "check the network (or GPUHUNT_CATALOG_URL); the cache was left as it was") from None
        versions[name] = version
        items += loaded.items if loaded is not None else []
    source = f"gpuhunt catalog {base}/{{provider}}/<version>/catalog.zip (versions: " + ", ".join(
        f"{k} {v}" for k, v in versions.items()) + ")"
    out = rows_from_items(items, catalog, source=source, read=today or date.today(), current=current)
    out.versions = versions
    if not out.rows:
        raise ProviderError(f"gpuhunt's catalogs of {', '.join(names)} hold no GPU offer gpuplan knows",
                            "the cache was left as it was")
    return out
