"""A second, independent source for shipped instance rows, and the check that the two agree.

``pricing/data/second_sources.csv`` records, per (cloud, instance type, region, price column), the
figure another source gives (the cloud's own price API or catalog export, a public price list copy)
with that source and its date. A shipped row and its second source that differ by more than
:data:`TOLERANCE` are a disagreement unless the second-source row's note says why (for example: the
shipped row follows the cloud's own catalog and the recorded figure is the source it replaced).
Offline: the figures are data; ``benchmarks/second_source.py`` refreshes them with the network.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from pricing.catalog import InstanceType
from pricing.datafiles import data_rows

TOLERANCE = Decimal("0.05")
COLUMNS = ("hourly", "monthly", "spot")  # the price columns a second source can be recorded for


@dataclass(frozen=True, slots=True)
class SecondSource:
    cloud: str
    instance_type: str
    region: str
    column: str
    value: Decimal
    currency: str
    source: str
    as_of: date
    note: str


@dataclass(frozen=True, slots=True)
class Disagreement:
    """A shipped price more than :data:`TOLERANCE` from its second source, with no note saying why."""

    second: SecondSource
    found: Decimal | None  # None: no shipped row has the column priced

    def __str__(self) -> str:
        s = self.second
        got = "no price" if self.found is None else f"{self.found}"
        return (f"{s.cloud} {s.instance_type} {s.region} {s.column}: shipped {got}, second source {s.value} "
                f"{s.currency} ({s.source}, {s.as_of})")


def second_sources(rows: Iterable[dict[str, str]] | None = None) -> list[SecondSource]:
    """The recorded second sources (the shipped file's unless ``rows`` are given)."""
    out = []
    for r in data_rows("second_sources.csv") if rows is None else rows:
        if r["column"] not in COLUMNS:
            raise ValueError(f"second_sources.csv: unknown price column {r['column']!r}")
        out.append(SecondSource(cloud=r["cloud"], instance_type=r["instance_type"], region=r["region"],
                                column=r["column"], value=Decimal(r["value"]), currency=r["currency"],
                                source=r["source"], as_of=date.fromisoformat(r["as_of"]), note=r["note"].strip()))
    return out


def disagreements(shipped: Iterable[InstanceType], seconds: Iterable[SecondSource],
                  tolerance: Decimal = TOLERANCE) -> list[Disagreement]:
    """Every second source that a shipped row of its type and region misses by more than ``tolerance``
    (each zone row of a region is checked), or that no shipped row prices at all, unless its note says why."""
    by_key: dict[tuple[str, str, str], list[InstanceType]] = {}
    for row in shipped:
        by_key.setdefault((row.provider, row.instance_type, row.region), []).append(row)
    out = []
    for s in seconds:
        if s.note:
            continue  # the note says why the shipped row may differ
        rows = by_key.get((s.cloud, s.instance_type, s.region), [])
        values = [v for r in rows if (v := getattr(r, s.column)) is not None and r.currency.value == s.currency]
        if not values:
            out.append(Disagreement(s, None))
        out.extend(Disagreement(s, v) for v in values if abs(v - s.value) > tolerance * s.value)
    return out
