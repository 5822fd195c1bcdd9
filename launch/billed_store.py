"""The clouds' bills kept in the ledger, per launch, day and line, so one member's read serves the team.

A read of a cloud's bill for a month replaces what the ledger held for that cloud's launches in
that month, in one transaction: reading twice, or two members at once, leaves one copy. The
read itself is remembered per cloud and month (``bill_reads``), so a bill that costs money to
ask for (AWS: 0.01 USD a request) is asked once a day unless the user says ``--refresh``.

A bill's day is *complete* when the cloud says its figure is final, or when the day ended more
than a day before the read (the clouds' bills run about 24 h late): budgets count billed cost
up to the last complete day and the ledger's estimate after it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from providers.bills import BillAnswer, BilledCost

# How late a cloud's bill may still change a day's figure: a day ended this long before the read counts as billed.
BILL_LAG = timedelta(days=1)

MIGRATION = """
    CREATE TABLE billed (
        launch_id TEXT NOT NULL,
        day TEXT NOT NULL,
        days INTEGER NOT NULL DEFAULT 1,
        line TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        amount TEXT NOT NULL,
        amortized TEXT,
        currency TEXT NOT NULL,
        final INTEGER NOT NULL DEFAULT 0,
        read_at TEXT NOT NULL,
        PRIMARY KEY (launch_id, day, line, detail)
    );
    CREATE TABLE bill_reads (
        provider TEXT NOT NULL,
        month TEXT NOT NULL,
        read_at TEXT NOT NULL,
        source TEXT NOT NULL,
        PRIMARY KEY (provider, month)
    )
    """


@dataclass(frozen=True, slots=True)
class BillRead:
    """When a cloud's bill for a month was last read into the ledger, and from where."""

    provider: str
    month: str  # YYYY-MM
    read_at: datetime
    source: str


def complete(cost: BilledCost, read_at: datetime) -> bool:
    """Whether ``cost`` counts as billed: final, or its last day ended over BILL_LAG before the read."""
    ended = datetime.combine(cost.day + timedelta(days=cost.days), datetime.min.time(), tzinfo=UTC)
    return cost.final or ended + BILL_LAG <= read_at


class BilledStore:
    """The ledger's bill tables (mixed into :class:`launch.ledger.Ledger`; its ``_write``/``_select`` do the SQL)."""

    def _write(self, what: str, *, required: bool = False) -> Any: ...  # provided by the ledger
    def _select(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]: ...  # provided by the ledger
    def _serialize_budgets(self, db: Any) -> None: ...  # provided by the ledger

    def record_bill(self, provider: str, month: str, launch_ids: Iterable[str], start: date, end: date,
                    answer: BillAnswer, read_at: datetime) -> None:
        """Replace what the ledger holds of ``provider``'s bill in [start, end) for ``launch_ids`` by ``answer``."""
        ids = sorted(set(launch_ids))
        with self._write(f"bill {provider} {month}") as db:
            if db is None:  # a read-only ledger: the figures are shown, not kept
                return
            # One bill write at a time, under the lock budget checks take (PostgreSQL): members reading at once
            # deadlocked deleting each other's rows, and a budget check sees a whole bill or none of it.
            self._serialize_budgets(db)
            for launch_id in ids:
                db.execute("DELETE FROM billed WHERE launch_id = ? AND day >= ? AND day < ?",
                           (launch_id, start.isoformat(), end.isoformat()))
            # one row per (launch, day, line, detail): a bill that repeats a group is added up, not lost
            rows: dict[tuple[str, str, str, str], BilledCost] = {}
            for c in answer.costs:
                key = (c.launch_id, c.day.isoformat(), c.line, c.detail)
                if key in rows:
                    old = rows[key]
                    c = BilledCost(launch_id=c.launch_id, day=c.day, days=c.days, line=c.line, detail=c.detail,
                                   amount=old.amount + c.amount, currency=c.currency, final=c.final and old.final,
                                   amortized=None if c.amortized is None or old.amortized is None
                                   else c.amortized + old.amortized)
                rows[key] = c
            for (launch_id, day, line, detail), c in rows.items():
                # an upsert: another member's read of the same bill may commit between this one's delete and insert
                db.execute("INSERT INTO billed (launch_id, day, days, line, detail, amount, amortized, currency, final,"
                           " read_at) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(launch_id, day, line, detail) DO UPDATE"
                           " SET days = excluded.days, amount = excluded.amount, amortized = excluded.amortized,"
                           " currency = excluded.currency, final = excluded.final, read_at = excluded.read_at",
                           (launch_id, day, c.days, line, detail, str(c.amount),
                            None if c.amortized is None else str(c.amortized), c.currency, int(c.final),
                            read_at.isoformat(timespec="seconds")))
            db.execute("INSERT INTO bill_reads (provider, month, read_at, source) VALUES (?,?,?,?)"
                       " ON CONFLICT(provider, month) DO UPDATE SET read_at = excluded.read_at,"
                       " source = excluded.source", (provider, month, read_at.isoformat(timespec="seconds"),
                                                    answer.source))

    def bill_read(self, provider: str, month: str) -> BillRead | None:
        rows = self._select("SELECT * FROM bill_reads WHERE provider = ? AND month = ?", (provider, month))
        if not rows:
            return None
        r = rows[0]
        return BillRead(provider=r["provider"], month=r["month"], read_at=datetime.fromisoformat(r["read_at"]),
                        source=r["source"])

    def billed(self, launch_id: str, start: date, end: date) -> list[tuple[BilledCost, datetime]]:
        """The kept bill lines of a launch in [start, end), each with when it was read."""
        rows = self._select("SELECT * FROM billed WHERE launch_id = ? AND day >= ? AND day < ? ORDER BY day, line,"
                            " detail", (launch_id, start.isoformat(), end.isoformat()))
        return [(BilledCost(launch_id=r["launch_id"], day=date.fromisoformat(r["day"]), days=int(r["days"]),
                            line=r["line"], detail=r["detail"], amount=Decimal(r["amount"]), currency=r["currency"],
                            final=bool(r["final"]),
                            amortized=None if r["amortized"] is None else Decimal(r["amortized"])),
                 datetime.fromisoformat(r["read_at"])) for r in rows]

    def billed_part(self, launch_id: str, currency: str, start: datetime,
                    end: datetime) -> tuple[datetime, Decimal]:
        """(the first moment of the month the bill does not cover, what the bill says up to then) for a budget:
        complete days only, in the launch's own currency; (start, 0) without a kept bill."""
        covered = start
        total = Decimal(0)
        for cost, read_at in self.billed(launch_id, start.date(), end.date()):
            if cost.currency != currency or not complete(cost, read_at):
                continue
            total += cost.amount
            covered = max(covered, datetime.combine(cost.day + timedelta(days=cost.days), datetime.min.time(),
                                                    tzinfo=UTC))
        return min(covered, end), total
