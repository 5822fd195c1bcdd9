"""``gpuplan catalog refresh``: read a provider's live prices into the user cache.

The cache is one CSV per provider and region in the catalog's own shape
(``<cache>/<provider>/<region>.csv``, the cache folder given by the caller), written atomically, so the next
``Catalog.load`` layers it over the shipped snapshot.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from pricing.catalog import Catalog, Stock, write_instances
from pricing.errors import InputError, ProviderError
from providers.registry import price_fetcher


class RefreshResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    provider: str
    region: str
    path: Path
    rows: int
    instance_types: int
    zones: tuple[str, ...]
    sold_out: int
    as_of: date | None


def cache_path(cache: Path, provider: str, region: str) -> Path:
    """Where ``provider``'s offers in ``region`` are kept under the catalog cache folder ``cache``."""
    if not region or "/" in region or region.startswith("."):
        raise InputError(f"bad region {region!r}", "give a region name such as ap-guangzhou or us-east-1")
    return cache / provider / f"{region}.csv"


def refresh(provider: str, region: str, catalog: Catalog, *, cache: Path, **options: Any) -> RefreshResult:
    """Fetch ``provider``'s offers in ``region`` and store them under ``cache``; nothing is written on failure."""
    path = cache_path(cache, provider, region)
    rows = price_fetcher(provider, **options).fetch(region, catalog)
    if not rows:
        raise ProviderError(f"{provider} returned no GPU offers for {region}",
                            "check the region name; the cache was left as it was")
    write_instances(path, rows)
    return RefreshResult(
        provider=provider, region=region, path=path, rows=len(rows),
        instance_types=len({r.instance_type for r in rows}),
        zones=tuple(sorted({r.zone for r in rows if r.zone})),
        sold_out=sum(r.stock is Stock.SOLD_OUT for r in rows),
        as_of=max((r.as_of for r in rows), default=None),
    )
