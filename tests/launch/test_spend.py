"""What launches cost from the ledger alone: month windows, subscriptions, budgets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from launch.ledger import InstanceRecord, LaunchRecord, LaunchState, Ledger
from launch.spend import Scope, budget_check, committed, launch_cost, month_of
from pricing.billing import BillingMode
from pricing.errors import BudgetError, InputError
from pricing.money import Currency, Fx, Money
from providers.capabilities import InstanceState

T0 = datetime(2026, 11, 30, 22, 0, tzinfo=UTC)
T1 = datetime(2026, 12, 4, 6, 0, tzinfo=UTC)  # a launch asked for then, checked a minute later
AT = T1 + timedelta(minutes=1)
FX = Fx([])


def rec(**kw: object) -> LaunchRecord:
    base: dict[str, object] = dict(
        id="gp-0000000001", provider="aws", region="us-east-1", zone=None, instance_type="p3.2xlarge",
        billing=BillingMode.HOURLY, months=1, count=1, image=None, client_token="t", state=LaunchState.RUNNING,
        unit_price=Money(amount=Decimal("3.06"), currency=Currency.USD), created_at=T0, expires_at=None,
        max_cost=None, project="vision", owner="ada")
    return LaunchRecord(**{**base, **kw})  # type: ignore[arg-type]


def machine(start: datetime, end: datetime | None = None) -> InstanceRecord:
    return InstanceRecord(instance_id="i-1", launch_id="gp-0000000001", state=InstanceState.RUNNING, zone="",
                          public_ip=None, private_ip=None, started_at=start, ended_at=end)


def test_a_run_across_midnight_of_the_month_is_split_between_the_months() -> None:
    r, m = rec(), [machine(T0, T0 + timedelta(hours=5))]  # 22:00 Nov 30 to 03:00 Dec 1
    nov, dec = month_of("2026-11", T0), month_of("2026-12", T0)
    at = T0 + timedelta(days=2)
    assert launch_cost(r, m, *nov, at) == Decimal("6.12") and launch_cost(r, m, *dec, at) == Decimal("9.18")


def test_a_subscription_costs_its_whole_prepaid_period_in_the_month_it_was_bought() -> None:
    r = rec(billing=BillingMode.MONTHLY, months=3, unit_price=Money(amount=Decimal(5750), currency=Currency.CNY))
    at = T0 + timedelta(hours=1)
    assert launch_cost(r, [machine(T0)], *month_of("2026-11", T0), at) == Decimal(17250)
    assert launch_cost(r, [machine(T0)], *month_of("2026-12", T0), at) == 0


def test_a_launch_with_no_machine_recorded_yet_counts_its_machines_from_the_intent() -> None:
    r = rec(state=LaunchState.INTENT, count=2)
    assert launch_cost(r, [], *month_of("2026-11", T0), T0 + timedelta(hours=1)) == Decimal("6.12")


@pytest.mark.parametrize("text", ["2026-13", "december", "2026", ""])
def test_a_month_is_yyyy_mm(text: str) -> None:
    with pytest.raises(InputError, match="is not a month"):
        month_of(text, T0)


def _ledger(tmp_path: Path, hours: float) -> Ledger:
    """A ledger holding one launch asked for now with a TTL of ``hours`` (its machine not yet recorded)."""
    import uuid

    ledger = Ledger(tmp_path / f"{uuid.uuid4().hex}.sqlite3")
    ledger.record_intent(rec(created_at=T1, expires_at=T1 + timedelta(hours=hours), state=LaunchState.INTENT))
    return ledger


@given(st.floats(min_value=0.1, max_value=200), st.floats(min_value=0.1, max_value=200))
def test_a_longer_ttl_never_commits_less(tmp_path_factory: pytest.TempPathFactory, a: float, b: float) -> None:
    tmp = tmp_path_factory.mktemp("c")
    lo, hi = sorted((a, b))
    with _ledger(tmp, lo) as short, _ledger(tmp, hi) as long:
        c = [committed(x, Scope.PROJECT, "vision", at=AT, fx=FX, currency=Currency.USD) for x in (short, long)]
    assert c[0] <= c[1]


def test_a_budget_refuses_what_would_pass_it_and_passes_what_fits(tmp_path: Path) -> None:
    with _ledger(tmp_path, 10) as ledger:  # 10 h of 3.06 USD running: 30.60 committed (to its TTL, this month)
        ledger.set_budget("project", "vision", Money(amount=Decimal(40), currency=Currency.USD))
        at = AT
        fits = Money(amount=Decimal("9.40"), currency=Currency.USD)
        budget_check("vision", "ada", fits, FX, at)(ledger)
        with pytest.raises(BudgetError, match="would pass its monthly budget of 40.00 USD"):
            budget_check("vision", "ada", fits + Money(amount=Decimal("0.01"), currency=Currency.USD), FX, at)(ledger)
        budget_check("other", "bob", fits * 100, FX, at)(ledger)  # no budget of theirs
