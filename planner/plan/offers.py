"""``gpuplan offers``: every offer with its price per instance-hour, GPU-hour and GB-of-VRAM-hour.

Prices are converted to the display currency with the settings' exchange rates; the
native rates and their source travel with each row. The rows are the JSON contract of
``offers --json``; ``offers -o csv`` writes the catalog's own CSV shape instead, so the
output can be edited and fed back with ``--catalog FILE``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from typing import Any

from pricing.billing import BillingMode
from pricing.catalog import Catalog, InstanceType
from providers.base import Offer, Provider
from providers.registry import all_providers
from planner.plan.filters import check_regions, offer_filter, places
from planner.plan.model import Constraints
from pricing.money import decimal_json
from planner.plan.rates import offer_table
from planner.settings import Settings

_BIG = Decimal("1e30")


def _allowed(catalog: Catalog, c: Constraints, s: Settings,
             read: Callable[[Provider], Sequence[Any]]) -> Iterator[tuple[str, Any]]:
    """(provider name, offer) for each offer of the selected providers that the constraints let through, the
    offers as ``read`` gives them (built, or only their facts); a region no offer has is refused first."""
    selected = [p for p in all_providers(catalog, spot_pricing=s.spot_price)
                if c.providers is None or p.name in c.providers]
    listed = [(p.name, read(p)) for p in selected]  # read once, gone through twice
    check_regions(c.regions, (place for name, offers in listed for place in places(name, offers)))
    for name, offers in listed:
        for o in offers:
            if offer_filter(o, catalog.gpus[o.gpu], c, priced=False) is None:
                yield name, o


def offer_rows(catalog: Catalog, c: Constraints, s: Settings) -> list[dict[str, Any]]:
    """Offers the constraints allow, cheapest per GPU-hour first (cards by price)."""
    fxt = s.fx_table()
    items: list[dict[str, Any]] = []
    for _, o in _allowed(catalog, c, s, lambda p: p.list_offers()):
        spec = catalog.gpus[o.gpu]
        vram = spec.vram_gb * o.gpu_count

        def shown(mode: BillingMode, per: float = 1.0, _o: Offer = o) -> Decimal | None:
            rate = _o.rates.get(mode)
            if rate is None:
                return None
            # what fxt.convert(Money(rate)) comes to, without two Money objects per price of 50k offers
            return rate * fxt.rate(_o.currency, s.currency) / Decimal(repr(per))

        items.append({
            "provider": o.provider, "offer": o.name, "region": o.region, "zones": list(o.zones),
            "gpu": o.gpu, "gpu_count": o.gpu_count,
            "vram_gb_total": vram, "vcpu": o.vcpu, "mem_gb": o.mem_gb, "native_currency": o.currency,
            "hourly": shown(BillingMode.HOURLY), "per_gpu_hour": shown(BillingMode.HOURLY, o.gpu_count),
            "per_gb_vram_hour": shown(BillingMode.HOURLY, vram), "monthly": shown(BillingMode.MONTHLY),
            "spot": shown(BillingMode.SPOT), "spot_estimated": BillingMode.SPOT in o.estimated,
            "reserved_1y": shown(BillingMode.RESERVED_1Y), "reserved_3y": shown(BillingMode.RESERVED_3Y),
            "buy": shown(BillingMode.BUY), "native_rates": {m.value: decimal_json(r) for m, r in o.rates.items()},
            "rate_zones": {m.value: z for m, z in o.rate_zones.items()},
            "sold_out_zones": list(o.sold_out_zones), "live": o.live,
            "source": o.source, "as_of": o.as_of,
        })
    items.sort(key=lambda i: (i["per_gpu_hour"] if i["per_gpu_hour"] is not None else _BIG, i["buy"] or _BIG))
    return items


def offers_payload(items: list[dict[str, Any]], s: Settings) -> dict[str, Any]:
    """The JSON contract of ``gpuplan offers``."""
    return {"currency": s.currency, "fx": [r.label() for r in s.fx_table().used()], "offers": items}


def catalog_rows(catalog: Catalog, c: Constraints, s: Settings) -> Iterator[InstanceType]:
    """The catalog rows behind the cloud offers the constraints allow, for ``offers -o csv`` (the ``--catalog``
    shape), in catalog order.

    The same filter as :func:`offer_rows`, without its table: each offer's facts are judged (a 200k-row
    catalog's offers and their rows of prices, kept as dicts, held 300 MB more).
    """
    if c.gpus is None and c.min_vram_gb is None and c.max_gpus is None and not c.regions:
        # nothing that reads an offer: every row of the selected providers passes, and no offer is looked at
        return (r for r in catalog.instances if c.providers is None or r.provider in c.providers)
    # what the filter reads of an offer (GPU, count, region) is in its facts: no offer is built for a region-wide row
    wanted = {(name, f.name, f.region) for name, f in _allowed(catalog, c, s, lambda p: list(offer_table(p).facts()))}
    return (r for r in catalog.instances if (r.provider, r.instance_type, r.region) in wanted)


GROUP_KEYS = ("gpu", "provider")


def group_offers(items: list[dict[str, Any]], by: str) -> list[dict[str, Any]]:
    """One row per GPU (or provider), as ``dstack offer --group-by`` shows a market too wide to read offer by offer:
    how many offers, from which providers, the cheapest per GPU-hour on demand and on spot (by the hour, per GPU,
    in the display currency) and the offer that has it, and the cheapest card to buy; cheapest group first. \
``items`` are :func:`offer_rows`."""
    if by not in GROUP_KEYS:
        from pricing.errors import InputError

        raise InputError(f"unknown --group-by {by!r}", f"use one of {', '.join(GROUP_KEYS)}")
    groups: dict[str, dict[str, Any]] = {}
    for i in items:
        g = groups.setdefault(i[by], {by: i[by], "offers": 0, "providers": set(), "gpus": set(),
                                      "cheapest_per_gpu_hour": None, "cheapest_offer": None,
                                      "cheapest_spot_per_gpu_hour": None, "cheapest_spot_offer": None,
                                      "cheapest_card": None})
        g["offers"] += 1
        g["providers"].add(i["provider"])
        g["gpus"].add(i["gpu"])
        per = i["per_gpu_hour"]
        if per is not None and (g["cheapest_per_gpu_hour"] is None or per < g["cheapest_per_gpu_hour"]):
            g["cheapest_per_gpu_hour"], g["cheapest_offer"] = per, f"{i['provider']} {i['offer']} {i['region']}"
        if i["buy"] is not None and (g["cheapest_card"] is None or i["buy"] < g["cheapest_card"]):
            g["cheapest_card"] = i["buy"]
        if i["spot"] is not None and not i["spot_estimated"]:
            spot = i["spot"] / Decimal(repr(i["gpu_count"]))
            if g["cheapest_spot_per_gpu_hour"] is None or spot < g["cheapest_spot_per_gpu_hour"]:
                g["cheapest_spot_per_gpu_hour"] = spot
                g["cheapest_spot_offer"] = f"{i['provider']} {i['offer']} {i['region']}"
    out = [{**g, "providers": sorted(g["providers"]), "gpus": sorted(g["gpus"])} for g in groups.values()]
    out.sort(key=lambda g: (g["cheapest_per_gpu_hour"] if g["cheapest_per_gpu_hour"] is not None else _BIG, g[by]))
    return out
