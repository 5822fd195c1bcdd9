"""The whole bill on every cloud: disk, address and egress are priced lines (zero where the cloud includes them)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from pricing.bill import Extras, extras_bill
from pricing.billing import BillingMode

HPM = Decimal(730)
RUN = Extras(disk_gb=Decimal(200), egress_gb=Decimal(100))


@pytest.mark.parametrize("cloud", ["aws", "gcp", "azure", "lambda", "alibaba", "tencent"])
@pytest.mark.parametrize("mode", [BillingMode.HOURLY, BillingMode.SPOT])
def test_disk_and_egress_are_priced_on_every_cloud(cloud: str, mode: BillingMode) -> None:
    bill = extras_bill(RUN, cloud, mode, Decimal(10), 1, hours_per_month=HPM)
    assert bill.not_priced == ()
    assert any(i.item.startswith("disk:") for i in bill.items)
    assert all(i.source for i in bill.items)


def test_azure_bills_a_disk_as_the_size_tier_that_holds_it() -> None:
    bill = extras_bill(RUN, "azure", BillingMode.HOURLY, Decimal(365), 1, hours_per_month=HPM)
    disk = next(i for i in bill.items if i.item == "disk:premium-ssd")
    # 200 GB needs more than P10's 128 GiB: priced as the next sourced tier, P20 at 73.22 USD a month, for half a month
    assert disk.unit_price.amount == Decimal("73.22") and disk.quantity == Decimal("0.5")
    # 100 GB all fall in the free first 100 GB a month: nothing billed, and nothing left unpriced
    assert [i for i in bill.items if i.item == "egress"] == [] and bill.not_priced == ()


def test_lambda_says_what_its_hourly_price_includes_with_zero_lines() -> None:
    bill = extras_bill(RUN, "lambda", BillingMode.HOURLY, Decimal(10), 1, hours_per_month=HPM)
    assert {i.item for i in bill.items} == {"disk:included", "ipv4", "egress"}
    assert bill.fixed == 0 and all("lambda.ai" in i.source for i in bill.items)


def test_gcp_egress_is_premium_tier_by_the_gb() -> None:
    bill = extras_bill(RUN, "gcp", BillingMode.HOURLY, Decimal(10), 1, hours_per_month=HPM)
    egress = next(i for i in bill.items if i.item == "egress")
    assert egress.cost.amount == Decimal("12.00")  # 100 GB x 0.12 USD


def test_a_disk_above_the_top_sourced_size_tier_is_not_priced() -> None:
    big = Extras(disk_gb=Decimal(2000))
    bill = extras_bill(big, "azure", BillingMode.HOURLY, Decimal(10), 1, hours_per_month=HPM)
    assert any("disk" in m for m in bill.not_priced)
