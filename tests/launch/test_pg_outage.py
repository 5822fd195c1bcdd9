"""A PostgreSQL ledger outage: `ls` and `down` work from the cloud's tags, and the database learns it on return.

The probe of issue 42: with GPUPLAN_LEDGER_URL on PostgreSQL, a database outage left a started machine
that nothing could end until the database came back. Real throwaway PostgreSQL, strict fake CVM.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from providers.testing.fake_cvm import FakeCvm, fake_cvm_server
from tests.fakes.postgres import Server, bin_dir, postgres_server
from tests.launch.test_e2e_team import LAUNCH, cli, env_for

pytestmark = [pytest.mark.filterwarnings("ignore:datetime.datetime.utcfromtimestamp:DeprecationWarning"),
              pytest.mark.skipif(bin_dir() is None, reason="no PostgreSQL server binaries on this machine")]


@pytest.fixture(scope="module")
def pg() -> Iterator[Server]:
    pytest.importorskip("psycopg")
    with postgres_server() as server:
        yield server


@pytest.fixture
def fake() -> Iterator[FakeCvm]:
    with fake_cvm_server() as f:
        yield f


def closed_url() -> str:
    with socket.socket() as s:  # a port nobody listens on: the database is down
        s.bind(("127.0.0.1", 0))
        return f"postgresql://gpuplan:secret-pw@127.0.0.1:{s.getsockname()[1]}/gpuplan"


def alive(fake: FakeCvm) -> list[str]:
    return [i.instance_id for i in fake.live_instances() if i.state not in ("TERMINATING", "LAUNCH_FAILED")]


def test_during_an_outage_ls_and_down_work_from_tags_and_the_ledger_learns_the_end(
        pg: Server, fake: FakeCvm, tmp_path: Path) -> None:
    url = pg.new_database("outage")
    up = env_for(fake, tmp_path, url)
    r = cli(up, *LAUNCH, "--json")
    assert r.returncode == 0, r.stderr
    launch_id = json.loads(r.stdout)["id"]
    (machine,) = alive(fake)

    down_db = env_for(fake, tmp_path, closed_url())
    r = cli(down_db, "ls")
    assert r.returncode == 0, r.stderr
    assert "cannot reach the ledger database" in r.stderr and f"{launch_id}: tencent ap-guangzhou {machine}" in r.stdout
    assert "secret-pw" not in r.stdout + r.stderr
    r = cli(down_db, "down", "--all", "--yes")  # the tags do not say whose: refused, nothing ended
    assert r.returncode == 2 and alive(fake) == [machine]
    r = cli(down_db, "down", launch_id, "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert alive(fake) == [] and f"ended {machine}" in r.stdout

    r = cli(up, "ls", "--all", "--json")  # the database is back: the journal is replayed into it
    assert r.returncode == 0, r.stderr
    assert "ledger outage journal" in r.stderr and launch_id in r.stderr
    (row,) = json.loads(r.stdout)["launches"]
    assert row["state"] == "terminated"
    assert not list(tmp_path.rglob("ledger-journal.jsonl"))  # set aside once replayed: never twice


def test_down_expired_keeps_the_ttls_during_an_outage(pg: Server, fake: FakeCvm, tmp_path: Path) -> None:
    up = env_for(fake, tmp_path, pg.new_database("expired"))
    short = tuple("1s" if a == "6h" else a for a in LAUNCH)  # past its TTL a second later
    assert cli(up, *short).returncode == 0
    assert cli(up, *LAUNCH).returncode == 0  # a 6 h one: not expired, not ended
    assert len(alive(fake)) == 2
    r = cli(env_for(fake, tmp_path, closed_url()), "down", "--expired")
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(alive(fake)) == 1
