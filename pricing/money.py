"""Decimal money with a currency, and explicit currency conversion.

Amounts never mix currencies silently: adding CNY to USD raises, and the only way
between them is an :class:`FxRate` that carries its own source and date, loaded
from ``data/fx.csv`` (ECB's euro reference rates), from the cache ``gpuplan catalog
refresh --fx`` writes, or given by the user (``--fx``, ``GPUPLAN_FX``, config).

ECB publishes every rate against the euro (1 EUR = x USD, 1 EUR = y CNY). A pair with no
rate of its own (USD and CNY) is converted through the euro, as ECB's own cross rates are
worked out: 1 USD = y / x CNY. The cross rate is said as such, with both legs' source and
the older leg's date; a rate the user gives for the pair itself wins over it.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from enum import StrEnum
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict, field_validator

from pricing.errors import InputError, PriceMissingError
from pricing.fx_use import FX_USED as _FX_USED

CENT = Decimal("0.01")


class Currency(StrEnum):
    """Currencies prices are quoted in and ``--currency`` shows: the catalog's (CNY, USD) and the others the
    clouds bill in, all of which ECB publishes a euro reference rate for."""

    CNY = "CNY"
    USD = "USD"
    EUR = "EUR"
    GBP = "GBP"
    JPY = "JPY"
    SGD = "SGD"
    HKD = "HKD"

    @classmethod
    def parse(cls, text: str) -> Currency:
        try:
            return cls(text.strip().upper())
        except ValueError:
            known = ", ".join(c.value for c in cls)
            raise InputError(f"unknown currency {text!r}", f"use one of {known}") from None


def round_cents(amount: Decimal) -> Decimal:
    """To the cent, half-up, as bills round."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


_STEPS = {2: CENT, 4: Decimal("0.0001")}  # the places money is shown to, made once


def money_text(amount: Decimal, currency: str | None = None, *, places: int = 2, rounding: str = ROUND_HALF_UP) -> str:
    """Money as tables and sentences show it: ``places`` decimals, thousands grouped, then the currency if given.

    '1,234.50 USD'; ``places=4`` for a cost per GPU-hour ('0.3624'). Rounding is half-up,
    as bills round; the offer list and the launch summaries have always shown prices
    half-even (Python's own formatting), and pass ``rounding=ROUND_HALF_EVEN`` so their
    output stays what it was.
    """
    text = f"{amount.quantize(_STEPS.get(places) or Decimal(1).scaleb(-places), rounding=rounding):,}"
    return text if currency is None else f"{text} {currency}"


def rate_text(amount: Decimal, currency: str | None = None) -> str:
    """A price per hour or month as sentences show it: grouped, at least 2 and at most 6 places, no trailing zeros
    past the cents ('12.9785 USD', '5,750.00 CNY', '0.8048'), so a rate never reads '12.978500' or '5750.0'."""
    exponent = amount.normalize().as_tuple().exponent
    places = min(6, max(2, -exponent if isinstance(exponent, int) else 2))
    return money_text(amount, currency, places=places, rounding=ROUND_HALF_EVEN)


# The JSON number contract (README, "JSON contract"): money is a decimal string with
# exactly 2 places; every other decimal (quantity, unit price, rate, fraction) is a
# decimal string with at most DECIMAL_PLACES places; never an exponent.
DECIMAL_PLACES = 6
_JSON_STEPS = {DECIMAL_PLACES: Decimal(1).scaleb(-DECIMAL_PLACES)}  # made once: a JSON plan writes ~200k decimals


def money_json(d: Decimal) -> str:
    """An amount of money for JSON: '378.21', '46000.00'."""
    return f"{round_cents(d):f}"


def decimal_json(d: Decimal, places: int = DECIMAL_PLACES) -> str:
    """Any other Decimal for JSON: at most ``places`` places, no trailing zeros, no exponent ('200', '12.411111')."""
    text = f"{d.quantize(_JSON_STEPS.get(places) or Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP):f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text == "-0" else text


def to_decimal(value: object, what: str = "amount") -> Decimal:
    """A finite Decimal from user or data input, or an InputError naming ``what``."""
    try:
        d = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        raise InputError(f"{what} {value!r} is not a number") from None
    if not d.is_finite():
        raise InputError(f"{what} {value!r} is not a finite number")
    return d


@dataclass(frozen=True, slots=True)
class Money:
    """An amount in one currency. Arithmetic keeps full precision; round only to show.

    A plain value, not a pydantic model: a JSON plan over a 50k-offer catalog makes ~200k of them,
    and validating each cost ~2 us. What enters from outside (a budget, a price file) is parsed
    where it enters; here an amount that is not yet a Decimal, or a currency given by its code,
    is converted as the model did.
    """

    amount: Decimal
    currency: Currency

    def __post_init__(self) -> None:
        if type(self.amount) is not Decimal:
            if isinstance(self.amount, bool) or not isinstance(self.amount, (Decimal, int, float, str)):
                raise TypeError(f"an amount of money must be a number, not {type(self.amount).__name__}")
            object.__setattr__(self, "amount", Decimal(str(self.amount)))
        if type(self.currency) is not Currency:
            object.__setattr__(self, "currency", Currency(self.currency))

    @classmethod
    def zero(cls, currency: Currency) -> Money:
        return cls(amount=Decimal(0), currency=currency)

    def _same(self, other: Money) -> None:
        if other.currency != self.currency:
            raise ValueError(f"cannot combine {self.currency} with {other.currency} without an FX rate")

    def __add__(self, other: Money) -> Money:
        self._same(other)
        return money(self.amount + other.amount, self.currency)

    def __sub__(self, other: Money) -> Money:
        self._same(other)
        return money(self.amount - other.amount, self.currency)

    def __mul__(self, factor: Decimal | int) -> Money:
        return money(self.amount * Decimal(factor), self.currency)

    __rmul__ = __mul__

    def __lt__(self, other: Money) -> bool:
        self._same(other)
        return self.amount < other.amount

    def __le__(self, other: Money) -> bool:
        self._same(other)
        return self.amount <= other.amount

    def rounded(self) -> Decimal:
        """The amount to the cent, half-up, as bills round it."""
        return round_cents(self.amount)

    def as_json(self) -> dict[str, str]:
        """The JSON contract's money object: the amount to the cent as a string, and the currency."""
        return {"amount": money_json(self.amount), "currency": self.currency.value}

    def __str__(self) -> str:
        return money_text(self.amount, self.currency)


_set = object.__setattr__


def money(amount: Decimal, currency: Currency) -> Money:
    """``Money(amount=amount, currency=currency)`` for values already a Decimal and a Currency (what arithmetic,
    conversion and prices read from the catalog give): the same value, built without the checks, at ~0.3 us
    instead of ~0.85. A JSON plan over a 50k-row catalog makes ~300k of them."""
    m = object.__new__(Money)
    _set(m, "amount", amount)
    _set(m, "currency", currency)
    return m


class FxRate(BaseModel):
    """``rate`` units of ``quote`` buy one unit of ``base``."""

    # The validator is built when a rate is first checked (a user's --fx, a config file): the shipped rates are
    # typed as they are read, and a plan with no rate of its own builds none (~1 ms of every cold start).
    model_config = ConfigDict(frozen=True, defer_build=True)

    base: Currency
    quote: Currency
    rate: Decimal
    source: str
    as_of: date | None = None

    @field_validator("rate")
    @classmethod
    def _positive(cls, v: Decimal) -> Decimal:
        if not v.is_finite() or v <= 0:
            raise ValueError("an FX rate must be a positive number")
        return v

    def age_days(self, today: date | None = None) -> int | None:
        """Days since the rate's date; None for a rate the user gave (it is as new as the run)."""
        return None if self.as_of is None else ((today or date.today()) - self.as_of).days

    def label(self, today: date | None = None) -> str:
        age = self.age_days(today)
        when = f", as of {self.as_of}: {age_text(age)} old" if self.as_of and age is not None else ""
        return f"1 {self.base} = {self.shown()} {self.quote} ({self.source}{when})"

    def shown(self) -> str:
        """The rate as written: a published or given rate as it was, a cross rate's many digits to 6 places."""
        exponent = self.rate.as_tuple().exponent
        return decimal_json(self.rate) if isinstance(exponent, int) and exponent < -6 else str(self.rate)


def age_text(days: int) -> str:
    """'12 days', '3 months', '2 years': how old a figure is, in the unit a reader thinks in."""
    if days < 60:
        return f"{days} day{'s' if days != 1 else ''}"
    if days < 730:
        return f"{days // 30} months"
    return f"{days / 365:.1f} years"


PIVOT = Currency.EUR  # ECB quotes every currency against the euro: pairs without a rate of their own cross it


class Fx:
    """Converts money with the rates it was given, in either direction; a pair with no rate of its own through
    the euro (the rates are ECB's, all against it). The first rate given for a pair wins: user rates come first."""

    def __init__(self, rates: list[FxRate], pivot: Currency | None = PIVOT) -> None:
        self.rates = rates
        self.pivot = pivot
        self._cross: dict[tuple[Currency, Currency], tuple[Decimal, FxRate] | None] = {}
        self._seen: dict[FxRate, None] = {}  # the rates conversions used, in order (a dict keeps it)

    def _direct(self, src: Currency, dst: Currency) -> tuple[Decimal, FxRate] | None:
        for r in self.rates:
            if (r.base, r.quote) in ((src, dst), (dst, src)):
                return (r.rate if (r.base, r.quote) == (src, dst) else 1 / r.rate), r
        return None

    def _via_pivot(self, src: Currency, dst: Currency) -> tuple[Decimal, FxRate] | None:
        """The cross rate ``src`` -> ``dst`` through the pivot (made once per direction), and the rate as it is
        said: written the way round that reads as more than 1 (1 USD = 7.12 CNY, as its users write it)."""
        if (src, dst) in self._cross:
            return self._cross[(src, dst)]
        pivot, made = self.pivot, None
        if pivot is not None and pivot not in (src, dst):
            leg1, leg2 = self._direct(pivot, src), self._direct(pivot, dst)
            if leg1 is not None and leg2 is not None:
                # one division of the two per-euro figures, as published: 9 / 1.25 is 7.2 exactly
                exact = leg2[0] / leg1[0]
                (base, p, a), (quote, q, b) = ((src, leg1[0], leg1[1]), (dst, leg2[0], leg2[1]))
                if exact < 1:
                    (base, p, a), (quote, q, b) = (quote, q, b), (base, p, a)
                where = a.source if a.source == b.source else f"{a.source}; {b.source}"
                dates = [d for d in (a.as_of, b.as_of) if d is not None]
                said = FxRate.model_construct(
                    base=base, quote=quote, rate=q / p, as_of=min(dates) if dates else None,
                    source=f"cross via {pivot}: 1 {pivot} = {p} {base}, 1 {pivot} = {q} {quote}; {where}")
                made = (exact, said)
        self._cross[(src, dst)] = made
        return made

    def rate(self, src: Currency, dst: Currency) -> Decimal:
        if src == dst:
            return Decimal(1)
        if (direct := self._direct(src, dst)) is not None:
            self._use(direct[1])
            return direct[0]
        if (cross := self._via_pivot(src, dst)) is not None:
            self._use(cross[1])
            return cross[0]
        raise PriceMissingError(
            f"no exchange rate between {src} and {dst}",
            f"give one with --fx '1 {src} = N {dst}' or keep --currency {src}",
        )

    def _use(self, r: FxRate) -> None:
        self._seen[r] = None
        if (seen := _FX_USED.get()) is not None:
            seen.add(r)

    def convert(self, money: Money, dst: Currency) -> Money:
        if money.currency == dst:  # the same amount (x * 1 keeps x's digits): no new value to make
            return money
        return Money(amount=money.amount * self.rate(money.currency, dst), currency=dst)  # dst may come as text

    def used(self) -> list[FxRate]:
        """The rates conversions have used (a cross rate as one); before any, the rate in effect for each pair
        the table has (the first given: a user's rate hides a refreshed or shipped one for the same pair)."""
        if self._seen:
            return list(self._seen)
        first: dict[frozenset[Currency], FxRate] = {}
        for r in self.rates:
            first.setdefault(frozenset((r.base, r.quote)), r)
        return list(first.values())


def parse_fx(text: str) -> FxRate:
    """Parse a user rate such as ``USD/CNY=7.1`` or ``1 USD = 7.1 CNY``."""
    cleaned = text.replace(" ", "").upper()
    try:
        if cleaned.startswith("1") and "=" in cleaned:
            left, right = cleaned[1:].split("=", 1)
            base = Currency(left)
            digits = right.rstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
            quote = Currency(right[len(digits):])
        else:
            pair, digits = cleaned.split("=", 1)
            b, q = pair.split("/", 1)
            base, quote = Currency(b), Currency(q)
        rate = to_decimal(digits, "exchange rate")
        return FxRate(base=base, quote=quote, rate=rate, source="given by the user")
    except (ValueError, InputError):
        raise InputError(
            f"cannot read exchange rate {text!r}", "write it as USD/CNY=7.1 or '1 USD = 7.1 CNY'"
        ) from None


@lru_cache(maxsize=1)
def shipped_fx_rates() -> tuple[FxRate, ...]:
    """The sourced default rates in ``pricing/data/fx.csv``, typed as read (the tests validate the file)."""
    return read_fx_csv(resources.files("pricing.data").joinpath("fx.csv").read_text(encoding="utf-8"))


FX_FIELDS = ("base", "quote", "rate", "source", "as_of", "notes")  # fx.csv's columns, and the cache's


def read_fx_csv(text: str) -> tuple[FxRate, ...]:
    """Rates in fx.csv's columns (the shipped file, the cache), typed as read: their writers checked them."""
    rows = csv.DictReader(text.splitlines())
    return tuple(
        FxRate.model_construct(
            base=Currency(r["base"]),
            quote=Currency(r["quote"]),
            rate=Decimal(r["rate"]),
            source=r["source"],
            as_of=date.fromisoformat(r["as_of"]) if r["as_of"] else None,
        )
        for r in rows
    )
