"""Prices a refresh reads are held to a user catalog's bounds before they are stored; escapes never reach the terminal.

The probes of issue 42: a provider's 1E+27 price, stored by `catalog refresh`, broke every later plan until
`catalog clear`; a 1E-9 one won every plan at 0.00; escape sequences in a catalog CSV's names cleared the
screen and retitled the window.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from pricing.catalog import INSTANCE_COLUMNS
from providers.testing.fake_cvm import (
    TEST_SECRET_ID,
    TEST_SECRET_KEY,
    FakeCvm,
    FakeOffer,
    default_offers,
    fake_cvm_server,
)

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcfromtimestamp:DeprecationWarning")


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuplan", *args], check=False, env=env, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("TENCENTCLOUD_", "AWS_", "GPUPLAN_"))}
    e.update({"GPUPLAN_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "user"), "PYTHONPATH": str(ROOT),
              "COLUMNS": "300", "PYTHONWARNINGS": "ignore::DeprecationWarning", "NO_PROXY": "127.0.0.1,localhost"})
    return e


@pytest.fixture
def hostile() -> Iterator[FakeCvm]:
    d = Decimal
    offers = [o for o in default_offers() if o.zone != "ap-guangzhou-4"]
    offers += [FakeOffer("ap-guangzhou-4", "GN10Xp.2XLARGE40", 10, 40, 1, d("1E+27"), d("5000"), d("2.00")),
               FakeOffer("ap-guangzhou-4", "GN7.2XLARGE32", 8, 32, 1, d("1E-9"), d("2000"), d("1.40"))]
    with fake_cvm_server(offers=offers) as f:
        yield f


def test_out_of_bounds_refreshed_prices_are_dropped_and_named_and_plans_still_work(
        hostile: FakeCvm, env: dict[str, str]) -> None:
    env = {**env, "TENCENTCLOUD_SECRET_ID": TEST_SECRET_ID, "TENCENTCLOUD_SECRET_KEY": TEST_SECRET_KEY,
           "GPUPLAN_TENCENT_ENDPOINT": hostile.endpoint, "GPUPLAN_TENCENT_INSTANCE_ROLE": "0"}
    r = run(env, "catalog", "refresh", "--provider", "tencent", "--region", "ap-guangzhou")
    assert r.returncode == 0, r.stderr
    said = " ".join(r.stderr.split())
    assert "left out GN10Xp.2XLARGE40 (ap-guangzhou-4)" in said and "above" in said
    assert "left out GN7.2XLARGE32 (ap-guangzhou-4)" in said and "below" in said
    r = run(env, "plan", "--gpu-hours", "200", "--provider", "tencent", "--json")
    assert r.returncode == 0, r.stderr
    prices = [Decimal(o["line_items"][0]["unit_price"]["amount"]) for o in json.loads(r.stdout)["options"]]
    assert prices and min(prices) >= Decimal("0.01") and max(prices) < Decimal("1E+9")  # no 0.00 winner, no 1E+27


def test_escape_sequences_in_a_catalog_never_reach_the_output(env: dict[str, str], tmp_path: Path) -> None:
    row = {c: "" for c in INSTANCE_COLUMNS}
    row.update(provider="aws", instance_type="p3.evil\x1b]0;pwned\x07\x1b[2J", family="p3", gpu="V100-SXM2-16GB",
               gpu_count="1", vcpu="8", mem_gb="61", region="us-east-1", currency="USD", hourly="0.5",
               as_of_kind="read_date", source="test row \x1b[31m", as_of="2026-12-01", notes="note \x9b2J")
    path = tmp_path / "evil.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(INSTANCE_COLUMNS))
        w.writeheader()
        w.writerow(row)
    for args in (("plan", "--gpu-hours", "10", "--catalog", str(path)),
                 ("plan", "--gpu-hours", "10", "--catalog", str(path), "--explain", "--wide"),
                 ("catalog", "show", "--catalog", str(path)), ("offers", "--catalog", str(path), "-o", "csv"),
                 ("plan", "--gpu-hours", "10", "--catalog", str(path), "-o", "csv")):
        r = run(env, *args)
        assert r.returncode == 0, r.stderr
        assert "\x1b" not in r.stdout + r.stderr and "\x9b" not in r.stdout + r.stderr and "\x07" not in r.stdout
    assert "p3.evil]0;pwned" in run(env, "plan", "--gpu-hours", "10", "--catalog", str(path)).stdout
