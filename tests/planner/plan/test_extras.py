"""The rest of an option's bill: each line is rate x quantity worked out by hand, the total their sum."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pricing.bill import Extras, extras_bill, fixed_total, setup_cost
from pricing.billing import BillingMode
from pricing.errors import InputError

HPM = Decimal(730)


def by_item(bill: object) -> dict[str, Decimal]:
    out: dict[str, Decimal] = {}
    for i in bill.items:  # type: ignore[attr-defined]
        out[i.item] = out.get(i.item, Decimal(0)) + i.cost.amount
    return out


def test_aws_hourly_disk_address_and_egress_by_hand() -> None:
    hours = Decimal("223.025833")
    bill = extras_bill(Extras(disk_gb=500, egress_gb=300), "aws", BillingMode.HOURLY, hours, 1, hours_per_month=HPM)
    got = by_item(bill)
    assert got["disk:gp3"] == pytest.approx(Decimal("0.08") * 500 * hours / 730)  # 12.22 USD
    assert got["ipv4"] == Decimal("0.005") * hours  # 1.12 USD
    assert got["egress"] == Decimal("0.09") * (300 - 100)  # the first 100 GB are free: 18.00 USD
    assert bill.total == sum(got.values())
    assert bill.not_priced == ()
    for i in bill.items:
        assert i.cost.amount == i.unit_price.amount * i.quantity
        assert i.source


def test_a_cluster_pays_a_disk_and_an_address_per_node_and_its_egress_once() -> None:
    one = by_item(extras_bill(Extras(egress_gb=1000), "aws", BillingMode.SPOT, Decimal(5), 1, hours_per_month=HPM))
    many = by_item(extras_bill(Extras(egress_gb=1000), "aws", BillingMode.SPOT, Decimal(5), 14, hours_per_month=HPM))
    assert many["disk:gp3"] == pytest.approx(one["disk:gp3"] * 14)
    assert many["ipv4"] == Decimal("0.005") * 5 * 14
    assert many["egress"] == one["egress"] == Decimal("0.09") * 900


def test_egress_crosses_the_tiers_at_their_own_rates() -> None:
    gb = Decimal(60000)
    bill = extras_bill(Extras(disk_gb=0, egress_gb=gb), "aws", BillingMode.HOURLY, Decimal(1), 1, hours_per_month=HPM)
    expected = (Decimal("0.09") * (10340 - 100) + Decimal("0.085") * (51300 - 10340)
                + Decimal("0.07") * (60000 - 51300))
    assert by_item(bill)["egress"] == expected


def test_tencent_monthly_bandwidth_by_the_mbps_month_in_cny_and_the_disk_for_whole_months() -> None:
    hours = Decimal(800)  # two whole months at 730 h
    bill = extras_bill(Extras(bandwidth_mbps=5), "tencent", BillingMode.MONTHLY, hours, 2, hours_per_month=HPM)
    got = by_item(bill)
    # 独享型 bandwidth by tier: 2 Mbps at 20 + 3 at 25 CNY a month, x 2 months x 2 nodes
    assert got["bandwidth"] == (2 * 20 + 3 * 25) * 2 * 2
    assert got["disk:cloud_premium"] == Decimal("0.35") * 256 * 2 * 2  # CBS bought with it for whole months
    assert {i.cost.currency for i in bill.items} == {"CNY"} and bill.not_priced == ()


def test_bandwidth_above_five_mbps_is_billed_at_the_top_tier() -> None:
    bill = extras_bill(Extras(bandwidth_mbps=8), "tencent", BillingMode.MONTHLY, Decimal(10), 1, hours_per_month=HPM)
    assert by_item(bill)["bandwidth"] == 2 * 20 + 3 * 25 + 3 * 90
    assert bill.not_priced == ()


def test_tencent_pay_as_you_go_traffic_is_billed_by_the_gb() -> None:
    bill = extras_bill(Extras(egress_gb=50), "tencent", BillingMode.HOURLY, Decimal(10), 1, hours_per_month=HPM)
    got = by_item(bill)
    # the launch sets traffic billing: 0.80 CNY a GB, no bandwidth charge
    assert got["traffic"] == Decimal("0.80") * 50 and "bandwidth" not in got
    assert bill.not_priced == ()


def test_setup_is_billed_at_the_instance_rate_per_node_and_lengthens_disk_and_address_time() -> None:
    ex = Extras(setup_minutes=15)
    bill = extras_bill(ex, "aws", BillingMode.SPOT, Decimal(4), 8, hours_per_month=HPM,
                       setup_rate=Decimal("12.9785"), currency="USD")
    got = by_item(bill)
    assert got["setup"] == Decimal("12.9785") * Decimal("0.25") * 8
    assert got["ipv4"] == Decimal("0.005") * Decimal("4.25") * 8
    assert bill.setup == setup_cost(ex, BillingMode.SPOT, Decimal("12.9785"), 8)
    assert bill.fixed == fixed_total(ex, "aws", BillingMode.SPOT, Decimal(4), 8, hours_per_month=HPM)


def test_owned_hardware_has_no_cloud_extras() -> None:
    bill = extras_bill(Extras(egress_gb=500), "local", BillingMode.BUY, Decimal(100), 1, hours_per_month=HPM)
    assert bill.items == () and bill.total == 0


@pytest.mark.parametrize("field,value", [("disk_gb", "-1"), ("egress_gb", "nan"), ("setup_minutes", "inf"),
                                         ("storage_gb", "lots"), ("bandwidth_mbps", "1e12")])
def test_bad_amounts_are_input_errors_naming_the_flag(field: str, value: str) -> None:
    with pytest.raises(InputError) as e:
        Extras(**{field: value})
    assert "--" + field.replace("_", "-") in str(e.value)


amounts = st.decimals(min_value=0, max_value=200000, places=2, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(amounts, amounts, amounts, st.sampled_from(["aws", "tencent"]), st.sampled_from(list(BillingMode)[:3]),
       st.integers(min_value=1, max_value=16))
def test_more_egress_or_disk_never_costs_less_and_the_total_is_the_sum(
        egress: Decimal, more: Decimal, disk: Decimal, cloud: str, mode: BillingMode, nodes: int) -> None:
    hours = Decimal(37)
    base = extras_bill(Extras(egress_gb=egress, disk_gb=disk), cloud, mode, hours, nodes, hours_per_month=HPM)
    up_egress = extras_bill(Extras(egress_gb=egress + more, disk_gb=disk), cloud, mode, hours, nodes,
                            hours_per_month=HPM)
    up_disk = extras_bill(Extras(egress_gb=egress, disk_gb=disk + more), cloud, mode, hours, nodes,
                          hours_per_month=HPM)
    assert up_egress.total >= base.total and up_disk.total >= base.total
    assert base.total == sum((i.cost.amount for i in base.items), Decimal(0))
    assert all(i.cost.amount >= 0 for i in base.items)


def test_stored_data_is_priced_once_for_the_run_not_per_node() -> None:
    bill = extras_bill(Extras(disk_gb=0, storage_gb=2000), "aws", BillingMode.HOURLY, Decimal(73), 4,
                       hours_per_month=HPM)
    assert by_item(bill)["storage:s3-standard"] == Decimal("0.023") * 2000 * Decimal("0.1")  # 73 h = 0.1 month
    tencent = extras_bill(Extras(disk_gb=0, storage_gb=2000), "tencent", BillingMode.MONTHLY, Decimal(73), 1,
                          hours_per_month=HPM)
    assert any("object storage 2000 GB" in m for m in tencent.not_priced)


# -- the whole plan: every option's cost is its instance plus its extras, and both passes agree

def _plan_with(extras: Extras, hours: Decimal = Decimal(200)):  # type: ignore[no-untyped-def]
    from planner.perf.speed import SpeedPrecision, WorkloadClass
    from planner.plan import Constraints, make_plan
    from planner.plan.demand import RefGpuHours
    from planner.settings import Settings
    from pricing.catalog import Catalog

    cat = _plan_with.__dict__.setdefault("cat", Catalog.shipped())
    demand = RefGpuHours(gpu_hours=hours, ref_gpu="V100-SXM2-32GB", catalog=cat,
                         workload_class=WorkloadClass.TRANSFORMER, precision=SpeedPrecision.MIXED)
    return make_plan(demand, Constraints(providers=frozenset({"aws", "tencent"})), Settings(), catalog=cat,
                     extras=extras)


@settings(max_examples=8, deadline=None)
@given(amounts, st.decimals(min_value=0, max_value=60, places=0), st.sampled_from([0, 256, 1000]))
def test_every_option_costs_its_instance_plus_its_extras(egress: Decimal, setup: Decimal, disk: int) -> None:
    from planner.settings import Settings

    fx = Settings().fx_table()
    p = _plan_with(Extras(egress_gb=egress, setup_minutes=setup, disk_gb=disk))
    for o in list(p.options)[:40]:  # building each option checks the ranking pass came to the same number
        assert o.instance_cost is not None
        native_extras = sum((i.cost.amount for i in o.extras), Decimal(0))
        rate = fx.rate(o.native_cost.currency, p.currency)
        assert o.cost.amount - o.instance_cost.amount == pytest.approx(native_extras * rate)
        assert o.cost.amount >= o.instance_cost.amount


def test_more_egress_never_makes_the_cheapest_plan_cheaper() -> None:
    low = _plan_with(Extras(egress_gb=Decimal(100)))
    high = _plan_with(Extras(egress_gb=Decimal(5000)))
    assert high.cheapest.cost.amount >= low.cheapest.cost.amount
