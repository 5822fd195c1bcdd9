"""The exact price of one ECS configuration, as the account would pay it: DescribePrice.

Only the instance is priced (the ``instanceType`` line of the answer's details; the system disk and
bandwidth lines are the bill's extras, as the plan prices them). The answer's ``TradePrice`` is what
this account pays after its discounts, ``OriginalPrice`` the list price. The quote is the model
``gpuplan quote`` renders for every cloud with a price inquiry (defined with Tencent's, the first).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from pricing.billing import BillingMode
from pricing.errors import InputError, ProviderError
from pricing.money import Currency
from providers.alibaba.ecs_api import EcsApi
from providers.tencent.quote import PriceQuote

ACTION = "DescribePrice"


def _price(item: Mapping[str, Any], field: str) -> Decimal | None:
    """A positive price, else None (a zero is "not given", never a free machine)."""
    value = item.get(field)
    if value is None or isinstance(value, bool):
        return None
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return None
    return amount if amount.is_finite() and amount > 0 else None


def inquire_price(client: EcsApi | None, region: str, zone: str, instance_type: str, billing: BillingMode,
                  months: int = 1, image: str | None = None, *, clock: Any = None) -> PriceQuote:
    """Ask ECS what one ``instance_type`` in ``zone`` costs under ``billing`` (``client`` None: the environment's)."""
    if not zone.startswith(region + "-"):
        raise InputError(f"zone {zone!r} is not in region {region}", f"zones look like {region}-l")
    if billing not in (BillingMode.HOURLY, BillingMode.SPOT, BillingMode.MONTHLY):
        raise InputError(f"ECS quotes hourly, spot or monthly, not {billing}")
    api = client or EcsApi(region)
    monthly = billing is BillingMode.MONTHLY
    params: dict[str, Any] = {"ResourceType": "instance", "InstanceType": instance_type, "ZoneId": zone,
                              "PriceUnit": "Month" if monthly else "Hour", "Period": months if monthly else 1,
                              "Amount": 1, "InstanceNetworkType": "vpc"}
    if billing is BillingMode.SPOT:
        params["SpotStrategy"] = "SpotAsPriceGo"
    if image:
        params["ImageId"] = image
    body = api.call(ACTION, params)
    request_id = str(body.get("RequestId") or "")
    info = body.get("PriceInfo")
    total = info.get("Price") if isinstance(info, dict) else None
    if not isinstance(total, dict):
        raise ProviderError(f"Alibaba Cloud ECS {ACTION} answered without PriceInfo.Price (RequestId {request_id})",
                            "try again later")
    details = (total.get("DetailInfos") or {}).get("DetailInfo") if isinstance(total.get("DetailInfos"), dict) else None
    item = next((d for d in details or [] if isinstance(d, dict) and d.get("Resource") == "instanceType"), total)
    listed, paid = _price(item, "OriginalPrice"), _price(item, "TradePrice")
    if listed is None and paid is None:
        raise ProviderError(f"Alibaba Cloud ECS {ACTION} gave no price for {instance_type} in {zone} ({billing}, "
                            f"RequestId {request_id})", "try again later")
    try:
        currency = Currency(str(total.get("Currency") or "CNY").upper())
    except ValueError:
        raise ProviderError(f"Alibaba Cloud ECS {ACTION} priced in {total.get('Currency')!r}, which gpuplan does not "
                            "know") from None
    read_at = (clock() if clock else datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    common: dict[str, Any] = {
        "region": region, "zone": zone, "instance_type": instance_type, "billing": billing, "currency": currency,
        "image": image or "", "request_id": request_id, "read_at": read_at,
        "source": f"Alibaba Cloud ECS {ACTION}, {zone}, read {read_at.isoformat().replace('+00:00', 'Z')}"}
    percent = (paid / listed * 100).quantize(Decimal("0.01")) if listed and paid and paid != listed else None
    if monthly:
        return PriceQuote(months=months, period_price=listed, period_price_discount=paid, discount_percent=percent,
                          **common)
    return PriceQuote(unit_price=listed, unit_price_discount=paid, charge_unit="Hour", discount_percent=percent,
                      **common)
