"""Find the offer for an instance type in a region or zone: the one rule ``launch`` and ``tco`` share.

An instance type is named case-insensitively, of one provider (given, or the one whose
catalog rows carry the name). A place is a region, a zone (whose region is read off its
name), or with ``prefix`` a region prefix as ``plan --region`` takes one. A region matches
a row priced for it; failing that, a row priced for a pseudo-region (``cn-mainland``)
that lists the region's zones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pricing.catalog import PSEUDO_REGIONS, Catalog
from pricing.errors import InputError
from providers.base import Offer
from providers.registry import get_provider


def region_of_zone(zone: str) -> str:
    """ap-guangzhou-3 -> ap-guangzhou (Tencent); us-east-1a -> us-east-1 (AWS); cn-shanghai-l -> cn-shanghai
    (Alibaba); anything else is its own region."""
    if re.fullmatch(r"[a-z]+-[a-z]+-(\d+|[a-z])", zone):
        return zone.rsplit("-", 1)[0]
    return zone.rstrip("abcdefghijklmnopqrstuvwxyz") if re.search(r"\d[a-z]$", zone) else zone


@dataclass(frozen=True)
class OfferMatch:
    """The offer found, where it was found, and the zones of that place the catalog lists for it."""

    offer: Offer
    region: str  # the region asked for (the offer's own when none was asked or a prefix matched)
    zones: tuple[str, ...]  # the offer's zones in ``region``; empty where the catalog lists none
    offers: tuple[Offer, ...]  # every offer of the type, in every region


def offers_of_type(catalog: Catalog, instance_type: str, provider: str | None = None) -> list[Offer]:
    """Every offer of ``instance_type`` (any case), of ``provider`` or else of the provider whose rows name it.

    An unknown name raises with the closest known names; a known name of another provider
    says so and where to list the provider's own.
    """
    if provider is None:
        provider = catalog.instance(instance_type)[0].provider  # unknown names raise with suggestions
    wanted = instance_type.strip().lower()
    offers = [o for o in get_provider(provider, catalog).list_offers() if o.name.lower() == wanted]
    if not offers:
        catalog.instance(instance_type)  # unknown names raise with suggestions
        raise InputError(f"{instance_type} is not a {provider} instance type",
                         f"`gpuplan offers --provider {provider}` lists them")
    return offers


def _regions(offers: list[Offer]) -> list[str]:
    """Every real region the offers are sold in: their own, and for pseudo-region rows their zones' regions.

    A real region's zones add nothing, and AWS rows name theirs by zone id (use1-az1), which is no region.
    """
    return sorted({o.region for o in offers if o.region not in PSEUDO_REGIONS}
                  | {region_of_zone(z) for o in offers if o.region in PSEUDO_REGIONS for z in o.zones})


def find_offer(catalog: Catalog, instance_type: str, *, provider: str | None = None, region: str | None = None,
               zone: str | None = None, prefix: bool = False) -> OfferMatch:
    """The offer of ``instance_type`` in ``region`` (or ``zone``'s region), by the rule in the module docstring.

    With no place, the type must be sold in one real region only; with ``prefix``, a region
    that matches no row exactly may be the start of a row's region or zone name (the first
    such row wins, as ``plan --region`` would keep it). A ``zone`` must be one the catalog
    lists for the offer, where it lists zones named like the region's.
    """
    offers = offers_of_type(catalog, instance_type, provider)
    place = region or (_region_of_listed_zone(offers, zone) if zone else None)
    if place is None:
        real = [o for o in offers if o.region not in PSEUDO_REGIONS]
        everywhere = [o for o in offers if o.region == "global"]
        if not real and len(everywhere) == 1:
            # one price in every region (Lambda): the launch picks a region with capacity and says which
            return OfferMatch(offer=everywhere[0], region="global", zones=(), offers=tuple(offers))
        if len(real) != 1:
            raise InputError(f"say where to launch {instance_type}: give --region or --zone",
                             f"known: {', '.join(_regions(offers)[:8])}")
        offer, place = real[0], real[0].region
    else:
        found = _in_region(offers, place, prefix=prefix)
        if found is None:
            known = _regions(offers)
            # a row priced for a whole market names no region: the provider's own listing does
            raise InputError(f"{instance_type} is not sold in {place} as far as the catalog knows",
                             f"its regions: {', '.join(known)}" if known else
                             f"the shipped catalog names no region for it: `gpuplan catalog refresh --provider "
                             f"{offers[0].provider} --region {place}` reads where it is sold now")
        offer, place = found
    zones = tuple(z for z in offer.zones if z.startswith(place)) if offer.zones else ()
    # Only zones named like the region's can be checked: the shipped AWS rows carry AZ ids
    # (use1-az1), which an account's zone names (us-east-1a) do not match.
    if zone is not None and zones and zone not in zones:
        raise InputError(f"{offer.name} is not sold in zone {zone} as far as the catalog knows",
                         f"zones: {', '.join(zones)}")
    return OfferMatch(offer=offer, region=place, zones=zones, offers=tuple(offers))


def _region_of_listed_zone(offers: list[Offer], zone: str) -> str:
    """The region of an offer that lists ``zone`` (AWS zone ids, use1-az5, name no region), else by its name."""
    for o in offers:
        if zone in o.zones and o.region not in PSEUDO_REGIONS:
            return o.region
    return region_of_zone(zone)


def _in_region(offers: list[Offer], region: str, *, prefix: bool) -> tuple[Offer, str] | None:
    """The offer sold in ``region`` and the region it is sold in, or None."""
    exact = [o for o in offers if o.region == region]
    if exact:
        return exact[0], region
    # a shipped row priced for a pseudo-region (cn-mainland) that lists the region's zones
    covering = [o for o in offers if o.region in PSEUDO_REGIONS and any(z.startswith(region) for z in o.zones)]
    if covering:
        return covering[0], region
    if prefix:
        wanted = region.lower()
        for o in offers:
            if any(n.lower().startswith(wanted) for n in (o.region, *o.zones)):
                return o, o.region
    return None
