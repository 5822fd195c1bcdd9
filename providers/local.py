"""Buying cards and running them yourself: the purchase side of every comparison.

An offer is N cards of one kind (1, 2, 4 or 8, the common workstation and server
builds), new or used, at the newest sourced price. The quote for a job is the cards'
price plus the energy the cards draw at TDP for the job's wall time; the host, resale
and utilisation over years are the TCO report's business (``gpuplan tco``).
"""

from __future__ import annotations

from decimal import Decimal

from pricing.billing import BillingMode
from pricing.catalog import LOCAL, CardPrice, Catalog, ElectricityPrice
from pricing.errors import PriceMissingError
from pricing.line_items import LineItem
from pricing.money import Money
from pricing.notes import public_note
from providers.base import Offer, Provider, Quote

BUILD_SIZES = (1, 2, 4, 8)
BASEBOARD_NOTE = "SXM module: needs an SXM baseboard (an HGX/DGX-class server), not priced here"


def needs_baseboard(gpu: str) -> bool:
    """An SXM module mounts only on its baseboard (an HGX/DGX-class server): a part the catalog has no price for."""
    return "SXM" in gpu


def newest_prices(catalog: Catalog) -> dict[tuple[str, str], CardPrice]:
    """The newest price per (gpu, condition); ties go to the lower price."""
    best: dict[tuple[str, str], CardPrice] = {}
    for card in catalog.cards:
        key = (card.gpu, card.condition)
        cur = best.get(key)
        if cur is None or (card.as_of, -card.price) > (cur.as_of, -cur.price):
            best[key] = card
    return best


class LocalProvider(Provider):
    name = LOCAL

    def __init__(self, catalog: Catalog, electricity: ElectricityPrice | None = None) -> None:
        super().__init__(catalog)
        self.electricity = electricity

    def list_offers(self) -> list[Offer]:
        offers = []
        for (gpu, condition), card in sorted(newest_prices(self.catalog).items()):
            spec = self.catalog.gpus[gpu]
            for n in BUILD_SIZES:
                offers.append(
                    Offer(
                        provider=self.name,
                        name=f"{n}x {gpu} ({condition})",
                        family=gpu,
                        region="local",
                        gpu=gpu,
                        gpu_count=float(n),
                        interconnect=spec.interconnect.among(n),
                        currency=card.currency,
                        rates={BillingMode.BUY: card.price},
                        source=card.source,
                        as_of=card.as_of,
                        # the card's research trail stays in cards.csv: users read only its public part
                        notes="; ".join(n for n in (BASEBOARD_NOTE if needs_baseboard(gpu) else "",
                                                    public_note(card.notes)) if n),
                    )
                )
        return offers

    def bills(self, mode: BillingMode) -> bool:
        return mode is BillingMode.BUY

    def quote(self, offer: Offer, mode: BillingMode, wall_hours: Decimal, *, hours_per_month: Decimal) -> Quote:
        if mode is not BillingMode.BUY or BillingMode.BUY not in offer.rates:
            raise PriceMissingError(f"{offer.label} can only be bought")
        n = Decimal(int(offer.gpu_count))
        unit = Money(amount=offer.rates[BillingMode.BUY], currency=offer.currency)
        items = [LineItem.priced(f"{offer.gpu} card ({offer.name.split('(')[-1].rstrip(')')})", n, "cards", unit)]
        notes = ["cards only: host, resale and years of use are in `gpuplan tco`"]
        if needs_baseboard(offer.gpu):
            notes.append("SXM modules need an SXM baseboard (HGX/DGX-class server), not included")
        tdp = self.catalog.gpus[offer.gpu].tdp_w
        power = self.electricity or self.catalog.default_electricity(offer.currency)
        if tdp is not None and power is not None and power.currency == offer.currency:
            kwh = n * Decimal(str(tdp)) / 1000 * wall_hours
            price = Money(amount=power.price_per_kwh, currency=power.currency)
            items.append(LineItem.priced(f"energy at TDP ({power.region} {power.customer_class})", kwh, "kWh", price))
        else:
            notes.append("energy not included: no electricity price in the card's currency")
        total = Money.zero(offer.currency)
        for item in items:
            total = total + item.cost
        return Quote(offer=offer, billing=mode, wall_hours=wall_hours, cost=total,
                     line_items=tuple(items), notes=tuple(notes))
