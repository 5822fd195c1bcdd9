"""The ledger file: private, durable across processes, migrated, never mixed up."""

from __future__ import annotations

import os
import sqlite3
import stat
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from pricing.billing import BillingMode
from pricing.errors import InputError
from pricing.money import Currency, Money
from providers.capabilities import InstanceInfo, InstanceState
from launch.ledger import MIGRATIONS, LaunchRecord, LaunchState, Ledger


def record(launch_id: str = "gp-1", token: str = "tok-1") -> LaunchRecord:
    return LaunchRecord(id=launch_id, provider="aws", region="us-east-1", zone=None, instance_type="p3.2xlarge",
                        billing=BillingMode.HOURLY, months=1, count=2, image=None, client_token=token,
                        state=LaunchState.INTENT, unit_price=Money(amount=Decimal("3.06"), currency=Currency.USD),
                        created_at=datetime(2026, 12, 1, tzinfo=UTC), expires_at=None, max_cost=None)


def test_the_file_is_private_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    with Ledger(path) as ledger:
        ledger.record_intent(record())
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


def test_an_intent_is_visible_to_another_process_at_once(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    with Ledger(path) as writer:
        writer.record_intent(record())
        # a second connection (as `gpuplan ls` in another shell) sees it without the writer closing
        with Ledger(path) as reader:
            (r,) = reader.launches()
    assert (r.id, r.state, r.client_token, r.unit_price.amount) == ("gp-1", LaunchState.INTENT, "tok-1",
                                                                     Decimal("3.06"))


def test_instances_and_state_changes_are_recorded_with_events(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        ledger.record_intent(record())
        ledger.record_instances("gp-1", [InstanceInfo(instance_id="i-1", state=InstanceState.PENDING,
                                                      zone="us-east-1a")])
        ledger.set_state("gp-1", LaunchState.PENDING, zone="us-east-1a")
        ledger.record_instances("gp-1", [InstanceInfo(instance_id="i-1", state=InstanceState.RUNNING,
                                                      public_ip="203.0.113.9")])
        (inst,) = ledger.instances("gp-1")
        assert (inst.state, inst.zone, inst.public_ip) == (InstanceState.RUNNING, "us-east-1a", "203.0.113.9")
        assert ledger.launch("i-1").id == "gp-1"  # found by instance id too
        assert ledger.launch("gp-").zone == "us-east-1a"  # and by a unique prefix
        assert [e.split(":")[0] for e in ledger.events("gp-1")] == ["intent", "instances", "pending", "instances"]


def test_a_client_token_is_used_once(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        ledger.record_intent(record())
        with pytest.raises(sqlite3.IntegrityError):
            ledger.record_intent(record("gp-2", token="tok-1"))


def test_unknown_and_ambiguous_keys_are_input_errors(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        ledger.record_intent(record("gp-a1", "t1"))
        ledger.record_intent(record("gp-a2", "t2"))
        with pytest.raises(InputError, match="not in the ledger"):
            ledger.launch("gp-zz")
        with pytest.raises(InputError, match="several"):
            ledger.launch("gp-a")


def test_a_ledger_from_a_newer_gpuplan_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    Ledger(path).db.close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={len(MIGRATIONS) + 1}")
    db.close()
    with pytest.raises(InputError, match="newer gpuplan"):
        Ledger(path)
