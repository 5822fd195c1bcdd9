"""The ledger on PostgreSQL: one record of every machine and every budget for a team (``ledger_url``).

The same records and queries as the SQLite ledger (:class:`launch.ledger.Ledger`), through
psycopg 3: the ledger's dozen statements are plain SQL that both engines read, so an ORM
would add a layer and nothing else. Migrations are versioned here (table ``gpuplan_schema``)
and run once, under a PostgreSQL advisory lock, by whichever process opens a new or older
database first; a database written by a newer gpuplan is refused. A launch's budget check and
its intent row are one transaction that first takes a transaction-level advisory lock, so
launches racing from many machines are checked one at a time. The URL's password never
appears in a message.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pricing.errors import InputError, NotSupportedError, StateError
from pricing.text import url_secrets, without_url_credentials
from launch.ledger import MIGRATIONS, Ledger

# gpuplan's advisory lock keys (any two fixed 64-bit numbers no other program is likely to use)
MIGRATION_LOCK = 0x6770_706C_616E_0001
BUDGET_LOCK = 0x6770_706C_616E_0002

# The SQLite ledger's schema history, step for step, in PostgreSQL's words: one history, one version number.
PG_MIGRATIONS: tuple[str, ...] = tuple(
    m.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
    for m in MIGRATIONS)


class LedgerUnreachable(StateError):
    """The ledger's database cannot be reached (not damaged): `ls` and `down` fall back to the clouds' tags."""


class _Db:
    """What the shared queries call ``db``: ``execute`` with SQLite's ``?`` placeholders (no query here holds a
    literal question mark), rows that read by column name."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        return self.conn.execute(sql.replace("?", "%s"), params)


def is_url(value: str) -> bool:
    return value.startswith(("postgresql://", "postgres://"))


class PgLedger(Ledger):
    """The ledger in a PostgreSQL database; open it, use it, close it (a context manager)."""

    def __init__(self, url: str) -> None:
        try:
            import psycopg
            from psycopg.rows import dict_row
        except ImportError:
            raise NotSupportedError("a PostgreSQL ledger needs psycopg", "pip install 'gpuplan[team]'") from None
        self.url = url
        self.secrets = url_secrets(url)  # what a driver may quote alone (a password with a stray %)
        self.shown = without_url_credentials(url, *self.secrets)
        self.path = self.shown  # type: ignore[assignment]  (messages name the ledger by it)
        self.read_only_ok, self.read_only, self.unrecorded = False, "", []
        self.skip_unreadable, self.unreadable, self.unreadable_ids = False, [], set()
        try:
            self.conn = psycopg.connect(url, autocommit=True, row_factory=dict_row, connect_timeout=10,
                                        application_name="gpuplan")
        except psycopg.Error as exc:
            why = " ".join(str(exc).split()) or type(exc).__name__
            why = without_url_credentials(why, *self.secrets)
            raise LedgerUnreachable(f"cannot reach the ledger database {self.shown}: {why}",
                             "check ledger_url (or GPUPLAN_LEDGER_URL): host, port, database, user and password; "
                             "nothing was changed or launched") from None
        self.db = _Db(self.conn)
        try:
            self._migrate()
        except BaseException:
            self.conn.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.conn.close()

    def _select(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return list(self.db.execute(sql, params).fetchall())

    def _version(self) -> int:
        rows = self._select("SELECT version FROM gpuplan_schema")
        return int(rows[0]["version"]) if rows else 0

    def _migrate(self) -> None:
        self.conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
        try:
            # under the lock: two CREATE TABLE IF NOT EXISTS at once can still collide in PostgreSQL's catalog
            self.conn.execute("CREATE TABLE IF NOT EXISTS gpuplan_schema (version INTEGER NOT NULL)")
            version = self._version()  # read under the lock: another process may have just migrated
            if version > len(PG_MIGRATIONS):
                raise InputError(f"the ledger database {self.shown} was written by a newer gpuplan (schema {version})",
                                 "upgrade gpuplan; the database was left untouched")
            for i, script in enumerate(PG_MIGRATIONS[version:], start=version + 1):
                with self.conn.transaction():
                    for statement in (s for s in script.split(";") if s.strip()):
                        self.conn.execute(statement)
                    self.conn.execute("DELETE FROM gpuplan_schema")
                    self.conn.execute("INSERT INTO gpuplan_schema (version) VALUES (%s)", (i,))
        finally:
            self.conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        with self.conn.transaction():
            yield self.db

    @contextmanager
    def _write(self, what: str, *, required: bool = False) -> Iterator[Any]:
        import psycopg

        try:
            with self._tx() as db:
                yield db
        except psycopg.OperationalError as exc:
            raise StateError(f"the ledger database {self.shown} failed during {what}: "
                             f"{without_url_credentials(' '.join(str(exc).split()), *self.secrets)}",
                             "run the command again; a launch already made carries the tag gpuplan:id and "
                             "`gpuplan ls --reconcile` finds it") from None

    def _serialize_budgets(self, db: Any) -> None:
        db.execute("SELECT pg_advisory_xact_lock(?)", (BUDGET_LOCK,))

    def damaged(self, what: str) -> StateError:
        return StateError(f"the ledger database {self.shown} holds a value gpuplan cannot read: {what}",
                          "correct that row, then run the command again")
