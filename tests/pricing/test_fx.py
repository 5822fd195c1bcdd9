"""Exchange rates: ECB's euro reference rates shipped with their date, every currency the clouds bill in, pairs
without a rate of their own crossed through the euro as ECB's cross rates are, and the user's rates first."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from datetime import date, timedelta
from decimal import Decimal
from importlib import resources
from itertools import permutations

import pytest

from pricing.money import Currency, Fx, FxRate, parse_fx, shipped_fx_rates

Run = Callable[..., tuple[int, str, str]]


def _ecb_file() -> dict[str, Decimal]:
    """fx.csv read as plain CSV (not by the code under test): quote -> units per euro."""
    text = resources.files("pricing.data").joinpath("fx.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    assert {r["base"] for r in rows} == {"EUR"}
    return {r["quote"]: Decimal(r["rate"]) for r in rows}


def test_the_shipped_rates_are_ecbs_dated_and_cover_every_currency() -> None:
    per_euro = _ecb_file()
    assert set(per_euro) == {c.value for c in Currency} - {"EUR"} >= {"USD", "CNY", "GBP", "JPY", "SGD", "HKD"}
    for r in shipped_fx_rates():
        assert "ecb.europa.eu" in r.source and r.as_of is not None


def test_every_pair_converts_through_the_euro_as_ecb_crosses_it() -> None:
    per_euro = {**_ecb_file(), "EUR": Decimal(1)}
    fx = Fx(list(shipped_fx_rates()))
    for a, b in permutations(Currency, 2):
        assert fx.rate(a, b) == pytest.approx(per_euro[b.value] / per_euro[a.value], rel=Decimal("1e-20")), (a, b)


def test_a_cross_rate_says_it_is_one_with_both_legs_and_the_older_date() -> None:
    eur_usd = FxRate(base=Currency.EUR, quote=Currency.USD, rate=Decimal("1.25"), source="A", as_of=date(2026, 3, 1))
    eur_cny = FxRate(base=Currency.EUR, quote=Currency.CNY, rate=Decimal(9), source="B", as_of=date(2026, 2, 1))
    fx = Fx([eur_usd, eur_cny])
    assert fx.rate(Currency.CNY, Currency.USD) == Decimal("1.25") / 9
    (used,) = fx.used()
    assert (used.base, used.quote, used.rate, used.as_of) == (Currency.USD, Currency.CNY, Decimal("7.2"),
                                                              date(2026, 2, 1))
    label = used.label(today=date(2026, 3, 1))
    assert label.startswith("1 USD = 7.2 CNY (cross via EUR: 1 EUR = 1.25 USD, 1 EUR = 9 CNY; A; B")


def test_the_users_rate_for_a_pair_wins_over_the_cross() -> None:
    mine = parse_fx("USD/CNY=7.5")
    fx = Fx([mine, *shipped_fx_rates()])
    assert fx.rate(Currency.CNY, Currency.USD) == 1 / Decimal("7.5")
    assert fx.used() == [mine]
    # a leg of the user's own changes every cross through it
    legged = Fx([parse_fx("EUR/USD=1.0"), *shipped_fx_rates()])
    assert legged.rate(Currency.USD, Currency.GBP) == _ecb_file()["GBP"]


def test_without_a_pivot_a_missing_pair_is_an_error_not_a_guess() -> None:
    from pricing.errors import PriceMissingError

    with pytest.raises(PriceMissingError, match="--fx"):
        Fx(list(shipped_fx_rates()), pivot=None).rate(Currency.USD, Currency.CNY)


def test_a_rate_warns_only_when_over_90_days_old() -> None:
    from gpuplan.settings import run_warnings

    fx = Fx(list(shipped_fx_rates()))
    fx.rate(Currency.CNY, Currency.USD)
    (used,) = fx.used()
    assert used.as_of is not None
    assert not [w for w in run_warnings({used}, today=used.as_of + timedelta(days=90)) if "rate" in w]
    (warning,) = [w for w in run_warnings({used}, today=used.as_of + timedelta(days=91)) if "rate" in w]
    assert "shipped rate 1 USD =" in warning and "catalog refresh --fx" in warning and "--fx USD/CNY=" in warning


@pytest.mark.parametrize("code", ["EUR", "GBP", "JPY", "SGD", "HKD"])
def test_a_plan_shows_every_billing_currency(gpuplan: Run, code: str) -> None:
    def first(*args: str) -> tuple[Decimal, str]:
        res, out, err = gpuplan("plan", "--gpu-hours", "10", "--provider", "aws", "--billing", "hourly", *args,
                                "--json")
        assert res == 0, err
        plan = json.loads(out)
        return Decimal(plan["options"][0]["total"]), plan["currency"]

    usd, _ = first()
    shown, currency = first("--currency", code.lower(), "--budget", "5000 USD")
    per_euro = {**_ecb_file(), "EUR": Decimal(1)}
    assert currency == code
    assert shown == pytest.approx(usd * per_euro[code] / per_euro["USD"], abs=Decimal("0.01") * per_euro[code])


def test_before_any_conversion_the_rates_in_effect_are_listed_once_per_pair() -> None:
    mine = parse_fx("EUR/USD=1.2")
    listed = Fx([mine, *shipped_fx_rates()]).used()
    assert listed[0] == mine and sum(1 for r in listed if {r.base, r.quote} == {Currency.EUR, Currency.USD}) == 1
    assert len(listed) == len(shipped_fx_rates())
