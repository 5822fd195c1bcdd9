"""Tencent Cloud's bill per launch: the billing API's DescribeBillResourceSummary, per instance and month.

Tencent keeps the bill by resource and month: each machine a launch recorded (its instance id,
the bill's ResourceId) has one line with what it cost after discounts (RealTotalCost, CNY),
the system disk and bandwidth billed with it. A month's figure grows as hourly settlements
come in and is final once the month has closed. Missing billing rights degrade to estimates.
"""

from __future__ import annotations

from calendar import monthrange
from collections.abc import Mapping
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from pricing.errors import CredentialsError, GpuplanError
from providers.bills import INSTANCE, BillAnswer, BilledCost, BillReader

SOURCE = "Tencent Cloud billing API DescribeBillResourceSummary, per instance and month"
PAGE = 1000  # the API's largest page
MAX_PAGES = 50
BILLING_REGION = "ap-guangzhou"  # the billing API is account-wide; the SDK still signs a region


class TencentBillReader(BillReader):
    """The billing API for the machines of one Tencent Cloud account (the credentials in effect)."""

    provider = "tencent"
    caveats = ("Tencent: the bill is kept per machine and month (its disk and bandwidth included) and is final once "
               "the month has closed; each line is matched by the instance ids the ledger recorded",)

    def __init__(self, api: Any = None) -> None:
        self._api = api

    def _billing(self) -> Any:
        if self._api is None:
            from providers.tencent.client import CvmApi

            self._api = CvmApi(BILLING_REGION, service="billing")
        return self._api

    def read(self, start: date, end: date, launches: Mapping[str, tuple[str, ...]]) -> BillAnswer:
        owner = {i: launch for launch, ids in launches.items() for i in ids}
        month = f"{start:%Y-%m}"
        first = start.replace(day=1)
        days = monthrange(first.year, first.month)[1]
        costs: list[BilledCost] = []
        notes: dict[str, None] = {}
        try:
            for page in range(MAX_PAGES):
                answer = self._billing().call("DescribeBillResourceSummary", {
                    "Month": month, "Offset": page * PAGE, "Limit": PAGE, "NeedRecordNum": 1})
                items = answer.get("ResourceSummarySet") or []
                for item in items:
                    launch = owner.get(str(item.get("ResourceId") or ""))
                    if launch is None:  # another resource of the account, not a machine of this ledger
                        continue
                    amount = _decimal(item.get("RealTotalCost"))
                    if amount is None:
                        notes[f"a line of {item.get('ResourceId')} without a readable RealTotalCost was skipped"] = None
                        continue
                    costs.append(BilledCost(launch_id=launch, day=first, days=days, line=INSTANCE, amount=amount,
                                            currency="CNY", final=False,
                                            detail=str(item.get("BusinessCodeName") or item.get("BusinessCode") or "")))
                total = answer.get("Total")
                if not items or not isinstance(total, int) or (page + 1) * PAGE >= total:
                    break
        except CredentialsError as exc:
            return BillAnswer(source=SOURCE, unavailable=f"{exc.message}: the ledger's estimates are shown instead")
        except GpuplanError as exc:
            if "RequestLimitExceeded" not in exc.message and "UnauthorizedOperation" not in exc.message:
                raise
            return BillAnswer(source=SOURCE, unavailable=f"{exc.message}: the ledger's estimates are shown instead")
        return BillAnswer(source=SOURCE, costs=tuple(costs), notes=tuple(notes))


def _decimal(value: Any) -> Decimal | None:
    try:
        d = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return d if d.is_finite() else None
