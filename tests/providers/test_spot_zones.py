"""Spot prices over zones: a typical (median) headline, the cheapest zone only when asked."""

from __future__ import annotations

import csv
from collections import defaultdict
from datetime import date
from decimal import ROUND_UP, Decimal
from importlib import resources

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pricing.billing import BillingMode
from pricing.catalog import Catalog, InstanceType, Layer
from pricing.money import Currency
from providers.listprice import ListPriceProvider, SpotPricing
from planner.plan.demand import RefGpuHours
from planner.plan import Constraints, make_plan
from planner.settings import Settings

SHIPPED = Catalog.shipped()
HPM = Decimal(730)
# The region's AZ ids start with its short name: us-east-1 -> use1-az1.
AZ_PREFIX = {"us-east-1": "use1-az", "us-west-2": "usw2-az", "eu-west-1": "euw1-az", "eu-west-2": "euw2-az",
             "eu-central-1": "euc1-az", "eu-north-1": "eun1-az", "ap-northeast-1": "apne1-az"}


def _aws_rows() -> list[dict[str, str]]:
    text = resources.files("pricing.data").joinpath("instances/aws.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines()))


def _zone_prices() -> dict[tuple[str, str], list[tuple[Decimal, str]]]:
    out: dict[tuple[str, str], list[tuple[Decimal, str]]] = defaultdict(list)
    for r in _aws_rows():
        # a spot price at the on-demand cap is no spot offer (see the test below)
        if r["zone"] and r["spot"] and Decimal(r["spot"]) < Decimal(r["hourly"]):
            out[(r["instance_type"], r["region"])].append((Decimal(r["spot"]), r["zone"]))
    return {k: sorted(v) for k, v in out.items()}


def test_shipped_aws_spot_is_per_zone_and_never_above_on_demand() -> None:
    rows = [r for r in _aws_rows() if r["spot"]]
    assert rows and all(r["zone"] for r in rows), "every shipped AWS spot price names its zone"
    for r in rows:
        # The source writes spot to 4 places: 8.226100 is the on-demand 8.22609, not above it.
        assert Decimal(r["spot"]) <= Decimal(r["hourly"]).quantize(Decimal("0.0001"), ROUND_UP), r
        assert r["zone"].startswith(AZ_PREFIX[r["region"]]), r
        assert not r["spot_high"], "a zone row is one zone's price, not a range"


def _offer(provider: ListPriceProvider, name: str, region: str):  # type: ignore[no-untyped-def]
    return next(o for o in provider.list_offers() if o.name == name and o.region == region)


@pytest.mark.parametrize(("name", "region"), sorted(_zone_prices()))
def test_the_headline_spot_price_is_the_median_zone_and_cheapest_is_asked_for(name: str, region: str) -> None:
    prices = _zone_prices()[(name, region)]
    typical = _offer(ListPriceProvider("aws", SHIPPED), name, region)
    cheapest = _offer(ListPriceProvider("aws", SHIPPED, spot_pricing=SpotPricing.CHEAPEST), name, region)
    median_price, median_zone = prices[len(prices) // 2]  # odd: the median; even: the dearer middle zone
    assert typical.rates[BillingMode.SPOT] == median_price
    assert typical.rate_zones[BillingMode.SPOT] == median_zone
    assert cheapest.rates[BillingMode.SPOT] == prices[0][0]
    assert cheapest.rate_zones[BillingMode.SPOT] == prices[0][1]


def test_a_spot_price_at_the_on_demand_cap_is_not_offered_as_spot() -> None:
    # The source lists p5.48xlarge spot at 55.040000 in use1-az1 and use1-az4, its on-demand price: AWS caps spot
    # there, so it is the same price, interruptible. p3.16xlarge in eu-west-2 is capped in both of its zones.
    p5 = _offer(ListPriceProvider("aws", SHIPPED), "p5.48xlarge", "us-east-1")
    assert {"use1-az1", "use1-az4"}.isdisjoint(z for z, _ in p5.spot_zones) and len(p5.spot_zones) == 4
    assert p5.rates[BillingMode.SPOT] < p5.rates[BillingMode.HOURLY]
    p3 = _offer(ListPriceProvider("aws", SHIPPED), "p3.16xlarge", "eu-west-2")
    assert BillingMode.SPOT not in p3.rates and BillingMode.SPOT not in p3.estimated
    capped = [r for r in _aws_rows() if r["spot"] and Decimal(r["spot"]) >= Decimal(r["hourly"])]
    assert len(capped) >= 5, "the source's capped rows this test is about"
    for plan_offer in make_plan(RefGpuHours(gpu_hours=Decimal(200), ref_gpu="V100-SXM2-32GB", catalog=SHIPPED),
                                Constraints(providers=frozenset({"aws"})), Settings(), catalog=SHIPPED).options:
        if plan_offer.billing is BillingMode.SPOT:
            assert plan_offer.zone not in {r["zone"] for r in capped if r["instance_type"] == plan_offer.offer}


def test_p4d_no_longer_heads_the_plan_on_one_zones_price() -> None:
    """The issue's case: p4d.24xlarge us-east-1 spot ranges 2.4655 (use1-az1) to 8.1915 USD over four zones."""
    p4d = _offer(ListPriceProvider("aws", SHIPPED), "p4d.24xlarge", "us-east-1")
    assert p4d.rates[BillingMode.SPOT] > Decimal("2.4655")
    q = ListPriceProvider("aws", SHIPPED).quote(p4d, BillingMode.SPOT, Decimal(10), hours_per_month=HPM)
    note = next(n for n in q.notes if "median zone" in n)
    assert "use1-az1" in note and "8.1915" in note and "--spot-price cheapest" in note


def _zone_row(zone: str, spot: Decimal) -> InstanceType:
    return InstanceType(provider="aws", instance_type="x.large", family="x", gpu="T4", gpu_count=1, vcpu=4, mem_gb=16,
                        region="us-east-1", zone=zone, currency=Currency.USD, hourly=Decimal(1), spot=spot,
                        layer=Layer.SHIPPED, source="test", as_of=date(2026, 1, 1))


# below the on-demand 1: a spot price at the cap is no spot offer (test above)
prices = st.lists(st.decimals(min_value=Decimal("0.01"), max_value=Decimal("0.9999"), places=4), min_size=1, max_size=9)


@given(prices)
def test_the_typical_spot_price_has_at_least_half_the_zones_on_each_side(spot: list[Decimal]) -> None:
    rows = [_zone_row(f"use1-az{i}", p) for i, p in enumerate(spot, 1)]
    cat = SHIPPED.with_instances(rows)
    typical = ListPriceProvider("aws", cat).list_offers()[0]
    cheapest = ListPriceProvider("aws", cat, spot_pricing=SpotPricing.CHEAPEST).list_offers()[0]
    t = typical.rates[BillingMode.SPOT]
    assert 2 * sum(p <= t for p in spot) >= len(spot)
    assert 2 * sum(p >= t for p in spot) >= len(spot)
    zone = typical.rate_zones[BillingMode.SPOT]
    assert spot[int(zone.removeprefix("use1-az")) - 1] == t  # the zone named is the zone whose price it is
    assert cheapest.rates[BillingMode.SPOT] == min(spot) <= t


def test_every_spot_option_of_the_plan_names_its_zone_and_cheapest_is_never_dearer() -> None:
    demand = RefGpuHours(gpu_hours=Decimal(200), ref_gpu="V100-SXM2-32GB", catalog=SHIPPED)
    only_aws_spot = Constraints(providers=frozenset({"aws"}), billing=frozenset({BillingMode.SPOT}))
    typical = make_plan(demand, only_aws_spot, Settings(), catalog=SHIPPED)
    cheapest = make_plan(demand, only_aws_spot, Settings(spot_price="cheapest"), catalog=SHIPPED)
    assert all(o.zone for o in typical.options)
    by_offer = {(o.offer, o.region): o.cost.amount for o in cheapest.options}
    for o in typical.options:
        assert by_offer[(o.offer, o.region)] <= o.cost.amount


def test_the_plan_says_the_shipped_prices_carry_no_date_of_their_own() -> None:
    demand = RefGpuHours(gpu_hours=Decimal(10), ref_gpu="V100-SXM2-32GB", catalog=SHIPPED)
    p = make_plan(demand, Constraints(), Settings(), catalog=SHIPPED)
    assert "aws read" in p.assumptions["prices_as_of"]
    assert "gives no price date" in p.assumptions["prices_as_of"]
