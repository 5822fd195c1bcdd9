"""The local journal of a team ledger's outage: what `ls` and `down` did at the clouds while PostgreSQL was away.

A team's ledger lives in one PostgreSQL database; when it cannot be reached, ``ls`` and ``down`` read the
machines from the clouds by their tags (:mod:`launch.outage`) and end them there. Every such change is
written here first, in a SQLite file of the user's data folder (mode 0600), and the next command that
opens the database replays it (:func:`replay`): the machines' ends at the times this journal saw them, the
launch closed once all its machines are. Replaying twice changes nothing, and a launch the database
already shows ended stays as it is.

The same file keeps where launches made from this machine went (provider, region) and their ids, written
when the database records the launch: while it is away, that is where the clouds are searched and which
launches are yours. Nothing secret is kept: the database is named by user, host, port and name only.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict

from launch.ledger import LaunchRecord, LaunchState, Ledger
from launch.ledger_pg import PgLedger
from pricing.files import private_dir

SCHEMA = """
CREATE TABLE IF NOT EXISTS places (provider TEXT NOT NULL, region TEXT NOT NULL, PRIMARY KEY (provider, region));
CREATE TABLE IF NOT EXISTS launched_here (id TEXT PRIMARY KEY, provider TEXT NOT NULL, region TEXT NOT NULL,
    owner TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (seq INTEGER PRIMARY KEY AUTOINCREMENT, ledger TEXT NOT NULL,
    launch_id TEXT NOT NULL, provider TEXT NOT NULL, region TEXT NOT NULL, instance_id TEXT NOT NULL,
    zone TEXT NOT NULL, state TEXT NOT NULL, started TEXT, at TEXT NOT NULL);
"""
ENDED = "terminated"  # a machine the cloud showed ended
ENDING = "terminating"  # a machine asked to end, not yet seen ended


def database_key(url: str) -> str:
    """The database a URL names, without its password or options: which entries belong to which ledger."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(url)
    except Exception:  # noqa: BLE001 - a URL psycopg cannot read never opened a database: key it by nothing secret
        return "postgresql://?"
    return f"postgresql://{parts.get('user') or ''}@{parts.get('host') or ''}:{parts.get('port') or 5432}/" \
           f"{parts.get('dbname') or ''}"


class Entry(BaseModel):
    """One machine's change at the cloud, as the journal recorded it."""

    model_config = ConfigDict(frozen=True)

    seq: int
    launch_id: str
    provider: str
    region: str
    instance_id: str
    zone: str
    state: str  # ENDED or ENDING
    started: datetime | None
    at: datetime  # when it was seen (ENDED: the machine's end as recorded on replay)


class Journal:
    """The SQLite file; open it, use it, close it (a context manager)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.failed: list[str] = []  # changes that could not be written (see :meth:`add`)
        private_dir(path.parent)
        if not path.exists():
            # Created 0600 before SQLite opens it: it names machines and the team's database.
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        os.chmod(path, 0o600)
        self.db = sqlite3.connect(path, timeout=30, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        try:
            self.db.executescript(SCHEMA)
        except sqlite3.Error:
            self.db.close()  # not a journal (damaged, or some other file): the caller says so
            raise

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.db.close()

    def remember(self, r: LaunchRecord) -> None:
        """A launch made from here: its place is searched, and it is yours, while the database is away."""
        self.db.execute("INSERT OR IGNORE INTO places (provider, region) VALUES (?, ?)", (r.provider, r.region))
        self.db.execute("INSERT OR IGNORE INTO launched_here (id, provider, region, owner, at) VALUES (?,?,?,?,?)",
                        (r.id, r.provider, r.region, r.owner, r.created_at.isoformat(timespec="seconds")))

    def places(self) -> set[tuple[str, str]]:
        return {(r["provider"], r["region"]) for r in self.db.execute("SELECT provider, region FROM places")}

    def launched_here(self) -> dict[str, str]:
        """Launch id -> owner of every launch made from here."""
        return {r["id"]: r["owner"] for r in self.db.execute("SELECT id, owner FROM launched_here")}

    def add(self, ledger: str, launch_id: str, provider: str, region: str, instance_id: str, zone: str, state: str,
            started: datetime | None, at: datetime) -> None:
        """Record one change, committed before it returns (a kill right after still leaves it to replay).

        A journal that cannot take it (a full disk) does not stop machines from ending: the fault is kept in
        :attr:`failed` for the command to say (the next `ls` with the database back reads their ends from the cloud).
        """
        try:
            self._add(ledger, launch_id, provider, region, instance_id, zone, state, started, at)
        except sqlite3.Error as exc:
            self.failed.append(f"{instance_id} {state}: {exc}")

    def _add(self, ledger: str, launch_id: str, provider: str, region: str, instance_id: str, zone: str, state: str,
             started: datetime | None, at: datetime) -> None:
        self.db.execute("INSERT INTO entries (ledger, launch_id, provider, region, instance_id, zone, state, started,"
                        " at) VALUES (?,?,?,?,?,?,?,?,?)",
                        (ledger, launch_id, provider, region, instance_id, zone, state,
                         None if started is None else started.isoformat(timespec="seconds"),
                         at.isoformat(timespec="seconds")))

    def pending(self, ledger: str) -> list[Entry]:
        rows = self.db.execute("SELECT * FROM entries WHERE ledger = ? ORDER BY seq", (ledger,)).fetchall()
        return [Entry(seq=r["seq"], launch_id=r["launch_id"], provider=r["provider"], region=r["region"],
                      instance_id=r["instance_id"], zone=r["zone"], state=r["state"],
                      started=None if r["started"] is None else datetime.fromisoformat(r["started"]),
                      at=datetime.fromisoformat(r["at"])) for r in rows]

    def clear(self, seqs: list[int]) -> None:
        with self._tx():
            self.db.executemany("DELETE FROM entries WHERE seq = ?", [(s,) for s in seqs])

    @contextmanager
    def _tx(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise


class JournaledPgLedger(PgLedger):
    """The team's database, which also notes each launch made from here in the local journal (its place and id)."""

    def __init__(self, url: str, journal: Path) -> None:
        super().__init__(url)
        self.journal_path = journal
        self.key = database_key(url)
        self.journal_fault = ""  # why the journal could not be replayed, or ""

    def record_intent(self, r: LaunchRecord, *args: Any, **kwargs: Any) -> None:
        super().record_intent(r, *args, **kwargs)
        try:
            with Journal(self.journal_path) as j:
                j.remember(r)
        except (OSError, sqlite3.Error):
            pass  # a help for an outage, never a reason to stop a launch the database has recorded

    def replay_journal(self) -> list[str]:
        """Write what the journal holds for this database into it, then clear it; what was replayed, in words."""
        if not self.journal_path.exists():
            return []
        try:
            j = Journal(self.journal_path)
            entries = j.pending(self.key)
        except (OSError, sqlite3.Error) as exc:
            # the database is fine and the command can go on; what the journal holds waits for it to be readable
            self.journal_fault = f"the outage journal {self.journal_path} cannot be read: {exc}"
            return []
        with j:
            if not entries:
                return []
            said = replay(self, entries)
            j.clear([e.seq for e in entries])  # only after the database committed them
        return said


_UPSERT = (
    "INSERT INTO instances (instance_id, launch_id, state, zone, public_ip, private_ip, started_at, ended_at)"
    " VALUES (?,?,?,?,NULL,NULL,?,?) ON CONFLICT(launch_id, instance_id) DO UPDATE SET"
    " state = CASE WHEN instances.ended_at IS NULL THEN excluded.state ELSE instances.state END,"
    " ended_at = COALESCE(instances.ended_at, excluded.ended_at)"
)


def replay(ledger: Ledger, entries: list[Entry]) -> list[str]:
    """Write journaled changes into ``ledger`` in one transaction; a line per launch saying what was done.

    Each machine takes its latest journaled state; an end keeps the time the journal saw it (an end
    already recorded is kept). A launch the ledger shows ended is left as it is; one whose machines have
    all ended is closed, else marked terminating for the next ``ls`` to follow.
    """
    latest: dict[tuple[str, str], Entry] = {}
    for e in entries:
        latest[(e.launch_id, e.instance_id)] = e
    by_launch: dict[str, list[Entry]] = {}
    for e in latest.values():
        by_launch.setdefault(e.launch_id, []).append(e)
    said: list[str] = []
    with ledger._write("journal replay", required=True) as db:
        assert db is not None  # a required write raises rather than skip
        ledger._serialize_budgets(db)  # two commands replaying at once: one after the other, the second finds it done
        for launch_id, mine in by_launch.items():
            rows = ledger._select("SELECT state FROM launches WHERE id = ?", (launch_id,))
            ids = ", ".join(e.instance_id for e in mine)
            if not rows:
                said.append(f"{launch_id}: not in this database; its machines ({ids}) were ended at the cloud")
                continue
            if LaunchState(rows[0]["state"]).is_final:
                said.append(f"{launch_id}: already {rows[0]['state']} in the database, left as it is")
                continue
            for e in mine:
                ended = e.at.isoformat(timespec="seconds") if e.state == ENDED else None
                start = (e.started or e.at).isoformat(timespec="seconds")
                db.execute(_UPSERT, (e.instance_id, launch_id, e.state, e.zone, start, ended))
            open_ = ledger._select("SELECT instance_id FROM instances WHERE launch_id = ? AND ended_at IS NULL",
                                   (launch_id,))
            state = LaunchState.TERMINATING if open_ else LaunchState.TERMINATED
            db.execute("UPDATE launches SET state = ? WHERE id = ?", (state.value, launch_id))
            last = max(e.at for e in mine).isoformat(timespec="seconds")
            what = f"{state.value}: ended at the cloud while the database was unreachable ({ids}), from the journal"
            if not ledger._select("SELECT seq FROM events WHERE launch_id = ? AND what = ?", (launch_id, what)):
                db.execute("INSERT INTO events (launch_id, at, what) VALUES (?, ?, ?)", (launch_id, last, what))
            said.append(f"{launch_id}: {state.value} ({ids}, seen ending at {last})")
    return said
