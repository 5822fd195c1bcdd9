"""The planner's side of the bulk capabilities: offer tables for any provider, costs that are the quotes' own."""

from __future__ import annotations

from decimal import Decimal

import pytest

from pricing.billing import BillingMode
from pricing.catalog import Catalog
from pricing.errors import PriceMissingError
from providers.bulk import ListedOffers, OfferFacts
from providers.listprice import ListPriceProvider
from providers.local import LocalProvider
from planner.plan.rates import offer_table, quoted_cost, rate_coster

SHIPPED = Catalog.shipped()
HPM = Decimal(730)


@pytest.mark.parametrize("hours", [Decimal("0.4"), Decimal(37), Decimal("1000.25"), Decimal(20000)])
def test_a_rate_coster_comes_to_the_quote_of_every_offer_and_mode(hours: Decimal) -> None:
    for name in ("aws", "tencent"):
        provider = ListPriceProvider(name, SHIPPED)
        for offer in provider.list_offers():
            for mode in offer.rates:
                if not provider.bills(mode):
                    continue
                coster = rate_coster(provider, mode, hours, family=offer.family, hours_per_month=HPM)
                assert coster is not None
                assert coster(offer.rates[mode]) == quoted_cost(provider, offer, mode, hours, hours_per_month=HPM)


def test_a_provider_without_the_capabilities_is_read_through_its_listed_offers_and_quotes() -> None:
    local = LocalProvider(SHIPPED)
    table = offer_table(local)
    assert isinstance(table, ListedOffers) and table == local.list_offers()
    assert list(table.facts()) == [OfferFacts.of(o) for o in local.list_offers()]
    assert rate_coster(local, BillingMode.BUY, Decimal(10), family="x", hours_per_month=HPM) is None
    offer = table[0]
    assert quoted_cost(local, offer, BillingMode.BUY, Decimal(10), hours_per_month=HPM) == local.quote(
        offer, BillingMode.BUY, Decimal(10), hours_per_month=HPM).cost.amount


def test_a_mode_without_a_billing_rule_has_no_coster() -> None:
    with pytest.raises(PriceMissingError, match="no buy billing rule"):
        rate_coster(ListPriceProvider("aws", SHIPPED), BillingMode.BUY, Decimal(1), family="p3", hours_per_month=HPM)


def test_a_list_price_provider_gives_its_offers_as_a_lazy_table() -> None:
    provider = ListPriceProvider("aws", SHIPPED)
    table = offer_table(provider)
    assert not isinstance(table, ListedOffers) and table == provider.list_offers()
