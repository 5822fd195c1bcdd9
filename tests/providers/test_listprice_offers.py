"""Offers built from catalog rows: of the types Offer declares, read lazily, with facts that match them."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, get_type_hints

from pydantic import ConfigDict, create_model

from pricing.catalog import Catalog, Layer, parse_instances
from providers.base import Offer
from providers.bulk import OfferFacts
from providers.listprice import ListPriceProvider, SpotPricing
from tests.fixtures.catalogs import instance_csv

SHIPPED = Catalog.shipped()
# Offer's declared types as a pydantic model in strict mode: the reference an offer built from rows must pass.
_HINTS = get_type_hints(Offer)
STRICT_OFFER = create_model("StrictOffer", __config__=ConfigDict(strict=True),
                            **{name: (hint, ...) for name, hint in _HINTS.items()})  # type: ignore[call-overload]


def _fields(o: Offer) -> dict[str, Any]:
    return {name: getattr(o, name) for name in _HINTS}


def _providers(cat: Catalog) -> list[ListPriceProvider]:
    return [ListPriceProvider(name, cat, spot_pricing=sp) for name in cat.providers if name != "local"
            for sp in SpotPricing]


def test_every_shipped_offer_has_the_types_offer_declares() -> None:
    seen = 0
    for provider in _providers(SHIPPED):
        for offer in provider.offer_table():
            again = dict(STRICT_OFFER.model_validate(_fields(offer)))
            assert again == _fields(offer)
            # strict validation still turns an int into a float: a JSON gpu_count of 1 is not 1.0
            assert {k: type(v) for k, v in again.items()} == {k: type(v) for k, v in _fields(offer).items()}
            seen += 1
    assert seen > 200  # 2 spot readings x (Tencent + AWS offers, whole and folded from zones)


def test_facts_say_what_the_offers_have() -> None:
    for provider in _providers(SHIPPED):
        offers = provider.offer_table()
        facts = list(offers.facts())
        assert facts == [OfferFacts.of(o) for o in offers]
        assert all(f.name == o.name and f.rates == o.rates for f, o in zip(facts, offers, strict=True))


def test_an_offer_read_twice_is_built_twice_alike_and_slices_work() -> None:
    offers = ListPriceProvider("aws", SHIPPED).offer_table()
    assert offers[3] == offers[3] and offers[3] is not offers[3]
    assert offers[-1] == list(offers)[-1] and offers[1:4] == list(offers)[1:4]
    assert offers == ListPriceProvider("aws", SHIPPED).list_offers()


def test_offers_built_after_the_facts_are_read_are_the_offers_built_before(monkeypatch: Any) -> None:
    import providers.listprice as listprice

    kept = 0
    for provider in _providers(SHIPPED):
        fresh = list(provider.offer_table())
        table = provider.offer_table()
        first, second = list(table.facts()), list(table.facts())  # a second read reuses what the first kept
        assert len(table.folds) == len(table.zoned)
        kept += len(table.folds)
        assert first == second == [OfferFacts.of(o) for o in fresh]
        assert list(table) == fresh and [table[i] for i in reversed(range(len(table)))] == fresh[::-1]
    assert kept > 100  # the shipped AWS offers folded from zones, under both spot readings
    # past the bound nothing is kept, and the offers are the same
    monkeypatch.setattr(listprice, "KEPT_FOLDS", 3)
    provider = ListPriceProvider("aws", SHIPPED)
    table = provider.offer_table()
    assert len(table.zoned) > 3 and list(table.facts()) == [OfferFacts.of(o) for o in table]
    assert table.folds == [] and list(table) == list(provider.offer_table())


def test_an_estimated_spot_rate_comes_first_and_is_marked() -> None:
    """A cloud with a spot fraction estimate (Tencent) and no spot price in the row."""
    rows = parse_instances(instance_csv(
        "tencent,GN7.2XLARGE32,GN7,T4,1,8,32,ap-guangzhou,,,CNY,10.00,,3000,,,,,,,made-up test figure,2026-01-01,"),
        origin="t", layer=Layer.USER)
    (offer,) = ListPriceProvider("tencent", SHIPPED.with_instances(rows)).list_offers()
    assert list(offer.rates)[0] == "spot" and offer.estimated == {"spot"}
    assert offer.rates["spot"] < offer.rates["hourly"] == Decimal("10.00")
