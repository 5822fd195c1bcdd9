"""Tencent's billing API in the fake CVM endpoint: the bill lines a test sets, read by DescribeBillResourceSummary.

GPUPLAN_TENCENT_ENDPOINT sends every service to the one fake, so the billing actions are a part
of :class:`providers.testing.fake_cvm.FakeCvm` (this mixin), signed and checked like CVM's.
Answers take the shape of the billing API 2018-07-09 (``ResourceSummarySet`` of
``BillResourceSummary``, money as decimal strings, ``Total`` with ``NeedRecordNum=1``); every
amount is a TEST VALUE the test chose.
"""

from __future__ import annotations

from typing import Any

from providers.testing.fake_api import ApiError

MAX_LIMIT = 1000  # the API's largest page


class BillingActions:
    """The fake's billing side: ``bill(instance_id, month, amount)`` adds a resource line to the month's bill."""

    def bill(self, instance_id: str, month: str, amount: str, *, business: str = "p_cvm",
             name: str = "Cloud Virtual Machine") -> None:
        lines: list[dict[str, Any]] = self.__dict__.setdefault("bill_lines", [])
        lines.append({"BillMonth": month, "ResourceId": instance_id, "BusinessCode": business,
                      "BusinessCodeName": name, "RealTotalCost": amount, "CashPayAmount": amount,
                      "VoucherPayAmount": "0", "IncentivePayAmount": "0", "TransferPayAmount": "0",
                      "PayModeName": "Pay-as-you-go", "ActionTypeName": "Pay-as-you-go hourly settlement"})

    def _do_DescribeBillResourceSummary(self, region: str, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        month = params.get("Month")
        offset, limit = params.get("Offset"), params.get("Limit")
        if not isinstance(month, str) or len(month) != 7 or month[4] != "-":
            raise ApiError("InvalidParameter.Month", "Month must be yyyy-mm.")
        if not isinstance(offset, int) or not isinstance(limit, int) or offset < 0 or not 1 <= limit <= MAX_LIMIT:
            raise ApiError("InvalidParameter", "Offset and Limit (1 to 1000) are required integers.")
        lines = [x for x in self.__dict__.get("bill_lines", []) if x["BillMonth"] == month]
        answer: dict[str, Any] = {"ResourceSummarySet": lines[offset:offset + limit]}
        if params.get("NeedRecordNum") == 1:
            answer["Total"] = len(lines)
        return answer
