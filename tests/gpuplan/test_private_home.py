"""Under any umask, what gpuplan writes in its home is the user's own: no other local user can rewrite a kept
figure, the saved plan or the ledger and so change what the next run prices or launches."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="modes and owners are POSIX's")
def test_under_umask_000_nothing_in_the_home_is_group_or_world_writable(tmp_path: Path) -> None:
    home = tmp_path / "gpuplan-home"
    env = {**os.environ, "GPUPLAN_HOME": str(home), "PYTHONPATH": str(ROOT)}
    for args in (["plan", "--gpu-hours", "200"], ["plan", "--gpu-hours", "200", "--json"],
                 ["fit", "--model", "llama-2-7b"], ["ls"]):
        done = subprocess.run([sys.executable, "-m", "gpuplan", *args], env=env, umask=0, capture_output=True,
                              timeout=120, check=False)
        assert done.returncode == 0, done.stderr
    written = [home, *home.rglob("*")]
    # the derived figures, the saved plan and the ledger at least: a home with nothing in it would prove nothing
    names = {p.name for p in written}
    assert {"shipped-catalog.json", "last-plan.json", "ledger.sqlite3"} <= names, names
    loose = [f"{stat.filemode(p.lstat().st_mode)} {p}" for p in written
             if p.lstat().st_mode & (stat.S_IWGRP | stat.S_IWOTH)]
    assert loose == []
