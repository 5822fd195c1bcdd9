from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pricing.billing import BillingMode
from pricing.catalog import Catalog
from pricing.errors import InputError, NoOptionError
from pricing.money import Currency, Money
from planner.perf.speed import SpeedPrecision as Precision, WorkloadClass
from planner.plan.demand import RefGpuHours
from planner.plan import Constraints, Plan, make_plan as _make_plan, plan_from_options as _plan_from_options
from planner.settings import Settings

REF = "V100-SXM2-32GB"
SHIPPED = Catalog.shipped()


def make_plan(demand: RefGpuHours, constraints: Constraints | None = None, settings: Settings | None = None) -> Plan:
    """Plans over the shipped snapshot, with the default settings unless a test passes its own."""
    return _make_plan(demand, constraints, settings or Settings(), catalog=SHIPPED)


def plan_from_options(**kwargs: Any) -> Plan:
    return _plan_from_options(settings=Settings(), catalog=SHIPPED, **kwargs)


def demand(hours: float | str = 200) -> RefGpuHours:
    return RefGpuHours(gpu_hours=Decimal(str(hours)), ref_gpu=REF, catalog=SHIPPED)


def test_options_are_sorted_by_cost_then_wall_time() -> None:
    p = make_plan(demand())
    keys = [(o.cost.amount, o.wall_hours) for o in p.options]
    assert keys == sorted(keys)
    assert p.cheapest is p.options[0]


def test_every_provider_and_the_main_billing_modes_appear() -> None:
    p = make_plan(demand())
    pairs = {(o.provider, o.billing) for o in p.options}
    for provider in SHIPPED.providers:
        assert any(pv == provider for pv, _ in pairs)
    for mode in (BillingMode.HOURLY, BillingMode.MONTHLY, BillingMode.SPOT, BillingMode.BUY):
        assert any(m == mode for _, m in pairs)


def test_one_reference_gpu_on_itself_takes_the_stated_hours() -> None:
    p = make_plan(demand(200), Constraints(providers=frozenset({"tencent"}),
                                           billing=frozenset({BillingMode.HOURLY})))
    gn = next(o for o in p.options if o.offer == "GN10Xp.2XLARGE40")
    assert gn.wall_hours == pytest.approx(Decimal(200))
    assert gn.native_cost.amount == pytest.approx(Decimal("11.98") * 200)


def test_costs_are_converted_with_the_shipped_rate_and_keep_the_native_amount() -> None:
    s = Settings(currency="USD")
    p = make_plan(demand(), settings=s)
    tencent = next(o for o in p.options if o.provider == "tencent")
    rate = s.fx_table().rate(Currency.CNY, Currency.USD)
    assert tencent.native_cost.currency == Currency.CNY
    assert tencent.cost.amount == tencent.native_cost.amount * rate


def test_a_user_rate_overrides_the_shipped_one() -> None:
    base = make_plan(demand(), settings=Settings(currency="USD"))
    moved = make_plan(demand(), settings=Settings(currency="USD", fx=("USD/CNY=14",)))
    pick = lambda p: next(o for o in p.options if o.offer == "GN10Xp.20XLARGE320" and o.billing == "hourly")  # noqa: E731
    assert pick(moved).cost.amount < pick(base).cost.amount
    assert pick(moved).cost.amount == pick(moved).native_cost.amount / 14


def test_deadline_and_budget_are_respected() -> None:
    c = Constraints(deadline_hours=Decimal(24), budget=Money(amount=Decimal(500), currency=Currency.USD))
    p = make_plan(demand(), c)
    assert all(o.wall_hours <= 24 and o.cost.amount <= 500 for o in p.options)
    assert any("deadline" in e.reason for e in p.excluded)


def test_min_vram_and_max_gpus_filter_offers() -> None:
    cat = Catalog.shipped()
    p = make_plan(demand(), Constraints(min_vram_gb=40, max_gpus=2))
    assert all(cat.gpus[o.gpu].vram_gb >= 40 and o.gpu_count <= 2 for o in p.options)


def test_region_matches_regions_and_zones() -> None:
    p = make_plan(demand(), Constraints(regions=("ap-guangzhou",), providers=frozenset({"tencent"})))
    assert {o.offer.split(".")[0] for o in p.options} >= {"GN10Xp", "GT4"}


def test_impossible_constraints_say_what_to_relax() -> None:
    with pytest.raises(NoOptionError) as err:
        make_plan(demand(), Constraints(deadline_hours=Decimal("0.01")))
    assert "deadline" in str(err.value)


def test_the_no_option_summary_counts_each_constraint() -> None:
    budget = Money(amount=Decimal(10), currency=Currency.CNY)
    with pytest.raises(NoOptionError) as err:
        make_plan(demand(), Constraints(budget=budget))
    text = str(err.value)
    assert "over the budget" in text and "without a public price" in text
    n_over = int(text.split(" over the budget")[0].split("(")[-1])
    p = make_plan(demand(), Constraints(spot_estimates=True))  # the budget rule comes before the estimate rule
    assert n_over == len(p.options)  # every costed option is over a 10 CNY budget


def test_a_billing_mode_nobody_prices_is_named() -> None:
    with pytest.raises(NoOptionError, match="no offer in the catalog has a reserved_1y price"):
        make_plan(demand(), Constraints(billing=frozenset({BillingMode.RESERVED_1Y})))


def test_spot_carries_the_restart_overhead_as_an_assumption() -> None:
    s = Settings(spot_overhead=Decimal("0.25"))
    p = make_plan(demand(), Constraints(billing=frozenset({BillingMode.SPOT, BillingMode.HOURLY}),
                                        providers=frozenset({"aws"})), s)
    spot = next(o for o in p.options if o.billing == "spot" and o.offer == "p3.2xlarge")
    hourly = next(o for o in p.options if o.billing == "hourly" and o.offer == "p3.2xlarge" and o.region == spot.region)
    assert spot.wall_hours == hourly.wall_hours * Decimal("1.25")
    assert any("25%" in n for n in spot.notes)
    assert p.assumptions["spot_overhead"] == "0.25"


def test_monthly_options_say_how_much_of_the_month_is_used() -> None:
    p = make_plan(demand(25), Constraints(billing=frozenset({BillingMode.MONTHLY})))
    o = next(o for o in p.options if o.offer == "GN10Xp.20XLARGE320")
    assert o.native_cost.amount == 46000
    assert any("whole month" in n for n in o.notes)


def test_the_explanation_names_the_winner() -> None:
    p = make_plan(demand())
    assert p.cheapest.offer in p.explanation and "wins" in p.explanation


def test_python_api_matches_the_building_blocks() -> None:
    p = plan_from_options(gpu_hours=200, providers=frozenset({"aws"}))
    q = make_plan(demand(), Constraints(providers=frozenset({"aws"})))
    assert [(o.offer, o.billing, o.cost) for o in p.options] == [(o.offer, o.billing, o.cost) for o in q.options]


@pytest.mark.parametrize("hours", ["-1", "0", "nan", "inf", "lots"])
def test_bad_hours_are_input_errors(hours: str) -> None:
    with pytest.raises(InputError):
        plan_from_options(gpu_hours=hours)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hours=st.decimals(min_value=Decimal("0.1"), max_value=Decimal(50000), places=1),
       cls=st.sampled_from(list(WorkloadClass)), precision=st.sampled_from(list(Precision)),
       max_gpus=st.sampled_from([None, 1, 4, 8]))
def test_the_cheapest_is_never_dearer_than_any_listed_option(hours: Decimal, cls: WorkloadClass,
                                                              precision: Precision, max_gpus: int | None) -> None:
    p = make_plan(RefGpuHours(gpu_hours=hours, ref_gpu=REF, workload_class=cls, precision=precision, catalog=SHIPPED),
                  Constraints(max_gpus=max_gpus))
    assert all(p.cheapest.cost.amount <= o.cost.amount for o in p.options)
    for mode, best in p.cheapest_by_billing().items():
        assert all(best.cost.amount <= o.cost.amount for o in p.options if o.billing == mode)


@settings(max_examples=20, deadline=None)
@given(a=st.decimals(min_value=Decimal(1), max_value=Decimal(20000), places=1),
       b=st.decimals(min_value=Decimal(1), max_value=Decimal(20000), places=1))
def test_more_gpu_hours_never_cost_less_on_any_option(a: Decimal, b: Decimal) -> None:
    lo, hi = sorted((a, b))
    c = Constraints(providers=frozenset({"tencent", "aws"}))
    small = {(o.provider, o.offer, o.region, o.billing): o.cost.amount for o in make_plan(demand(lo), c).options}
    big = {(o.provider, o.offer, o.region, o.billing): o.cost.amount for o in make_plan(demand(hi), c).options}
    assert small.keys() == big.keys()
    assert all(small[k] <= big[k] for k in small)


def test_the_python_api_plans_more_than_once_per_process() -> None:
    import gpuplan

    first = gpuplan.plan(gpu_hours=100, providers=frozenset({"aws"}))
    second = gpuplan.plan(gpu_hours=200, providers=frozenset({"aws"}))
    assert second.cheapest.cost.amount > first.cheapest.cost.amount
