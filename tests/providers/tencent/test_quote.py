"""Exact quotes: InquiryPriceRunInstances through the SDK, compared with the fake's prices."""

from __future__ import annotations

from decimal import Decimal

import pytest

from pricing.billing import BillingMode
from pricing.errors import InputError, NotSupportedError
from providers.tencent.client import CvmApi
from providers.tencent.quote import PriceStep, inquire_price
from providers.testing.fake_cvm import FakeCvm

GZ = "ap-guangzhou"


def offer(fake: FakeCvm, kind: str, zone: str):  # type: ignore[no-untyped-def]
    return next(o for o in fake.offers if o.instance_type == kind and o.zone == zone)


def test_hourly_quote_equals_the_fakes_price_with_its_tiers(tencent_env: FakeCvm) -> None:
    q = inquire_price(None, GZ, "ap-guangzhou-3", "GN10Xp.20XLARGE320", BillingMode.HOURLY)
    fake = offer(tencent_env, "GN10Xp.20XLARGE320", "ap-guangzhou-3")
    assert q.unit_price == fake.hourly and q.payable == fake.hourly
    assert q.steps == (
        PriceStep(from_hours=0, to_hours=96, unit_price=Decimal("80"), unit_price_discount=Decimal("80")),
        PriceStep(from_hours=96, to_hours=360, unit_price=Decimal("40"), unit_price_discount=Decimal("40")),
        PriceStep(from_hours=360, to_hours=None, unit_price=Decimal("27.2"), unit_price_discount=Decimal("27.2")),
    )
    assert q.charge_unit == "HOUR" and q.image == "img-ubu22new"  # the newest x86 Ubuntu 22.04
    assert q.request_id and q.source.startswith("Tencent CVM InquiryPriceRunInstances, ap-guangzhou-3, read ")
    (call,) = tencent_env.calls_of("InquiryPriceRunInstances")
    assert call.params["InstanceChargeType"] == "POSTPAID_BY_HOUR"
    assert call.params["Placement"] == {"Zone": "ap-guangzhou-3"} and "InstanceChargePrepaid" not in call.params


def test_the_account_discount_is_what_it_pays(tencent_env: FakeCvm) -> None:
    q = inquire_price(None, GZ, "ap-guangzhou-3", "GN7.2XLARGE32", BillingMode.HOURLY, image="img-ubu20xxx")
    assert (q.unit_price, q.unit_price_discount, q.payable) == (Decimal("7"), Decimal("6.3"), Decimal("6.3"))
    assert q.steps == () and q.image == "img-ubu20xxx"
    assert not tencent_env.calls_of("DescribeImages")  # an explicit image is not looked up


def test_monthly_quote_is_the_period_price_with_its_duration_discount(tencent_env: FakeCvm) -> None:
    q = inquire_price(None, GZ, "ap-guangzhou-3", "GN10Xp.2XLARGE40", BillingMode.MONTHLY, months=12)
    assert (q.months, q.period_price, q.period_price_discount) == (12, Decimal("60000"), Decimal("49800"))
    assert q.discount_percent == Decimal("83") and q.payable == Decimal("49800") and q.unit_price is None
    (call,) = tencent_env.calls_of("InquiryPriceRunInstances")
    assert call.params["InstanceChargePrepaid"] == {"Period": 12, "RenewFlag": "NOTIFY_AND_MANUAL_RENEW"}


def test_spot_quote(tencent_env: FakeCvm) -> None:
    q = inquire_price(None, GZ, "ap-guangzhou-4", "GN10Xp.2XLARGE40", BillingMode.SPOT)
    assert q.payable == offer(tencent_env, "GN10Xp.2XLARGE40", "ap-guangzhou-4").spot == Decimal("2.2")
    assert tencent_env.calls_of("InquiryPriceRunInstances")[0].params["InstanceChargeType"] == "SPOTPAID"


def test_a_given_client_is_used(tencent_env: FakeCvm) -> None:
    api = CvmApi(GZ)
    assert inquire_price(api, GZ, "ap-guangzhou-3", "GN7.2XLARGE32", BillingMode.SPOT).payable == Decimal("1.4")
    with pytest.raises(InputError, match="the client is for ap-guangzhou"):
        inquire_price(api, "ap-shanghai", "ap-shanghai-2", "GN7.2XLARGE32", BillingMode.SPOT)


@pytest.mark.parametrize(("zone", "billing", "months", "error"), [
    ("ap-shanghai-2", BillingMode.HOURLY, 1, InputError),
    ("ap-guangzhou-3", BillingMode.MONTHLY, 13, InputError),
    ("ap-guangzhou-3", BillingMode.RESERVED_1Y, 1, NotSupportedError),
])
def test_bad_requests_fail_before_any_call(tencent_env: FakeCvm, zone: str, billing: BillingMode, months: int,
                                           error: type[Exception]) -> None:
    with pytest.raises(error):
        inquire_price(None, GZ, zone, "GN7.2XLARGE32", billing, months=months)
    assert not tencent_env.calls_of("InquiryPriceRunInstances")


def test_a_type_the_zone_does_not_sell_is_the_apis_input_error(tencent_env: FakeCvm) -> None:
    with pytest.raises(InputError, match="InstanceTypeNotFound"):
        inquire_price(None, GZ, "ap-guangzhou-3", "GT4.4XLARGE96", BillingMode.HOURLY, image="img-ubu22new")
