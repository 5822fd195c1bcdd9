"""The ledger's records and budgets behave the same on SQLite (one person) and PostgreSQL (a team).

PostgreSQL is a real throwaway server (tests.fakes.postgres), one fresh database per test.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from launch.ledger import LaunchRecord, LaunchState, Ledger, now
from pricing.billing import BillingMode
from pricing.errors import InputError, StateError
from pricing.money import Currency, Money
from providers.capabilities import InstanceInfo, InstanceState

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", "postgresql"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Any]:
    """Opens the same ledger again each call, as separate commands would."""
    if request.param == "sqlite":
        return lambda: Ledger(tmp_path / "ledger.sqlite3")
    from launch.ledger_pg import PgLedger

    url = request.getfixturevalue("pg_url")
    return lambda: PgLedger(url)


def record(i: int = 1, **kw: Any) -> LaunchRecord:
    base: dict[str, Any] = dict(
        id=f"gp-{i:010d}", provider="tencent", region="ap-guangzhou", zone=None, instance_type="GN10Xp.2XLARGE40",
        billing=BillingMode.HOURLY, months=1, count=1, image=None, client_token=f"tok-{i}",
        state=LaunchState.INTENT, unit_price=Money(amount=Decimal("10.5"), currency=Currency.CNY),
        created_at=now().replace(microsecond=0), expires_at=None, max_cost=None, owner="ada", project="vision",
        host="laptop")
    return LaunchRecord(**{**base, **kw})


def test_a_launch_reads_back_as_written(opener: Callable[[], Any]) -> None:
    r = record(expires_at=now().replace(microsecond=0) + timedelta(hours=6), teardown="when the run exits",
               extras_unit=Decimal("0.25"), max_cost=Money(amount=Decimal(500), currency=Currency.CNY))
    with opener() as ledger:
        ledger.record_intent(r)
    with opener() as ledger:
        assert ledger.launch(r.id) == r and ledger.launch("gp-00000000") == r  # by a unique prefix
        assert ledger.events(r.id)[0].startswith("intent: 1 x GN10Xp.2XLARGE40")


def test_machines_are_upserted_keeping_what_the_cloud_said_before(opener: Callable[[], Any]) -> None:
    with opener() as ledger:
        ledger.record_intent(record())
        ledger.record_instances("gp-0000000001", [InstanceInfo(instance_id="ins-1", state=InstanceState.PENDING,
                                                               zone="ap-guangzhou-3")])
        ledger.record_instances("gp-0000000001", [InstanceInfo(instance_id="ins-1", state=InstanceState.RUNNING,
                                                               public_ip="203.0.113.9")])
        ledger.set_state("gp-0000000001", LaunchState.RUNNING, "1 of 1 started")
    with opener() as ledger:
        (m,) = ledger.instances("gp-0000000001")
        assert (m.state, m.zone, m.public_ip) == (InstanceState.RUNNING, "ap-guangzhou-3", "203.0.113.9")
        assert ledger.launch("ins-1").id == "gp-0000000001"  # an instance id names its launch
        assert ledger.known_instance_ids() == {"ins-1"}


def test_an_ended_launch_with_a_machine_alive_stays_listed(opener: Callable[[], Any]) -> None:
    with opener() as ledger:
        for i in (1, 2):
            ledger.record_intent(record(i))
            ledger.set_state(f"gp-{i:010d}", LaunchState.TERMINATED)
        ledger.record_instances("gp-0000000002", [InstanceInfo(instance_id="ins-2", state=InstanceState.RUNNING)])
        assert [r.id for r in ledger.launches(include_final=False)] == ["gp-0000000002"]
        assert len(ledger.launches()) == 2


def test_budgets_are_set_changed_and_removed(opener: Callable[[], Any]) -> None:
    with opener() as ledger:
        ledger.set_budget("project", "vision", Money(amount=Decimal(5000), currency=Currency.USD))
        ledger.set_budget("project", "vision", Money(amount=Decimal(3000), currency=Currency.CNY))
        ledger.set_budget("owner", "ada", Money(amount=Decimal(100), currency=Currency.USD))
    with opener() as ledger:
        assert [(s, n, str(m)) for s, n, m in ledger.budgets()] == [("owner", "ada", "100.00 USD"),
                                                                    ("project", "vision", "3,000.00 CNY")]
        assert ledger.remove_budget("owner", "ada") and not ledger.remove_budget("owner", "ada")


def test_a_check_that_refuses_writes_nothing(opener: Callable[[], Any]) -> None:
    def refuse(_: Any) -> None:
        raise InputError("over budget")

    with opener() as ledger:
        with pytest.raises(InputError):
            ledger.record_intent(record(), check=refuse)
        assert ledger.launches() == []


def test_a_ledger_written_by_a_newer_gpuplan_is_refused(pg_url: str) -> None:
    import psycopg

    from launch.ledger_pg import PgLedger

    PgLedger(pg_url).__exit__()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE gpuplan_schema SET version = 99")
    with pytest.raises(InputError, match="written by a newer gpuplan"):
        PgLedger(pg_url)


def test_many_processes_opening_a_new_database_at_once_migrate_it_once(pg_url: str) -> None:
    code = f"from launch.ledger_pg import PgLedger\nwith PgLedger({pg_url!r}) as l:\n    assert l.launches() == []\n"
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stderr=subprocess.PIPE, text=True)
             for _ in range(8)]
    errors = [p.communicate(timeout=60)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, errors
    import psycopg

    with psycopg.connect(pg_url) as conn:
        from launch.ledger import MIGRATIONS

        assert conn.execute("SELECT count(*), max(version) FROM gpuplan_schema").fetchone() == (1, len(MIGRATIONS))


@pytest.mark.parametrize(("url", "said"), [
    ("postgresql://gpuplan:{pw}@127.0.0.1:{closed}/x", "cannot reach the ledger database"),
    ("postgresql://gpuplan:wrong-secret@127.0.0.1:{port}/postgres", "password authentication failed"),
    ("postgresql://gpuplan:{pw}@127.0.0.1:{port}/no_such_db", 'database "no_such_db" does not exist'),
])
def test_a_database_that_cannot_be_used_is_one_line_without_the_password(postgres: Any, url: str,
                                                                          said: str) -> None:
    import socket

    from launch.ledger_pg import PgLedger
    from tests.fakes.postgres import PASSWORD

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    url = url.format(pw=PASSWORD, port=postgres.port, closed=closed)
    with pytest.raises(StateError) as err:
        PgLedger(url)
    text = err.value.message + err.value.hint
    assert said in text and PASSWORD not in text and "wrong-secret" not in text
    assert "postgresql://***@127.0.0.1" in text
