"""Every shipped row with a second source agrees with it within 5%, or a note says why."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from pricing.catalog import InstanceType, shipped_instances
from pricing.money import Currency
from pricing.second_sources import SecondSource, disagreements, second_sources


def _row(hourly: str) -> InstanceType:
    return InstanceType(provider="gcp", instance_type="a3-highgpu-8g", family="a3-highgpu", gpu="H100-SXM5-80GB",
                        gpu_count=8, vcpu=208, mem_gb=1872, region="us-central1", currency=Currency.USD,
                        source="test", as_of=date(2026, 12, 4), hourly=Decimal(hourly))


def _second(value: str, note: str = "") -> SecondSource:
    return SecondSource(cloud="gcp", instance_type="a3-highgpu-8g", region="us-central1", column="hourly",
                        value=Decimal(value), currency="USD", source="test", as_of=date(2025, 3, 6), note=note)


def test_the_shipped_data_agrees_with_its_second_sources() -> None:
    found = disagreements(shipped_instances(), second_sources())
    assert found == [], "\n".join(map(str, found))


def test_the_rows_issue_40_found_wrong_have_a_second_source() -> None:
    keys = {(s.cloud, s.instance_type, s.region) for s in second_sources()}
    for region in ("us-central1", "us-west1", "us-east4", "asia-southeast1", "europe-west4"):
        assert ("gcp", "a3-highgpu-8g", region) in keys
    assert ("gcp", "a2-highgpu-1g", "europe-west4") in keys and ("aws", "p4d.24xlarge", "us-east-1") in keys


def test_a_row_half_its_second_source_is_a_disagreement() -> None:
    found = disagreements([_row("43.06615")], [_second("88.49")])
    assert len(found) == 1 and "shipped 43.06615" in str(found[0])


def test_within_five_percent_agrees_and_a_note_excuses_a_difference() -> None:
    assert disagreements([_row("87.83247")], [_second("88.5557561512329")]) == []
    assert disagreements([_row("88.49")], [_second("43.06615", note="the replaced source; GCP's catalog wins")]) == []


def test_a_second_source_with_no_shipped_price_is_reported() -> None:
    found = disagreements([], [_second("88.49")])
    assert len(found) == 1 and found[0].found is None
