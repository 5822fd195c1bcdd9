"""The exact price of one configuration, as the account would pay it: InquiryPriceRunInstances.

Unlike the catalog rows (list prices, compared across providers), a quote is what this
account pays: it keeps both the list price and the price after the account's discount, the
pay-as-you-go tiers where Tencent bills in steps (hours 0-96, 96-360, over 360), and for
monthly billing the whole period's price with the duration discount. Only the instance is
priced: no public bandwidth is requested, so ``BandwidthPrice`` stays out.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict

from pricing.billing import BillingMode
from pricing.errors import InputError, ProviderError
from pricing.money import Currency
from providers.tencent.charge import PREPAID, PREPAID_PERIODS, RENEW_FLAG, charge_type, price
from providers.tencent.client import CvmApi, default_api
from providers.tencent.images import default_image

ACTION = "InquiryPriceRunInstances"


class PriceStep(BaseModel):
    """Hours ``from_hours`` to ``to_hours`` (None: no end) cost this much per hour."""

    model_config = ConfigDict(frozen=True)

    from_hours: int
    to_hours: int | None
    unit_price: Decimal
    unit_price_discount: Decimal | None = None


class PriceQuote(BaseModel):
    """One configuration's price: per hour (hourly, spot) or per period (monthly)."""

    model_config = ConfigDict(frozen=True)

    region: str
    zone: str
    instance_type: str
    billing: BillingMode
    currency: Currency
    image: str
    unit_price: Decimal | None = None  # list price per hour (the first tier when there are steps)
    unit_price_discount: Decimal | None = None  # what this account pays per hour
    charge_unit: str | None = None  # HOUR
    steps: tuple[PriceStep, ...] = ()
    months: int | None = None
    period_price: Decimal | None = None  # list price of all ``months`` together
    period_price_discount: Decimal | None = None  # what this account pays for them
    discount_percent: Decimal | None = None  # 83 = pay 83 % of the list price
    request_id: str
    source: str
    read_at: datetime

    @property
    def payable(self) -> Decimal:
        """What this account pays: per hour for hourly/spot (first tier), per period for monthly."""
        if self.billing is BillingMode.MONTHLY:
            amount = self.period_price_discount or self.period_price
        else:
            amount = self.unit_price_discount or self.unit_price
        assert amount is not None  # inquire_price never builds a quote without one
        return amount


def _steps(item: Mapping[str, Any]) -> tuple[PriceStep, ...]:
    second, third = price(item, "UnitPriceSecondStep"), price(item, "UnitPriceThirdStep")
    first = price(item, "UnitPrice")
    if first is None or (second is None and third is None):
        return ()
    steps = [PriceStep(from_hours=0, to_hours=96, unit_price=first,
                       unit_price_discount=price(item, "UnitPriceDiscount"))]
    if second is not None:
        steps.append(PriceStep(from_hours=96, to_hours=360 if third is not None else None, unit_price=second,
                               unit_price_discount=price(item, "UnitPriceDiscountSecondStep")))
    if third is not None:
        steps.append(PriceStep(from_hours=360, to_hours=None, unit_price=third,
                               unit_price_discount=price(item, "UnitPriceDiscountThirdStep")))
    return tuple(steps)


def inquire_price(
    client: CvmApi | None,
    region: str,
    zone: str,
    instance_type: str,
    billing: BillingMode,
    months: int = 1,
    image: str | None = None,
    *,
    currency: Currency = Currency.CNY,
    clock: Any = None,
) -> PriceQuote:
    """Ask Tencent what one ``instance_type`` in ``zone`` costs under ``billing``.

    ``client`` None builds one for ``region`` from the environment; ``image`` None prices the
    default public image (the image can change the price: marketplace images are paid).
    ``currency`` is the account's billing currency (the API does not say it; CNY on the mainland site).
    """
    charge = charge_type(billing)
    api = client or default_api(region)
    if api.region != region:
        raise InputError(f"the client is for {api.region}, the quote for {region}", "use a client of the same region")
    if not zone.startswith(region + "-"):
        raise InputError(f"zone {zone!r} is not in region {region}", f"zones look like {region}-3")
    if billing is BillingMode.MONTHLY and months not in PREPAID_PERIODS:
        raise InputError(f"Tencent sells monthly periods of 1-12, 24, 36, 48 or 60 months, not {months}")
    image_id = image or default_image(api, instance_type).image_id
    params: dict[str, Any] = {
        "Placement": {"Zone": zone},
        "InstanceType": instance_type,
        "ImageId": image_id,
        "InstanceChargeType": charge,
        "InstanceCount": 1,
    }
    if charge == PREPAID:
        params["InstanceChargePrepaid"] = {"Period": months, "RenewFlag": RENEW_FLAG}
    response = api.call(ACTION, params)
    request_id = str(response["RequestId"])
    item = response.get("Price", {}).get("InstancePrice") if isinstance(response.get("Price"), dict) else None
    if not isinstance(item, dict):
        raise ProviderError(f"Tencent CVM {ACTION} answered without Price.InstancePrice (RequestId {request_id})",
                            "try again later")
    read_at = (clock() if clock else datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    common: dict[str, Any] = dict(
        region=region, zone=zone, instance_type=instance_type, billing=billing, currency=currency, image=image_id,
        request_id=request_id, read_at=read_at,
        source=f"Tencent CVM {ACTION}, {zone}, read {read_at.isoformat().replace('+00:00', 'Z')}",
    )
    if billing is BillingMode.MONTHLY:
        period, paid = price(item, "OriginalPrice"), price(item, "DiscountPrice")
        if period is None and paid is None:
            raise ProviderError(f"Tencent CVM {ACTION} gave no monthly price for {instance_type} in {zone} "
                                f"(RequestId {request_id})", "try again later")
        return PriceQuote(months=months, period_price=period, period_price_discount=paid,
                          discount_percent=price(item, "Discount"), **common)
    unit, paid = price(item, "UnitPrice"), price(item, "UnitPriceDiscount")
    if unit is None and paid is None:
        raise ProviderError(f"Tencent CVM {ACTION} gave no hourly price for {instance_type} in {zone} "
                            f"(RequestId {request_id})", "try again later")
    return PriceQuote(unit_price=unit, unit_price_discount=paid, charge_unit=item.get("ChargeUnit") or None,
                      steps=_steps(item), discount_percent=price(item, "Discount"), **common)
