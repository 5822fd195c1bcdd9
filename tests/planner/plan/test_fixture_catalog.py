"""Planning over a fixture catalog with made-up prices: the ranking follows the arithmetic."""

from __future__ import annotations

from decimal import Decimal

import pytest

from pricing.billing import BillingMode
from pricing.errors import NoOptionError
from planner.plan.demand import RefGpuHours
from planner.plan import Constraints, make_plan
from planner.settings import Settings
from tests.fixtures.catalogs import toy_catalog

REF = "V100-SXM2-32GB"


def test_one_reference_gpu_costs_hours_times_rate() -> None:
    cat = toy_catalog()
    demand = RefGpuHours(gpu_hours=Decimal(100), ref_gpu=REF, catalog=cat)
    p = make_plan(demand, Constraints(providers=frozenset({"acme"}), billing=frozenset({BillingMode.HOURLY})),
                  Settings(), catalog=cat)
    one = next(o for o in p.options if o.offer == "a1.v100x1")
    assert one.wall_hours == Decimal(100) and one.cost.amount == Decimal("200.00")


def test_spot_is_cheapest_here_and_the_plan_says_so() -> None:
    cat = toy_catalog()
    demand = RefGpuHours(gpu_hours=Decimal(100), ref_gpu=REF, catalog=cat)
    s = Settings()
    p = make_plan(demand, Constraints(providers=frozenset({"acme"})), s, catalog=cat)
    # 100 h x (1 + spot overhead) x 0.50 USD beats every on-demand option of acme
    assert (p.cheapest.offer, p.cheapest.billing) == ("a1.v100x1", BillingMode.SPOT)
    assert p.cheapest.cost.amount == Decimal(100) * (1 + s.spot_overhead) * Decimal("0.50")
    assert all(p.cheapest.cost.amount <= o.cost.amount for o in p.options)


def test_cny_offers_are_converted_and_keep_their_native_cost() -> None:
    cat = toy_catalog()
    demand = RefGpuHours(gpu_hours=Decimal(10), ref_gpu=REF, catalog=cat)
    s = Settings(currency="USD", fx=("USD/CNY=8",))
    p = make_plan(demand, Constraints(providers=frozenset({"pandacloud"}), billing=frozenset({BillingMode.HOURLY})),
                  s, catalog=cat)
    (o,) = p.options
    assert o.native_cost.amount == Decimal(100) and o.native_cost.currency == "CNY"
    assert o.cost.amount == Decimal("12.5")


def test_a_deadline_only_the_fast_machine_meets_picks_it() -> None:
    cat = toy_catalog()
    demand = RefGpuHours(gpu_hours=Decimal(100), ref_gpu=REF, catalog=cat)
    p = make_plan(demand, Constraints(providers=frozenset({"acme"}), deadline_hours=Decimal(5)), Settings(),
                  catalog=cat)
    assert {o.offer for o in p.options} == {"h1.h100x8"}
    with pytest.raises(NoOptionError):
        make_plan(demand, Constraints(providers=frozenset({"acme"}), deadline_hours=Decimal("0.1")), Settings(),
                  catalog=cat)


def test_a_user_price_for_a_mode_the_provider_does_not_bill_is_excluded_not_fatal() -> None:
    from pricing.catalog import Catalog, Layer, parse_instances
    from tests.fixtures.catalogs import instance_csv

    rows = instance_csv("tencent,GN10Xp.2XLARGE40,GN10Xp,V100-SXM2-32GB,1,10,40,ap-guangzhou,,,CNY,10.00,,,,,,"
                        "5.00,,,negotiated test price,2026-11-01,")
    cat = Catalog.shipped().with_instances(parse_instances(rows, origin="mine", layer=Layer.USER))
    demand = RefGpuHours(gpu_hours=Decimal(10), ref_gpu=REF, catalog=cat)
    p = make_plan(demand, Constraints(providers=frozenset({"tencent"})), Settings(), catalog=cat)
    assert {o.billing for o in p.options} == {BillingMode.HOURLY}  # Tencent's estimated spot waits for the flag
    (why,) = [e for e in p.excluded if e.billing == BillingMode.RESERVED_1Y]
    assert why.rule == "no_price" and "billing rule" in why.reason
