"""The catalog parse: rows of the types pydantic's validation checks, errors that name line and column, small.

The parse converts and checks CSV values itself, column by column, and builds each row
as a named tuple with no validation of its own: pydantic's strict validation of the row's
declared types is the reference every accepted row must pass unchanged.
"""

from __future__ import annotations

import re
import tracemalloc
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from pricing.catalog import (
    INSTANCE_COLUMNS,
    Catalog,
    InstanceType,
    RATE_FIELDS,
    Layer,
    parse_instances,
    read_instance_file,
    shipped_instance_files,
)
from pricing.errors import InputError
from tests.fixtures.catalogs import HEADER, instance_csv

GOOD = "acme,a1.v100x1,a1,V100-SXM2-32GB,1,8,64,r1,,,USD,2.00,,,,0.50,,,,,made-up test figure,2026-01-01,"


ROW = TypeAdapter(InstanceType)


def validated(rows: Sequence[InstanceType]) -> list[InstanceType]:
    """Each row as pydantic's strict validation of InstanceType's declared types rebuilds it (or refuses it)."""
    return [ROW.validate_python(r._asdict(), strict=True) for r in rows]


@pytest.mark.parametrize("provider", list(shipped_instance_files()))
def test_shipped_rows_are_the_rows_pydantic_validates(provider: str) -> None:
    text = shipped_instance_files()[provider]
    rows = parse_instances(text, origin=provider, layer=Layer.SHIPPED, provider=provider)
    assert len(rows) > 10
    assert [r._asdict() for r in validated(rows)] == [r._asdict() for r in rows]


def test_the_shipped_catalog_is_built_from_checked_rows() -> None:
    rows = Catalog.shipped().instances
    assert validated(rows) == list(rows)


# Cell texts users write: good values, blanks, padding, and values that must be refused.
NUMBERS = st.sampled_from(["1", "8", "0.5", " 4 ", "0", "-1", "nan", "inf", "1e3", "two", "", "2.0"])
PRICES = st.sampled_from(["", "2.00", "0.1234", " 3.5 ", "0", "-1.5", "NaN", "Infinity", "1e2", "cheap", "  "])
WORDS = st.sampled_from(["", " ", "x", " Mixed Case ", "a;b;;c", "\u00e9t\u00e9"])


@st.composite
def rows(draw: st.DrawFn) -> list[str]:
    cell = {c: draw(WORDS) for c in INSTANCE_COLUMNS}
    cell.update(
        provider=draw(st.sampled_from(["acme", " ACME ", "", "p2"])),
        instance_type=draw(st.sampled_from(["a1.x", " b2 ", "", "c3.large"])),
        gpu=draw(st.sampled_from(["V100-SXM2-32GB", " T4 ", ""])),
        gpu_count=draw(NUMBERS), vcpu=draw(NUMBERS), mem_gb=draw(NUMBERS),
        currency=draw(st.sampled_from(["USD", "cny", "EUR", ""])),
        stock=draw(st.sampled_from(["", "available", "sold_out", "gone"])),
        as_of_kind=draw(st.sampled_from(["", "price_date", "read_date", "someday"])),
        as_of=draw(st.sampled_from(["2026-01-01", " 2025-12-31 ", "yesterday", ""])),
        **{p: draw(PRICES) for p in ("hourly", "hourly_high", "monthly", "monthly_high", "spot", "spot_high",
                                      "reserved_1y", "reserved_3y")},
    )
    return [cell[c] for c in INSTANCE_COLUMNS]


def _csv(lines: list[list[str]]) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(INSTANCE_COLUMNS)
    w.writerows(lines)
    return buf.getvalue()


@given(st.lists(rows(), min_size=1, max_size=6))
def test_any_rows_are_refused_with_a_line_or_read_as_rows_pydantic_validates(lines: list[list[str]]) -> None:
    text = _csv(lines)
    try:
        got = parse_instances(text, origin="t.csv", layer=Layer.USER)
    except InputError as exc:
        line = int(re.match(r"t\.csv line (\d+): ", exc.message).group(1))  # type: ignore[union-attr]
        assert 2 <= line <= len(lines) + 1
        return
    assert [r._asdict() for r in validated(got)] == [r._asdict() for r in got]
    for r in got:  # rates() spells each field out for speed: the same modes, in the same order, as rate() says
        assert list(r.rates().items()) == [(m, r.rate(m)) for m in RATE_FIELDS if r.rate(m) is not None]


@pytest.mark.parametrize("cell, value, needle", [
    ("hourly", "NaN", "hourly"),
    ("hourly", "Infinity", "not a finite number"),
    ("hourly", "-0.5", "negative"),
    ("hourly", "0", "hourly"),  # a price of 0 is no offer: it would win every plan at 0.00
    ("hourly", "-0", "hourly"),
    ("spot", "0.0", "spot"),
    ("monthly", "1e27", "monthly"),  # beyond Decimal's 28-digit context once multiplied by hours
    ("hourly", "10000001", "hourly"),
    ("gpu_count", "1e9", "gpu_count"),  # ranked first at 0.00 per GPU-hour
    ("gpu_count", "129", "gpu_count"),
    ("vcpu", "100000000", "vcpu"),
    ("mem_gb", "1e12", "mem_gb"),
    ("gpu_count", "0", "gpu_count"),
    ("gpu_count", "inf", "gpu_count"),
    ("vcpu", "8.5", "vcpu"),
    ("mem_gb", "-1", "mem_gb"),
    ("stock", "plenty", "stock"),
    ("instance_type", " ", "no instance_type"),
    ("gpu", "", "no gpu"),
    ("as_of", "2026-13-01", "as_of"),
])
def test_a_bad_value_is_refused_with_its_column_and_line(cell: str, value: str, needle: str) -> None:
    columns = HEADER.split(",")
    row = dict(zip(columns, GOOD.split(","), strict=True))
    row[cell] = value
    text = instance_csv(GOOD, ",".join(row[c] for c in columns))
    with pytest.raises(InputError) as err:
        parse_instances(text, origin="mine.csv", layer=Layer.USER)
    assert err.value.message.startswith("mine.csv line 3: ") and needle in err.value.message


def test_the_line_of_a_bad_row_survives_comments_blank_rows_and_chunks() -> None:
    good = [GOOD.replace("a1.v100x1", f"a1.n{i}") for i in range(5000)]
    lines = [HEADER, "# a comment", "", *good[:4500], " , , ", *good[4500:], GOOD.replace("2.00", "oops")]
    with pytest.raises(InputError, match=r"line 5005: hourly: 'oops' is not a number"):
        parse_instances("\n".join(lines) + "\n", origin="big.csv", layer=Layer.USER)
    rows = parse_instances("\n".join(lines[:-1]) + "\n", origin="big.csv", layer=Layer.USER)
    assert [r.instance_type for r in rows] == [f"a1.n{i}" for i in range(5000)]


def test_short_rows_and_missing_optional_columns_read_as_empty() -> None:
    text = "provider,instance_type,gpu,gpu_count,region,currency,source,as_of\nacme,a1.x,T4,1,r1,USD,src,2026-01-01\n"
    (row,) = parse_instances(text, origin="t.csv", layer=Layer.USER)
    assert (row.family, row.hourly, row.vcpu, row.zones, row.notes) == ("a1", None, 0, (), "")
    short = instance_csv(GOOD[: GOOD.index(",made-up")].rsplit(",", 6)[0])
    with pytest.raises(InputError, match="line 2"):  # no source, no date
        parse_instances(short, origin="t.csv", layer=Layer.USER)


def test_a_file_that_is_not_utf8_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.csv"
    path.write_bytes(instance_csv(GOOD.replace("made-up", "m\u00e4de-up")).encode("latin-1"))
    with pytest.raises(InputError, match="not a readable CSV"):
        read_instance_file(path, Layer.USER)


def test_parsed_rows_are_values_a_caller_can_rely_on() -> None:
    (row,) = parse_instances(instance_csv(GOOD), origin="t.csv", layer=Layer.USER)
    assert row.hourly == Decimal("2.00") and row.spot == Decimal("0.50") and row.gpu_count == 1.0
    with pytest.raises(AttributeError):  # a row is immutable
        row.hourly = Decimal(1)  # type: ignore[misc]
    assert hash(row) == hash(row._replace())  # and hashable
    copy = row._replace(hourly=Decimal("1.5"))
    assert copy.hourly == Decimal("1.5") and row.hourly == Decimal("2.00")
    assert validated([row]) == [row]


def test_a_big_catalog_costs_well_under_2_kb_a_row(tmp_path: Path) -> None:
    # Pydantic rows cost ~3.3 kB each (a 2 kB fields-set per row); 200k rows must fit in memory.
    lines = [GOOD.replace("a1.v100x1", f"a1.n{i}").replace("2.00", f"{2 + i / 1000:.3f}") for i in range(8_000)]
    path = tmp_path / "big.csv"
    path.write_text(instance_csv(*lines), encoding="utf-8")
    tracemalloc.start()
    try:
        rows = read_instance_file(path, Layer.USER)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(rows) == 8_000
    assert held / len(rows) < 2000
