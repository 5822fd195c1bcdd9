"""The ledger: every launch gpuplan makes, recorded before and after each provider call.

One SQLite file the caller names (the program keeps it in its data folder), WAL journal with full
sync, file mode 0600, schema migrations by ``PRAGMA user_version``. A launch is written as
an *intent* (with its ClientToken) before the provider is asked, its instance ids right
after the call returns, and every state change after that; each write is its own committed
transaction, so a kill -9 at any point leaves a record that ``ls`` shows and ``down`` can
finish. No secret ever reaches it: requests carry no credentials.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict

from pricing.billing import BillingMode
from pricing.errors import GpuplanError, InputError, StateError
from pricing.files import private_dir
from pricing.money import Currency, Money
from providers.capabilities import InstanceInfo, InstanceState
from launch.billed_store import MIGRATION as BILLED_MIGRATION, BilledStore
from launch.ledger_values import check_amount, read_state, read_time, read_time_or_none


class LaunchState(StrEnum):
    """Where a launch stands; ``intent`` and ``unknown`` mean the provider may hold machines we have no id for."""

    INTENT = "intent"  # written, provider not yet asked (or asked and no answer recorded)
    PENDING = "pending"  # ids recorded, not all running yet
    RUNNING = "running"
    PARTIAL = "partial"  # fewer machines than asked for
    FAILED = "failed"  # the provider refused; nothing runs
    UNKNOWN = "unknown"  # the call failed in a way that may have started machines
    TERMINATING = "terminating"
    TERMINATED = "terminated"

    @property
    def is_final(self) -> bool:
        return self in (LaunchState.FAILED, LaunchState.TERMINATED)


class LaunchRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    provider: str
    region: str
    zone: str | None
    instance_type: str
    billing: BillingMode
    months: int
    count: int
    image: str | None
    client_token: str
    state: LaunchState
    unit_price: Money  # per instance-hour (per month for monthly)
    # Disks, addresses and bandwidth per machine in the same unit and currency as unit_price, as quoted;
    # None for launches recorded before the ledger kept them (their costs are the instances alone).
    extras_unit: Decimal | None = None
    created_at: datetime
    expires_at: datetime | None
    max_cost: Money | None
    note: str = ""
    # How the machines end themselves ("when the run exits or after 30m idle"), besides the TTL; "" for none.
    teardown: str = ""
    owner: str = ""  # who launched it (the OS user, or --owner); "" for launches recorded before owners were
    project: str = ""  # what it is for (--project, or the config's project)
    host: str = ""  # the machine it was launched from
    # The cloud account (endpoint and credential fingerprint) it was launched through; "" when not known. Only a
    # listing through this account is evidence that a machine of it has ended (launch.evidence).
    account: str = ""


class InstanceRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    instance_id: str
    launch_id: str
    state: InstanceState
    zone: str
    public_ip: str | None
    private_ip: str | None
    started_at: datetime | None
    ended_at: datetime | None


MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE launches (
        id TEXT PRIMARY KEY,
        provider TEXT NOT NULL,
        region TEXT NOT NULL,
        zone TEXT,
        instance_type TEXT NOT NULL,
        billing TEXT NOT NULL,
        months INTEGER NOT NULL DEFAULT 1,
        count INTEGER NOT NULL,
        image TEXT,
        client_token TEXT NOT NULL UNIQUE,
        state TEXT NOT NULL,
        unit_price TEXT NOT NULL,
        currency TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT,
        max_cost TEXT,
        max_cost_currency TEXT,
        note TEXT NOT NULL DEFAULT ''
    );
    CREATE TABLE instances (
        instance_id TEXT NOT NULL,
        launch_id TEXT NOT NULL REFERENCES launches(id),
        state TEXT NOT NULL,
        zone TEXT NOT NULL DEFAULT '',
        public_ip TEXT,
        private_ip TEXT,
        started_at TEXT,
        ended_at TEXT,
        PRIMARY KEY (launch_id, instance_id)
    );
    CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        launch_id TEXT NOT NULL,
        at TEXT NOT NULL,
        what TEXT NOT NULL
    );
    """,
    # 2: what each machine costs besides the instance (disk, address, bandwidth) per unit of unit_price
    """
    ALTER TABLE launches ADD COLUMN extras_unit TEXT
    """,
    # 3: the teardown the machines carry out themselves (launch --down-when / --idle)
    """
    ALTER TABLE launches ADD COLUMN teardown TEXT NOT NULL DEFAULT ''
    """,
    # 4: who launched what for, from where, and the budgets launches are held to
    """
    ALTER TABLE launches ADD COLUMN owner TEXT NOT NULL DEFAULT '';
    ALTER TABLE launches ADD COLUMN project TEXT NOT NULL DEFAULT '';
    ALTER TABLE launches ADD COLUMN host TEXT NOT NULL DEFAULT '';
    CREATE TABLE budgets (
        scope TEXT NOT NULL,
        name TEXT NOT NULL,
        monthly TEXT NOT NULL,
        currency TEXT NOT NULL,
        set_at TEXT NOT NULL,
        PRIMARY KEY (scope, name)
    )
    """,
    # 5: the account a launch was made through (only its listings can end it), when a `down` asked the cloud to
    # end it (the machines' end time when that `down` did not live to see them gone), and the exchange rates
    # budgets and caps are held at (launch.budget_money)
    """
    ALTER TABLE launches ADD COLUMN account TEXT NOT NULL DEFAULT '';
    ALTER TABLE launches ADD COLUMN end_asked_at TEXT;
    CREATE TABLE fx_rates (
        base TEXT NOT NULL,
        quote TEXT NOT NULL,
        rate TEXT NOT NULL,
        source TEXT NOT NULL,
        set_at TEXT NOT NULL,
        PRIMARY KEY (base, quote)
    )
    """,
    # 6: the clouds' own bills per launch, day and line (spend --billed), and when each cloud's month was read
    BILLED_MIGRATION,
)


def _is_write_fault(exc: sqlite3.OperationalError) -> bool:
    """A fault of the disk or its permissions (the file itself may be fine), not of the SQL."""
    text = str(exc).lower()
    return any(w in text for w in ("disk is full", "readonly", "read-only", "disk i/o", "unable to open",
                                   "locked"))


def now() -> datetime:
    return datetime.now(UTC)


def _ts(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat(timespec="seconds")


def _dt(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


class Ledger(BilledStore):
    """One SQLite file; open it, use it, close it (a context manager)."""

    def __init__(self, path: Path, *, read_only_ok: bool = False) -> None:
        """Open (or create) the ledger at ``path``.

        ``read_only_ok`` is for the commands that must work whatever the state of the disk (``ls``,
        ``down``): a ledger that cannot be written (a read-only home, a full disk) is read as it is, and
        what could not be recorded is kept in :attr:`unrecorded` for the command to say. Without it
        (``launch``, which must record before it asks the cloud) the same faults are a StateError.
        """
        self.path = path
        self.read_only_ok = read_only_ok
        self.read_only = ""  # why the ledger is open read-only, or "" when it is writable
        self.unrecorded: list[str] = []  # the changes a read-only or full ledger could not take
        # ls and down set this: a launch row gpuplan cannot read is named in `unreadable` and passed over, so one bad
        # row never keeps every other machine from being listed or ended (budgets still refuse on it)
        self.skip_unreadable = False
        self.unreadable: list[str] = []
        self.unreadable_ids: set[str] = set()
        try:
            private_dir(self.path.parent)
            if not self.path.exists():
                # Create it 0600 before SQLite does: it names machines and what they cost.
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
            os.chmod(self.path, 0o600)
        except OSError as exc:
            why = f"cannot write the ledger {self.path}: {exc.strerror or exc}"
            if not read_only_ok:
                raise StateError(why, f"make {self.path.parent} writable by you, or point GPUPLAN_HOME at a folder "
                                 "that is") from exc
            self._open_read_only(why)
            return
        self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            self.db.row_factory = sqlite3.Row
            with self._setup_lock():
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=FULL")
                self.db.execute("PRAGMA foreign_keys=ON")
                self._migrate()
            self._check_tables()
        except sqlite3.OperationalError as exc:  # locked, read-only, cannot create the WAL files: the file may be fine
            self.db.close()
            why = f"cannot open the ledger {self.path}: {exc}"
            if read_only_ok and _is_write_fault(exc):
                self._open_read_only(why)
                return
            raise StateError(why, f"make {self.path.parent} and the files in it writable by you, or point "
                             "GPUPLAN_HOME at a folder that is") from exc
        except (sqlite3.DatabaseError, GpuplanError) as exc:
            self._close_and_raise(exc)
        for suffix in ("-wal", "-shm"):
            side = self.path.with_name(self.path.name + suffix)
            if side.exists():
                os.chmod(side, 0o600)

    @contextmanager
    def _setup_lock(self) -> Iterator[None]:
        """One process at a time sets the journal mode and migrates: SQLite can answer "database is locked" at once,
        without waiting, to a second process switching a brand-new file to WAL (8 launches at once on a new home)."""
        try:
            import fcntl
        except ImportError:  # not POSIX: SQLite's own locking and the re-read in _migrate are what is left
            yield
            return
        lock = self.path.with_name(self.path.name + ".lock")
        try:
            fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o600)
        except OSError:  # a folder that takes no new file: SQLite's answer decides, as without fcntl
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _open_read_only(self, why: str) -> None:
        """Read the ledger without writing a byte (no WAL files, no migration); an absent one reads as empty."""
        self.read_only = why
        if self.path.exists():
            # immutable: SQLite would otherwise need to create the -shm file beside a WAL database to read it
            uri = self.path.resolve().as_uri() + "?mode=ro&immutable=1"
            self.db = sqlite3.connect(uri, uri=True, isolation_level=None)
        else:
            self.db = sqlite3.connect(":memory:", isolation_level=None)
            self.db.executescript(";".join(MIGRATIONS))
            self.db.execute(f"PRAGMA user_version={len(MIGRATIONS)}")
        self.db.row_factory = sqlite3.Row
        try:
            if self._version() < len(MIGRATIONS):
                # an old schema is not migrated read-only: refused rather than its columns misread
                raise self.damaged(f"schema version {self._version()} cannot be read without upgrading it "
                                   "(which needs it writable)")
            self._check_tables()
        except (sqlite3.DatabaseError, GpuplanError) as exc:
            self._close_and_raise(exc)

    def _close_and_raise(self, exc: Exception) -> NoReturn:
        """Close the connection and raise: a GpuplanError as it is, any other SQLite fault as damage."""
        self.db.close()
        if isinstance(exc, GpuplanError):
            raise exc
        raise self.damaged(str(exc)) from exc

    def damaged(self, what: str) -> StateError:
        """The one way out of a ledger gpuplan cannot read: set it aside, then find machines by their cloud tags."""
        return StateError(
            f"the ledger {self.path} is damaged: {what}",
            f"mv {self.path} {self.path}.damaged, then `gpuplan ls --reconcile` lists the machines gpuplan tagged "
            "in the cloud and `gpuplan down --untracked` ends them",
        )

    def _check_tables(self) -> None:
        # A file can claim a schema version without holding its tables (copied, hand-edited, half-restored).
        have = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = sorted({"launches", "instances", "events"} - have)
        if missing:
            raise self.damaged(f"schema version {self._version()} but no table {', '.join(missing)}")

    def _version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.db.close()

    def _migrate(self) -> None:
        version = self._version()
        if version < 0:
            raise self.damaged(f"schema version {version}, which no gpuplan writes")
        if version > len(MIGRATIONS):
            raise InputError(f"the ledger {self.path} was written by a newer gpuplan (schema {version})",
                             "upgrade gpuplan; the file was left untouched")
        for i, script in enumerate(MIGRATIONS[version:], start=version + 1):
            with self._tx() as db:
                # Read again under the write lock: another gpuplan opening the same new ledger may have applied
                # this step since (six launches at once on a fresh home: "table launches already exists").
                if self._version() >= i:
                    continue
                for statement in (s for s in script.split(";") if s.strip()):
                    db.execute(statement)
                db.execute(f"PRAGMA user_version={i}")

    @contextmanager
    def _write(self, what: str, *, required: bool = False) -> Iterator[sqlite3.Connection | None]:
        """One committed write transaction, or None when the ledger cannot take it and the caller allows that.

        A full disk or a read-only file must not stop ``down`` from ending machines: the change is
        noted in :attr:`unrecorded` instead (the cloud's tags still find every machine). ``required``
        writes (a launch's intent, made before the cloud is asked) raise a StateError instead.
        """
        if self.read_only:
            if required or not self.read_only_ok:
                raise StateError(self.read_only, "make it writable, or point GPUPLAN_HOME at a folder that is")
            self.unrecorded.append(what)
            yield None
            return
        try:
            with self._tx() as db:
                yield db
        except sqlite3.OperationalError as exc:
            if not _is_write_fault(exc):
                raise
            if required or not self.read_only_ok:
                raise StateError(f"cannot write the ledger {self.path}: {exc}",
                                 f"free space on the disk of {self.path.parent} or make it writable; a launch "
                                 "already made carries the tag gpuplan:id and `gpuplan ls` finds it again") from exc
            self.read_only = f"cannot write the ledger {self.path}: {exc}"  # no further write can succeed either
            self.unrecorded.append(what)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:  # SQLite has already rolled back after some faults (a full disk)
                self.db.execute("ROLLBACK")
            raise

    def _serialize_budgets(self, db: Any) -> None:
        """Hold every other launch's budget check until this transaction ends: SQLite's BEGIN IMMEDIATE already
        does (one writer at a time)."""

    # -- budgets

    def set_budget(self, scope: str, name: str, monthly: Money) -> None:
        with self._write(f"budget {scope} {name}", required=True) as db:
            assert db is not None
            db.execute("INSERT INTO budgets (scope, name, monthly, currency, set_at) VALUES (?,?,?,?,?)"
                       " ON CONFLICT(scope, name) DO UPDATE SET monthly = excluded.monthly,"
                       " currency = excluded.currency, set_at = excluded.set_at",
                       (scope, name, str(monthly.amount), monthly.currency.value, _ts(now())))

    def remove_budget(self, scope: str, name: str) -> bool:
        with self._write(f"budget {scope} {name} removed", required=True) as db:
            assert db is not None
            gone = bool(self._select("SELECT name FROM budgets WHERE scope = ? AND name = ?", (scope, name)))
            db.execute("DELETE FROM budgets WHERE scope = ? AND name = ?", (scope, name))
        return gone

    def budgets(self) -> list[tuple[str, str, Money]]:
        """(scope, name, monthly cap) of every budget, by scope then name."""
        return [(r["scope"], r["name"], Money(amount=Decimal(r["monthly"]), currency=Currency(r["currency"])))
                for r in self._select("SELECT * FROM budgets ORDER BY scope, name")]

    def _select(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """Rows that read by column name (``row["id"]``), on either engine."""
        return self.db.execute(sql, params).fetchall()

    def _event(self, db: Any, launch_id: str, what: str) -> None:
        db.execute("INSERT INTO events (launch_id, at, what) VALUES (?, ?, ?)", (launch_id, _ts(now()), what))

    # -- writes: each one committed before it returns

    def record_intent(self, r: LaunchRecord, check: Callable[[Ledger], None] | None = None) -> None:
        """Write the launch's intent; ``check`` (a budget) runs first in the same transaction and may refuse it, so
        launches racing from many processes are held to it one at a time."""
        with self._write(f"launch {r.id}", required=True) as db:
            assert db is not None  # a required write raises rather than skip
            self._serialize_budgets(db)
            if check is not None:
                check(self)
            db.execute(
                "INSERT INTO launches (id, provider, region, zone, instance_type, billing, months, count, image,"
                " client_token, state, unit_price, currency, created_at, expires_at, max_cost, max_cost_currency,"
                " note, extras_unit, teardown, owner, project, host, account)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (r.id, r.provider, r.region, r.zone, r.instance_type, r.billing.value, r.months, r.count, r.image,
                 r.client_token, r.state.value, str(r.unit_price.amount), r.unit_price.currency.value,
                 _ts(r.created_at), _ts(r.expires_at), None if r.max_cost is None else str(r.max_cost.amount),
                 None if r.max_cost is None else r.max_cost.currency.value, r.note,
                 None if r.extras_unit is None else str(r.extras_unit), r.teardown, r.owner, r.project, r.host,
                 r.account),
            )
            self._event(db, r.id, f"intent: {r.count} x {r.instance_type} {r.billing} in {r.zone or r.region}")

    def set_state(self, launch_id: str, state: LaunchState, what: str = "", *, zone: str | None = None,
                  image: str | None = None) -> None:
        with self._write(f"{launch_id} {state.value}") as db:
            if db is None:
                return
            db.execute("UPDATE launches SET state = ?, zone = COALESCE(?, zone), image = COALESCE(?, image)"
                       " WHERE id = ?", (state.value, zone, image, launch_id))
            self._event(db, launch_id, f"{state.value}" + (f": {what}" if what else ""))

    def set_note(self, launch_id: str, note: str) -> None:
        """What stays true of the launch and `ls` shows (e.g. the cloud's own termination timer)."""
        with self._write(f"{launch_id} note") as db:
            if db is None:
                return
            db.execute("UPDATE launches SET note = ? WHERE id = ?", (note, launch_id))
            self._event(db, launch_id, f"note: {note}")

    def add_event(self, launch_id: str, what: str) -> None:
        """Record a fact of the launch that no column holds (e.g. the login key's path, for `ssh`)."""
        with self._write(f"{launch_id} {what}") as db:
            if db is not None:
                self._event(db, launch_id, what)

    def set_end_asked(self, launch_id: str, at: datetime | None) -> None:
        """When a `down` asked the cloud to end the launch (None: the ask failed): its machines' end time when that
        `down` is cut short before it sees them gone, rather than whenever a later `ls` happens to look."""
        with self._write(f"{launch_id} end asked") as db:
            if db is None:
                return
            db.execute("UPDATE launches SET end_asked_at = ? WHERE id = ?", (_ts(at), launch_id))

    def record_instances(self, launch_id: str, infos: list[InstanceInfo]) -> None:
        """Insert or update machines of a launch with what the provider says now."""
        with self._write(f"{launch_id} machines " + ", ".join(f"{i.instance_id}={i.state}" for i in infos)) as db:
            if db is None:
                return
            asked = self._select("SELECT end_asked_at FROM launches WHERE id = ?", (launch_id,))
            end = (asked[0]["end_asked_at"] if asked else None) or _ts(now())
            for i in infos:
                ended = end if i.state.is_final else None
                db.execute(
                    "INSERT INTO instances (instance_id, launch_id, state, zone, public_ip, private_ip, started_at,"
                    " ended_at) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(launch_id, instance_id) DO UPDATE SET"
                    " state = excluded.state,"
                    " zone = CASE WHEN excluded.zone = '' THEN instances.zone ELSE excluded.zone END,"
                    " public_ip = COALESCE(excluded.public_ip, instances.public_ip),"
                    " private_ip = COALESCE(excluded.private_ip, instances.private_ip),"
                    " started_at = COALESCE(instances.started_at, excluded.started_at),"
                    " ended_at = COALESCE(instances.ended_at, excluded.ended_at)",
                    (i.instance_id, launch_id, i.state.value, i.zone, i.public_ip, i.private_ip,
                     _ts(i.launched_at or now()), ended),
                )
            self._event(db, launch_id, "instances: " + ", ".join(f"{i.instance_id}={i.state}" for i in infos))

    # -- reads

    def launches(self, *, include_final: bool = True) -> list[LaunchRecord]:
        """Every launch; without ``include_final`` those not ended, and ended ones with a machine last seen alive
        (an answer that arrived after `down` closed the launch: that machine bills until something ends it)."""
        rows = self._select("SELECT * FROM launches ORDER BY created_at, id")
        out = []
        for row in rows:
            try:
                out.append(self._read(row))
            except StateError as exc:
                if not getattr(self, "skip_unreadable", False):
                    raise
                if exc.message not in self.unreadable:
                    self.unreadable.append(exc.message)
                    self.unreadable_ids.add(row["id"])
        if include_final:
            return out
        final = tuple(s.value for s in InstanceState if s.is_final)
        alive = {r["launch_id"] for r in self._select(
            f"SELECT DISTINCT launch_id FROM instances WHERE state NOT IN ({', '.join('?' * len(final))})", final)}
        return [r for r in out if not r.state.is_final or r.id in alive]

    def launch(self, key: str) -> LaunchRecord:
        """A launch by its id, a unique id prefix, or one of its instance ids (matched literally: no wildcards)."""
        if not key.strip():
            raise InputError("an empty launch id matches nothing", "`gpuplan ls` lists launch ids and instance ids")
        rows = self._select("SELECT * FROM launches WHERE id = ?", (key,))
        if not rows:
            # substr, not LIKE: `%` and `_` in an id are characters, never wildcards that match every launch
            rows = self._select("SELECT * FROM launches WHERE substr(id, 1, ?) = ?", (len(key), key))
        if not rows:
            rows = self._select("SELECT l.* FROM launches l JOIN instances i ON i.launch_id = l.id"
                                " WHERE i.instance_id = ?", (key,))
        if len(rows) != 1:
            why = "matches several launches" if rows else "is not in the ledger"
            raise InputError(f"{key!r} {why}", "`gpuplan ls` lists launch ids and instance ids")
        return self._read(rows[0])

    def _read(self, row: sqlite3.Row) -> LaunchRecord:
        try:
            return self._launch(row)
        except (ValueError, TypeError, ArithmeticError) as exc:  # pydantic's ValidationError is a ValueError
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StateError(f"launch {row['id']} in the ledger {self.path} has a value gpuplan cannot read: {first}",
                             f"correct or delete that row (sqlite3 {self.path}), or set the file aside: "
                             f"mv {self.path} {self.path}.damaged, then `gpuplan ls --reconcile`") from exc

    def instances(self, launch_id: str) -> list[InstanceRecord]:
        rows = self._select("SELECT * FROM instances WHERE launch_id = ? ORDER BY instance_id", (launch_id,))
        # a value no gpuplan wrote (a hand edit) reads as not known rather than stopping ls and down: the machine
        # is asked about again, and its start counts from the launch
        return [InstanceRecord(instance_id=r["instance_id"], launch_id=r["launch_id"], state=read_state(r["state"]),
                               zone=r["zone"] or "", public_ip=r["public_ip"], private_ip=r["private_ip"],
                               started_at=read_time_or_none(r["started_at"]), ended_at=read_time_or_none(r["ended_at"]))
                for r in rows]

    def events(self, launch_id: str) -> list[str]:
        return [r["what"] for r in self._select("SELECT what FROM events WHERE launch_id = ? ORDER BY seq",
                                                (launch_id,))]

    def known_instance_ids(self) -> set[str]:
        return {r["instance_id"] for r in self._select("SELECT instance_id FROM instances")}

    def tracked_instance_ids(self) -> set[str]:
        """The machines the ledger still follows: recorded and not seen ended (ls and down ask the cloud for them)."""
        final = tuple(s.value for s in InstanceState if s.is_final)
        rows = self._select(f"SELECT instance_id, launch_id FROM instances WHERE state NOT IN "
                            f"({', '.join('?' * len(final))})", final)
        # a launch passed over as unreadable follows nothing: its machines are found as untracked, and can be ended
        return {r["instance_id"] for r in rows if r["launch_id"] not in getattr(self, "unreadable_ids", ())}

    @staticmethod
    def _launch(r: sqlite3.Row) -> LaunchRecord:
        for column in ("unit_price", "max_cost", "extras_unit"):
            check_amount(r[column], column)
        cap = None if r["max_cost"] is None else Money(amount=Decimal(r["max_cost"]),
                                                       currency=Currency(r["max_cost_currency"]))
        return LaunchRecord(
            id=r["id"], provider=r["provider"], region=r["region"], zone=r["zone"], instance_type=r["instance_type"],
            billing=BillingMode(r["billing"]), months=r["months"], count=r["count"], image=r["image"],
            client_token=r["client_token"], state=LaunchState(r["state"]),
            unit_price=Money(amount=Decimal(r["unit_price"]), currency=Currency(r["currency"])),
            created_at=read_time(r["created_at"]), expires_at=read_time(r["expires_at"]),  # type: ignore[arg-type]
            max_cost=cap,
            note=r["note"], extras_unit=None if r["extras_unit"] is None else Decimal(r["extras_unit"]),
            teardown=r["teardown"], owner=r["owner"], project=r["project"], host=r["host"], account=r["account"],
        )
