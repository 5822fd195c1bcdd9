"""The team's PostgreSQL ledger goes away: `ls` and `down` read and end the machines at the clouds by their tags,
journal every change locally, and the next command that reaches the database replays it.

A real PostgreSQL server of its own (stopped and started again on the same port, as a team's server
restarts) and the fake CVM endpoint, through the real CLI in subprocesses.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from providers.testing.fake_cvm import FakeCvm, fake_cvm_server
from tests.fakes.postgres import PASSWORD, Server, bin_dir, postgres_server
from tests.launch.test_e2e_team import LAUNCH, cli, env_for

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcfromtimestamp:DeprecationWarning")


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    """A server of this module's own: its tests stop it, which the session's shared one must not suffer."""
    if bin_dir() is None:
        pytest.skip("PostgreSQL is not installed here (apt-get install postgresql)")
    with postgres_server() as s:
        yield s


def pg_ctl(s: Server, *args: str) -> None:
    found = bin_dir()
    assert found is not None
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run([*as_user, str(found / "pg_ctl"), "-D", str(s.root / "data"), "-l", str(s.root / "log"), "-w",
                    "-t", "60", *args], check=True, capture_output=True, timeout=120)


def stop(s: Server) -> None:
    pg_ctl(s, "-m", "fast", "stop")


def start(s: Server) -> None:
    pg_ctl(s, "-o", f"-p {s.port} -k {s.root} -c listen_addresses=127.0.0.1 -c fsync=off", "start")


@pytest.fixture
def fake() -> Iterator[FakeCvm]:
    with fake_cvm_server() as f:
        yield f


def journal_file(home: Path) -> Path:
    return home / "data" / "ledger-journal.sqlite3"


def test_database_away_ls_and_down_work_from_the_cloud_and_the_journal_is_replayed_when_it_returns(
        server: Server, fake: FakeCvm, tmp_path: Path) -> None:
    import psycopg

    url = server.new_database("outage_e2e")
    home = tmp_path / "alice"
    env = env_for(fake, home, url)
    r = cli(env, *LAUNCH)
    assert r.returncode == 0, r.stderr
    launch_id = json.loads(cli(env, "ls", "--json").stdout)["launches"][0]["id"]
    [machine] = [i.instance_id for i in fake.instances.values()]

    stop(server)
    try:
        # ls: the database is named unreachable, the machine comes from the cloud by its tag
        r = cli(env, "ls")
        assert r.returncode == 0, r.stderr
        assert "unreachable" in r.stderr and launch_id in r.stdout and machine in r.stdout
        got = json.loads(cli(env, "ls", "--json").stdout)
        assert [x["id"] for x in got["launches"]] == [launch_id] and got["launches"][0]["instance_ids"] == [machine]
        assert fake.instances[machine].state == "RUNNING"  # listing ends nothing

        # down --all --yes ends it at the cloud and journals it
        before_down = datetime.now(UTC).replace(microsecond=0)
        r = cli(env, "down", "--all", "--yes")
        after_down = datetime.now(UTC)
        assert r.returncode == 0, r.stderr
        assert f"ended {launch_id} at the cloud: {machine}" in r.stdout
        assert machine not in fake.instances or fake.instances[machine].state == "TERMINATING"
        assert fake.calls_of("TerminateInstances")
        # nothing left to end: a second down finds no live machine and asks nothing
        assert "nothing to end" in cli(env, "down", "--all", "--yes").stderr

        journal = journal_file(home)
        assert stat.S_IMODE(journal.stat().st_mode) == 0o600
        raw = journal.read_bytes()
        assert launch_id.encode() in raw and PASSWORD.encode() not in raw
        for out in (r.stdout, r.stderr):
            assert PASSWORD not in out
        time.sleep(1.1)  # the replay must record the journal's time, not its own: make them differ
    finally:
        start(server)

    r = cli(env, "ls", "--all", "--json")
    assert r.returncode == 0, r.stderr
    assert "replayed" in r.stderr and launch_id in r.stderr and PASSWORD not in r.stderr + r.stdout
    [row] = json.loads(r.stdout)["launches"]
    assert row["id"] == launch_id and row["state"] == "terminated"
    with psycopg.connect(url) as conn:
        state, = conn.execute("SELECT state FROM launches WHERE id = %s", (launch_id,)).fetchone()
        ended, = conn.execute("SELECT ended_at FROM instances WHERE instance_id = %s", (machine,)).fetchone()
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    assert state == "terminated"
    assert before_down <= datetime.fromisoformat(ended) <= after_down  # the time the journal saw it end

    # replayed once: the journal is empty, the next command says nothing and changes nothing
    r = cli(env, "ls", "--all", "--json")
    assert r.returncode == 0 and "replayed" not in r.stderr
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == events


def test_a_launch_with_the_database_away_asks_the_cloud_for_nothing(server: Server, fake: FakeCvm,
                                                                   tmp_path: Path) -> None:
    env = env_for(fake, tmp_path / "home", server.new_database("outage_launch"))
    stop(server)
    try:
        r = cli(env, *LAUNCH)
    finally:
        start(server)
    assert r.returncode == 8 and "cannot reach the ledger database" in r.stderr and "Traceback" not in r.stderr
    assert PASSWORD not in r.stderr + r.stdout
    assert not fake.calls_of("RunInstances")


def test_a_wrong_password_is_no_outage_ls_stops_and_reads_no_cloud(server: Server, fake: FakeCvm,
                                                                  tmp_path: Path) -> None:
    env = env_for(fake, tmp_path / "home", server.url(password="not-the-password"))
    r = cli(env, "ls")
    assert r.returncode == 8 and "password authentication failed" in r.stderr
    assert "unreachable" not in r.stderr and "not-the-password" not in r.stderr + r.stdout
    assert not fake.calls_of("DescribeInstances")


def test_with_no_place_known_ls_says_what_to_give(fake: FakeCvm, tmp_path: Path) -> None:
    env = env_for(fake, tmp_path / "home", "postgresql://gpuplan:secret-pw@127.0.0.1:9/nowhere")
    r = cli(env, "ls")
    assert r.returncode == 8 and "no place to look" in r.stderr and "--provider" in r.stderr
    assert "cannot reach the ledger database" in r.stderr
    assert "secret-pw" not in r.stderr
    r = cli(env, "ls", "--provider", "tencent", "--region", "ap-guangzhou")
    assert r.returncode == 0, r.stderr
    assert "unreachable" in r.stderr and "tencent ap-guangzhou" in r.stderr and "secret-pw" not in r.stderr


@pytest.mark.parametrize("command", ["ls", "down"])
def test_the_database_lost_mid_command_falls_back_to_the_cloud(server: Server, fake: FakeCvm, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch, gpuplan: Any,
                                                                command: str) -> None:
    import psycopg

    from launch import service

    url = server.new_database(f"outage_mid_{command}")
    env = env_for(fake, tmp_path / "home", url)
    assert cli(env, *LAUNCH).returncode == 0
    [machine] = list(fake.instances)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    name = "status" if command == "ls" else "down"
    real = getattr(service, name)

    def cut(ledger: Any, *args: Any, **kwargs: Any) -> Any:
        # the ledger opened fine; its connection is cut before the command reads or writes anything
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (ledger.conn.info.backend_pid,))
        return real(ledger, *args, **kwargs)

    monkeypatch.setattr(service, name, cut)
    code, out, err = gpuplan(*(("ls",) if command == "ls" else ("down", "--all", "--yes")))
    assert code == 0, err
    assert "unreachable" in err and machine in out and "Traceback" not in err and PASSWORD not in out + err
    monkeypatch.setattr(service, name, real)
    code, out, err = gpuplan("ls", "--all", "--json")
    [row] = json.loads(out)["launches"]
    if command == "ls":  # a listing journals nothing: the launch runs on, as recorded
        assert "replayed" not in err and row["state"] == "running"
    else:
        assert "replayed" in err and row["state"] == "terminated"


def test_while_the_database_is_away_down_all_ends_only_yours_and_asks_first(server: Server, fake: FakeCvm,
                                                                            tmp_path: Path) -> None:
    env = env_for(fake, tmp_path / "home", server.new_database("outage_owners"))
    assert cli(env, *LAUNCH).returncode == 0
    assert cli(env, *LAUNCH, "--owner", "someone-else").returncode == 0
    launches = {x["owner"]: x for x in json.loads(cli(env, "ls", "--json", "--all-owners").stdout)["launches"]}
    mine, theirs = (launches[o] for o in sorted(launches, key=lambda o: o == "someone-else"))
    stop(server)
    try:
        r = cli(env, "ls", "--json")
        assert [x["id"] for x in json.loads(r.stdout)["launches"]] == [mine["id"]]
        assert "1 launch(es) not made from here by you" in r.stderr
        r = cli(env, "down", "--all")  # no terminal to confirm on: refused, nothing asked
        assert r.returncode == 2 and "pass --yes" in r.stderr and not fake.calls_of("TerminateInstances")
        r = cli(env, "down", "--untracked", "--yes")
        assert r.returncode == 8 and "cannot be told" in r.stderr
        r = cli(env, "down", "--all", "--yes")
        assert r.returncode == 0 and mine["id"] in r.stdout and theirs["id"] not in r.stdout
        assert fake.instances[theirs["instance_ids"][0]].state == "RUNNING"  # a teammate's machine runs on
        r = cli(env, "down", theirs["instance_ids"][0], "--yes")  # named: ended, whoever launched it
        assert r.returncode == 0 and f"ended {theirs['id']} at the cloud" in r.stdout
        r = cli(env, "down", "gp-nosuchlaunch", "--yes")
        assert r.returncode == 2 and "holds no live machine at the clouds searched" in r.stderr
    finally:
        start(server)
    r = cli(env, "ls", "--all-owners", "--all", "--json")
    assert r.returncode == 0 and r.stderr.count("terminated (") == 2
    assert {x["state"] for x in json.loads(r.stdout)["launches"]} == {"terminated"}


def test_a_password_in_the_urls_query_is_never_shown_nor_journaled(fake: FakeCvm, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = env_for(fake, home, "postgresql://127.0.0.1:9/team?user=gpuplan&password=q%25secret-77")
    for args in (("ls",), ("ls", "--provider", "tencent", "--region", "ap-guangzhou", "--json"),
                 ("down", "--all", "--yes")):
        r = cli(env, *args)
        assert "unreachable" in r.stderr or "cannot reach" in r.stderr, r.stderr
        assert "secret-77" not in r.stdout + r.stderr and "Traceback" not in r.stderr
    for f in (home / "data").glob("*"):
        assert b"secret-77" not in f.read_bytes()


def test_a_machine_started_as_the_database_went_away_is_ended_from_the_cloud_and_recorded_on_its_return(
        server: Server, fake: FakeCvm, tmp_path: Path) -> None:
    import psycopg

    url = server.new_database("outage_mid_launch")
    env = env_for(fake, tmp_path / "home", url)
    # the launch dies right after RunInstances answered (as when its database connection is lost then): the
    # database holds the intent and no machine
    r = subprocess.run([*cli_argv(), *LAUNCH], env={**env, "GPUPLAN_CRASH_AT": "after-run"}, capture_output=True,
                       text=True, timeout=120, cwd=env["PYTHONPATH"], check=False)
    assert r.returncode == -9
    [machine] = list(fake.instances)
    stop(server)
    try:
        r = cli(env, "down", "--all", "--yes")
        assert r.returncode == 0 and f"at the cloud: {machine}" in r.stdout, r.stderr
    finally:
        start(server)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM instances").fetchone()[0] == 0  # before the replay
    r = cli(env, "ls", "--all", "--json")
    [row] = json.loads(r.stdout)["launches"]
    assert "replayed" in r.stderr and row["state"] == "terminated" and row["instance_ids"] == [machine]


def cli_argv() -> list[str]:
    import sys

    return [sys.executable, "-m", "gpuplan"]
