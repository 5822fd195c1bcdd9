"""The shipped rates of what a cloud bills besides the instance: sourced, dated, never a zero price."""

from __future__ import annotations

from decimal import Decimal
from itertools import pairwise

from pricing.datafiles import data_rows
from pricing.extras import DEFAULT_DISK_GB, extra_rates, rates_for
from pricing.money import Currency


def test_every_row_has_a_source_a_date_and_a_positive_rate_or_says_free() -> None:
    rows = extra_rates()
    assert rows
    for r in rows:
        assert r.source.startswith("https://"), r
        assert r.as_of.year >= 2024 and r.note, r
        assert r.rate > 0 or r.free, f"{r.cloud} {r.item}: a missing rate has no row, never a zero"
    raw = data_rows("extras.csv")
    assert all(row["rate"].strip() for row in raw), "an empty rate cell would read as a price of nothing"


def test_each_cloud_is_priced_in_its_own_currency() -> None:
    assert {r.currency for r in extra_rates() if r.cloud == "aws"} == {Currency.USD}
    assert {r.currency for r in extra_rates() if r.cloud == "tencent"} == {Currency.CNY}


def test_tiers_of_an_item_follow_on_without_gaps() -> None:
    # one chain of tiers per unit: an item may have a monthly and an hourly price (Tencent's disks)
    for cloud, item, unit in {(r.cloud, r.item, r.unit) for r in extra_rates()}:
        tiers = [r for r in rates_for(cloud, item) if r.unit == unit]
        for lower, upper in pairwise(tiers):
            assert lower.tier_to == upper.tier_from, (cloud, item, unit)


def test_the_rates_issue_21_checked_by_hand() -> None:
    assert rates_for("aws", "disk:gp3")[0].rate == Decimal("0.08")
    assert rates_for("aws", "ipv4")[0].rate == Decimal("0.005")
    egress = rates_for("aws", "egress")
    assert egress[0].free and egress[0].tier_to == 100  # the first 100 GB a month
    assert [r.rate for r in egress[1:]] == [Decimal("0.09"), Decimal("0.085"), Decimal("0.07"), Decimal("0.05")]
    assert rates_for("tencent", "bandwidth")[0].rate == Decimal(20)


def test_what_no_source_gives_has_no_row() -> None:
    # Tencent's COS storage and Azure's blob storage: no source was read, so they are not priced (never 0)
    assert rates_for("tencent", "storage:cos") == ()
    assert rates_for("azure", "storage:blob-hot-lrs") == ()


def test_tencent_bandwidth_tiers_and_cbs_rates_as_the_price_pages_give_them() -> None:
    bw = rates_for("tencent", "bandwidth")
    assert [(r.tier_from, r.tier_to, r.rate) for r in bw] == [(0, 2, 20), (2, 5, 25), (5, None, 90)]
    premium = {r.unit: r.rate for r in rates_for("tencent", "disk:cloud_premium")}
    assert premium == {"GB-month": Decimal("0.35"), "GB-hour": Decimal("0.0009")}
    assert rates_for("tencent", "traffic")[0].rate == Decimal("0.80")


def test_the_exports_ask_for_the_disk_the_plan_prices() -> None:
    from gpuplan.render import export

    assert export.DEFAULT_DISK_GB == DEFAULT_DISK_GB == 256
