"""A launch is ended only on the word of the account that made it, through the real CLI, SDK and strict fake CVM.

The probes of issue 42: a listing through another endpoint once marked a running machine ended for good;
a `down` cut short during a slow launch left it "terminating", and the next `down --all` closed it while
its machine was still starting; a damaged ledger's reconcile searched no region.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from providers.testing.fake_cvm import FakeCvm, fake_cvm_server
from tests.launch.test_e2e_tencent import LAUNCH, ROOT, cli

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcfromtimestamp:DeprecationWarning")


@pytest.fixture
def fake() -> Iterator[FakeCvm]:
    with fake_cvm_server() as f:
        yield f


@pytest.fixture
def other() -> Iterator[FakeCvm]:
    """A second account: its own endpoint, where none of the first's machines exist."""
    with fake_cvm_server() as f:
        yield f


@pytest.fixture
def env(fake: FakeCvm, tmp_path: Path) -> dict[str, str]:
    from providers.testing.fake_cvm import TEST_SECRET_ID, TEST_SECRET_KEY

    e = {k: v for k, v in os.environ.items() if not k.startswith(("TENCENTCLOUD_", "AWS_", "GPUPLAN_"))}
    e.update({
        "TENCENTCLOUD_SECRET_ID": TEST_SECRET_ID, "TENCENTCLOUD_SECRET_KEY": TEST_SECRET_KEY,
        "GPUPLAN_TENCENT_ENDPOINT": fake.endpoint, "GPUPLAN_TENCENT_INSTANCE_ROLE": "0",
        "GPUPLAN_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "user"), "NO_PROXY": "127.0.0.1,localhost",
        "GPUPLAN_POLL_SECONDS": "0.05", "PYTHONPATH": str(ROOT), "COLUMNS": "200",
        "PYTHONWARNINGS": "ignore::DeprecationWarning",
    })
    return e


def ledger_path(env: dict[str, str]) -> Path:
    return next(Path(env["GPUPLAN_HOME"]).rglob("ledger.sqlite3"))


def rows(env: dict[str, str], sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(ledger_path(env)) as db:
        return db.execute(sql).fetchall()


def alive(fake: FakeCvm) -> list[str]:
    return [i.instance_id for i in fake.live_instances() if i.state not in ("TERMINATING", "LAUNCH_FAILED")]


def test_a_listing_through_another_endpoint_changes_nothing_and_down_all_still_ends_the_machine(
        fake: FakeCvm, other: FakeCvm, env: dict[str, str]) -> None:
    assert cli(env, *LAUNCH).returncode == 0
    (machine,) = alive(fake)
    before = rows(env, "SELECT l.state, i.state, i.ended_at FROM launches l JOIN instances i ON i.launch_id = l.id")
    elsewhere = {**env, "GPUPLAN_TENCENT_ENDPOINT": other.endpoint}
    r = cli(elsewhere, "ls")
    assert r.returncode == 0, r.stderr
    assert "nothing was changed" in r.stderr and "launched through" in r.stderr
    r = cli(elsewhere, "down", "--all", "--yes")
    assert r.returncode != 0 and "not ended" in r.stdout + r.stderr
    assert rows(env, "SELECT l.state, i.state, i.ended_at FROM launches l JOIN instances i ON i.launch_id = l.id") \
        == before
    assert alive(fake) == [machine]
    r = cli(env, "down", "--all", "--yes")
    assert r.returncode == 0, r.stderr
    assert alive(fake) == [] and machine in r.stdout


def test_a_down_cut_short_during_a_slow_launch_leaves_the_late_machine_to_the_next_down(
        fake: FakeCvm, env: dict[str, str]) -> None:
    fake.slow(15, action="RunInstances")  # the machine exists only once the call answers
    launching = subprocess.Popen([sys.executable, "-m", "gpuplan", *LAUNCH], env=env, cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not fake.calls_of("RunInstances"):
            time.sleep(0.05)  # the launch's call is in, and held: no machine yet
        seen = len(fake.calls_of("DescribeInstances"))
        fake.slow(30, action="DescribeInstances")  # the first `down` hangs in its cloud call ...
        first = subprocess.Popen([sys.executable, "-m", "gpuplan", "down", "--all", "--yes"], env=env, cwd=ROOT,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(fake.calls_of("DescribeInstances")) == seen:
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)  # ... and is killed there
        first.wait()
        assert rows(env, "SELECT state FROM launches") == [("intent",)]
        r = cli(env, "down", "--all", "--yes")  # RunInstances has not answered yet: nothing to end, not closed
        assert r.returncode != 0 and "may still be starting" in r.stdout, r.stdout + r.stderr
        assert rows(env, "SELECT state FROM launches") != [("terminated",)]
        out, err = launching.communicate(timeout=60)
        assert launching.returncode == 0, out + err
    finally:
        if launching.poll() is None:
            launching.kill()
            launching.communicate()
    assert len(alive(fake)) == 1
    r = cli(env, "down", "--all", "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert alive(fake) == []


def test_the_end_time_is_the_one_the_interrupted_down_asked_at(fake: FakeCvm, env: dict[str, str]) -> None:
    assert cli(env, *LAUNCH).returncode == 0
    fake.terminating_describes = 10_000  # the machine stays "terminating" while this `down` waits ...
    r = cli(env, "down", "--all", "--yes", "--wait-timeout", "1s")
    assert r.returncode != 0
    ((asked,),) = rows(env, "SELECT end_asked_at FROM launches")
    assert asked is not None
    fake.terminating_describes = 0
    time.sleep(1.2)  # ... and a later `ls` (a second on) sees it gone: the end is the ask, not the ls
    assert cli(env, "ls").returncode == 0  # the last sight of it "terminating"
    assert cli(env, "ls").returncode == 0  # gone
    ((ended,),) = rows(env, "SELECT ended_at FROM instances")
    assert ended == asked


def test_reconcile_after_the_ledger_is_set_aside_searches_where_gpuplan_launched(
        fake: FakeCvm, env: dict[str, str]) -> None:
    assert cli(env, *LAUNCH).returncode == 0
    (machine,) = alive(fake)
    path = ledger_path(env)
    path.rename(path.with_name(path.name + ".damaged"))  # the ledger's own hint, followed
    r = cli(env, "ls", "--reconcile")
    assert r.returncode == 0, r.stderr
    assert f"untracked: tencent ap-guangzhou {machine}" in r.stderr
    r = cli(env, "down", "--untracked", "--yes")
    assert r.returncode == 0 and f"ended untracked {machine}" in r.stdout, r.stdout + r.stderr
    assert alive(fake) == []
