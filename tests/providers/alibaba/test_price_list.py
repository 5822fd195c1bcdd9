"""Alibaba Cloud's rows: the China-site pay-as-you-go list in CNY, specs from their own sources, monthly where it \
agrees."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest

from providers.alibaba.price_list import rows
from providers.converter import to_csv

# Entries as the price file has them (initial-on-demand-prices.json @5d2e0774), cn-hongkong's is not mainland.
PRICES = """{
    "cn-beijing": {
        "ecs.ebmgn7.26xlarge": 252.666667,
        "ecs.g7.2xlarge": 1.4,
        "ecs.gn6e-c12g1.3xlarge": 19.739,
        "ecs.gn7i-c8g1.2xlarge": 9.5326
    },
    "cn-hongkong": {
        "ecs.gn7i-c8g1.2xlarge": 9.5326
    },
    "cn-shanghai": {
        "ecs.gn6v-c8g1.2xlarge": 26.46,
        "ecs.gn7-c12g1.3xlarge": 31.583333
    }
}"""
SHIPPED = Path(__file__).resolve().parents[3] / "pricing" / "data" / "instances" / "alibaba.csv"
Run = Callable[..., tuple[int, str, str]]


def _rows(text: str = PRICES) -> dict[tuple[str, str], dict[str, str]]:
    found, _ = rows(io.StringIO(text), commit="5d2e077", committed="2024-12-31")
    return {(r["instance_type"], r["region"]): r for r in found}


def test_gpu_types_in_mainland_regions_keep_the_files_cny_price_and_date() -> None:
    by = _rows()
    assert set(by) == {("ecs.gn6e-c12g1.3xlarge", "cn-beijing"), ("ecs.gn7i-c8g1.2xlarge", "cn-beijing"),
                       ("ecs.gn6v-c8g1.2xlarge", "cn-shanghai"), ("ecs.gn7-c12g1.3xlarge", "cn-shanghai")}
    a10 = by[("ecs.gn7i-c8g1.2xlarge", "cn-beijing")]
    assert (a10["hourly"], a10["currency"], a10["gpu"], a10["gpu_count"]) == ("9.5326", "CNY", "A10", "1")
    assert (a10["as_of"], a10["as_of_kind"]) == ("2024-12-31", "price_date") and "@5d2e077" in a10["source"]
    assert by[("ecs.gn6e-c12g1.3xlarge", "cn-beijing")]["gpu"] == "V100-SXM2-32GB"


def test_a_type_no_source_gives_specs_for_is_reported() -> None:
    _, skipped = rows(io.StringIO(PRICES), commit="x", committed="2024-12-31")
    assert [s.instance_type for s in skipped] == ["ecs.ebmgn7.26xlarge"]


def test_monthly_is_taken_only_where_the_2023_table_agrees_with_the_price_file() -> None:
    by = _rows()
    # the table's hourly 31.58 is 31.583333 cut to cents: the list did not change, its 15160 a month stands
    assert by[("ecs.gn7-c12g1.3xlarge", "cn-shanghai")]["monthly"] == "15160.0"
    changed = _rows(PRICES.replace("26.46", "27.10"))[("ecs.gn6v-c8g1.2xlarge", "cn-shanghai")]
    assert changed["monthly"] == "" and "differs" in changed["notes"]
    assert by[("ecs.gn7i-c8g1.2xlarge", "cn-beijing")]["monthly"] == ""  # the table is cn-shanghai's only


def test_the_shipped_file_is_the_catalog_shape_in_cny() -> None:
    text = SHIPPED.read_text(encoding="utf-8")
    shipped = list(csv.DictReader(io.StringIO(text)))
    assert to_csv(list(_rows().values())).splitlines()[0] == text.splitlines()[0]
    assert len(shipped) == 298 and {r["currency"] for r in shipped} == {"CNY"}
    assert all(r["region"].startswith("cn-") and r["region"] != "cn-hongkong" for r in shipped)
    assert sum(1 for r in shipped if r["monthly"]) == 28
    # where both are known, a month of subscription is cheaper than a month (730 h) of pay-as-you-go
    assert all(Decimal(r["monthly"]) < Decimal(r["hourly"]) * 730 for r in shipped if r["monthly"])


def test_alibaba_plans_in_cny_converted_only_with_the_stated_rate(gpuplan: Run) -> None:
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--provider", "alibaba", "--json", "--limit", "3",
                             "--fx", "USD/CNY=7.0")
    assert code == 0, err
    plan = json.loads(out)
    win = plan["options"][0]
    assert win["provider"] == "alibaba" and win["native_cost"]["currency"] == "CNY"
    assert float(win["cost"]) == pytest.approx(float(win["native_cost"]["amount"]) / 7.0, abs=0.01)
