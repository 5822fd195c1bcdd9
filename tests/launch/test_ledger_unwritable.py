"""A ledger that cannot be written (a full disk, a read-only home) never keeps `ls` or `down` from working.

`launch` records before it asks the cloud, so there the same faults stop it before any call.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from launch.ledger import LaunchState, Ledger
from launch.service import down, start, status
from pricing.errors import StateError
from providers.testing.fake_cvm import TEST_SECRET_ID, TEST_SECRET_KEY, FakeCvm, fake_cvm_server
from tests.conftest import CliResult
from tests.fakes.fake_compute import Cloud, FakeCompute
from tests.launch.test_service import CAT, HPM, launch, quote_launch, spec

ROOT = Path(__file__).resolve().parents[2]
Run = Callable[..., CliResult]


def fill(ledger: Ledger) -> None:
    """Make the database file full the way a full disk does: SQLite answers SQLITE_FULL to the next write."""
    pages = ledger.db.execute("PRAGMA page_count").fetchone()[0]
    ledger.db.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(sqlite3.OperationalError, match="full"):
        for n in range(100_000):  # the free room in the last pages
            ledger.db.execute("INSERT INTO events (launch_id, at, what) VALUES ('x', 'y', ?)", (f"{n:06d}",))


def test_down_ends_every_launch_when_the_disk_is_full(tmp_path: Path) -> None:
    cloud = Cloud()
    with Ledger(tmp_path / "ledger.sqlite3", read_only_ok=True) as ledger:
        ids = [launch(ledger, cloud, ttl_hours=6)[2].record.id for _ in range(3)]
        assert len(cloud.live()) == 3
        fill(ledger)
        got = down(ledger, lambda p, r: FakeCompute(cloud), ledger.launches(), timeout=5, poll=0,
                   sleep=lambda _: None)
        assert cloud.live() == []  # every machine was asked to end, and ended
        assert [g.ended for g in got] == [True, True, True]
        assert ledger.unrecorded and "disk is full" in ledger.read_only
    with Ledger(tmp_path / "ledger.sqlite3") as ledger:  # space again: the next `ls` settles what was not recorded
        rows = status(ledger, lambda p, r: FakeCompute(cloud))
        assert {r.record.id for r in rows} <= set(ids)
        assert all(ledger.launch(i).state is LaunchState.TERMINATED for i in ids)


def test_a_launch_on_a_full_disk_stops_before_it_asks_the_cloud(tmp_path: Path) -> None:
    cloud = Cloud()
    with Ledger(tmp_path / "ledger.sqlite3") as ledger:
        launch(ledger, cloud)  # a first launch made the file
        fill(ledger)
        q = quote_launch(spec(), CAT, hours_per_month=HPM)
        with pytest.raises(StateError, match="disk is full") as caught:
            start(q, ledger=ledger, client=FakeCompute(cloud), progress=lambda _: None)
        assert "free space" in (caught.value.hint or "")
    assert len(cloud.machines) == 1  # the refused launch started nothing


# --- a read-only home, through the CLI ----------------------------------------------------------------


@pytest.fixture
def fake() -> Iterator[FakeCvm]:
    with fake_cvm_server() as f:
        yield f


@contextmanager
def read_only(home: Path) -> Iterator[None]:
    """``home`` read-only to gpuplan: a read-only bind mount as root (root writes through mode bits), else modes."""
    if os.geteuid() != 0:
        for folder, _, files in os.walk(home):
            os.chmod(folder, 0o500)
            for f in files:
                os.chmod(Path(folder) / f, 0o400)
        try:
            yield
        finally:
            for folder, _, _ in os.walk(home):
                os.chmod(folder, 0o700)
        return
    mounted = subprocess.run(["mount", "--bind", str(home), str(home)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("running as root where bind mounts are not allowed; the in-process test below covers it")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(home)], check=True, capture_output=True)
        yield
    finally:
        subprocess.run(["umount", str(home)], check=True, capture_output=True)


LAUNCH = ("launch", "--provider", "tencent", "--instance-type", "GN10Xp.2XLARGE40", "--zone", "ap-guangzhou-3",
          "--image", "img-ubu22new", "--ttl", "6h", "--yes")


def test_ls_and_down_work_on_a_read_only_home_and_launch_refuses(fake: FakeCvm, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TENCENTCLOUD_", "AWS_", "GPUPLAN_"))}
    env.update({"TENCENTCLOUD_SECRET_ID": TEST_SECRET_ID, "TENCENTCLOUD_SECRET_KEY": TEST_SECRET_KEY,
                "GPUPLAN_TENCENT_ENDPOINT": fake.endpoint, "GPUPLAN_TENCENT_INSTANCE_ROLE": "0",
                "GPUPLAN_HOME": str(home), "NO_PROXY": "127.0.0.1,localhost", "GPUPLAN_POLL_SECONDS": "0.05",
                "PYTHONPATH": str(ROOT), "COLUMNS": "200", "PYTHONWARNINGS": "ignore::DeprecationWarning"})

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gpuplan", *args], env=env, capture_output=True, text=True,
                              timeout=60, cwd=ROOT)

    assert cli(*LAUNCH).returncode == 0
    with read_only(home):
        r = cli("ls")
        assert r.returncode == 0, r.stderr
        assert "running" in r.stdout and "warning: cannot write the ledger" in r.stderr
        assert "Traceback" not in r.stderr and "internal error" not in r.stderr
        r = cli(*LAUNCH)
        assert r.returncode == 8 and "cannot write the ledger" in r.stderr, r.stderr
        assert len(fake.instances) == 1  # refused before the cloud was asked
        r = cli("down", "--all", "--yes")
        assert r.returncode == 0, r.stderr
        assert "ended gp-" in r.stdout and "not recorded" in r.stderr
    assert [i.state for i in fake.instances.values()] != ["RUNNING"]
    r = cli("ls", "--all", "--json")  # writable again: the ledger catches up from the cloud
    (row,) = json.loads(r.stdout)["launches"]
    assert row["state"] == "terminated"


def test_a_home_that_refuses_every_write_still_lists_and_ends(fake: FakeCvm, gpuplan: Run,
                                                             monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The same faults in-process, wherever the tests run: every change of the home's files is refused as on a
    # read-only file system (the chmod `ls` used to fail on), and SQLite is left to read the file only.
    monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", TEST_SECRET_ID)
    monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", TEST_SECRET_KEY)
    monkeypatch.setenv("GPUPLAN_TENCENT_ENDPOINT", fake.endpoint)
    monkeypatch.setenv("GPUPLAN_TENCENT_INSTANCE_ROLE", "0")
    monkeypatch.setenv("GPUPLAN_POLL_SECONDS", "0.05")
    code, _, err = gpuplan(*LAUNCH)
    assert code == 0, err
    home = Path(os.environ["GPUPLAN_HOME"])
    real_chmod = os.chmod

    def refuse(path: object, *a: object, **k: object) -> None:
        if str(path).startswith(str(home)):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        real_chmod(path, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "chmod", refuse)
    code, out, err = gpuplan("ls")
    assert code == 0 and "running" in out and "Read-only file system" in err, err
    code, _, err = gpuplan(*LAUNCH)
    assert code == 8 and len(fake.instances) == 1
    code, out, err = gpuplan("down", "--all", "--yes")
    assert code == 0 and "ended gp-" in out and "not recorded" in err
    assert all(i.state != "RUNNING" for i in fake.instances.values())


def _open_and_record(path: str, n: int, start: float) -> str:
    import time as _time

    from tests.launch.test_ledger import record

    while _time.time() < start:  # all processes open the new ledger at the same moment
        pass
    try:
        with Ledger(Path(path)) as ledger:
            ledger.record_intent(record(f"gp-race{n:04d}", f"t{n}"))
        return "ok"
    except Exception as exc:  # noqa: BLE001 - the failure is the result
        return f"{type(exc).__name__}: {exc}"


def test_many_processes_creating_one_new_ledger_at_once_all_succeed(tmp_path: Path) -> None:
    # Six `launch` at once on a fresh GPUPLAN_HOME: four died with "table launches already exists".
    import time as _time
    from concurrent.futures import ProcessPoolExecutor

    path = str(tmp_path / "ledger.sqlite3")
    start = _time.time() + 1.5
    with ProcessPoolExecutor(8) as pool:
        results = list(pool.map(_open_and_record, [path] * 8, range(8), [start] * 8))
    assert results == ["ok"] * 8
    with Ledger(Path(path)) as ledger:
        assert len(ledger.launches()) == 8


def test_a_read_only_home_with_no_ledger_yet_reads_as_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "data" / "ledger.sqlite3"

    def refuse(*_: object, **__: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr("launch.ledger.private_dir", refuse)
    with Ledger(path, read_only_ok=True) as ledger:
        assert ledger.launches() == [] and "Read-only file system" in ledger.read_only
    assert not path.exists()
