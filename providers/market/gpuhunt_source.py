"""``gpuplan catalog refresh --source gpuhunt``: gpuhunt's catalogs as rows of the refreshed cache layer.

gpuhunt publishes one catalog per cloud (``{base}/{provider}/version``, then
``{base}/{provider}/{version}/catalog.zip``; ``base`` is ``GPUHUNT_CATALOG_URL`` when set) with one
item per instance type and location, spot prices as separate items. Each (type, location) becomes one
row with its on-demand and spot price. A location that is a zone (GCP's ``us-central1-a``) is kept as
the row's zone under its region, as the AWS per-zone rows are.

GPU names: gpuhunt gives a bare model name and the memory per GPU (``A100``, 80). The catalog's own
alias for ``<name>-<memory>gb``, else for ``<name>``, names the key when that GPU has the memory
(within 10%: clouds report usable memory); anything else is reported and left out, never guessed.
The catalog's alias of a bare name is its default form factor (``a100`` is the SXM4 40 GB), which is
what the clouds' multi-GPU types carry; the rows say so.

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

# gpuhunt's provider names that gpuplan spells otherwise (SkyPilot's and the registry's "lambda").
GPUPLAN_NAMES = {"lambdalabs": "lambda"}
GPUHUNT_NAMES = {v: k for k, v in GPUPLAN_NAMES.items()}
MEMORY_TOLERANCE = 0.10
_ZONE = re.compile(r"^([a-z]+-[a-z]+\d+)-[a-z]$")  # GCP zones: us-central1-a


@dataclass
class MarketRows:
    """What a gpuhunt read gives: rows by (gpuplan provider, region), and what was left out and why."""

    rows: dict[tuple[str, str], list[InstanceType]] = field(default_factory=dict)
    unknown_gpus: dict[str, set[str]] = field(default_factory=dict)  # provider -> "name memory GB"
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


def gpu_key(catalog: Catalog, name: str | None, memory_gb: float | None) -> str | None:
    if not name or not memory_gb:
        return None
    for candidate in (f"{name}-{memory_gb:g}gb", name):
        try:
            spec = catalog.gpu(candidate)
        except UnknownNameError:
            continue
        if abs(spec.vram_gb - memory_gb) <= MEMORY_TOLERANCE * spec.vram_gb:
            return spec.key
    return None


def _place(provider: str, location: str) -> tuple[str, str]:
    m = _ZONE.match(location) if provider == "gcp" else None
    return (m.group(1), location) if m else (location, "")


def rows_from_items(items: Iterable[Any], catalog: Catalog, *, source: str, read: date) -> MarketRows:
    """Catalog items (gpuhunt ``CatalogItem``s, or anything with their fields) as rows, grouped by provider and region."""
    out = MarketRows()
    offers: dict[tuple[str, str, str], dict[str, Any]] = {}
    for it in items:
        if not it.gpu_count:
            continue
        provider = GPUPLAN_NAMES.get(it.provider, it.provider)
        key = gpu_key(catalog, it.gpu_name, it.gpu_memory)
        if key is None:
            out.unknown_gpus.setdefault(provider, set()).add(f"{it.gpu_name} {it.gpu_memory:g} GB")
            continue
        o = offers.setdefault((provider, it.instance_name, it.location), {
            "provider": provider, "item": it, "gpu": key, "hourly": None, "spot": None})
        price = Decimal(repr(it.price))
        if it.spot:
            o["spot"] = price if o["spot"] is None else min(o["spot"], price)
        else:
            o["hourly"] = price if o["hourly"] is None else min(o["hourly"], price)
    for (provider, name, location), o in sorted(offers.items()):
        it = o["item"]
        region, zone = _place(it.provider, location)
        row = InstanceType(
            provider=provider, instance_type=name, family=name.split(".")[0] if "." in name else name.rsplit("-", 1)[0],
            gpu=o["gpu"], gpu_count=float(it.gpu_count), vcpu=int(it.cpu), mem_gb=float(it.memory), region=region,
            zone=zone, zones=(zone,) if zone else (), currency=Currency.USD, hourly=o["hourly"], spot=o["spot"],
            stock=Stock.UNKNOWN, layer=Layer.CACHE, as_of_kind=AsOfKind.READ_DATE, source=source.format(provider=it.provider),
            as_of=read,
            notes=(f"gpuhunt {it.gpu_name} {it.gpu_memory:g} GB mapped to {o['gpu']} by the catalog's alias; "
                   "the price is gpuhunt's, read on as_of"))
        out.rows.setdefault((provider, region), []).append(row)
    return out


def fetch(providers: list[str], catalog: Catalog, *, today: date | None = None) -> MarketRows:
    """Load gpuhunt's catalogs of ``providers`` (gpuhunt or gpuplan names) and turn them into rows."""
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
    out = rows_from_items(items, catalog, source=source, read=today or date.today())
    out.versions = versions
    if not out.rows:
        raise ProviderError(f"gpuhunt's catalogs of {', '.join(names)} hold no GPU offer gpuplan knows",
                            "the cache was left as it was")
    return out
