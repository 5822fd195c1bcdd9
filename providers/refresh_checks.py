"""Rows a refresh read from a provider, held to the bounds a user's catalog file is (before they are stored).

A provider's answer is data from outside like a CSV: a 1E+27 price stored in the cache broke every later
plan until ``catalog clear``; a 1E-9 one won every plan at 0.00; an escape sequence in an instance name
reached the terminal. Each row is checked with the catalog parser's own converters: a bad one is dropped
and named, the rest kept; every text field loses its control characters.
"""

from __future__ import annotations

from decimal import Decimal

from pricing.catalog import InstanceType
from pricing.catalog.parse import MAX_GPU_COUNT, MAX_MEM_GB, MAX_VCPU, _price, _RowError
from pricing.text import printable

PRICES = ("hourly", "hourly_high", "monthly", "monthly_high", "spot", "spot_high", "reserved_1y", "reserved_3y")
TEXTS = ("instance_type", "family", "gpu", "region", "zone", "source", "notes")


def _problem(row: InstanceType) -> str | None:
    for column in PRICES:
        value = getattr(row, column)
        if value is None:
            continue
        try:
            _price(column)(format(Decimal(value), "f") if Decimal(value).is_finite() else str(value))
        except _RowError as exc:
            return str(exc)
    for column, high in (("gpu_count", MAX_GPU_COUNT), ("vcpu", MAX_VCPU), ("mem_gb", MAX_MEM_GB)):
        value = float(getattr(row, column))
        if not 0 <= value <= high:  # also refuses nan
            return f"{column}: {value:g} is outside 0 to {high:g}"
    if not printable(row.instance_type).strip():
        return "no instance type name"
    return None


def checked_rows(rows: list[InstanceType]) -> tuple[list[InstanceType], list[str]]:
    """(the rows that hold, cleaned of control characters; what was dropped and why, one line each)."""
    kept: list[InstanceType] = []
    dropped: list[str] = []
    for row in rows:
        name = printable(row.instance_type)[:80]
        if (why := _problem(row)) is not None:
            dropped.append(f"{name} ({printable(row.zone or row.region)[:40]}): {printable(why)[:160]}")
            continue
        clean = {c: printable(getattr(row, c)) for c in TEXTS if printable(getattr(row, c)) != getattr(row, c)}
        zones = tuple(printable(z) for z in row.zones)
        if zones != row.zones:
            clean["zones"] = zones  # type: ignore[assignment]
        kept.append(row._replace(**clean) if clean else row)
    return kept, dropped
