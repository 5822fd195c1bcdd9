"""AWS EC2 GPU instances (p3, p3dn, p4d, p4de, p5, g4dn, g5, g6), prices in USD."""

from __future__ import annotations

from decimal import Decimal

from pricing.billing import BillingMode
from pricing.catalog import Catalog, ProviderName
from providers.base import Offer, Provider, Quote, instance_offer, rule_quote


class AwsProvider(Provider):
    name = ProviderName.AWS

    def list_offers(self, catalog: Catalog) -> list[Offer]:
        return [
            instance_offer(inst, catalog.gpus[inst.gpu].interconnect, {})
            for inst in catalog.instances
            if inst.provider is self.name
        ]

    def quote(self, offer: Offer, mode: BillingMode, wall_hours: Decimal, *, hours_per_month: Decimal) -> Quote:
        return rule_quote(offer, mode, wall_hours, hours_per_month=hours_per_month)
