"""A team's ledger: many launches at once against one budget, on PostgreSQL and on SQLite, through the real CLI.

The clouds are the fake CVM (test prices: GN10Xp.2XLARGE40 at 10 CNY an hour, so a 6 h launch is
60 CNY, plus its 256 GB premium cloud disk at 0.0009 CNY per GB-hour: 1.3824 CNY, 61.3824 in all, and five
are 306.912 CNY); the shared ledger is a real throwaway PostgreSQL server.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from providers.testing.fake_cvm import TEST_SECRET_ID, TEST_SECRET_KEY, FakeCvm, fake_cvm_server

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcfromtimestamp:DeprecationWarning")
BUDGET = "306.92 CNY"  # five launches (306.912 CNY) and not six
LAUNCH = ("launch", "--provider", "tencent", "--instance-type", "GN10Xp.2XLARGE40", "--zone", "ap-guangzhou-3",
          "--image", "img-ubu22new", "--ttl", "6h", "--no-ssh-key", "--project", "vision", "--yes")


@pytest.fixture
def fake() -> Iterator[FakeCvm]:
    with fake_cvm_server() as f:
        yield f


def env_for(fake: FakeCvm, home: Path, ledger_url: str = "") -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("TENCENTCLOUD_", "AWS_", "GPUPLAN_"))}
    e.update({"TENCENTCLOUD_SECRET_ID": TEST_SECRET_ID, "TENCENTCLOUD_SECRET_KEY": TEST_SECRET_KEY,
              "GPUPLAN_TENCENT_ENDPOINT": fake.endpoint, "GPUPLAN_TENCENT_INSTANCE_ROLE": "0",
              "GPUPLAN_HOME": str(home), "HOME": str(home / "user"), "NO_PROXY": "127.0.0.1,localhost",
              "GPUPLAN_POLL_SECONDS": "0.05", "PYTHONPATH": str(ROOT), "COLUMNS": "200",
              "PYTHONWARNINGS": "ignore::DeprecationWarning", "GPUPLAN_FX": "USD/CNY=7.2"})
    if ledger_url:
        e["GPUPLAN_LEDGER_URL"] = ledger_url
    return e


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuplan", *args], env=env, capture_output=True, text=True,
                          timeout=180, cwd=ROOT)


def launch_twenty(env: dict[str, str]) -> list[subprocess.CompletedProcess[str]]:
    procs = [subprocess.Popen([sys.executable, "-m", "gpuplan", *LAUNCH], env=env, cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(20)]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def check_five_of_twenty(results: list[subprocess.CompletedProcess[str]]) -> None:
    codes = sorted(r.returncode for r in results)
    assert codes == [0] * 5 + [7] * 15, [r.stderr[-400:] for r in results if r.returncode not in (0, 7)]
    for r in results:
        assert "Traceback" not in r.stderr and "internal error" not in r.stderr
        if r.returncode == 7:
            assert f"would pass its monthly budget of {BUDGET}" in r.stderr


def test_twenty_launches_at_once_on_postgresql_run_exactly_what_the_budget_holds(
        fake: FakeCvm, tmp_path: Path, pg_url: str) -> None:
    import psycopg

    env = env_for(fake, tmp_path / "alice", pg_url)
    r = cli(env, "budget", "set", "--project", "vision", "--monthly", BUDGET)
    assert r.returncode == 0, r.stderr
    check_five_of_twenty(launch_twenty(env))
    live = [i for i in fake.instances.values() if i.state != "TERMINATING"]
    assert len(live) == 5  # a refused launch asked the cloud for nothing

    # a second machine (another GPUPLAN_HOME) pointing at the same database sees every launch
    other = env_for(fake, tmp_path / "bob", pg_url)
    ls = json.loads(cli(other, "ls", "--json").stdout)["launches"]
    assert len(ls) == 5 and {x["project"] for x in ls} == {"vision"}

    # spend totals match the ledger's rows worked by hand: unit price x hours each machine ran, to the same moment
    got = json.loads(cli(other, "spend", "--json", "--currency", "CNY").stdout)
    to = datetime.fromisoformat(got["to"])
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT l.unit_price, l.extras_unit, i.started_at, i.ended_at FROM launches l"
                            " JOIN instances i ON i.launch_id = l.id").fetchall()
    def hours(start: str, end: str | None) -> Decimal:
        # Tencent bills pay-as-you-go by the second (each machine's time rounded up to a whole second)
        seconds = ((datetime.fromisoformat(end) if end else to) - datetime.fromisoformat(start)).total_seconds()
        return Decimal(math.ceil(seconds)) / 3600

    by_hand = sum(Decimal(price) * hours(start, end) + Decimal(extras or 0) * hours(start, end)
                  for price, extras, start, end in rows)
    assert len(rows) == 5
    assert abs(Decimal(got["total"]) - by_hand) <= Decimal("0.01"), (got, by_hand)
    assert got["rows"] == [{"project": "vision", "launches": 5, "cost": got["total"]}]

    budgets = json.loads(cli(other, "budget", "ls", "--json").stdout)["budgets"]
    # five launches counted as shown, to the cent (5 x 61.38 of 306.92): what is left buys no sixth
    assert budgets[0]["name"] == "vision" and Decimal(budgets[0]["left"]["amount"]) <= Decimal("0.02")


def test_twenty_launches_at_once_on_a_fresh_sqlite_home_hold_the_budget_too(fake: FakeCvm, tmp_path: Path) -> None:
    env = env_for(fake, tmp_path / "home")
    assert cli(env, "budget", "set", "--project", "vision", "--monthly", BUDGET).returncode == 0
    check_five_of_twenty(launch_twenty(env))
    page = tmp_path / "spend.html"
    r = cli(env, "spend", "--by", "provider", "--currency", "CNY", "--html", str(page), "--json")
    total = json.loads(r.stdout)["total"]
    text = page.read_text()
    assert "GPU spend in" in text and text.count("<rect") == 1 and ">tencent<" in text and f"{total} CNY" in text


def test_a_launch_needs_a_ttl_where_a_budget_holds_and_nothing_is_asked(fake: FakeCvm, tmp_path: Path) -> None:
    env = env_for(fake, tmp_path / "home")
    assert cli(env, "budget", "set", "--owner", "ada", "--monthly", "1000").returncode == 0
    r = cli(env, *[a for a in LAUNCH if a not in ("--ttl", "6h")], "--owner", "ada")
    assert r.returncode == 7 and "has no end to price against it" in r.stderr and "--ttl" in r.stderr
    assert not fake.calls_of("RunInstances")


def test_ls_shows_your_launches_and_all_owners_shows_the_team(fake: FakeCvm, tmp_path: Path) -> None:
    env = env_for(fake, tmp_path / "home")
    assert cli(env, *LAUNCH, "--owner", "someone-else").returncode == 0
    assert cli(env, *LAUNCH).returncode == 0  # yours: the OS user
    mine = json.loads(cli(env, "ls", "--json").stdout)["launches"]
    team = json.loads(cli(env, "ls", "--json", "--all-owners").stdout)["launches"]
    assert len(mine) == 1 and len(team) == 2 and {x["owner"] for x in team} >= {"someone-else"}
    assert "1 launch(es) of others in this ledger: --all-owners" in cli(env, "ls").stdout
    r = cli(env, "down", "--all", "--yes")
    assert r.returncode == 0 and r.stdout.count("ended gp-") == 1  # --all is yours; --all-owners for the team
    assert json.loads(cli(env, "ls", "--json", "--all-owners").stdout)["launches"][0]["owner"] == "someone-else"


def test_a_ledger_url_that_is_not_usable_is_one_line_and_launches_nothing(fake: FakeCvm, tmp_path: Path,
                                                                         postgres: object) -> None:
    for url, said in (("mysql://x@host/db", "is not a postgresql:// URL"),
                      (f"postgresql://gpuplan:not-the-password@127.0.0.1:{postgres.port}/postgres",  # type: ignore[attr-defined]
                       "password authentication failed")):
        r = cli(env_for(fake, tmp_path / "home", url), *LAUNCH)
        assert r.returncode in (2, 8) and said in r.stderr and "not-the-password" not in r.stderr + r.stdout
        assert "Traceback" not in r.stderr
        if said.startswith("is not a postgresql"):  # its example URL reads whole: no *** masking an example
            assert "e.g. postgresql://db.example/gpuplan" in r.stderr and "***@db" not in r.stderr
    assert not fake.calls_of("RunInstances")


@pytest.mark.parametrize("step", ["intent", "after-run"])
def test_a_launch_killed_mid_way_on_the_shared_ledger_is_found_and_ended_from_another_machine(
        fake: FakeCvm, tmp_path: Path, pg_url: str, step: str) -> None:
    env = env_for(fake, tmp_path / "alice", pg_url)
    r = subprocess.run([sys.executable, "-m", "gpuplan", *LAUNCH], env={**env, "GPUPLAN_CRASH_AT": step},
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == -9  # killed as kill -9 would
    other = env_for(fake, tmp_path / "bob", pg_url)
    ls = json.loads(cli(other, "ls", "--json").stdout)["launches"]
    assert len(ls) == 1
    started = [i.instance_id for i in fake.instances.values()]
    assert ls[0]["instance_ids"] == started  # after the call: found by its tag and recorded; before: nothing started
    r = cli(other, "down", "--all", "--yes")
    if step == "intent":
        # the call may still start a machine: for 10 minutes `down` keeps the launch listed rather than call it ended
        assert r.returncode == 1 and len(json.loads(cli(other, "ls", "--json").stdout)["launches"]) == 1
    else:
        assert r.returncode == 0, r.stderr
        assert started and all(i.state == "TERMINATING" for i in fake.instances.values())


def test_two_machines_listing_and_reconciling_at_once_agree(fake: FakeCvm, tmp_path: Path, pg_url: str) -> None:
    homes = [env_for(fake, tmp_path / n, pg_url) for n in ("alice", "bob")]
    for _ in range(3):
        assert cli(homes[0], *LAUNCH).returncode == 0
    procs = [subprocess.Popen([sys.executable, "-m", "gpuplan", "ls", "--reconcile", "--json"], env=e, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for e in homes * 2]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err for _, err in outs]
    seen = [sorted(x["id"] for x in json.loads(out)["launches"]) for out, _ in outs]
    assert all(s == seen[0] for s in seen) and len(seen[0]) == 3
    assert all(json.loads(out)["untracked"] == [] for out, _ in outs)
