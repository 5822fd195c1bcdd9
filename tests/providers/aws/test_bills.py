"""Reading Cost Explorer's answer: groups by tag and service, pages, odd lines, and refusals that mean "estimate"."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from pricing.errors import ProviderError
from providers.aws.bills import AwsBillReader, parse_results
from providers.bills import DISK, INSTANCE, TRAFFIC

KNOWN = {"gp-1": ("i-1",), "gp-2": ("i-2",)}


def group(tag: str, amount: str, *service: str, unit: str = "USD") -> dict[str, Any]:
    return {"Keys": [f"gpuplan:id${tag}", *service],
            "Metrics": {"UnblendedCost": {"Amount": amount, "Unit": unit},
                        "AmortizedCost": {"Amount": amount, "Unit": unit}}}


def period(start: str, end: str, *groups: dict[str, Any], estimated: bool = True) -> dict[str, Any]:
    return {"TimePeriod": {"Start": start, "End": end}, "Groups": list(groups), "Estimated": estimated}


def test_tag_and_service_groups_become_the_bills_lines() -> None:
    got = parse_results([{"ResultsByTime": [period(
        "2026-12-01", "2026-12-02",
        group("gp-1", "24.48", "Amazon Elastic Compute Cloud - Compute"),
        group("gp-1", "0.66", "EC2 - Other"), group("gp-1", "1.20", "AWS Data Transfer"))]}], KNOWN)
    assert [(c.launch_id, c.day, c.line, c.amount, c.final) for c in got.costs] == [
        ("gp-1", date(2026, 12, 1), INSTANCE, Decimal("24.48"), False),
        ("gp-1", date(2026, 12, 1), DISK, Decimal("0.66"), False),
        ("gp-1", date(2026, 12, 1), TRAFFIC, Decimal("1.20"), False)]


def test_untagged_cost_and_launches_of_another_ledger_are_not_counted_and_the_stranger_is_said() -> None:
    got = parse_results([{"ResultsByTime": [period("2026-12-01", "2026-12-02", group("", "500.00"),
                                                   group("gp-9", "3.00"), group("gp-2", "3.06"),
                                                   estimated=False)]}], KNOWN)
    assert [(c.launch_id, c.amount, c.final) for c in got.costs] == [("gp-2", Decimal("3.06"), True)]
    assert got.notes == ("billed under gpuplan:id=gp-9, which this ledger does not hold",)


@pytest.mark.parametrize("bad", [{"UnblendedCost": {"Amount": "NaN", "Unit": "USD"}}, {},
                                 {"UnblendedCost": {"Amount": "twelve", "Unit": "USD"}}])
def test_a_line_without_a_readable_amount_is_skipped_and_said(bad: dict[str, Any]) -> None:
    g = {"Keys": ["gpuplan:id$gp-1"], "Metrics": bad}
    got = parse_results([{"ResultsByTime": [period("2026-12-01", "2026-12-02", g)]}], KNOWN)
    assert got.costs == () and "gp-1" in got.notes[0]


def test_a_period_without_dates_is_skipped_not_an_internal_error() -> None:
    got = parse_results([{"ResultsByTime": [{"Groups": [group("gp-1", "1")]}]}, {}], KNOWN)
    assert got.costs == () and got.notes


class Ce:
    """Cost Explorer as botocore's client: the pages it is given, or the error."""

    def __init__(self, *pages: dict[str, Any], error: str | None = None) -> None:
        self.pages, self.error, self.asked = list(pages), error, []

    def get_cost_and_usage(self, **ask: Any) -> dict[str, Any]:
        from botocore.exceptions import ClientError

        self.asked.append(ask)
        if self.error:
            raise ClientError({"Error": {"Code": self.error, "Message": "no"}}, "GetCostAndUsage")
        return self.pages.pop(0)


def test_every_page_is_read_with_the_token_of_the_last() -> None:
    ce = Ce({"ResultsByTime": [period("2026-12-01", "2026-12-02", group("gp-1", "1.00"))], "NextPageToken": "t2"},
            {"ResultsByTime": [period("2026-12-02", "2026-12-03", group("gp-1", "2.00"))]})
    got = AwsBillReader(client=ce).read(date(2026, 12, 1), date(2026, 12, 3), KNOWN)
    assert [c.amount for c in got.costs] == [Decimal("1.00"), Decimal("2.00")]
    assert "NextPageToken" not in ce.asked[0] and ce.asked[1]["NextPageToken"] == "t2"
    assert ce.asked[0]["GroupBy"][0] == {"Type": "TAG", "Key": "gpuplan:id"}
    assert ce.asked[0]["TimePeriod"] == {"Start": "2026-12-01", "End": "2026-12-03"}


@pytest.mark.parametrize(("code", "said"), [("AccessDeniedException", "ce:GetCostAndUsage"),
                                            ("LimitExceededException", "no figures now"),
                                            ("DataUnavailableException", "no figures now")])
def test_a_refusal_means_use_the_estimates(code: str, said: str) -> None:
    got = AwsBillReader(client=Ce(error=code)).read(date(2026, 12, 1), date(2026, 12, 3), KNOWN)
    assert got.costs == () and said in (got.unavailable or "")


def test_any_other_fault_is_an_error_of_the_command() -> None:
    with pytest.raises(ProviderError, match="ValidationException"):
        AwsBillReader(client=Ce(error="ValidationException")).read(date(2026, 12, 1), date(2026, 12, 3), KNOWN)
