"""The generic list-price adapter over a fixture catalog: spot estimates, zone folding, stock."""

from __future__ import annotations

from decimal import Decimal

from pricing.billing import BillingMode
from pricing.catalog import Stock
from providers.listprice import ListPriceProvider, SpotPricing
from providers.registry import all_providers, get_provider
from tests.fixtures.catalogs import instance_csv, toy_catalog

ZONES = instance_csv(
    "aws,g5.xlarge,g5,A10G,1,4,16,us-east-1,us-east-1a,,USD,1.006,,,,0.30,,,,available,live test,2026-12-01,",
    "aws,g5.xlarge,g5,A10G,1,4,16,us-east-1,us-east-1b,,USD,1.006,,,,0.40,,,,available,live test,2026-12-01,",
    "aws,g5.xlarge,g5,A10G,1,4,16,us-east-1,us-east-1c,,USD,1.006,,,,0.90,,,,available,live test,2026-12-01,",
    "aws,g5.xlarge,g5,A10G,1,4,16,us-east-1,us-east-1d,,USD,1.006,,,,0.10,,,,sold_out,live test,2026-12-01,",
)


def test_zone_rows_fold_into_one_offer_with_a_typical_spot_price_and_its_zone() -> None:
    (offer,) = ListPriceProvider("aws", toy_catalog(ZONES)).list_offers()
    # median over the selling zones (0.30, 0.40, 0.90): the sold-out zone's 0.10 does not count
    assert offer.rates[BillingMode.SPOT] == Decimal("0.40")
    assert offer.rate_zones[BillingMode.SPOT] == "us-east-1b"
    assert offer.rates_high[BillingMode.SPOT] == Decimal("0.90")
    assert offer.sold_out_zones == ("us-east-1d",)
    assert offer.zones == ("us-east-1a", "us-east-1b", "us-east-1c")
    assert offer.stock is Stock.AVAILABLE


def test_cheapest_spot_is_an_explicit_choice() -> None:
    (offer,) = ListPriceProvider("aws", toy_catalog(ZONES), spot_pricing=SpotPricing.CHEAPEST).list_offers()
    assert (offer.rates[BillingMode.SPOT], offer.rate_zones[BillingMode.SPOT]) == (Decimal("0.30"), "us-east-1a")


def test_a_quote_names_the_zone_its_price_is_from() -> None:
    p = ListPriceProvider("aws", toy_catalog(ZONES))
    (offer,) = p.list_offers()
    q = p.quote(offer, BillingMode.SPOT, Decimal(10), hours_per_month=Decimal(730))
    assert q.zone == "us-east-1b" and q.cost.amount == Decimal("4.00")
    assert any("us-east-1b" in n and "median" in n for n in q.notes)


def test_a_type_sold_out_everywhere_says_so() -> None:
    rows = instance_csv(
        "aws,g5.xlarge,g5,A10G,1,4,16,us-east-1,us-east-1a,,USD,1.006,,,,0.30,,,,sold_out,live test,2026-12-01,")
    (offer,) = ListPriceProvider("aws", toy_catalog(rows)).list_offers()
    assert offer.stock is Stock.SOLD_OUT


def test_spot_estimate_comes_from_the_providers_billing_rule() -> None:
    rows = instance_csv("tencent,GN10Xp.2XLARGE40,GN10Xp,V100-SXM2-32GB,1,10,40,cn-mainland,,,CNY,10.00,,,,,,,,,"
                        "made-up test figure,2026-01-01,")
    (offer,) = get_provider("tencent", toy_catalog(rows)).list_offers()
    assert offer.rates[BillingMode.SPOT] == Decimal("2.0000")  # 20% in billing_rules.toml
    assert BillingMode.SPOT in offer.estimated


def test_any_provider_with_rows_is_served_without_code() -> None:
    names = [p.name for p in all_providers(toy_catalog())]
    assert names == ["acme", "pandacloud", "local"]
