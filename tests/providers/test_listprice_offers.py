"""Offers built from catalog rows without validation must be exactly what validation makes of them."""

from __future__ import annotations

from decimal import Decimal

from pricing.catalog import Catalog, Layer, parse_instances
from providers.base import Offer
from providers.listprice import ListPriceProvider, SpotPricing
from tests.fixtures.catalogs import instance_csv

SHIPPED = Catalog.shipped()


def _providers(cat: Catalog) -> list[ListPriceProvider]:
    return [ListPriceProvider(name, cat, spot_pricing=sp) for name in cat.providers if name != "local"
            for sp in SpotPricing]


def test_every_shipped_offer_is_what_validation_makes_of_it() -> None:
    seen = 0
    for provider in _providers(SHIPPED):
        for offer in provider.offers():
            again = Offer.model_validate(offer.model_dump())
            assert again == offer and again.model_dump() == offer.model_dump()
            assert {k: type(v) for k, v in again.__dict__.items()} == {k: type(v) for k, v in offer.__dict__.items()}
            seen += 1
    assert seen > 200  # 2 spot readings x (Tencent + AWS offers, whole and folded from zones)


def test_facts_say_what_the_offers_have() -> None:
    for provider in _providers(SHIPPED):
        offers = provider.offers()
        facts = list(provider.facts(offers))
        assert len(facts) == len(offers)
        for f, o in zip(facts, offers, strict=True):
            assert f == (o.gpu, o.gpu_count, o.interconnect, o.name, o.family, o.currency, o.rates, o.stock, o.region,
                         o.zones, o.rate_zones, o.sold_out_zones)


def test_an_offer_read_twice_is_built_twice_alike_and_slices_work() -> None:
    offers = ListPriceProvider("aws", SHIPPED).offers()
    assert offers[3] == offers[3] and offers[3] is not offers[3]
    assert offers[-1] == list(offers)[-1] and offers[1:4] == list(offers)[1:4]


def test_an_estimated_spot_rate_comes_first_and_is_marked() -> None:
    """A cloud with a spot fraction estimate (Tencent) and no spot price in the row."""
    rows = parse_instances(instance_csv(
        "tencent,GN7.2XLARGE32,GN7,T4,1,8,32,ap-guangzhou,,,CNY,10.00,,3000,,,,,,,made-up test figure,2026-01-01,"),
        origin="t", layer=Layer.USER)
    (offer,) = ListPriceProvider("tencent", SHIPPED.with_instances(rows)).offers()
    assert list(offer.rates)[0] == "spot" and offer.estimated == {"spot"}
    assert offer.rates["spot"] < offer.rates["hourly"] == Decimal("10.00")
