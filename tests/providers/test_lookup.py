"""One offer lookup for launch, quote and tco: by zone, by region, by region prefix, and its refusals."""

from __future__ import annotations

import pytest

from pricing.catalog import Catalog
from pricing.errors import InputError, UnknownNameError
from providers.lookup import find_offer, offers_of_type, region_of_zone

CAT = Catalog.shipped()
GN10 = "GN10Xp.20XLARGE320"  # shipped for the pseudo-region cn-mainland, with its zones listed


@pytest.mark.parametrize(("zone", "region"), [("ap-guangzhou-3", "ap-guangzhou"), ("us-east-1a", "us-east-1"),
                                              ("eu-frankfurt-1", "eu-frankfurt"), ("use1-az1", "use1-az1")])
def test_region_of_zone(zone: str, region: str) -> None:
    assert region_of_zone(zone) == region


def test_a_zone_finds_the_row_that_covers_its_region() -> None:
    found = find_offer(CAT, GN10, provider="tencent", zone="ap-guangzhou-3")
    assert found.offer.name == GN10 and found.offer.region == "cn-mainland"
    assert found.region == "ap-guangzhou" and found.zones == ("ap-guangzhou-3", "ap-guangzhou-4")


def test_a_region_finds_its_own_row_and_the_name_is_any_case() -> None:
    found = find_offer(CAT, "P3.16XLARGE", provider="aws", region="eu-west-1")
    assert (found.offer.name, found.offer.region, found.region) == ("p3.16xlarge", "eu-west-1", "eu-west-1")
    assert {o.region for o in found.offers} >= {"us-east-1", "eu-west-1"}


def test_without_a_provider_the_type_names_its_own() -> None:
    assert find_offer(CAT, GN10, zone="ap-guangzhou-3").offer.provider == "tencent"


def test_an_unknown_type_is_refused_with_the_closest_names() -> None:
    with pytest.raises(UnknownNameError) as info:
        find_offer(CAT, "p3.16xlarg", provider="aws", region="us-east-1")
    assert "p3.16xlarge" in info.value.suggestions and info.value.exit_code == 2


def test_another_providers_type_says_where_to_list_this_ones() -> None:
    with pytest.raises(InputError) as info:
        offers_of_type(CAT, GN10, "aws")
    assert info.value.message == f"{GN10} is not a aws instance type"
    assert info.value.hint == "`gpuplan offers --provider aws` lists them"


def test_a_region_it_is_not_sold_in_lists_the_real_regions() -> None:
    with pytest.raises(InputError) as info:
        find_offer(CAT, "p3.16xlarge", provider="aws", region="mars-1")
    assert info.value.message == "p3.16xlarge is not sold in mars-1 as far as the catalog knows"
    assert info.value.hint is not None and "us-east-1" in info.value.hint and "az" not in info.value.hint
    with pytest.raises(InputError, match="its regions: .*ap-guangzhou"):
        find_offer(CAT, GN10, provider="tencent", region="mars-1")


def test_a_zone_the_catalog_does_not_list_is_refused() -> None:
    with pytest.raises(InputError, match="not sold in zone ap-guangzhou-9") as info:
        find_offer(CAT, GN10, provider="tencent", zone="ap-guangzhou-9")
    assert info.value.hint == "zones: ap-guangzhou-3, ap-guangzhou-4"


def test_no_place_is_fine_only_where_there_is_one_real_region() -> None:
    found = find_offer(CAT, "p3.2xlarge", provider="aws")
    assert found.region == "us-east-1" == found.offer.region
    with pytest.raises(InputError, match="give --region or --zone") as info:
        find_offer(CAT, GN10, provider="tencent")
    assert info.value.hint is not None and "ap-guangzhou" in info.value.hint


def test_a_region_prefix_matches_only_when_asked_for() -> None:
    with pytest.raises(InputError, match="not sold in eu-west"):
        find_offer(CAT, "p3.16xlarge", provider="aws", region="eu-west")
    found = find_offer(CAT, "p3.16xlarge", provider="aws", region="eu-west", prefix=True)
    assert found.offer.region == found.region == "eu-west-1"
    assert find_offer(CAT, "p3.16xlarge", region="EU-WEST-2", prefix=True).offer.region == "eu-west-2"
