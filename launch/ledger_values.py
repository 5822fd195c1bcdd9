"""Values read back from a ledger row, checked: what no gpuplan writes (a hand edit, a damaged file) is refused as
damage or read as unknown, never carried into a sum or a comparison that fails later as an internal error."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from providers.capabilities import InstanceState


def _dt(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def read_state(text: Any) -> InstanceState:
    try:
        return InstanceState(text)
    except ValueError:
        return InstanceState.UNKNOWN


MAX_AMOUNT = Decimal(10) ** 12  # more than any machine costs: a larger stored amount is damage, not a price


def check_amount(text: Any, column: str) -> None:
    """Refuse a stored amount no gpuplan writes (1e999999, NaN, negative): every cost sum would fail on it later."""
    if text is None:
        return
    value = Decimal(str(text))
    if not value.is_finite() or not 0 <= value <= MAX_AMOUNT:
        raise ValueError(f"{column} {str(text)[:20]} is not an amount gpuplan writes")


def read_time(text: str | None) -> datetime | None:
    """A stored time; one without its UTC offset (no gpuplan writes that) is unreadable, not compared and crashed on."""
    value = _dt(text)
    if value is not None and value.tzinfo is None:
        raise ValueError(f"time {text!r} has no UTC offset")
    return value


def read_time_or_none(text: Any) -> datetime | None:
    try:
        value = _dt(text)
    except (ValueError, TypeError):
        return None
    return None if value is None or value.tzinfo is None else value
