"""Live AWS prices: Price List parsing, reserved-rate choice, spot per zone, and the whole fetch."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from pricing.catalog import Catalog, InstanceType, Layer, instances_csv, parse_instances
from providers.aws.instance_types import (
    GpuDevice,
    describe_types,
    gpu_key,
    gpu_model,
    offered_zones,
)
from providers.aws.prices import (
    AwsPriceFetcher,
    latest_spot_prices,
    parse_product,
    price_list_filters,
    reserved_rates,
)
from tests.providers.aws.recorded import NOW, recorded

TYPES = ("g5g.xlarge", "g5.xlarge", "p3.16xlarge", "p3.2xlarge", "p4d.24xlarge")


def _pages() -> list[dict[str, Any]]:
    return list(recorded("pricing_get_products_us-east-1.json")["calls"])


def _product(instance_type: str) -> str:
    for call in _pages():
        for item in call["response"]["PriceList"]:
            if json.loads(item)["product"]["attributes"]["instanceType"] == instance_type:
                return str(item)
    raise KeyError(instance_type)


def _catalog() -> Catalog:
    shipped = Catalog.shipped()
    return shipped.with_instances([i for i in shipped.instances
                                   if i.provider == "aws" and i.instance_type in TYPES])


# -- the Price List document ---------------------------------------------------------------------------------------

def test_filters_name_the_region_os_tenancy_software_and_capacity() -> None:
    fields = {f["Field"]: f["Value"] for f in price_list_filters("eu-west-1", "p4d.24xlarge")}
    assert fields == {"regionCode": "eu-west-1", "instanceType": "p4d.24xlarge", "operatingSystem": "Linux",
                      "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used"}


def test_on_demand_rate_is_read_from_the_json_string() -> None:
    p = parse_product(_product("p3.2xlarge"), "us-east-1")
    assert p is not None
    assert p.on_demand == Decimal("3.06")
    assert str(p.on_demand) == "3.06"  # the ten padded decimals are dropped
    assert (p.vcpu, p.mem_gb, p.gpu_count) == (8, 61.0, 1)


def test_standard_no_upfront_wins_over_partial_and_convertible() -> None:
    p = parse_product(_product("p3.2xlarge"), "us-east-1")
    assert p is not None
    assert p.reserved[1].hourly == Decimal("1.95")
    assert (p.reserved[1].offering_class, p.reserved[1].purchase_option) == ("standard", "No Upfront")
    assert p.reserved[3].hourly == Decimal("1.35")
    assert p.notes == ()


def test_all_upfront_only_is_amortised_over_the_term_and_said() -> None:
    p = parse_product(_product("p4d.24xlarge"), "us-east-1")
    assert p is not None
    assert p.reserved[1].hourly == Decimal("13.5")
    # 230000 USD over 3 x 8760 h
    assert p.reserved[3].hourly == (Decimal(230000) / Decimal(26280)).quantize(Decimal("0.000001"))
    assert p.reserved[3].purchase_option == "All Upfront"
    assert any("All Upfront" in n and "26280 h" in n for n in p.notes)


def test_convertible_is_used_only_without_a_standard_offer() -> None:
    p = parse_product(_product("p3.16xlarge"), "us-east-1")
    assert p is not None
    assert p.reserved[1].hourly == Decimal(17)
    assert p.reserved[1].offering_class == "convertible"
    # Partial Upfront: 5.0/h plus 200000 over 26280 h
    assert p.reserved[3].hourly == (Decimal(5) + Decimal(200000) / Decimal(26280)).quantize(Decimal("0.000001"))
    assert len(p.notes) == 2


def test_term_codes_are_not_trusted() -> None:
    # Same term under another (made-up) code and with its attributes as the only truth.
    doc = json.loads(_product("p3.2xlarge"))
    doc["terms"]["Reserved"] = {"X.ZZZZZZZZZZ": {
        "priceDimensions": {"X.ZZZZZZZZZZ.R": {"unit": "Hrs", "pricePerUnit": {"USD": "2.5000000000"}}},
        "termAttributes": {"LeaseContractLength": "3yr", "OfferingClass": "standard", "PurchaseOption": "No Upfront"}}}
    rates, _ = reserved_rates(doc["terms"])
    assert set(rates) == {3}
    assert rates[3].hourly == Decimal("2.5")


def test_capacity_block_windows_and_other_regions_are_not_prices_of_the_product() -> None:
    doc = json.loads(_product("g5.xlarge"))
    assert parse_product(doc, "us-east-1") is not None
    assert parse_product(doc, "eu-west-1") is None
    for attr, value in (("marketoption", "CapacityBlock"), ("operatingSystem", "Windows"), ("tenancy", "Dedicated"),
                        ("preInstalledSw", "SQL Std"), ("capacitystatus", "UnusedCapacityReservation")):
        changed = json.loads(json.dumps(doc))
        changed["product"]["attributes"][attr] = value
        assert parse_product(changed, "us-east-1") is None, attr


def test_a_zero_on_demand_price_is_missing_not_free() -> None:
    doc = json.loads(_product("g5.xlarge"))
    for term in doc["terms"]["OnDemand"].values():
        for dim in term["priceDimensions"].values():
            dim["pricePerUnit"]["USD"] = "0.0000000000"
    p = parse_product(doc, "us-east-1")
    assert p is not None and p.on_demand is None


def test_latest_spot_price_per_type_and_zone() -> None:
    records = [r for page in recorded("ec2_describe_spot_price_history_us-east-1.json")["calls"]
               for r in page["response"]["SpotPriceHistory"]]
    latest = latest_spot_prices(records)
    assert latest[("p3.2xlarge", "us-east-1a")].price == Decimal("0.3707")  # not the older 0.39
    assert latest[("p3.2xlarge", "us-east-1b")].price == Decimal("0.4281")
    assert latest[("g5.xlarge", "us-east-1b")].price == Decimal("0.4507")
    assert ("p3.16xlarge", "us-east-1a") not in latest
    older_first = list(reversed(records))
    assert latest_spot_prices(older_first) == latest


def test_spot_records_of_other_operating_systems_are_ignored() -> None:
    when = datetime(2026, 12, 2, tzinfo=UTC)
    latest = latest_spot_prices([
        {"AvailabilityZone": "us-east-1a", "InstanceType": "g5.xlarge", "ProductDescription": "Windows",
         "SpotPrice": "0.9", "Timestamp": when},
        {"AvailabilityZone": "us-east-1a", "InstanceType": "g5.xlarge", "ProductDescription": "Linux/UNIX (Amazon VPC)",
         "SpotPrice": "0.43", "Timestamp": "2026-12-02T00:00:00Z"},
    ])
    assert latest[("g5.xlarge", "us-east-1a")].price == Decimal("0.43")


# -- GPUs: DescribeInstanceTypes mapped to catalog keys ------------------------------------------------------------

def test_gpu_model_strips_form_factor_and_memory() -> None:
    assert gpu_model("A100-SXM4-40GB") == gpu_model("A100 40GB PCIe") == gpu_model("A100") == "a100"
    assert gpu_model("V100S-PCIE-32GB") == "v100s"
    assert gpu_model("L4") != gpu_model("L40S")


@pytest.mark.parametrize(("name", "mib", "prefer", "key"), [
    ("A10G", 22888, (), "A10G"),  # usable memory 22888 MiB for a 24 GB card
    ("L40S", 45776, (), "L40S"),
    ("T4", 16384, (), "T4"),
    ("A100", 40960, ("A100-SXM4-40GB",), "A100-SXM4-40GB"),  # SXM4 or PCIe: the catalog's row decides
    ("H100", 81920, ("H100-SXM5-80GB",), "H100-SXM5-80GB"),
    ("A100", 40960, (), None),  # no row to decide by: not guessed
    ("T4g", 16384, (), None),  # not in the catalog
    ("A100", 81920, ("A100-SXM4-40GB",), None),  # memory rules the preferred key out; the 80 GB pair ties
])
def test_gpu_key_by_name_and_memory(name: str, mib: int, prefer: tuple[str, ...], key: str | None) -> None:
    found, why = gpu_key(GpuDevice("NVIDIA", name, 1, mib), Catalog.shipped(), prefer)
    assert found == key, why


def test_moto_instance_types_give_gpus_and_lack_p3(moto_ec2: Any) -> None:
    infos = describe_types(moto_ec2, ["p3.2xlarge", "p3dn.24xlarge", "p4d.24xlarge", "g5.xlarge"])
    assert "p3.2xlarge" not in infos  # moto has no p3 sizes: the fetcher falls back to the catalog
    assert infos["p4d.24xlarge"].gpu_count == 8
    assert infos["p4d.24xlarge"].efa_supported and infos["p4d.24xlarge"].max_efa_interfaces == 4
    assert infos["p3dn.24xlarge"].mem_gb == 768
    key, _ = gpu_key(infos["p3dn.24xlarge"].gpus[0], Catalog.shipped(), ["V100-SXM2-32GB"])
    assert key == "V100-SXM2-32GB"
    zones = offered_zones(moto_ec2, ["p4d.24xlarge", "p3.2xlarge"])
    assert "us-east-1a" in zones["p4d.24xlarge"] and "p3.2xlarge" not in zones


# -- the whole fetch, every call answered by a recorded page -------------------------------------------------------

def _stubbed_fetcher() -> tuple[AwsPriceFetcher, Stubber, Stubber]:
    pricing = boto3.client("pricing", region_name="us-east-1")
    ec2 = boto3.client("ec2", region_name="us-east-1")
    p_stub, e_stub = Stubber(pricing), Stubber(ec2)
    for call in _pages():
        p_stub.add_response("get_products", call["response"], call["expected_params"])
    spot_params: dict[str, Any] = {"InstanceTypes": sorted(TYPES),
                                   "ProductDescriptions": ["Linux/UNIX", "Linux/UNIX (Amazon VPC)"], "StartTime": NOW}
    for page in recorded("ec2_describe_spot_price_history_us-east-1.json")["calls"]:
        params = {**spot_params, **({"NextToken": page["next_token"]} if "next_token" in page else {})}
        e_stub.add_response("describe_spot_price_history", page["response"], params)
    types = recorded("ec2_instance_types_us-east-1.json")
    filters = [{"Name": "instance-type", "Values": sorted(TYPES)}]
    e_stub.add_response("describe_instance_types", types["describe_instance_types"], {"Filters": filters})
    e_stub.add_response("describe_instance_type_offerings", types["describe_instance_type_offerings"],
                        {"LocationType": "availability-zone", "Filters": filters})
    # g5g.xlarge is not in the catalog: asked for as an extra type, its T4g GPU is not either.
    fetcher = AwsPriceFetcher(pricing_client=pricing, ec2_client=ec2, instance_types=["g5g.xlarge"], now=lambda: NOW)
    return fetcher, p_stub, e_stub


def _fetch() -> tuple[list[InstanceType], AwsPriceFetcher]:
    fetcher, p_stub, e_stub = _stubbed_fetcher()
    with p_stub, e_stub:
        rows = fetcher.fetch("us-east-1", _catalog())
        p_stub.assert_no_pending_responses()
        e_stub.assert_no_pending_responses()
    return rows, fetcher


def test_fetch_gives_one_row_per_type_and_spot_zone() -> None:
    rows, _ = _fetch()
    keys = sorted((r.instance_type, r.zone) for r in rows)
    assert keys == [("g5.xlarge", "us-east-1a"), ("g5.xlarge", "us-east-1b"), ("p3.16xlarge", ""),
                    ("p3.2xlarge", "us-east-1a"), ("p3.2xlarge", "us-east-1b"),
                    ("p4d.24xlarge", "us-east-1a"), ("p4d.24xlarge", "us-east-1c")]


def test_fetch_rows_carry_zone_spot_and_region_prices() -> None:
    rows, _ = _fetch()
    by = {(r.instance_type, r.zone): r for r in rows}
    p3a = by[("p3.2xlarge", "us-east-1a")]
    assert (p3a.hourly, p3a.spot, p3a.reserved_1y, p3a.reserved_3y) == (
        Decimal("3.06"), Decimal("0.3707"), Decimal("1.95"), Decimal("1.35"))
    assert by[("p3.2xlarge", "us-east-1b")].spot == Decimal("0.4281")
    p4d = by[("p4d.24xlarge", "us-east-1c")]
    assert p4d.hourly == Decimal("21.957642")  # page 1's product, not page 2's Capacity Block
    assert p4d.reserved_3y == Decimal("8.751903")
    assert "All Upfront" in p4d.notes
    g5 = by[("g5.xlarge", "us-east-1a")]
    assert (g5.hourly, g5.spot, g5.reserved_1y) == (Decimal("1.006"), Decimal("0.4246"), None)
    no_spot = by[("p3.16xlarge", "")]
    assert no_spot.spot is None and no_spot.hourly == Decimal("24.48")
    assert no_spot.zones == ()  # moto's offering data has no p3
    for r in rows:
        assert (r.provider, r.region, r.currency.value, r.layer) == ("aws", "us-east-1", "USD", Layer.CACHE)
        assert r.source == ("AWS Price List API (AmazonEC2, us-east-1) and EC2 DescribeSpotPriceHistory, "
                            "read 2026-12-02T14:05:00Z")
        assert r.as_of.isoformat() == "2026-12-02"


def test_fetch_gpus_from_ec2_and_from_the_catalog_for_p3() -> None:
    rows, fetcher = _fetch()
    by = {r.instance_type: r for r in rows}
    assert (by["p4d.24xlarge"].gpu, by["p4d.24xlarge"].gpu_count) == ("A100-SXM4-40GB", 8)
    assert "GpuInfo" in by["p4d.24xlarge"].notes
    assert (by["g5.xlarge"].gpu, by["g5.xlarge"].vcpu, by["g5.xlarge"].mem_gb) == ("A10G", 4, 16)
    # moto has no p3: GPU from the catalog, vCPU and memory from the Price List product
    assert (by["p3.16xlarge"].gpu, by["p3.16xlarge"].gpu_count, by["p3.16xlarge"].vcpu) == ("V100-SXM2-16GB", 8, 64)
    assert by["p3.2xlarge"].mem_gb == 61
    assert "catalog row" in by["p3.2xlarge"].notes
    assert any("p3.16xlarge" in n and "from the catalog" in n for n in fetcher.notes)


def test_fetch_skips_a_gpu_the_catalog_does_not_know_and_counts_it() -> None:
    rows, fetcher = _fetch()
    assert "g5g.xlarge" not in {r.instance_type for r in rows}
    assert any(n.startswith("1 instance type(s) skipped") and "T4g" in n for n in fetcher.notes)


def test_fetched_rows_round_trip_through_the_cache_csv() -> None:
    rows, _ = _fetch()
    again = parse_instances(instances_csv(rows), origin="cache", layer=Layer.CACHE)
    assert [(r.instance_type, r.zone, r.hourly, r.spot, r.reserved_3y) for r in again] == [
        (r.instance_type, r.zone, r.hourly, r.spot, r.reserved_3y) for r in rows]
    _catalog().with_instances(again)  # every GPU key is one the catalog knows
