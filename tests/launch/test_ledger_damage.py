"""A damaged ledger: one line saying what is wrong and how to recover, never an internal error."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from launch.ledger import Ledger
from pricing.errors import StateError
from tests.conftest import CliResult
from tests.launch.test_ledger import record

Run = Callable[..., CliResult]


def _healthy(path: Path) -> None:
    with Ledger(path) as ledger:
        ledger.record_intent(record())


@pytest.mark.parametrize("damage", ["text", "random", "truncated"])
def test_a_file_that_is_no_database_says_so_and_how_to_recover(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "ledger.sqlite3"
    _healthy(path)
    if damage == "text":
        path.write_text("hello\n")
    elif damage == "random":
        path.write_bytes(os.urandom(3000))
    else:
        with open(path, "r+b") as f:
            f.truncate(100)  # the 100-byte header survives, the pages do not
    for side in ("-wal", "-shm"):
        path.with_name(path.name + side).unlink(missing_ok=True)
    with pytest.raises(StateError) as caught, Ledger(path) as ledger:
        ledger.launches()
    assert str(path) in caught.value.message
    assert "mv " in (caught.value.hint or "") and "--reconcile" in (caught.value.hint or "")


@pytest.mark.parametrize("version", [-1, 1])
def test_a_schema_version_without_its_tables_is_damage_not_a_crash_on_the_next_run(tmp_path: Path,
                                                                                  version: int) -> None:
    path = tmp_path / "ledger.sqlite3"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {version}")  # -1: a bad version; 1: claims tables it does not have
    db.close()
    for _ in range(2):  # the first run must not half-migrate it into "table launches already exists"
        with pytest.raises(StateError, match="ledger"):
            Ledger(path)


def test_a_bad_value_in_a_row_names_the_launch(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    _healthy(path)
    db = sqlite3.connect(path)
    db.execute("UPDATE launches SET state = 'exploded' WHERE id = 'gp-1'")
    db.commit()
    db.close()
    with Ledger(path) as ledger, pytest.raises(StateError, match="gp-1"):
        ledger.launches()


def test_ls_and_down_on_a_damaged_ledger_give_one_line_and_exit_8(gpuplan: Run) -> None:
    from gpuplan.paths import ledger_file

    path = ledger_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("not a ledger\n")
    for args in (("ls",), ("down", "--all", "--yes"), ("down", "--expired")):
        code, _out, err = gpuplan(*args)
        assert code == 8, (args, err)
        assert "internal error" not in err and "Traceback" not in err
        assert str(path) in err and "gpuplan ls --reconcile" in err


def test_a_ledger_that_cannot_be_opened_for_writing_is_not_called_damaged(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "ledger.sqlite3"
    _healthy(path)
    real = sqlite3.connect

    class ReadOnly(sqlite3.Connection):
        def execute(self, sql: str, *args: object) -> sqlite3.Cursor:  # type: ignore[override]
            if sql.startswith("PRAGMA journal_mode"):
                raise sqlite3.OperationalError("attempt to write a readonly database")
            return super().execute(sql, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: real(*a, factory=ReadOnly, **k))
    with pytest.raises(StateError) as caught:
        Ledger(path)
    assert "cannot open the ledger" in caught.value.message and "damaged" not in caught.value.message
    assert "writable" in (caught.value.hint or "")
