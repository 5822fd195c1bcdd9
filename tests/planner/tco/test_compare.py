"""The TCO model: the hand-worked example of docs/tco.md, properties, and the example scenario."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pricing.billing import BillingMode
from pricing.catalog import Catalog, Interconnect
from pricing.errors import InputError, PriceMissingError, UnknownNameError
from pricing.money import Currency, Fx, Money
from providers.base import Offer
from planner.tco.host import given_host, size_host, tco_defaults
from planner.tco.compare import (
    Owned,
    Scenario,
    breakeven_month,
    build_tco,
    buy_option,
    monthly_vs_hourly_hours,
    parse_buy,
    rent_option,
)
from planner.settings import Settings

DOCS = Path(__file__).resolve().parents[3] / "docs" / "tco.md"
USD = Currency.USD
FX = Fx([])


def usd(v: str | int | Decimal) -> Money:
    return Money(amount=Decimal(v), currency=USD)


def owned(**over: object) -> Owned:
    """The docs/tco.md example hardware."""
    base: dict[str, object] = dict(
        name="2x DEMO", gpu="DEMO", gpu_count=2, vram_gb=24.0, card_price=usd(1000), card_native=usd(1000),
        card_source="test", card_as_of=date(2026, 1, 1), host=given_host(usd(1000), Decimal(100)),
        host_price=usd(1000), tdp_w=Decimal(300), idle_fraction=Decimal("0.1"), pue=Decimal("1.5"),
        kwh_price=usd("0.20"), kwh_label="test", depreciation_years=Decimal(3), resale_fraction=Decimal("0.25"),
        maintenance_fraction=Decimal("0.10"), hours_per_month=Decimal(730),
    )
    base.update(over)
    return Owned(**base)  # type: ignore[arg-type]


def offer(hourly: str = "1.50", monthly: str | None = "700", provider: str = "aws") -> Offer:
    rates = {BillingMode.HOURLY: Decimal(hourly)}
    if monthly is not None:
        rates[BillingMode.MONTHLY] = Decimal(monthly)
    return Offer(provider=provider, name="demo.1gpu", family="demo", region="test-1", gpu="DEMO", gpu_count=1.0,
                 interconnect=Interconnect.PCIE, currency=USD, rates=rates, source="test", as_of=date(2026, 1, 1))


def rent(o: Offer, usage: Decimal, months: int, mode: BillingMode = BillingMode.HOURLY,  # type: ignore[no-untyped-def]
         work_per_hour: Decimal | None = None):
    return rent_option(o, mode, usage, months, currency=USD, fx=FX, hours_per_month=Decimal(730),
                       spot_overhead=Decimal("0.1"), catalog=Catalog.shipped(), work_per_hour=work_per_hour)


def q2(d: Decimal) -> str:
    return f"{d.quantize(Decimal('0.01')):,}"


def test_the_hand_worked_example() -> None:
    doc = DOCS.read_text(encoding="utf-8")
    w = Decimal("1.6") * Decimal("0.95")  # each card 1.6x the reference GPU, 95% scaling on two
    assert f"w = 1.6 × 0.95 = **{w.normalize()}**" in doc
    o = owned(work_per_gpu_hour=w)
    usage = Decimal("0.5") * w * 2 * 730  # the docs' 1,109.6 reference GPU-hours
    assert f"usage {usage.normalize():,} reference" in doc
    u = o.utilization(usage)
    expected = {
        "CAPEX": (o.capex, "3,000.00"),
        "CAPEX_net": (o.capex_net, "2,250.00"),
        "energy kWh": (o.energy_kwh_per_month(u), "470.85"),
        "energy": (o.energy_per_month(u), "94.17"),
        "maintenance": (o.maintenance_per_month, "25.00"),
        "opex": (o.opex_per_month(u), "119.17"),
        "depreciation": (o.depreciation_per_month, "62.50"),
    }
    assert u == Decimal("0.5")
    assert o.average_watts(u) == 430
    for what, (value, text) in expected.items():
        assert q2(value) == text, what
        assert f"**{text}" in doc, f"docs/tco.md lost the {what} figure {text}"
    per_gpu_hour, per_work_hour = o.cost_per_gpu_hour(u), o.cost_per_work_hour(u)
    assert per_gpu_hour is not None and f"{per_gpu_hour:.4f}" == "0.2489" and "**0.2489**" in doc
    assert per_work_hour is not None and f"{per_work_hour:.4f}" == "0.1637" and "**0.1637**" in doc

    buy = buy_option(o, usage, 36)
    # The rented instance is one reference GPU: one reference GPU-hour of work an hour.
    hourly = rent(offer(), usage, 36, work_per_hour=Decimal(1))
    assert q2(hourly.monthly_cost[0]) == "1,664.40" and "**1,664.40**" in doc
    # cash month by month: the whole CAPEX in month 1, the resale back in the last month
    assert [q2(c) for c in buy.cumulative_cost[:2]] == ["3,119.17", "3,238.34"]
    assert q2(buy.monthly_cost[-1]) == q2(o.opex_per_month(u) - o.resale_value) == "-630.83"
    assert [q2(c) for c in hourly.cumulative_cost[:2]] == ["1,664.40", "3,328.80"]
    assert breakeven_month(buy.cumulative_cost, hourly.cumulative_cost) == 2 and "**month 2**" in doc
    formula = o.capex / (hourly.monthly_cost[0] - o.opex_per_month(u))
    assert f"{formula:.2f}" == "1.94" and "**1.94**" in doc
    bu = o.breakeven_utilization(Decimal("1.50"))
    assert bu is not None and f"{bu:.2%}" == "3.82%" and "**3.82 %**" in doc
    mvh = monthly_vs_hourly_hours(offer())
    assert mvh is not None and f"{mvh:.2f}" == "466.67" and "**466.67**" in doc
    assert q2(buy.total_cost) == "6,540.12" and "**6,540.12**" in doc
    assert q2(hourly.total_cost) == "59,918.40" and "**59,918.40**" in doc
    assert buy.cost_per_ref_gpu_hour == buy.total_cost / (usage * 36)


def test_line_items_multiply_out() -> None:
    o = owned()
    for item in o.lines(Decimal("0.5")):
        assert item.cost.amount == item.quantity * item.unit_price.amount
    capex_lines = [i for i in o.lines(Decimal("0.5")) if i.when.value == "once"]
    assert sum(i.cost.amount for i in capex_lines) == o.capex


def test_monthly_rental_buys_whole_subscriptions() -> None:
    # 1,000 instance hours a month need two 730-hour subscriptions.
    r = rent(offer(provider="tencent"), Decimal(1000), 3, BillingMode.MONTHLY)
    assert r.kind is BillingMode.MONTHLY
    assert r.monthly_cost == [Decimal(1400)] * 3


def test_reserved_term_past_the_horizon_is_owed() -> None:
    o = replace(offer(), rates={BillingMode.RESERVED_1Y: Decimal(1)})
    r = rent(o, Decimal(100), 18, BillingMode.RESERVED_1Y)
    assert r.monthly_cost[0] == 730
    assert r.total_cost == 24 * 730  # two full 1-year terms
    assert any("owed" in n for n in r.notes)


def test_horizon_past_the_life_buys_again() -> None:
    o = owned(depreciation_years=Decimal(1))
    b = buy_option(o, Decimal(730), 24)
    assert b.monthly_cost[0] == b.monthly_cost[12] > b.monthly_cost[1]
    assert any("bought again" in n for n in b.notes)


@pytest.mark.parametrize(("text", "want"), [("4x RTX-4090", (4, "RTX-4090")), ("RTX 4090", (1, "RTX 4090")),
                                            ("8 × V100", (8, "V100")), (" 2*A100 ", (2, "A100"))])
def test_parse_buy(text: str, want: tuple[int, str]) -> None:
    assert parse_buy(text) == want


@pytest.mark.parametrize(("text", "want"), [("8x 4090", (8, "4090")), ("2x 3090", (2, "3090")),
                                            ("8 x RTX 4090", (8, "RTX 4090")), ("8X4090", (8, "4090")),
                                            ("4090", (1, "4090")), ("2 x 2080 ti", (2, "2080 ti"))])
def test_parse_buy_takes_names_that_start_with_a_digit(text: str, want: tuple[int, str]) -> None:
    assert parse_buy(text) == want


@pytest.mark.parametrize("text", ["8x 4090", "8 x RTX 4090", "8x RTX-4090", "8X rtx_4090", " 8 * 4090 ",
                                  "8x GeForce RTX 4090"])
def test_buy_takes_every_form_the_catalog_resolves(text: str) -> None:
    count, name = parse_buy(text)
    assert (count, Catalog.shipped().gpu(name).key) == (8, "RTX-4090")


@pytest.mark.parametrize(("alias", "key"), [("3090", "RTX-3090"), ("2080 ti", "RTX-2080-TI"), ("a6000", "RTX-A6000"),
                                            ("v100", "V100-SXM2-32GB"), ("h100-sxm", "H100-SXM5-80GB")])
def test_buy_takes_every_alias_gpus_lists(alias: str, key: str) -> None:
    count, name = parse_buy(f"2x {alias}")
    assert (count, Catalog.shipped().gpu(name).key) == (2, key)


@pytest.mark.parametrize("text", ["", "4x", "0x RTX-4090", "2.5x RTX-4090", "-3x RTX", "65x 4090", "3 x", "1.x 4090"])
def test_parse_buy_rejects(text: str) -> None:
    with pytest.raises(InputError):
        parse_buy(text)


def test_sized_host_follows_the_rules() -> None:
    h = size_host(4, 24.0, dataset_gb=Decimal(1500))
    assert h.ram_gb is not None and h.ram_gb >= 96 and h.ram_gb % 32 == 0
    assert h.cpu_cores == 4 * int(tco_defaults()["cpu_cores_per_gpu"].value)
    assert h.nvme_tb == 3  # 2 x 1.5 TB
    assert all(p.cost.amount == p.quantity * p.unit_price.amount for p in h.parts)


def test_every_default_is_sourced_or_flagged() -> None:
    for d in tco_defaults().values():
        assert d.source and d.as_of and d.unit
        if "ASSUMPTION" in d.source:
            assert d.assumption, d.key
    assert not tco_defaults()["pue"].assumption
    assert not tco_defaults()["host_base_usd"].assumption  # a published 4-GPU host BOM (it was a flat guess)
    assert tco_defaults()["host_base_watts"].assumption


# ------------------------------------------------------------------ properties

FRACTION = st.decimals(min_value=Decimal("0.01"), max_value=Decimal(1), places=3)
MONEY = st.decimals(min_value=Decimal(1), max_value=Decimal(50000), places=2)


@st.composite
def owned_hw(draw: st.DrawFn) -> Owned:
    return owned(
        gpu_count=draw(st.integers(1, 8)),
        card_price=usd(draw(MONEY)),
        host_price=usd(draw(MONEY)),
        host=given_host(usd(1), draw(st.decimals(min_value=0, max_value=2000, places=0))),
        tdp_w=draw(st.decimals(min_value=50, max_value=1000, places=0)),
        idle_fraction=draw(st.decimals(min_value=0, max_value=1, places=2)),
        pue=draw(st.decimals(min_value=1, max_value=3, places=2)),
        kwh_price=usd(draw(st.decimals(min_value=0, max_value=1, places=3))),
        depreciation_years=draw(st.decimals(min_value=Decimal("0.5"), max_value=10, places=1)),
        resale_fraction=draw(st.decimals(min_value=0, max_value=1, places=2)),
        maintenance_fraction=draw(st.decimals(min_value=0, max_value=Decimal("0.5"), places=2)),
    )


@given(owned_hw(), FRACTION, FRACTION)
def test_higher_utilization_never_raises_owned_cost_per_gpu_hour(o: Owned, a: Decimal, b: Decimal) -> None:
    lo, hi = sorted((a, b))
    low, high = o.cost_per_gpu_hour(lo), o.cost_per_gpu_hour(hi)
    assert low is not None and high is not None
    assert high <= low


@settings(max_examples=150)
@given(owned_hw(), FRACTION, st.decimals(min_value=Decimal("0.05"), max_value=40, places=2), st.integers(1, 72))
def test_breakeven_month_is_where_the_cumulative_curves_cross(o: Owned, u: Decimal, rate: Decimal, months: int) -> None:
    usage = u * o.n * o.hours_per_month
    buy = buy_option(o, usage, months)
    r = rent(offer(hourly=str(rate), monthly=None), usage, months)
    m = breakeven_month(buy.cumulative_cost, r.cumulative_cost)
    pairs = list(zip(buy.cumulative_cost, r.cumulative_cost, strict=True))
    if m is None:
        assert all(b > c for b, c in pairs)
    else:
        assert all(b > c for b, c in pairs[: m - 1])
        assert pairs[m - 1][0] <= pairs[m - 1][1]
    # Within one life the curves are straight lines until the last month, when the resale comes back:
    # the crossing is CAPEX / gap's ceiling before then, else the last month if CAPEX_net / gap is within it.
    gap = r.monthly_cost[0] - o.opex_per_month(o.utilization(usage))
    if months <= o.life_months and gap > 0:
        cash, net = o.capex / gap, o.capex_net / gap
        assume(all(abs(x - x.to_integral_value()) > Decimal("1e-12") for x in (cash, net)))
        want = max(1, math.ceil(cash))
        assert m == (want if want < months else months if net <= months else None)


@given(owned_hw(), FRACTION, st.integers(1, 60))
def test_zero_resale_never_lowers_cost(o: Owned, u: Decimal, months: int) -> None:
    usage = u * o.n * o.hours_per_month
    none = o.model_copy(update={"resale_fraction": Decimal(0)})
    assert buy_option(none, usage, months).total_cost >= buy_option(o, usage, months).total_cost
    a, b = none.cost_per_gpu_hour(u), o.cost_per_gpu_hour(u)
    assert a is not None and b is not None and a >= b


@given(owned_hw(), st.decimals(min_value=Decimal("0.01"), max_value=50, places=2))
def test_breakeven_utilization_prices_owned_at_the_rental_rate(o: Owned, rate: Decimal) -> None:
    u = o.breakeven_utilization(rate)
    if u is None:
        at_full = o.cost_per_gpu_hour(Decimal(1))
        assert at_full is not None and at_full >= rate * (1 - Decimal("1e-9"))
    elif u == 0:  # owning costs nothing when idle (free host, zero idle draw): any use wins
        assert o.depreciation_per_month + o.opex_per_month(Decimal(0)) == 0
    else:
        cost = o.cost_per_gpu_hour(u)
        assert cost is not None and abs(cost - rate) <= rate * Decimal("1e-9")


@settings(max_examples=60)
@given(owned_hw(), FRACTION, st.decimals(min_value=Decimal("0.1"), max_value=10, places=2))
def test_faster_cards_do_the_same_work_in_fewer_hours(o: Owned, u: Decimal, k: Decimal) -> None:
    """Work, not hours: cards k times faster are busy 1/k as long for the same usage, and
    their cost per unit of work at a given utilization is 1/k of the slower cards'."""
    usage = u * o.n * o.hours_per_month
    fast = o.model_copy(update={"work_per_gpu_hour": k})
    assert abs(fast.utilization(usage) * k - o.utilization(usage)) <= o.utilization(usage) * Decimal("1e-20")
    slow_cost, fast_cost = o.cost_per_work_hour(u), fast.cost_per_work_hour(u)
    assert slow_cost is not None and fast_cost is not None
    assert abs(fast_cost * k - slow_cost) <= slow_cost * Decimal("1e-20")


@given(st.decimals(min_value=1, max_value=5000, places=1),
       st.decimals(min_value=Decimal("0.25"), max_value=8, places=2))
def test_a_rental_k_times_faster_bills_1_over_k_the_hours(usage: Decimal, k: Decimal) -> None:
    base = rent(offer(monthly=None), usage, 1, work_per_hour=Decimal(1))
    fast = rent(offer(monthly=None), usage, 1, work_per_hour=k)
    (base_item,), (fast_item,) = base.lines, fast.lines
    # Billed per second, rounded up (and a 28-digit quotient can round up one more second).
    seconds, digits = 2 * Decimal(1) / 3600, Decimal("1e-20")
    assert usage - digits <= base_item.quantity <= usage + seconds
    assert usage / k - digits <= fast_item.quantity <= usage / k + seconds


# ------------------------------------------------------------------ the issue's example


def example(**over: object):  # type: ignore[no-untyped-def]
    s = Settings()
    sc = Scenario(usage=Decimal(300), months=36, buy=["4x RTX-4090"], vs=["GN10Xp.20XLARGE320", "p3.16xlarge"])
    sc = sc.model_copy(update=over)
    return build_tco(sc, currency=s.currency, fx=s.fx_table(), hours_per_month=s.hours_per_month,
                     spot_overhead=s.spot_overhead, catalog=Catalog.shipped())


def test_the_issue_example() -> None:
    r = example()
    names = [o.name for o in r.options]
    assert names[0] == "buy 4x RTX-4090"
    assert {"p3.16xlarge hourly", "p3.16xlarge spot", "GN10Xp.20XLARGE320 monthly"} <= set(names)
    be = {b.vs: b.month for b in r.breakeven}
    p3 = next(b for b in r.breakeven if b.vs == "p3.16xlarge hourly")
    assert p3.months_formula is not None
    # The curves cross in the month CAPEX / (rent - opex) lands in (cash: no resale back yet), in the second year.
    assert p3.month == math.ceil(p3.months_formula) and 12 < p3.month <= 36
    assert be["GN10Xp.20XLARGE320 monthly"] == 3
    assert be["p3.16xlarge spot"] is None
    assert r.monthly_vs_hourly_hours["p3.16xlarge"] is None
    assert f"{r.monthly_vs_hourly_hours['GN10Xp.20XLARGE320']:.2f}" == "479.97"  # 46000 / 95.84
    assert "GN10Xp.20XLARGE320 spot" not in names  # an estimated spot price is compared only when asked for
    spot = next(o for o in example(spot_estimates=True).options if o.name == "GN10Xp.20XLARGE320 spot")
    assert spot.estimate and spot.native_currency is Currency.CNY
    assert "cheapest option" in r.verdict
    assert all(len(o.monthly_cost) == 36 for o in r.options)


def test_region_is_chosen_and_said() -> None:
    r = example(vs=["p3.16xlarge"], region="eu-west-1", billing=["hourly"])
    (rental,) = [o for o in r.options if o.kind is BillingMode.HOURLY]
    assert rental.region == "eu-west-1" and any("as asked" in n for n in rental.notes)
    with pytest.raises(InputError, match="region"):
        example(vs=["p3.16xlarge"], region="mars-1")


def test_bad_scenarios_fail_with_hints() -> None:
    with pytest.raises(UnknownNameError, match="p3.16xlarge"):
        example(vs=["p3.16xlarg"])
    with pytest.raises(UnknownNameError):
        example(buy=["4x RTX-9999"])
    with pytest.raises(InputError, match="months"):
        example(months=0)
    with pytest.raises(InputError, match="usage"):
        example(usage=Decimal(-1))
    with pytest.raises(InputError, match="can deliver"):
        example(usage=Decimal(4 * 730 * 10))  # more than four cards even ten times a V100 could do
    with pytest.raises(InputError, match="billing"):
        example(billing=["buy"])
    with pytest.raises(PriceMissingError):
        example(buy=["1x V100-PCIE-32GB"])


def test_currency_cny_keeps_tencent_native() -> None:
    s = Settings(currency="CNY")
    sc = Scenario(usage=Decimal(300), months=12, vs=["GN10Xp.20XLARGE320"], billing=["monthly"])
    r = build_tco(sc, currency=s.currency, fx=s.fx_table(), hours_per_month=s.hours_per_month,
                  spot_overhead=s.spot_overhead, catalog=Catalog.shipped())
    # the month's instance, 5 Mbps of bandwidth (the default) by tier: 2 x 20 + 3 x 25 CNY, and the default
    # 256 GB premium cloud disk bought with it at 0.35 CNY per GB-month, all in CNY
    assert r.options[0].monthly_cost[0] == 46000 + (2 * 20 + 3 * 25) + Decimal("0.35") * 256


def test_renting_includes_the_disk_address_egress_and_stored_data_each_month() -> None:
    s = Settings()
    base = Scenario(usage=Decimal(300), months=12, vs=["g6.xlarge"], billing=["hourly"], disk_gb=Decimal(0))
    more = base.model_copy(update={"disk_gb": Decimal(500), "egress_gb": Decimal(300), "storage_gb": Decimal(1000)})
    r0, r1 = (build_tco(sc, currency=s.currency, fx=s.fx_table(), hours_per_month=s.hours_per_month,
                        spot_overhead=s.spot_overhead, catalog=Catalog.shipped()) for sc in (base, more))
    hours = Decimal(r0.options[0].lines[0].quantity)  # the instance-hours a month
    # by hand: 500 GB gp3 kept for the project all month, 200 GB billed egress, 1000 GB of S3 Standard kept
    added = Decimal("0.08") * 500 + Decimal("0.09") * 200 + Decimal("0.023") * 1000
    assert r1.options[0].monthly_cost[0] - r0.options[0].monthly_cost[0] == pytest.approx(added)
    assert {ln.unit for ln in r1.options[0].lines} >= {"GB-month", "address-hour", "GB"}
    # a disk that lives only with the machine bills for the instance-hours alone
    gone = build_tco(more.model_copy(update={"disk_with_machine": True}), currency=s.currency, fx=s.fx_table(),
                     hours_per_month=s.hours_per_month, spot_overhead=s.spot_overhead, catalog=Catalog.shipped())
    assert r1.options[0].monthly_cost[0] - gone.options[0].monthly_cost[0] == pytest.approx(
        Decimal("0.08") * 500 * (1 - hours / 730))


def test_a_kept_disk_bills_the_whole_month_as_issue_40_found() -> None:
    s = Settings()
    sc = Scenario(usage=Decimal(100), months=12, vs=["p3.16xlarge"], billing=["hourly"])
    r = build_tco(sc, currency=s.currency, fx=s.fx_table(), hours_per_month=s.hours_per_month,
                  spot_overhead=s.spot_overhead, catalog=Catalog.shipped())
    disk = next(ln for ln in r.options[0].lines if "disk" in ln.description)
    assert disk.cost.amount == Decimal("0.08") * 256  # 20.48 USD a month, not the run's 12.9 hours' worth
