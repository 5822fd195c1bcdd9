"""Parsing the quantities users type: durations, GPU-hours, money."""

from __future__ import annotations

from typing import Any

import re
from decimal import Decimal

from pricing.errors import InputError
from pricing.money import Currency, Money, to_decimal
from planner.limits import bounded

_DURATION_UNITS = {"s": Decimal(1) / 3600, "sec": Decimal(1) / 3600,
                   "m": Decimal(1) / 60, "min": Decimal(1) / 60, "h": Decimal(1), "d": Decimal(24), "w": Decimal(168)}


def positive(value: object, what: str, *, allow_zero: bool = False) -> Decimal:
    """A finite, positive Decimal, or an InputError that names ``what``."""
    d = to_decimal(value, what)
    if d < 0 or (d == 0 and not allow_zero):
        raise InputError(f"{what} must be {'zero or more' if allow_zero else 'positive'}, got {value}")
    return d


def parse_duration(text: str, flag: str = "--deadline", bound: str = "deadline") -> Decimal:
    """Hours in ``36h``, ``3d``, ``2w``, ``90m``, ``30s`` or a bare number of hours, within ``BOUNDS[bound]``."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?\d+)?)\s*([a-zA-Z]*)\s*", text)
    unit = (m.group(2).lower() if m else "") or "h"
    if not m or unit not in _DURATION_UNITS:
        raise InputError(f"cannot read the {flag} duration {text!r}", "write it like 36h, 3d, 2w, 90m or 30s")
    hours = positive(m.group(1), f"{flag} duration") * _DURATION_UNITS[unit]
    return bounded(hours, bound, f"{flag} {text.strip()!r}")


# A pattern, not a compiled one: re compiles it (~0.2 ms) when a money flag is first read, not at every start.
_MONEY = (r"\s*(?:([A-Za-z]+)\s*)?([-+]?[0-9][0-9,]*\.?[0-9]*(?:[eE][-+]?[0-9]+)?|[-+]?\.[0-9]+)\s*([A-Za-z]+)?\s*")


def parse_money(text: str, default: Currency, flag: str = "--budget") -> Money:
    """``5000``, ``5000 CNY``, ``USD 5000`` or ``5000USD`` as Money (bare numbers take ``default``)."""
    m = re.fullmatch(_MONEY, text)
    if m is None or (m.group(1) and m.group(3)):
        if not any(ch.isdigit() for ch in text):
            raise InputError(f"{flag} {text!r} is not a number", "write it like 5000 or '5000 CNY'")
        raise InputError(f"cannot read {flag} {text!r}", "write it like 5000 or '5000 CNY'")
    if "," in m.group(2) and not re.fullmatch(r"[-+]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?", m.group(2)):
        # "5,00" is five in half the world and five hundred in the other: a cap read the wrong way spends 100 times
        # what was meant, so no comma is guessed at; only whole groups of thousands (as gpuplan prints: 1,234.50)
        raise InputError(f"cannot read {flag} {text.strip()!r}: a comma here is not a thousands separator",
                         "write the decimals after a point, e.g. 5.00 or '5.00 CNY'; a comma only between groups "
                         "of three digits, as in 1,234.50")
    unit = m.group(1) or m.group(3)
    currency = Currency.parse(unit) if unit else default
    amount = positive(m.group(2).replace(",", ""), flag)
    return Money(amount=bounded(amount, "budget", f"{flag} {text.strip()!r}"), currency=currency)


def parse_enum(enum: Any, value: str | None, flag: str) -> Any:
    """An enum member from a flag value, forgiving case and dashes (zero-3 is zero3); None stays None."""
    if value is None:
        return None
    v = value.strip().lower()
    try:
        return enum(v) if v in {e.value for e in enum} else enum(v.replace("-", ""))
    except ValueError:
        known = ", ".join(e.value for e in enum)
        raise InputError(f"unknown {flag} {value!r}", f"use one of {known}") from None
