"""A team's ledger on PostgreSQL keeps the clouds' bills once, whoever reads them and however many at once."""

from __future__ import annotations

import threading
from datetime import date
from decimal import Decimal
from typing import Any

from launch.billed import compare, read_bills
from launch.spend import Scope, committed_parts
from pricing.money import Currency
from tests.launch.test_billed import AT, DEC, FX, Reader, bill, ledger_with_launch


def test_members_reading_the_bill_at_once_on_postgresql_keep_one_copy_that_budgets_count(
        pg_url: str, tmp_path: Any) -> None:
    from launch.ledger_pg import PgLedger

    with ledger_with_launch(tmp_path) as seed:  # the launch, copied into the team's database
        (r,) = seed.launches()
        machines = seed.instances(r.id)
    with PgLedger(pg_url) as team:
        team.record_intent(r)
        team.db.execute("UPDATE launches SET state = ? WHERE id = ?", (r.state.value, r.id))
        team.db.execute("INSERT INTO instances (instance_id, launch_id, state, zone, started_at, ended_at)"
                        " VALUES (?,?,?,?,?,?)", (machines[0].instance_id, r.id, machines[0].state.value, "",
                                                  machines[0].started_at.isoformat(),  # type: ignore[union-attr]
                                                  machines[0].ended_at.isoformat()))  # type: ignore[union-attr]
        team.conn.commit()
    errors: list[BaseException] = []

    def member() -> None:
        try:
            with PgLedger(pg_url) as ledger:
                read_bills(ledger, lambda p: Reader(bill(date(2026, 12, 1), "30.60"),
                                                    bill(date(2026, 12, 1), "0.44", "disk")), DEC, AT, refresh=True)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=member) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with PgLedger(pg_url) as ledger:
        kept = ledger.billed(r.id, date(2026, 12, 1), date(2027, 1, 1))
        assert sorted(c.amount for c, _ in kept) == [Decimal("0.44"), Decimal("30.60")]
        clouds = read_bills(ledger, lambda p: Reader(), DEC, AT)  # read today already: the kept bill serves
        (row,) = compare(ledger, clouds, DEC, AT, FX)
        assert row.billed == Decimal("31.04") and clouds["aws"].kept
        billed, _ = committed_parts(ledger, Scope.PROJECT, "vision", at=AT, fx=FX, currency=Currency.USD)
    assert billed == Decimal("31.04")
