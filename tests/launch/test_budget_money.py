"""Budgets and caps in one currency at the ledger's fixed rate, amounts read strictly, prices compared as shown.

The probes of issue 42: a full USD budget passed four more launches under ``GPUPLAN_FX=USD/CNY=727.34``;
``--max-cost "5,00 CNY"`` launched an 11.98 CNY machine; five launches shown as 3.09 USD did not fit 15.45;
``--ttl 1m`` was priced for one minute while Tencent's timer ends the machine six minutes on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from launch.budget_money import TTL_FLOOR_HOURS, billed_ttl, fixed_fx
from launch.ledger import LaunchRecord, LaunchState, Ledger
from launch.service import LaunchQuote, LaunchSpec, check_budget
from launch.spend import budget_check
from planner.units import parse_duration, parse_money
from pricing.billing import BillingMode
from pricing.errors import BudgetError, InputError
from pricing.money import Currency, Fx, FxRate, Money
from providers.testing.fake_cvm import (
    TEST_SECRET_ID,
    TEST_SECRET_KEY,
    FakeCvm,
    fake_cvm_server,
)
from tests.launch.test_e2e_tencent import ROOT, cli

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcfromtimestamp:DeprecationWarning")
AT = datetime(2026, 12, 4, 6, 0, tzinfo=UTC)
LAUNCH = ("launch", "--provider", "tencent", "--instance-type", "GN10Xp.2XLARGE40", "--zone", "ap-guangzhou-3",
          "--image", "img-ubu22new", "--yes", "--no-ssh-key")


@pytest.fixture
def fake() -> Iterator[FakeCvm]:
    with fake_cvm_server() as f:
        yield f


@pytest.fixture
def env(fake: FakeCvm, tmp_path: Path) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("TENCENTCLOUD_", "AWS_", "GPUPLAN_"))}
    e.update({
        "TENCENTCLOUD_SECRET_ID": TEST_SECRET_ID, "TENCENTCLOUD_SECRET_KEY": TEST_SECRET_KEY,
        "GPUPLAN_TENCENT_ENDPOINT": fake.endpoint, "GPUPLAN_TENCENT_INSTANCE_ROLE": "0",
        "GPUPLAN_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "user"), "NO_PROXY": "127.0.0.1,localhost",
        "GPUPLAN_POLL_SECONDS": "0.05", "PYTHONPATH": str(ROOT), "COLUMNS": "200",
        "PYTHONWARNINGS": "ignore::DeprecationWarning",
    })
    return e


def test_a_full_usd_budget_refuses_a_launch_whatever_gpuplan_fx_says(fake: FakeCvm, env: dict[str, str]) -> None:
    # 10 CNY an hour (the fake's test price) for 6 h is 60 CNY, 8.25 USD at the shipped 7.2734: one fits 10 USD
    assert cli(env, "budget", "set", "--project", "vision", "--monthly", "10 USD").returncode == 0
    r = cli(env, *LAUNCH, "--ttl", "6h", "--project", "vision")
    assert r.returncode == 0, r.stderr
    cheap = {**env, "GPUPLAN_FX": "USD/CNY=727.34"}  # at this rate the second would cost 0.08 USD
    r = cli(cheap, *LAUNCH, "--ttl", "6h", "--project", "vision")
    assert r.returncode == 7 and "monthly budget" in r.stderr, r.stderr
    assert "ledger's fixed 1 CNY" in r.stderr or "ledger's fixed 1 USD" in r.stderr
    assert len(fake.calls_of("RunInstances")) == 1


def test_a_cap_in_usd_is_converted_at_the_ledgers_rate_not_the_callers(fake: FakeCvm, env: dict[str, str]) -> None:
    r = cli({**env, "GPUPLAN_FX": "USD/CNY=7200"}, *LAUNCH, "--ttl", "1h", "--max-cost", "0.01 USD")
    assert r.returncode == 7 and "over --max-cost 0.01 USD" in r.stderr, r.stderr
    assert fake.calls_of("RunInstances") == []


@pytest.mark.parametrize("args", [("--max-cost", "5,00 CNY"), ("--max-cost", "11,98")])
def test_a_decimal_comma_in_a_cap_launches_nothing(fake: FakeCvm, env: dict[str, str], args: tuple[str, str]) -> None:
    r = cli(env, *LAUNCH, "--ttl", "1h", *args)
    assert r.returncode == 2 and "5.00" in r.stderr and "comma" in r.stderr, r.stderr
    assert fake.calls_of("RunInstances") == []


def test_a_budget_with_a_decimal_comma_is_refused_not_read_as_a_hundred_times_more(env: dict[str, str]) -> None:
    r = cli(env, "budget", "set", "--project", "vision", "--monthly", "5,00 CNY")
    assert r.returncode == 2 and "500" not in r.stdout and "comma" in r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("text", ["5,00", "1,5", "12,3456", "1,23,456"])
def test_a_comma_is_only_a_thousands_separator(text: str) -> None:
    with pytest.raises(InputError, match="point"):
        parse_money(text, Currency.USD, "--max-cost")
    assert parse_money("1,234.50 USD", Currency.CNY).amount == Decimal("1234.50")


def test_a_ttl_under_tencents_timer_floor_is_priced_at_the_floor(fake: FakeCvm, env: dict[str, str]) -> None:
    # one minute would be 0.17 CNY; the cloud's timer ends the machine only after 6: 1.00 CNY of the test price,
    # and its disk for those 6 minutes
    r = cli(env, *LAUNCH, "--ttl", "1m", "--max-cost", "0.50 CNY")
    assert r.returncode == 7 and re.search(r"would cost 1\.0\d CNY", r.stderr), r.stderr
    assert fake.calls_of("RunInstances") == []


def test_the_ttl_floor_is_the_tencent_adapters_timer_lead() -> None:
    from providers.tencent.compute import ACTION_TIMER_LEAD

    assert TTL_FLOOR_HOURS["tencent"] * 3600 == Decimal(int(ACTION_TIMER_LEAD.total_seconds()))
    assert billed_ttl("aws", Decimal(1) / 60) == Decimal(1) / 60


def test_a_wait_timeout_in_seconds_is_read() -> None:
    assert parse_duration("5s", "--wait-timeout") * 3600 == 5


def _quote(projected: str, cap: str) -> LaunchQuote:
    spec = LaunchSpec(provider="tencent", instance_type="x", ttl_hours=Decimal(1),
                      max_cost=Money(amount=Decimal(cap), currency=Currency.CNY))
    money = Money(amount=Decimal(projected), currency=Currency.CNY)
    return LaunchQuote(spec=spec, offer="x", region="r", zone=None, zones=(), unit_price=money, rule="",
                       projected=money, estimate=False)


def test_a_cap_past_the_cent_is_said_as_given() -> None:
    with pytest.raises(BudgetError) as err:
        check_budget(_quote("11.98", "11.975"), Fx([]))
    assert "11.98 CNY until its TTL, over --max-cost 11.975 CNY" in err.value.message


def _launch(i: int, price: str) -> LaunchRecord:
    return LaunchRecord(id=f"gp-{i:010d}", provider="aws", region="us-east-1", zone=None, instance_type="p3.2xlarge",
                        billing=BillingMode.HOURLY, months=1, count=1, image=None, client_token=f"t{i}",
                        state=LaunchState.INTENT, unit_price=Money(amount=Decimal(price), currency=Currency.USD),
                        created_at=AT, expires_at=AT + timedelta(hours=1), max_cost=None, project="vision")


def test_five_launches_shown_at_3_09_usd_fit_a_15_45_budget(tmp_path: Path) -> None:
    one = Money(amount=Decimal("3.0925"), currency=Currency.USD)  # shown as 3.09 USD
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        ledger.set_budget("project", "vision", Money(amount=Decimal("15.45"), currency=Currency.USD))
        for i in range(5):
            ledger.record_intent(_launch(i, "3.0925"), check=budget_check("vision", "", one, Fx([]), AT))
        with pytest.raises(BudgetError):
            ledger.record_intent(_launch(5, "3.0925"), check=budget_check("vision", "", one, Fx([]), AT))


def test_the_first_rate_a_ledger_uses_is_the_one_it_keeps(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        first = fixed_fx(ledger).rate(Currency.USD, Currency.CNY)
        # the rates kept are ECB's, against the euro: 1 EUR = 1 USD = 7.0 CNY makes USD/CNY 7.0
        ledger.db.execute("UPDATE fx_rates SET rate = '1' WHERE base = 'EUR' AND quote = 'USD'")
        ledger.db.execute("UPDATE fx_rates SET rate = '7.0' WHERE quote = 'CNY'")
        assert fixed_fx(ledger).rate(Currency.USD, Currency.CNY) == Decimal("7.0") != first
        mine = Fx([FxRate(base=Currency.USD, quote=Currency.CNY, rate=Decimal("727.34"), source="GPUPLAN_FX")])
        assert mine.rate(Currency.USD, Currency.CNY) != fixed_fx(ledger).rate(Currency.USD, Currency.CNY)
