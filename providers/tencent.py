"""Tencent Cloud CVM GPU instances (GN6/GN7/GN8/GN10X/GN10Xp/GT4/GI3X/PNV4), prices in CNY."""

from __future__ import annotations

from decimal import Decimal

from pricing.billing import BillingMode, rule_for
from pricing.catalog import Catalog, ProviderName
from providers.base import Offer, Provider, Quote, instance_offer, rule_quote


class TencentProvider(Provider):
    name = ProviderName.TENCENT

    def list_offers(self, catalog: Catalog) -> list[Offer]:
        spot_rule = rule_for(self.name.value, BillingMode.SPOT)
        fraction = spot_rule.spot_fraction_estimate if spot_rule else None
        offers = []
        for inst in catalog.instances:
            if inst.provider is not self.name:
                continue
            extra: dict[BillingMode, Decimal] = {}
            if fraction is not None and inst.hourly is not None and inst.spot is None:
                extra[BillingMode.SPOT] = inst.hourly * fraction
            offers.append(instance_offer(inst, catalog.gpus[inst.gpu].interconnect, extra))
        return offers

    def quote(self, offer: Offer, mode: BillingMode, wall_hours: Decimal, *, hours_per_month: Decimal) -> Quote:
        return rule_quote(offer, mode, wall_hours, hours_per_month=hours_per_month)
