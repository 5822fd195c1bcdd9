"""The clouds' bills beside the ledger's estimates: reads kept per day, differences flagged, budgets count the bill."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from launch.billed import compare, read_bills
from launch.ledger import LaunchRecord, LaunchState, Ledger
from launch.spend import Scope, committed_parts, month_of
from pricing.billing import BillingMode
from pricing.money import Currency, Fx, FxRate, Money
from providers.bills import DISK, INSTANCE, BillAnswer, BilledCost, BillReader
from providers.capabilities import InstanceInfo, InstanceState

START = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)  # one p3.2xlarge at 3.06 USD/h from 10:00 ...
END = START + timedelta(hours=10)  # ... to 20:00 on Dec 1: 30.60 USD
AT = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
DEC = month_of("2026-12", AT)
FX = Fx([FxRate(base=Currency.USD, quote=Currency.CNY, rate=Decimal("7.1"), as_of=date(2026, 12, 1),
                source="test")])


class Reader(BillReader):
    """A cloud whose bill is whatever the test says, counting how often it was asked."""

    provider = "aws"

    def __init__(self, *costs: BilledCost, unavailable: str | None = None) -> None:
        self.costs, self.unavailable, self.asked = costs, unavailable, 0

    def read(self, start: date, end: date, launches: Mapping[str, tuple[str, ...]]) -> BillAnswer:
        self.asked += 1
        return BillAnswer(source="test bill", costs=self.costs, unavailable=self.unavailable)


def bill(day: date, amount: str, line: str = INSTANCE, *, launch_id: str = "gp-1", final: bool = True) -> BilledCost:
    return BilledCost(launch_id=launch_id, day=day, days=1, line=line, amount=Decimal(amount), currency="USD",
                      final=final)


def ledger_with_launch(path: Path, *, ended: bool = True, project: str = "vision") -> Ledger:
    """A ledger holding one launch that ran 10 h on Dec 1 (or is still running)."""
    ledger = Ledger(path / f"{uuid.uuid4().hex}.sqlite3")
    ledger.record_intent(LaunchRecord(
        id="gp-1", provider="aws", region="us-east-1", zone=None, instance_type="p3.2xlarge",
        billing=BillingMode.HOURLY, months=1, count=1, image=None, client_token=uuid.uuid4().hex,
        state=LaunchState.INTENT, unit_price=Money(amount=Decimal("3.06"), currency=Currency.USD),
        created_at=START, expires_at=None, max_cost=None, project=project, owner="ada"))
    ledger.record_instances("gp-1", [InstanceInfo(instance_id="i-1", state=InstanceState.RUNNING, zone="us-east-1a",
                                                  launched_at=START)])
    ledger.set_state("gp-1", LaunchState.RUNNING)
    if ended:
        ledger.db.execute("UPDATE instances SET state = 'terminated', ended_at = ?", (END.isoformat(),))
        ledger.db.execute("UPDATE launches SET state = 'terminated'")
        ledger.db.commit()
    return ledger


def one(ledger: Ledger, reader: Reader, at: datetime = AT, refresh: bool = False) -> object:
    clouds = read_bills(ledger, lambda p: reader if p == "aws" else None, DEC, at, refresh=refresh)
    (row,) = compare(ledger, clouds, DEC, at, FX)
    return row


def test_a_bill_matching_the_estimate_is_shown_beside_it_and_not_flagged(tmp_path: Path) -> None:
    with ledger_with_launch(tmp_path) as ledger:
        row = one(ledger, Reader(bill(date(2026, 12, 1), "30.60"), bill(date(2026, 12, 1), "0.40", DISK)))
    assert row.estimated == Decimal("30.60") and row.billed == Decimal("31.00")  # type: ignore[attr-defined]
    assert row.difference == Decimal("0.40") and not row.flagged and row.alarm is None  # type: ignore[attr-defined]
    assert row.lines == {INSTANCE: Decimal("30.60"), DISK: Decimal("0.40")}  # type: ignore[attr-defined]


@pytest.mark.parametrize(("billed", "flagged"), [("33.60", False),  # 3.00 over: under 10% of 30.60
                                                 ("33.70", True),  # 3.10 over: over 10% and over 1 USD
                                                 ("27.50", True)])  # under by as much
def test_a_difference_over_ten_percent_and_one_dollar_is_flagged(tmp_path: Path, billed: str, flagged: bool) -> None:
    with ledger_with_launch(tmp_path) as ledger:
        row = one(ledger, Reader(bill(date(2026, 12, 1), billed)))
    assert row.flagged is flagged  # type: ignore[attr-defined]


def test_a_small_launch_is_not_flagged_for_cents(tmp_path: Path) -> None:
    with ledger_with_launch(tmp_path) as ledger:
        ledger.db.execute("UPDATE launches SET unit_price = '0.05'")
        ledger.db.commit()
        row = one(ledger, Reader(bill(date(2026, 12, 1), "0.90")))  # 80% over 0.50, but 0.40 USD
    assert not row.flagged  # type: ignore[attr-defined]


def test_a_machine_billed_after_its_recorded_end_is_an_alarm(tmp_path: Path) -> None:
    with ledger_with_launch(tmp_path) as ledger:
        row = one(ledger, Reader(bill(date(2026, 12, 1), "30.60"), bill(date(2026, 12, 2), "73.44")))
    assert row.alarm is not None and "2026-12-02" in row.alarm  # type: ignore[attr-defined]
    assert "down --untracked" in row.alarm  # type: ignore[attr-defined]


def test_a_launch_with_no_line_in_the_bill_is_flagged_with_the_tag_hint(tmp_path: Path) -> None:
    with ledger_with_launch(tmp_path) as ledger:
        row = one(ledger, Reader())
    assert row.billed == 0 and row.flagged  # type: ignore[attr-defined]
    assert any("--activate-tag" in w for w in row.why)  # type: ignore[attr-defined]


def test_the_bill_is_asked_once_a_day_unless_refreshed(tmp_path: Path) -> None:
    reader = Reader(bill(date(2026, 12, 1), "30.60"))
    with ledger_with_launch(tmp_path) as ledger:
        one(ledger, reader)
        again = one(ledger, reader, AT + timedelta(hours=2))
        assert reader.asked == 1 and again.billed == Decimal("30.60")  # type: ignore[attr-defined]
        one(ledger, reader, AT + timedelta(hours=2), refresh=True)
        one(ledger, reader, AT + timedelta(days=1))
    assert reader.asked == 3


def test_a_bill_read_twice_is_kept_once(tmp_path: Path) -> None:
    reader = Reader(bill(date(2026, 12, 1), "30.60"))
    with ledger_with_launch(tmp_path) as ledger:
        one(ledger, reader)
        one(ledger, reader, refresh=True)
        assert len(ledger.billed("gp-1", date(2026, 12, 1), date(2027, 1, 1))) == 1


def test_without_billing_rights_the_estimate_stands_and_says_why(tmp_path: Path) -> None:
    reader = Reader(unavailable="no right to read Cost Explorer")
    with ledger_with_launch(tmp_path) as ledger:
        clouds = read_bills(ledger, lambda p: reader, DEC, AT)
        (row,) = compare(ledger, clouds, DEC, AT, FX)
    assert clouds["aws"].unavailable == "no right to read Cost Explorer"
    assert row.billed is None and row.estimated == Decimal("30.60")


def test_a_cloud_without_a_billing_api_says_so(tmp_path: Path) -> None:
    with ledger_with_launch(tmp_path) as ledger:
        clouds = read_bills(ledger, lambda p: None, DEC, AT)
    assert "no billing API" in (clouds["aws"].unavailable or "")


def test_a_budget_counts_complete_billed_days_then_the_estimate(tmp_path: Path) -> None:
    """Still running since Dec 1 10:00; the bill has Dec 1 to 3 (final) and Dec 4 (not final, under a day old)."""
    with ledger_with_launch(tmp_path, ended=False) as ledger:
        days = [bill(date(2026, 12, d), "80.00") for d in (1, 2, 3)] + [bill(date(2026, 12, 4), "10", final=False)]
        read_bills(ledger, lambda p: Reader(*days), DEC, AT)
        billed, estimated = committed_parts(ledger, Scope.PROJECT, "vision", at=AT, fx=FX, currency=Currency.USD)
    assert billed == Decimal("240.00")  # Dec 4's figure is a day old at most: AWS may still add to it
    # after the bill: Dec 4 00:00 to the month's end (no TTL), 28 days x 24 h x 3.06
    assert estimated == Decimal("3.06") * 28 * 24


def test_a_budget_without_a_bill_is_the_estimate_alone(tmp_path: Path) -> None:
    with ledger_with_launch(tmp_path) as ledger:
        billed, estimated = committed_parts(ledger, Scope.PROJECT, "vision", at=AT, fx=FX, currency=Currency.CNY)
    assert billed == 0 and estimated == Decimal("30.60") * Decimal("7.1")


def test_two_members_reading_the_bill_at_once_keep_one_copy(tmp_path: Path) -> None:
    path = tmp_path / "team.sqlite3"
    with ledger_with_launch(tmp_path) as seed:
        seed.db.execute("VACUUM INTO ?", (str(path),))
    errors: list[BaseException] = []

    def member() -> None:
        try:
            with Ledger(path) as ledger:
                read_bills(ledger, lambda p: Reader(bill(date(2026, 12, 1), "30.60")), DEC, AT, refresh=True)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=member) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with Ledger(path) as ledger:
        assert [c.amount for c, _ in ledger.billed("gp-1", date(2026, 12, 1), date(2027, 1, 1))] == [Decimal("30.60")]
