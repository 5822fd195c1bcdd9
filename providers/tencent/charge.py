"""Tencent's charge types and price fields, read the same way by prices, quotes and launches."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation

from pricing.billing import BillingMode
from pricing.errors import NotSupportedError

POSTPAID = "POSTPAID_BY_HOUR"
PREPAID = "PREPAID"
SPOTPAID = "SPOTPAID"

CHARGE_TYPE = {BillingMode.HOURLY: POSTPAID, BillingMode.MONTHLY: PREPAID, BillingMode.SPOT: SPOTPAID}
# RunInstances' InstanceChargePrepaid.Period: months the SDK model documents.
PREPAID_PERIODS = frozenset((*range(1, 13), 24, 36, 48, 60))
# The only RenewFlag that neither renews on its own nor stays silent before expiry.
RENEW_FLAG = "NOTIFY_AND_MANUAL_RENEW"


def charge_type(mode: BillingMode) -> str:
    try:
        return CHARGE_TYPE[mode]
    except KeyError:
        raise NotSupportedError(f"Tencent CVM has no {mode} billing",
                                "use hourly (POSTPAID_BY_HOUR), monthly (PREPAID) or spot (SPOTPAID)") from None


def price(item: object, field: str) -> Decimal | None:
    """A positive price from an ItemPrice, else None.

    The API fills fields that do not apply to the charge type with 0.0 (a PREPAID item has
    ``UnitPrice: 0.0``) and returns numbers as JSON numbers or strings ("100.000000"); a zero
    is therefore "not given", never a free machine.
    """
    if not isinstance(item, Mapping):
        return None
    value = item.get(field)
    if value is None or isinstance(value, bool):
        return None
    try:
        amount = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    return amount if amount.is_finite() and amount > 0 else None
