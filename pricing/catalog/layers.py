"""How a catalog's layers stack: shipped snapshot < refreshed cache < user files, and discounts over them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import date
from decimal import Decimal
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pricing.catalog.rows import PRICE_FIELDS, PSEUDO_REGIONS, InstanceType, Layer
from pricing.errors import InputError


class LayerInfo(BaseModel):
    """One source the catalog was built from, for 'which data did you use?'."""

    # Validator built on first validation: a plan from the kept (derived) data never validates one.
    model_config = ConfigDict(frozen=True, defer_build=True)

    layer: Layer
    origin: str  # "shipped snapshot", a cache file, a user file
    rows: int
    as_of: date | None = None


def cache_files(cache: Path) -> list[Path]:
    """Refreshed offers under ``cache``: ``<provider>/<region>.csv``, in a stable order."""
    return sorted(cache.glob("*/*.csv")) if cache.is_dir() else []


def merge_instances(layers: Sequence[Iterable[InstanceType]]) -> list[InstanceType]:
    """Stack layers: a later layer's rows for an instance type in a region replace every
    earlier row of that type and region, in every zone.

    So a user's region-wide row overrides the shipped per-zone rows, and a refresh's
    per-zone rows the shipped ones. A refreshed (cache) row of a real region also retires
    the earlier rows of the same provider and instance type in a pseudo-region such as
    ``cn-mainland``: the live per-zone rows are the better answer for that type.
    """
    tables = [layer if isinstance(layer, list) else list(layer) for layer in layers]
    lower: dict[str, str] = {}  # type names repeat: lower-case each once, and share the result

    def places(rows: list[InstanceType], *, zone: bool = False) -> Iterator[tuple[str, ...]]:
        """(provider, type lower-cased, region), and the zone if asked, of each row."""
        types = [r.instance_type for r in rows]
        lower.update((t, t.lower()) for t in set(types) - lower.keys())
        return zip([r.provider for r in rows], map(lower.__getitem__, types), [r.region for r in rows],
                   *([[r.zone for r in rows]] if zone else []))

    # A row stays unless a later layer has its type and region. The places of a later layer
    # are not collected (200k tuples for a 200k-row user file): the few rows before it are
    # looked up in it instead, with the loops in C.
    out: list[list[InstanceType]] = []
    for i, rows in enumerate(tables):
        earlier = {p for t in tables[:i] for p in places(t)}
        hit = earlier.intersection(places(rows)) if earlier else set()
        refreshed = {(p, t) for p, t, _ in places([r for r in rows if r.layer is Layer.CACHE])}
        if hit or refreshed:
            for k, kept in enumerate(out):
                out[k] = [r for r, place in zip(kept, places(kept), strict=True) if place not in hit and not (
                    r.layer is not Layer.CACHE and r.region in PSEUDO_REGIONS and place[:2] in refreshed)]
        # Within a layer a later row of the same type, region and zone replaces an earlier one in its
        # place: what a dict does when a key is set again.
        by_key = dict(zip(places(rows, zone=True), rows))
        out.append(rows if len(by_key) == len(rows) else list(by_key.values()))
    return [r for kept in out for r in kept]


def check_discount(provider: str, factor: Decimal) -> Decimal:
    """A discount factor is a fraction of the listed price: above 0, at most 1 (no discount)."""
    if not factor.is_finite() or not 0 < factor <= 1:
        raise InputError(f"discount factor for {provider} must be above 0 and at most 1, got {factor}",
                         "0.85 means 15% off the listed prices")
    return factor


def percent_off(factor: Decimal) -> str:
    return f"{((1 - factor) * 100).normalize():f}% off"


def discount_note(provider: str, factor: Decimal) -> str:
    """What a discounted row's notes say."""
    return f"enterprise discount {provider}={factor} applied ({percent_off(factor)} the listed price)"


def discounted(rows: Iterable[InstanceType], discounts: Mapping[str, Decimal],
               note: Callable[[str, str], str]) -> list[InstanceType]:
    """``rows`` with every price of each provider in ``discounts`` times its factor, and ``note(provider, notes)``
    as its notes; other providers' rows as they are."""
    out: list[InstanceType] = []
    for row in rows:
        factor = discounts.get(row.provider)
        if factor is None:
            out.append(row)
            continue
        prices = {f: v * factor for f in PRICE_FIELDS if (v := getattr(row, f)) is not None}
        out.append(row._replace(**prices, notes=note(row.provider, row.notes)))
    return out
