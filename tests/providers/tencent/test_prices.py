"""Live prices and stock: DescribeZoneInstanceConfigInfos through the SDK into catalog rows."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from pricing.catalog import Catalog, InstanceType, Layer, Stock, write_instances
from pricing.errors import ProviderError
from pricing.money import Currency
from providers.tencent.prices import TencentPriceFetcher
from providers.testing.fake_cvm import FakeCvm, FakeOffer

READ_AT = datetime(2026, 12, 2, 14, 5, tzinfo=UTC)


def fetch(catalog: Catalog, region: str = "ap-guangzhou", **kw: object) -> list[InstanceType]:
    fetcher = TencentPriceFetcher(clock=lambda: READ_AT, **kw)  # type: ignore[arg-type]
    return fetcher.fetch(region, catalog)


def row(rows: list[InstanceType], kind: str, zone: str) -> InstanceType:
    found = [r for r in rows if r.instance_type == kind and r.zone == zone]
    assert len(found) == 1, [(r.instance_type, r.zone) for r in rows]
    return found[0]


def test_one_row_per_type_and_zone_with_every_charge_type(tencent_env: FakeCvm, catalog: Catalog) -> None:
    rows = fetch(catalog)
    assert sorted((r.instance_type, r.zone) for r in rows) == [
        ("GN10Xp.20XLARGE320", "ap-guangzhou-3"), ("GN10Xp.20XLARGE320", "ap-guangzhou-4"),
        ("GN10Xp.2XLARGE40", "ap-guangzhou-3"), ("GN10Xp.2XLARGE40", "ap-guangzhou-4"),
        ("GN7.2XLARGE32", "ap-guangzhou-3"), ("GN7.2XLARGE32", "ap-guangzhou-4"),
    ]  # no Shanghai rows, no CPU type
    gn = row(rows, "GN10Xp.2XLARGE40", "ap-guangzhou-3")
    assert (gn.hourly, gn.monthly, gn.spot) == (Decimal("10.0"), Decimal("5000.0"), Decimal("2.0"))
    assert gn.gpu == "V100-SXM2-32GB" and gn.gpu_count == 1 and (gn.vcpu, gn.mem_gb) == (10, 40)
    assert (gn.provider, gn.family, gn.region, gn.zones) == ("tencent", "GN10Xp", "ap-guangzhou", ("ap-guangzhou-3",))
    assert gn.currency is Currency.CNY and gn.layer is Layer.CACHE and gn.stock is Stock.AVAILABLE
    assert gn.source == "Tencent CVM DescribeZoneInstanceConfigInfos, ap-guangzhou, read 2026-12-02T14:05:00Z"
    assert gn.as_of == date(2026, 12, 2)
    other = row(rows, "GN10Xp.2XLARGE40", "ap-guangzhou-4")
    assert (other.hourly, other.monthly, other.spot) == (Decimal("11.0"), Decimal("5500.0"), Decimal("2.2"))


def test_the_request_asks_for_the_catalogs_gpu_families_and_three_charge_types(tencent_env: FakeCvm,
                                                                             catalog: Catalog) -> None:
    fetch(catalog)
    (call,) = tencent_env.calls_of("DescribeZoneInstanceConfigInfos")
    filters = {f["Name"]: f["Values"] for f in call.params["Filters"]}
    assert set(filters["instance-family"]) == {r.family for r in catalog.instances if r.provider == "tencent"}
    assert {"GN10Xp", "GN7", "GT4", "PNV4"} <= set(filters["instance-family"])
    assert filters["instance-charge-type"] == ["POSTPAID_BY_HOUR", "PREPAID", "SPOTPAID"]
    assert call.region == "ap-guangzhou"


def test_sold_out_types_keep_a_row_marked_sold_out(tencent_env: FakeCvm, catalog: Catalog) -> None:
    gn7 = row(fetch(catalog), "GN7.2XLARGE32", "ap-guangzhou-4")
    assert gn7.stock is Stock.SOLD_OUT and gn7.hourly == Decimal("7.5")
    tencent_env.sell_out("ap-guangzhou-3", "GN10Xp.2XLARGE40", charge_types=("SPOTPAID",))
    gn = row(fetch(catalog), "GN10Xp.2XLARGE40", "ap-guangzhou-3")
    assert gn.stock is Stock.AVAILABLE and "sold out for spot" in gn.notes


def test_list_prices_tiers_and_account_discounts(tencent_env: FakeCvm, catalog: Catalog) -> None:
    rows = fetch(catalog)
    big = row(rows, "GN10Xp.20XLARGE320", "ap-guangzhou-3")
    assert big.hourly == Decimal("80.0")
    assert "pay-as-you-go tiers CNY/h: 0-96 h 80.0, 96-360 h 40.0, over 360 h 27.2" in big.notes
    assert row(rows, "GN10Xp.20XLARGE320", "ap-guangzhou-4").spot is None  # not sold as spot there
    gn7 = row(rows, "GN7.2XLARGE32", "ap-guangzhou-3")
    assert gn7.hourly == Decimal("7.0")  # the list price, not the account's 90 %
    assert "this account pays 6.3 CNY/h after its discount (list 7.0)" in gn7.notes
    assert "this account pays 1800.0 CNY/month" in gn7.notes


def test_gpu_by_family_and_count_else_left_out_and_counted(fake_cvm: FakeCvm, tencent_env: FakeCvm,
                                                           catalog: Catalog) -> None:
    fake_cvm.offers += [
        FakeOffer("ap-guangzhou-3", "GN7.4XLARGE60", 16, 60, 1, Decimal("9.00"), None, None),  # new size, 1 T4
        FakeOffer("ap-guangzhou-3", "GN7.40XLARGE640", 160, 640, 8, Decimal("99.00"), None, None),  # 8: unknown
    ]
    fetcher = TencentPriceFetcher(clock=lambda: READ_AT)
    rows = fetcher.fetch("ap-guangzhou", catalog)
    assert row(rows, "GN7.4XLARGE60", "ap-guangzhou-3").gpu == "T4"
    assert not [r for r in rows if r.instance_type == "GN7.40XLARGE640"]
    assert fetcher.skipped == ["GN7.40XLARGE640@ap-guangzhou-3"]
    assert all("1 offer(s) of this read left out: GPU model unknown to the catalog (GN7.40XLARGE640)" in r.notes
               for r in rows)


def test_currency_is_a_parameter(tencent_env: FakeCvm, catalog: Catalog) -> None:
    assert {r.currency for r in fetch(catalog, "ap-shanghai", currency=Currency.USD)} == {Currency.USD}


def test_rows_round_trip_through_the_cache_layer(tencent_env: FakeCvm, catalog: Catalog, tmp_path: Path) -> None:
    rows = fetch(catalog)
    write_instances(tmp_path / "cache" / "tencent" / "ap-guangzhou.csv", rows)
    loaded = Catalog.load(cache=tmp_path / "cache")
    live = [r for r in loaded.instances if r.layer is Layer.CACHE]
    assert sorted(map(repr, live)) == sorted(map(repr, rows))  # field by field, Decimals to the last digit
    # The live per-zone rows replace the shipped cn-mainland row of the same type.
    assert not [r for r in loaded.instances if r.instance_type == "GN10Xp.2XLARGE40" and r.region == "cn-mainland"]


def test_a_cut_answer_is_an_error_not_an_empty_catalog(tencent_env: FakeCvm, catalog: Catalog) -> None:
    tencent_env.cut_json(1)
    with pytest.raises(ProviderError):
        fetch(catalog)


def test_an_answer_without_the_set_is_an_error(tencent_env: FakeCvm, catalog: Catalog,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FakeCvm, "_do_DescribeZoneInstanceConfigInfos", lambda self, region, params: {})
    with pytest.raises(ProviderError, match="without an InstanceTypeQuotaSet"):
        fetch(catalog)
