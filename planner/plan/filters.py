"""Which offers a plan's constraints keep before any costing, and why the others are dropped."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from decimal import Decimal

from pricing.billing import BillingMode
from pricing.catalog import LOCAL, UNKNOWN_REGION, GpuSpec, Stock
from pricing.errors import InputError
from providers.base import Offer
from providers.bulk import OfferFacts
from providers.local import BASEBOARD_NOTE, needs_baseboard
from planner.plan.model import Constraints, ExclusionRule

# The filters read only what an offer's facts name too: the ranking pass filters 200k offers by their facts.
OfferLike = Offer | OfferFacts


def region_matches(offer: OfferLike, regions: tuple[str, ...]) -> bool:
    """True when the offer's region or one of its zones starts with one of ``regions``."""
    return place_matches(offer.region, offer.zones, regions)


def place_matches(region: str, zones: tuple[str, ...], regions: tuple[str, ...]) -> bool:
    names = [region.lower(), *(z.lower() for z in zones)]
    return any(n.startswith(r.lower()) for r in regions for n in names)


Place = tuple[str, str, tuple[str, ...]]  # an offer's provider, region and zones


def places(provider: str, offers: Iterable[OfferLike]) -> Iterator[Place]:
    """Each of ``provider``'s ``offers`` (or their facts: then no offer is built) as a :data:`Place`."""
    for o in offers:
        yield provider, o.region, o.zones


def check_regions(regions: tuple[str, ...] | None, offered: Iterable[Place]) -> None:
    """Refuse a region or zone prefix that no cloud offer among ``offered`` (see :func:`places`) matches.

    A misspelt region would otherwise drop every cloud offer and leave only the cards to
    buy (which have no region), quietly answering another question.
    """
    if not regions:
        return
    cloud = [p for p in offered if p[0] != LOCAL]
    if not cloud:
        raise InputError("--region filters cloud offers, and no cloud provider is selected",
                         "drop --region, or add a cloud with --provider")
    regions_known = sorted({region for _, region, _ in cloud} - {UNKNOWN_REGION})
    zones_known = sorted({z for _, _, zones in cloud for z in zones})
    for r in regions:
        if any(place_matches(region, zones, (r,)) for _, region, zones in cloud):
            continue
        # a name both a region and a zone (Lambda's us-east-1) is suggested once
        close = difflib.get_close_matches(r.lower(), list(dict.fromkeys(regions_known + zones_known)), n=3, cutoff=0.0)
        providers = ", ".join(dict.fromkeys(p for p, _, _ in cloud))
        zones = f"; a zone prefix such as {zones_known[0]} works too" if zones_known else ""
        raise InputError(f"--region {r!r} matches no offer of {providers}; closest known: {', '.join(close)}",
                         f"regions: {', '.join(regions_known)}{zones}")


def offer_filter(offer: OfferLike, spec: GpuSpec, c: Constraints, *,
                 priced: bool = True) -> tuple[ExclusionRule, str] | None:
    """Why ``c`` excludes ``offer`` before any costing, or None; ``priced=False`` keeps unpriced offers."""
    vram = spec.vram_gb * min(offer.gpu_count, 1)
    if c.gpus is not None and offer.gpu not in c.gpus:
        return ExclusionRule.GPU, "GPU not selected (--gpu)"
    if c.min_vram_gb is not None and vram < c.min_vram_gb:
        return ExclusionRule.MIN_VRAM, f"{vram:g} GB VRAM per GPU is below --min-vram {c.min_vram_gb:g}"
    if c.max_gpus is not None and offer.gpu_count > c.max_gpus:
        return ExclusionRule.MAX_GPUS, f"{offer.gpu_count:g} GPUs is above --max-gpus {c.max_gpus:g}"
    if c.regions and offer.region != "local" and not region_matches(offer, c.regions):
        return ExclusionRule.REGION, "not in the selected regions (--region)"
    if not priced:
        return None
    if offer.stock is Stock.SOLD_OUT:
        zones = ", ".join(offer.sold_out_zones)
        return ExclusionRule.SOLD_OUT, f"sold out in every zone of {offer.region} ({zones}; live data of {offer.as_of})"
    if not offer.rates:
        return ExclusionRule.NO_PRICE, "no public price in the catalog"
    if c.billing is not None and not c.billing & offer.rates.keys():
        wanted = ", ".join(sorted(c.billing))
        return ExclusionRule.NO_PRICE, f"no {wanted} price in the catalog"
    return None


def unwhole_build(offer: OfferLike) -> tuple[ExclusionRule, str] | None:
    """Why a training plan cannot rank buying ``offer``: an SXM module needs a baseboard server no price covers
    (``plan --serve`` and ``tco --serve`` take that server's price with --host-price and check it themselves)."""
    if offer.region == LOCAL and needs_baseboard(offer.gpu):
        return ExclusionRule.NO_PRICE, f"{BASEBOARD_NOTE}: the build cannot be costed whole"
    return None


def exclusion_zone(offer: OfferLike, mode: BillingMode | None) -> str | None:
    """The zone an exclusion is about, where the data says: the rate's zone, else the offer's only zone."""
    return zone_of(offer.rate_zones, offer.zones, mode)


def zone_of(rate_zones: dict[BillingMode, str], zones: tuple[str, ...], mode: BillingMode | None) -> str | None:
    if mode is not None and (zone := rate_zones.get(mode)):
        return zone
    return zones[0] if len(zones) == 1 else None


def host_note(offer: Offer, spec: GpuSpec) -> str | None:
    if offer.mem_gb is None:
        return None
    vram = spec.vram_gb * offer.gpu_count
    if offer.mem_gb < vram:
        return f"host RAM {offer.mem_gb:g} GB is below total VRAM {vram:g} GB: data loading may starve the GPUs"
    return None


def past_deadline(wall: Decimal, n: int, deadline: Decimal | None) -> tuple[ExclusionRule, str] | None:
    if deadline is None or wall <= deadline:
        return None
    more = f" on {n} nodes" if n > 1 else ""
    return ExclusionRule.DEADLINE, f"takes {wall:.1f} h{more}, past the {deadline:g} h deadline"
