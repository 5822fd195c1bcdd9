"""``gpuplan catalog refresh``: read a provider's live prices into the user cache.

The cache is one CSV per provider and region in the catalog's own shape
(``<cache>/<provider>/<region>.csv``, the cache folder given by the caller), written atomically, so the next
``Catalog.load`` layers it over the shipped snapshot.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from pricing.catalog import Catalog, Stock, write_instances
from pricing.errors import InputError, ProviderError
from pricing.files import write_private
from providers.registry import price_fetcher

if TYPE_CHECKING:
    from providers.market.gpuhunt_source import MarketRows


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
    endpoint: str | None = None  # the override the prices were read through (a fake, a proxy), None: the cloud's
    dropped: tuple[str, ...] = ()  # rows left out, each with why (a price or count out of bounds)


def cache_path(cache: Path, provider: str, region: str) -> Path:
    """Where ``provider``'s offers in ``region`` are kept under the catalog cache folder ``cache``."""
    if not region or "/" in region or region.startswith("."):
        raise InputError(f"bad region {region!r}", "give a region name such as ap-guangzhou or us-east-1")
    return cache / provider / f"{region}.csv"


def refresh(provider: str, region: str, catalog: Catalog, *, cache: Path, endpoint: str | None = None,
            **options: Any) -> RefreshResult:
    """Fetch ``provider``'s offers in ``region`` and store them under ``cache``; nothing is written on failure.

    ``endpoint`` names where the caller's environment sends the cloud's API (``VAR=url``; None: the cloud's own):
    it is recorded beside the rows, so prices from a fake or a proxy are never taken for the cloud's.
    """
    path = cache_path(cache, provider, region)
    rows = price_fetcher(provider, **options).fetch(region, catalog)
    if not rows:
        raise ProviderError(f"{provider} returned no GPU offers for {region}",
                            "check the region name; the cache was left as it was")
    return _store(path, provider, region, rows, {"endpoint": endpoint})


def _store(path: Path, provider: str, region: str, rows: list[Any], meta: dict[str, Any]) -> RefreshResult:
    """Write ``rows`` to ``path`` and, beside them, where they were read (``meta``, with the time): prices from a
    test endpoint would otherwise feed every later plan unseen. Rows are first held to a user catalog's bounds."""
    from providers.refresh_checks import checked_rows

    rows, dropped = checked_rows(rows)
    if not rows:
        raise ProviderError(f"{provider} answered no usable GPU offer for {region}: " + "; ".join(dropped[:5]),
                            "the cache was left as it was; try again later")
    write_instances(path, rows)
    write_private(meta_path(path),
                  json.dumps({**meta, "refreshed_at": datetime.now(UTC).isoformat(timespec="seconds")}))
    return RefreshResult(
        provider=provider, region=region, path=path, rows=len(rows), endpoint=meta.get("endpoint"),
        dropped=tuple(dropped),
        instance_types=len({r.instance_type for r in rows}),
        zones=tuple(sorted({r.zone for r in rows if r.zone})),
        sold_out=sum(r.stock is Stock.SOLD_OUT for r in rows),
        as_of=max((r.as_of for r in rows), default=None),
    )


def meta_path(csv: Path) -> Path:
    """The record of where a cache file's prices were read (``<region>.json`` beside ``<region>.csv``)."""
    return csv.with_suffix(".json")


def cache_origin(csv: Path) -> dict[str, Any]:
    """What the refresh that wrote ``csv`` recorded: ``endpoint`` (None: the cloud's own API) and ``refreshed_at``;
    empty for a file written before gpuplan kept the record, or one it cannot read."""
    try:
        meta = json.loads(meta_path(csv).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def clear(cache: Path, provider: str | None = None, regions: tuple[str, ...] = ()) -> list[Path]:
    """Remove refreshed prices (every provider's, or one's; every region, or some): the shipped snapshot is left."""
    removed = []
    for csv in sorted(cache.glob("*/*.csv")) if cache.is_dir() else []:
        if (provider and csv.parent.name != provider) or (regions and csv.stem not in regions):
            continue
        for f in (csv, meta_path(csv)):
            if f.exists():
                f.unlink()
                removed.append(f)
    return removed


def refresh_market(providers: list[str], catalog: Catalog, *, cache: Path, regions: tuple[str, ...] = (),
                   endpoint: str | None = None) -> tuple[list[RefreshResult], MarketRows]:
    """gpuhunt's catalogs of ``providers`` into the cache, one file per provider and region (only ``regions``
    when given); (what was written, what was read: the GPU names per provider that no catalog key matched and the
    items left out, by reason). The rows it replaces are the shipped snapshot's and earlier refreshes' (no user
    files, no discounts: a discounted price must not be written back as a list price)."""
    from providers.market.gpuhunt_source import fetch

    current = Catalog.load(cache=cache).instances
    market = fetch(providers, catalog, current=current)
    picked = {k: v for k, v in market.rows.items() if not regions or any(k[1].startswith(r) for r in regions)}
    if not picked:
        raise ProviderError(f"gpuhunt's catalogs have no offer in {', '.join(regions)}",
                            "check the region names; the cache was left as it was")
    meta = {"endpoint": endpoint, "source": "gpuhunt", "versions": market.versions}
    results = [_store(cache_path(cache, provider, region), provider, region, rows, meta)
               for (provider, region), rows in sorted(picked.items())]
    return results, market
