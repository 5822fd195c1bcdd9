"""Which ledger the launch commands use: the team's PostgreSQL database, or the SQLite file in the data folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pricing.errors import InputError


def open_ledger(read_only_ok: bool = False) -> Any:
    """The ledger in effect: the team's PostgreSQL database when ledger_url (GPUPLAN_LEDGER_URL) names one, else the
    SQLite file in the data folder."""
    from gpuplan.paths import ledger_file
    from gpuplan.settings import load_settings
    from launch.ledger import Ledger
    from pricing.text import without_url_credentials

    url = load_settings().ledger_url.strip()
    if not url:
        return Ledger(ledger_file(), read_only_ok=read_only_ok)
    from launch.ledger_pg import is_url

    if not is_url(url):
        raise InputError(f"ledger_url {without_url_credentials(url)!r} is not a postgresql:// URL",
                         "e.g. postgresql://db.example/gpuplan (user and password from PGUSER, PGPASSWORD or "
                         "~/.pgpass), or leave it out for the SQLite file")
    from launch.journal import JournaledPgLedger

    ledger = JournaledPgLedger(url, journal_file())
    try:
        # What `ls` and `down` did at the clouds while the database was away goes in before anything reads it.
        replayed = ledger.replay_journal()
    except BaseException:
        ledger.conn.close()
        raise
    from gpuplan.console import stderr

    if ledger.journal_fault:
        stderr().print(f"warning: {ledger.journal_fault}; make it readable and its changes go in on the next command",
                       highlight=False, markup=False)
    if replayed:
        stderr().print(f"the ledger database is back: {len(replayed)} launch(es) replayed from the outage journal "
                       f"{journal_file()}", highlight=False, markup=False)
        for line in replayed:
            stderr().print(f"  {line}", highlight=False, markup=False)
    return ledger


def journal_file() -> Path:
    """The local journal of a team ledger's outage (launch.journal): a SQLite file in the data folder, 0600."""
    from gpuplan.paths import data_dir

    return data_dir() / "ledger-journal.sqlite3"
