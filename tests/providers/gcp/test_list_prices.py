"""GCP's own list prices where SkyPilot's summed price is not GCP's; no hourly price for sizes not sold on demand."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from pathlib import Path

from providers.gcp import list_prices
from providers.gcp.skypilot_catalog import rows

SHIPPED = Path(__file__).resolve().parents[3] / "pricing" / "data" / "instances" / "gcp.csv"
# Lines in the shape of SkyPilot's vms.csv: the H100 part at its 4.20076 USD/h a GPU, the machine and spot parts split
# so that the sums are the shipped SkyPilot-built rows (43.06615 on demand, 26.83013 spot for a3-highgpu-8g).
VMS = """InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice
a3-highgpu-8g,208.0,1872.0,,,,us-central1,us-central1-a,9.46007,5.19541
a3-highgpu-1g,26.0,234.0,,,,us-central1,us-central1-a,1.18251,0.64943
,,,H100,8,{},us-central1,us-central1-a,33.60608,21.63472
,,,H100,1,{},us-central1,us-central1-a,4.20076,2.70434
"""


def _shipped() -> dict[tuple[str, str], dict[str, str]]:
    text = SHIPPED.read_text(encoding="utf-8")
    return {(r["instance_type"], r["region"]): r for r in csv.DictReader(io.StringIO(text))}


def test_a_summed_price_far_from_gcps_own_takes_gcps_and_says_so() -> None:
    found, _ = rows(io.StringIO(VMS), commit="006059e0", read="2026-12-04")
    a3 = {r["instance_type"]: r for r in found}["a3-highgpu-8g"]
    assert Decimal(a3["hourly"]) == Decimal("88.49000")  # GCP's catalog, not 9.46007 + 33.60608
    assert Decimal(a3["spot"]) == Decimal("26.83013")  # spot stays SkyPilot's
    assert "Cloud Billing" in a3["source"] and "SkyPilot's sum (43.06615)" in a3["notes"]
    assert a3["as_of"] == list_prices.LIST_AS_OF


def test_a_size_not_sold_on_demand_keeps_its_spot_price_only() -> None:
    found, _ = rows(io.StringIO(VMS), commit="006059e0", read="2026-12-04")
    a3 = {r["instance_type"]: r for r in found}["a3-highgpu-1g"]
    assert a3["hourly"] == "" and a3["spot"] != ""
    assert "Dynamic Workload Scheduler" in a3["notes"]


def test_a_price_within_five_percent_of_gcps_is_kept() -> None:
    row = {"instance_type": "a3-highgpu-8g", "region": "us-east4", "hourly": "87.83247", "spot": "20.04446",
           "source": "skypilot", "as_of": "2026-12-04", "as_of_kind": "read_date", "notes": "n"}
    assert list_prices.apply(row) == row  # 0.8% below GCP's 88.5558: SkyPilot's (read later) stays


def test_the_shipped_rows_the_issue_names_are_at_gcps_list_price() -> None:
    shipped = _shipped()
    for region, price in (("us-central1", "88.49"), ("us-west1", "88.49"), ("asia-southeast1", "114.28")):
        assert Decimal(shipped[("a3-highgpu-8g", region)]["hourly"]).quantize(Decimal("0.01")) == Decimal(price)
    assert Decimal(shipped[("a2-highgpu-1g", "europe-west4")]["hourly"]).quantize(Decimal("0.01")) == Decimal("3.75")
    for size in ("1g", "2g", "4g"):
        assert all(r["hourly"] == "" for (t, _), r in shipped.items() if t == f"a3-highgpu-{size}")
