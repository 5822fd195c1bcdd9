"""Which ledger the launch commands use: the team's PostgreSQL database, or the SQLite file in the data folder."""

from __future__ import annotations

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
    from launch.ledger_pg import PgLedger, is_url

    if not is_url(url):
        raise InputError(f"ledger_url {without_url_credentials(url)!r} is not a postgresql:// URL",
                         "e.g. postgresql://gpuplan@db.example/gpuplan, or leave it out for the SQLite file")
    ledger = PgLedger(url)
    _replay(ledger, ledger_file().with_name("ledger-journal.jsonl"))
    return ledger


def _replay(ledger: Any, journal: Any) -> None:
    """What `down` ended while the database was unreachable, written into it now that it is back (launch.journal)."""
    if not journal.exists():
        return
    from gpuplan.console import stderr
    from launch.journal import replay

    for line in replay(ledger, journal):
        stderr().print(f"ledger outage journal: {line}", highlight=False, markup=False)
