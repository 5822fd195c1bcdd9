from __future__ import annotations

import csv
from datetime import date
from decimal import Decimal
from importlib import resources

import pytest

from pricing.billing import BillingMode
from pricing.catalog import Catalog
from pricing.errors import UnknownNameError

INSTANCE_FILES = ["instances/tencent.csv", "instances/aws.csv"]
DATA_FILES = ["gpus.csv", *INSTANCE_FILES, "cards.csv", "fx.csv", "electricity.csv"]


def _rows(package: str, name: str) -> list[dict[str, str]]:
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))


@pytest.mark.parametrize(("package", "name"), [("pricing.data", n) for n in DATA_FILES]
                         + [("planner.data", "benchmarks.csv"), ("planner.data", "scaling.csv")])
def test_every_shipped_row_has_a_source_and_a_date(package: str, name: str) -> None:
    rows = _rows(package, name)
    assert rows
    for r in rows:
        assert r["source"].strip(), r
        date.fromisoformat(r["as_of"])  # a real date, not free text


@pytest.mark.parametrize("column", ["hourly", "monthly", "spot", "reserved_1y", "reserved_3y"])
def test_no_price_is_zero_a_missing_price_stays_missing(column: str) -> None:
    for name in INSTANCE_FILES:
        for r in _rows("pricing.data", name):
            assert r[column] == "" or Decimal(r[column]) > 0, (name, r["instance_type"], column)


def test_the_issue_gpus_are_all_in_the_catalog() -> None:
    cat = Catalog.shipped()
    for name in ["RTX 2060", "RTX 2070", "RTX 2080", "RTX 2080 Ti", "Titan RTX", "Quadro RTX 6000", "Quadro RTX 8000",
                 "V100-16GB", "V100-32GB", "P4", "P40", "T4", "A10", "A10G", "A100-40GB", "A100-80GB", "H100",
                 "H200", "L4", "L40S", "RTX 3090", "RTX 4090", "A6000"]:
        assert cat.gpu(name).vram_gb > 0


def test_every_instance_names_a_known_gpu() -> None:
    cat = Catalog.shipped()
    for inst in cat.instances:
        assert inst.gpu in cat.gpus, inst.instance_type


def test_gn10xp_20xlarge320_is_8_v100_nvlink_at_its_list_prices() -> None:
    rows = Catalog.shipped().instance("GN10Xp.20XLARGE320")
    assert len(rows) == 1
    gn = rows[0]
    assert (gn.gpu, gn.gpu_count, gn.vcpu, gn.mem_gb) == ("V100-SXM2-32GB", 8, 80, 320)
    assert gn.currency == "CNY"
    assert gn.rate(BillingMode.HOURLY) == Decimal("95.84")
    assert gn.rate(BillingMode.MONTHLY) == Decimal("46000")


def test_zone_spreads_keep_both_ends() -> None:
    gn10x = Catalog.shipped().instance("GN10X.18XLARGE320")[0]
    assert (gn10x.hourly, gn10x.hourly_high) == (Decimal("131.17"), Decimal("145.96"))


@pytest.mark.parametrize(("name", "key"), [
    ("v100", "V100-SXM2-32GB"), ("Tesla V100 32GB", "V100-SXM2-32GB"), ("a100-80gb", "A100-SXM4-80GB"),
    ("rtx 2080 ti", "RTX-2080-TI"), ("RTX_4090", "RTX-4090"), ("V100-16GB", "V100-SXM2-16GB"),
])
def test_gpu_names_are_forgiving(name: str, key: str) -> None:
    assert Catalog.shipped().gpu(name).key == key


def test_unknown_gpu_suggests_close_names() -> None:
    with pytest.raises(UnknownNameError) as err:
        Catalog.shipped().gpu("rtx 4080")
    assert "RTX-4090" in err.value.suggestions
    assert "gpuplan gpus" in str(err.value)


def test_unknown_instance_suggests_close_names() -> None:
    with pytest.raises(UnknownNameError) as err:
        Catalog.shipped().instance("GN10X.20XLARGE320")
    assert err.value.suggestions


def test_each_currency_with_cards_has_a_default_electricity_price() -> None:
    cat = Catalog.shipped()
    for card in cat.cards:
        assert cat.default_electricity(card.currency) is not None
