"""A ledger URL's password never reaches the output: in its user info, its query, or quoted alone by the driver.

The probes of issue 42: ``?user=…&password=…`` was printed by `ls` errors and `config show`; a password
with a stray ``%`` was quoted by psycopg's "invalid percent-encoded token" error.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pricing.errors import StateError
from pricing.text import url_secrets, without_url_credentials

ROOT = Path(__file__).resolve().parents[2]
SECRET = "Hunter2Hunter2"


@pytest.mark.parametrize("url", [
    f"postgresql://127.0.0.1:1/gp?user=ada&password={SECRET}",
    f"postgresql://127.0.0.1:1/gp?sslmode=disable&PASSWORD={SECRET}&user=ada",
    f"postgresql://ada:{SECRET}%zz@127.0.0.1:1/gp",
    f"postgresql://127.0.0.1:1/gp?password={SECRET}%zz",
    f"postgresql://ada:{SECRET}@x@127.0.0.1:1/gp",
])
def test_the_driver_error_names_the_database_but_never_the_password(url: str) -> None:
    pytest.importorskip("psycopg")
    from launch.ledger_pg import PgLedger

    with pytest.raises(StateError) as err:
        PgLedger(url)
    said = f"{err.value.message} {err.value.hint}"
    assert "127.0.0.1" in said and SECRET not in said and "zz" not in said.replace("(", "")


def test_libpq_key_value_passwords_and_quoted_ones_are_scrubbed() -> None:
    assert without_url_credentials(f"host=db password={SECRET} sslmode=require") == \
        "host=db password=*** sslmode=require"
    assert SECRET not in without_url_credentials(f"password='{SECRET} x' port=5432")
    assert without_url_credentials("mail a@b.example: 3 tokens left") == "mail a@b.example: 3 tokens left"
    assert set(url_secrets(f"postgresql://u:{SECRET}%21@h/d")) == {f"{SECRET}%21", f"{SECRET}!"}


def _cli(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPLAN_")}
    env.update({"GPUPLAN_HOME": str(tmp_path / "home"), "HOME": str(tmp_path), "GPUPLAN_LEDGER_URL": url,
                "PYTHONPATH": str(ROOT), "COLUMNS": "200"})
    return subprocess.run([sys.executable, "-m", "gpuplan", *args], check=False, env=env, capture_output=True,
                          text=True, timeout=60, cwd=ROOT)


@pytest.mark.parametrize("args", [("config", "show"), ("ls",), ("down", "--all", "--yes")])
def test_config_show_ls_and_down_never_print_a_query_password(tmp_path: Path, args: tuple[str, ...]) -> None:
    pytest.importorskip("psycopg")
    r = _cli(tmp_path, f"postgresql://127.0.0.1:1/gp?user=ada&password={SECRET}", *args)
    assert SECRET not in r.stdout + r.stderr
    assert "127.0.0.1" in r.stdout + r.stderr
