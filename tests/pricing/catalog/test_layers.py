"""Catalog.load: the shipped snapshot, the refreshed cache and user files, later layers winning."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from pricing.billing import BillingMode
from pricing.catalog import Catalog, Layer, Stock, instances_csv, parse_instances
from pricing.errors import InputError
from tests.fixtures.catalogs import instance_csv


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_without_cache_or_files_the_catalog_is_the_shipped_snapshot(tmp_path: Path) -> None:
    cat = Catalog.load(cache=tmp_path / "nothing-here")
    assert [layer.layer for layer in cat.layers] == [Layer.SHIPPED]
    assert cat.instances == Catalog.shipped().instances


def test_a_user_file_overrides_the_same_offer_and_adds_new_ones(tmp_path: Path) -> None:
    user = write(tmp_path / "mine.csv", instance_csv(
        "aws,p3.16xlarge,p3,V100-SXM2-16GB,8,64,488,us-east-1,,,USD,12.00,,,,,,,,,negotiated price,2026-11-01,",
        "mylab,rack1.4090x4,rack1,RTX-4090,4,32,256,lab-1,,,USD,1.10,,,,,,,,,internal chargeback,2026-11-01,",
    ))
    cat = Catalog.load(user_files=[user])
    p3 = [r for r in cat.instance("p3.16xlarge") if r.region == "us-east-1"]
    assert len(p3) == 1 and p3[0].hourly == Decimal("12.00") and p3[0].layer is Layer.USER
    assert p3[0].source == "negotiated price"
    assert "mylab" in cat.providers
    # other shipped rows are untouched
    assert cat.instance("GN10Xp.20XLARGE320")[0].hourly == Decimal("95.84")
    assert [layer.layer for layer in cat.layers] == [Layer.SHIPPED, Layer.USER]


def test_refreshed_zone_rows_retire_the_pseudo_region_row(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    write(cache / "tencent" / "ap-guangzhou.csv", instance_csv(
        "tencent,GN10Xp.2XLARGE40,GN10Xp,V100-SXM2-32GB,1,10,40,ap-guangzhou,ap-guangzhou-3,,CNY,11.00,,5500,,2.10,,,,"
        "available,live test,2026-12-01,",
        "tencent,GN10Xp.2XLARGE40,GN10Xp,V100-SXM2-32GB,1,10,40,ap-guangzhou,ap-guangzhou-4,,CNY,11.50,,5600,,,,,,"
        "sold_out,live test,2026-12-01,",
    ))
    cat = Catalog.load(cache=cache)
    rows = cat.instance("GN10Xp.2XLARGE40")
    assert {r.region for r in rows} == {"ap-guangzhou"}  # the cn-mainland list-price row is gone
    assert {r.zone: r.stock for r in rows} == {"ap-guangzhou-3": Stock.AVAILABLE, "ap-guangzhou-4": Stock.SOLD_OUT}
    assert cat.live_providers == frozenset({"tencent"})
    # types the refresh did not cover keep their shipped rows
    assert cat.instance("GN10Xp.20XLARGE320")[0].region == "cn-mainland"


def test_a_bad_row_names_the_file_and_line(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.csv", instance_csv(
        "acme,a1,a1,V100-SXM2-32GB,1,8,64,r1,,,USD,2.00,,,,,,,,,src,2026-01-01,",
        "acme,a2,a2,V100-SXM2-32GB,1,8,64,r1,,,USD,two dollars,,,,,,,,,src,2026-01-01,",
    ))
    with pytest.raises(InputError) as err:
        Catalog.load(user_files=[bad])
    assert str(bad) in err.value.message and "line 3" in err.value.message


@pytest.mark.parametrize("line, words", [
    ("acme,a1,a1,NO-SUCH-GPU,1,8,64,r1,,,USD,2.00,,,,,,,,,src,2026-01-01,", "NO-SUCH-GPU"),
    ("acme,a1,a1,V100-SXM2-32GB,1,8,64,r1,,,XYZ,2.00,,,,,,,,,src,2026-01-01,", "line 2"),
    ("acme,a1,a1,V100-SXM2-32GB,1,8,64,r1,,,USD,-2.00,,,,,,,,,src,2026-01-01,", "negative"),
    ("acme,a1,a1,V100-SXM2-32GB,1,8,64,r1,,,USD,2.00,,,,,,,,,src,yesterday,", "line 2"),
])
def test_bad_user_rows_are_input_errors(tmp_path: Path, line: str, words: str) -> None:
    path = write(tmp_path / "x.csv", instance_csv(line))
    with pytest.raises(InputError) as err:
        Catalog.load(user_files=[path])
    assert words in err.value.message


def test_a_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read catalog file"):
        Catalog.load(user_files=[tmp_path / "absent.csv"])


def test_rows_survive_a_csv_round_trip() -> None:
    rows = Catalog.shipped().instances
    again = parse_instances(instances_csv(rows), origin="round trip", layer=Layer.SHIPPED)
    assert [r._asdict() for r in again] == [r._asdict() for r in rows]
    assert again[0].rate(BillingMode.HOURLY) == rows[0].rate(BillingMode.HOURLY)


def test_a_rows_rates_in_one_pass_are_its_rate_per_mode_in_mode_order() -> None:
    from pricing.billing import BillingMode

    for row in Catalog.shipped().instances:
        every = {m: r for m in BillingMode if (r := row.rate(m)) is not None}
        highs = {m: r for m in BillingMode if (r := row.rate_high(m)) is not None}
        assert list(row.rates().items()) == list(every.items())
        assert list(row.rates_high().items()) == list(highs.items())
