from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pricing.errors import InputError, PriceMissingError
from pricing.money import Currency, Fx, FxRate, Money, money_text, parse_fx, shipped_fx_rates

USD_CNY = FxRate(base=Currency.USD, quote=Currency.CNY, rate=Decimal("7.2734"), source="test")


def test_adding_different_currencies_is_refused() -> None:
    with pytest.raises(ValueError, match="FX rate"):
        Money(amount=Decimal(1), currency=Currency.USD) + Money(amount=Decimal(1), currency=Currency.CNY)


def test_rounding_is_half_up_to_the_cent() -> None:
    assert Money(amount=Decimal("2.345"), currency=Currency.USD).rounded() == Decimal("2.35")
    assert str(Money(amount=Decimal("46000"), currency=Currency.CNY)) == "46,000.00 CNY"


def test_conversion_uses_the_rate_both_ways() -> None:
    fx = Fx([USD_CNY])
    assert fx.convert(Money(amount=Decimal(10), currency=Currency.USD), Currency.CNY).amount == Decimal("72.734")
    back = fx.convert(Money(amount=Decimal("72.734"), currency=Currency.CNY), Currency.USD)
    assert back.amount == Decimal(10)


@given(st.decimals(min_value=Decimal("0.01"), max_value=Decimal("1e9"), places=2))
def test_cny_usd_cny_round_trips_to_the_cent(amount: Decimal) -> None:
    fx = Fx([USD_CNY])
    cny = Money(amount=amount, currency=Currency.CNY)
    again = fx.convert(fx.convert(cny, Currency.USD), Currency.CNY)
    assert again.rounded() == cny.rounded()


def test_missing_rate_says_how_to_give_one() -> None:
    with pytest.raises(PriceMissingError) as err:
        Fx([]).rate(Currency.USD, Currency.CNY)
    assert "--fx" in str(err.value)


@pytest.mark.parametrize("text", ["USD/CNY=7.1", "1 USD = 7.1 CNY", "usd/cny=7.1"])
def test_user_rates_parse(text: str) -> None:
    r = parse_fx(text)
    assert (r.base, r.quote, r.rate) == (Currency.USD, Currency.CNY, Decimal("7.1"))


@pytest.mark.parametrize("text", ["USD/CNY=-1", "USD/XYZ=1", "seven", "USD/CNY=nan"])
def test_bad_user_rates_are_input_errors(text: str) -> None:
    with pytest.raises(InputError):
        parse_fx(text)


def test_shipped_rate_is_sourced_and_dated() -> None:
    rates = shipped_fx_rates()
    assert rates, "a default USD/CNY rate ships with the catalog"
    for r in rates:
        assert r.source and r.as_of is not None


def test_one_formatter_writes_money_for_every_output() -> None:
    assert money_text(Decimal("1234.005"), Currency.USD) == "1,234.01 USD"  # half-up, as bills round
    assert money_text(Decimal("0.36245"), places=4) == "0.3625"
    assert money_text(Decimal("0.125")) == "0.13"
    # the offer list has always rounded half-even (Python's own formatting): kept so its output stays
    assert money_text(Decimal("0.125"), rounding=ROUND_HALF_EVEN) == f"{Decimal('0.125'):,.2f}" == "0.12"
    assert money_text(Decimal("1e3"), places=1) == "1,000.0"
    assert str(Money(amount=Decimal("46000"), currency=Currency.CNY)) == money_text(Decimal("46000"), Currency.CNY)


@pytest.mark.parametrize(("amount", "shown"), [
    ("12.978500", "12.9785 USD"),  # a spot rate: its own places, never padded to six
    ("5750.0", "5,750.00 USD"),  # a month: grouped, to the cent
    ("0.8048", "0.8048 USD"), ("3.06", "3.06 USD"), ("0.00001234567", "0.000012 USD"), ("1E+3", "1,000.00 USD"),
])
def test_a_rate_is_shown_with_its_own_places_grouped_and_never_padded(amount: str, shown: str) -> None:
    from pricing.money import rate_text

    assert rate_text(Decimal(amount), "USD") == shown
