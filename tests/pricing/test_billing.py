from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pricing.billing import BillingMode, BillingRule, Tier, billing_rules, rate_cost, rule_for

HOURS = st.decimals(min_value=Decimal(0), max_value=Decimal(20000), places=4)


def test_aws_bills_per_second_with_a_minute_minimum() -> None:
    rule = rule_for("aws", BillingMode.HOURLY)
    assert rule is not None
    rate = Decimal("3.06")
    assert rate_cost(rule, rate, Decimal(30) / 3600) == rate * 60 / 3600
    assert rate_cost(rule, rate, Decimal("1.5")) == rate * Decimal("1.5")


def test_tencent_hourly_is_per_second_without_a_minimum() -> None:
    rule = rule_for("tencent", BillingMode.HOURLY)
    assert rule is not None
    assert rate_cost(rule, Decimal("95.84"), Decimal(10) / 3600) == Decimal("95.84") * 10 / 3600


@pytest.mark.parametrize(("hours", "months"), [("25", 1), ("730", 1), ("730.01", 2), ("0", 1)])
def test_a_monthly_plan_costs_whole_months(hours: str, months: int) -> None:
    rule = rule_for("tencent", BillingMode.MONTHLY)
    assert rule is not None
    assert rate_cost(rule, Decimal(46000), Decimal(hours)) == 46000 * months


def test_hours_per_month_is_a_parameter() -> None:
    rule = rule_for("tencent", BillingMode.MONTHLY)
    assert rule is not None
    assert rate_cost(rule, Decimal(100), Decimal(700), hours_per_month=Decimal(672)) == 200


def test_reservations_bill_the_whole_term() -> None:
    rule = rule_for("aws", BillingMode.RESERVED_1Y)
    assert rule is not None
    assert rate_cost(rule, Decimal(2), Decimal(10)) == 2 * 8760


def test_tiers_apply_only_to_tiered_families() -> None:
    tiers = (Tier(from_hours=Decimal(0), fraction=Decimal(1)), Tier(from_hours=Decimal(96), fraction=Decimal("0.5")),
             Tier(from_hours=Decimal(360), fraction=Decimal("0.34")))
    rule = BillingRule(provider="tencent", mode=BillingMode.HOURLY, tiers=tiers, tiered_families=("S5",))
    # 96 h at full rate, 264 h at half, 40 h at 34%: worked by hand.
    assert rate_cost(rule, Decimal(10), Decimal(400), family="S5") == Decimal(960) + Decimal(1320) + Decimal(136)
    assert rate_cost(rule, Decimal(10), Decimal(400), family="GN10Xp") == Decimal(4000)


def test_no_shipped_gpu_family_is_silently_tiered() -> None:
    rule = rule_for("tencent", BillingMode.HOURLY)
    assert rule is not None and rule.tiers, "the tier rule itself ships, with its source"
    assert rule.tiered_families == ()


def test_a_rule_shows_tiers_only_for_a_family_billed_by_them() -> None:
    # A GN10Xp launch quote printed "tiers 96-360 h 50%, >360 h 34%", which its bill never applies.
    rule = rule_for("tencent", BillingMode.HOURLY)
    assert rule is not None
    assert "tier" not in rule.story("GN10Xp") and "%" not in rule.story("GN10Xp")
    assert "billed per second" in rule.story("GN10Xp")
    tiered = rule.model_copy(update={"tiered_families": ("S5",)})
    assert "from 96 h 50%" in tiered.story("S5") and "from 360 h 34%" in tiered.story("S5")


def test_every_rule_names_its_source() -> None:
    for rule in billing_rules().values():
        assert rule.source


@given(a=HOURS, b=HOURS, mode=st.sampled_from([m for m in BillingMode if m is not BillingMode.BUY]),
       provider=st.sampled_from(["aws", "tencent"]), tiered=st.booleans())
def test_more_hours_never_cost_less(a: Decimal, b: Decimal, mode: BillingMode, provider: str, tiered: bool) -> None:
    rule = rule_for(provider, mode)
    if rule is None:
        return
    if tiered and rule.tiers:
        rule = rule.model_copy(update={"tiered_families": ("X",)})
    lo, hi = sorted((a, b))
    assert rate_cost(rule, Decimal("7.5"), lo, family="X") <= rate_cost(rule, Decimal("7.5"), hi, family="X")
