"""The outage journal's replay into a real PostgreSQL ledger, what counts as the database being away, and a launch
whose intent cannot be written.

The session's throwaway PostgreSQL server (tests.fakes.postgres); the cloud is the in-memory fake compute.
"""

from __future__ import annotations

import stat
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pytest

from launch.journal import ENDED, ENDING, Journal, JournaledPgLedger, database_key
from launch.ledger import LaunchRecord, LaunchState
from launch.ledger_pg import PgLedger
from launch.outage import unreachable
from launch.service import LaunchSpec, quote_launch, start
from pricing.billing import BillingMode
from pricing.catalog import Catalog
from pricing.errors import InputError, StateError
from pricing.money import Currency, Money
from providers.capabilities import InstanceInfo, InstanceState
from tests.fakes.fake_compute import Cloud, FakeCompute
from tests.fakes.postgres import PASSWORD

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def record(launch_id: str, state: LaunchState = LaunchState.RUNNING) -> LaunchRecord:
    return LaunchRecord(id=launch_id, provider="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
                        billing=BillingMode.HOURLY, months=1, count=1, image=None, client_token=f"tok-{launch_id}",
                        state=state, unit_price=Money(amount=Decimal("3.06"), currency=Currency.USD), created_at=T0,
                        expires_at=None, max_cost=None, owner="ada")


def running(ledger: PgLedger, launch_id: str, machine: str) -> None:
    ledger.record_intent(record(launch_id, LaunchState.INTENT))
    ledger.record_instances(launch_id, [InstanceInfo(instance_id=machine, state=InstanceState.RUNNING,
                                                     zone="us-east-1a", launched_at=T0)])
    ledger.set_state(launch_id, LaunchState.RUNNING)


def dump(url: str) -> list[Any]:
    with psycopg.connect(url) as conn:
        return [conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
                for t in ("launches", "instances", "events")]


def test_replay_ends_at_the_journal_time_once_and_leaves_an_ended_launch_as_it_is(pg_url: str, tmp_path: Path) -> None:
    path = tmp_path / "data" / "ledger-journal.sqlite3"
    key = database_key(pg_url)
    assert PASSWORD not in key and "127.0.0.1" in key
    with JournaledPgLedger(pg_url, path) as ledger:
        running(ledger, "gp-a", "i-a")
        running(ledger, "gp-done", "i-d")
        ledger.record_instances("gp-done", [InstanceInfo(instance_id="i-d", state=InstanceState.TERMINATED)])
        ledger.set_state("gp-done", LaunchState.TERMINATED)
        ended_before = ledger.instances("gp-done")[0].ended_at
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # the launch noted its place and id there
    seen = T0 + timedelta(hours=2)
    with Journal(path) as j:
        assert j.places() == {("aws", "us-east-1")} and j.launched_here() == {"gp-a": "ada", "gp-done": "ada"}
        for launch_id, machine in (("gp-a", "i-a"), ("gp-done", "i-d")):
            j.add(key, launch_id, "aws", "us-east-1", machine, "us-east-1a", ENDING, T0, seen - timedelta(minutes=1))
            j.add(key, launch_id, "aws", "us-east-1", machine, "us-east-1a", ENDED, T0, seen)
        j.add(key, "gp-elsewhere", "aws", "us-east-1", "i-x", "us-east-1a", ENDED, None, seen)
        j.add("postgresql://other@db:5432/team", "gp-a", "aws", "us-east-1", "i-a", "", ENDED, None, T0)
    assert PASSWORD.encode() not in path.read_bytes()

    with JournaledPgLedger(pg_url, path) as ledger:
        said = ledger.replay_journal()
        assert ledger.launch("gp-a").state is LaunchState.TERMINATED
        assert ledger.instances("gp-a")[0].ended_at == seen  # the journal's time, not the replay's
        assert ledger.instances("gp-done")[0].ended_at == ended_before  # already ended: as it was
    assert any("gp-a: terminated" in s for s in said)
    assert any("gp-done: already terminated" in s for s in said)
    assert any("gp-elsewhere: not in this database" in s for s in said)
    after = dump(pg_url)
    with Journal(path) as j:
        assert j.pending(key) == []  # cleared once replayed
        assert len(j.pending("postgresql://other@db:5432/team")) == 1  # another database's entry waits for it
        for launch_id, machine in (("gp-a", "i-a"),):  # the same entries again (a kill before the clear)
            j.add(key, launch_id, "aws", "us-east-1", machine, "us-east-1a", ENDED, T0, seen + timedelta(hours=1))
    with JournaledPgLedger(pg_url, path) as ledger:
        assert ledger.replay_journal() == ["gp-a: already terminated in the database, left as it is"]
    assert dump(pg_url) == after  # replaying twice changes nothing


def test_a_machine_asked_to_end_but_not_seen_ended_leaves_its_launch_terminating(pg_url: str, tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    with JournaledPgLedger(pg_url, path) as ledger:
        running(ledger, "gp-b", "i-b")
    with Journal(path) as j:
        j.add(database_key(pg_url), "gp-b", "aws", "us-east-1", "i-b", "us-east-1a", ENDING, T0, T0)
    with JournaledPgLedger(pg_url, path) as ledger:
        ledger.replay_journal()
        assert ledger.launch("gp-b").state is LaunchState.TERMINATING  # `ls` follows it from here
        assert ledger.instances("gp-b")[0].ended_at is None


def test_a_launch_whose_intent_cannot_be_written_never_asks_the_cloud(pg_url: str, tmp_path: Path) -> None:
    cloud = Cloud()
    q = quote_launch(LaunchSpec(provider="aws", instance_type="p3.2xlarge", region="us-east-1"), Catalog.shipped(),
                     hours_per_month=Decimal(730))
    with JournaledPgLedger(pg_url, tmp_path / "journal.sqlite3") as ledger:
        pid = ledger.conn.info.backend_pid
        with psycopg.connect(pg_url, autocommit=True) as admin:  # the database goes away between open and intent
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(StateError) as err:
            start(q, ledger=ledger, client=FakeCompute(cloud), progress=lambda _: None)
    assert unreachable(err.value)  # so `ls` and `down` would read the clouds instead
    assert cloud.requests == [] and cloud.machines == {}
    assert not (tmp_path / "journal.sqlite3").exists()  # nothing noted as launched from here


def test_what_counts_as_the_database_being_away() -> None:
    refused = psycopg.OperationalError('connection failed: connection to server at "127.0.0.1", port 9 failed: '
                                       "Connection refused")
    auth = psycopg.OperationalError('connection failed: connection to server at "127.0.0.1", port 5432 failed: '
                                    'FATAL:  password authentication failed for user "gpuplan"')
    starting = psycopg.OperationalError("connection failed: FATAL:  the database system is starting up")
    timed_out = psycopg.OperationalError("connection failed: connection timeout expired")
    assert unreachable(refused) and unreachable(starting) and unreachable(timed_out)
    assert unreachable(psycopg.OperationalError("the connection is closed"))  # lost mid-command
    assert unreachable(psycopg.errors.AdminShutdown("terminating connection due to administrator command"))
    assert not unreachable(auth)
    assert not unreachable(psycopg.errors.UndefinedTable("relation does not exist"))  # a fault of the SQL
    assert not unreachable(InputError("no such launch"))
    try:  # as the ledger raises it: its own error, from None, over the driver's
        try:
            raise refused
        except psycopg.Error:
            raise StateError("cannot reach the ledger database") from None
    except StateError as exc:
        assert unreachable(exc)


def test_a_damaged_journal_is_said_and_stops_nothing(pg_url: str, tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    path.write_bytes(b"not a database at all" * 100)
    with JournaledPgLedger(pg_url, path) as ledger:
        assert ledger.replay_journal() == []
        assert "cannot be read" in ledger.journal_fault and str(path) in ledger.journal_fault
        running(ledger, "gp-c", "i-c")  # the launch is recorded; only the note of where it went is lost
        assert ledger.launch("gp-c").state is LaunchState.RUNNING


def machine(cloud: Cloud, launch_id: str, state: InstanceState = InstanceState.RUNNING) -> str:
    from providers.capabilities import TAG_EXPIRES, TAG_ID, TAG_MANAGED
    from tests.fakes.fake_compute import Machine

    m = Machine(f"i-{launch_id}", "p3.2xlarge", "us-east-1a", {TAG_ID: launch_id, TAG_MANAGED: "true",
                                                             TAG_EXPIRES: "2026-03-01T18:00:00+00:00"}, state=state)
    cloud.machines[m.instance_id] = m
    return m.instance_id


def test_the_clouds_read_by_tag_and_ended_with_every_step_journaled(tmp_path: Path) -> None:
    from launch.outage import end_at_cloud, read_cloud
    from tests.fakes.fake_compute import broken

    east, west, down_ = Cloud(), Cloud(), Cloud(fail_describe=broken("endpoint unreachable"))
    machine(east, "gp-1")
    machine(east, "gp-2")
    machine(west, "gp-3")
    machine(west, "gp-gone", InstanceState.TERMINATED)
    clouds = {"us-east-1": east, "us-west-2": west, "eu-west-1": down_}

    def client_for(provider: str, region: str) -> FakeCompute:
        return FakeCompute(clouds[region], provider, region)

    found, notes = read_cloud([("aws", r) for r in clouds], client_for)
    assert [(c.id, c.region, [m.instance_id for m in c.machines]) for c in found] == [
        ("gp-1", "us-east-1", ["i-gp-1"]), ("gp-2", "us-east-1", ["i-gp-2"]), ("gp-3", "us-west-2", ["i-gp-3"])]
    assert found[0].expires_at == datetime(2026, 3, 1, 18, tzinfo=UTC)
    assert notes == ["aws eu-west-1: not read: endpoint unreachable"]  # one unreadable place hides no other

    east.fail_terminate = {"i-gp-2"}
    with Journal(tmp_path / "j.sqlite3") as j:
        before = datetime.now(UTC).replace(microsecond=0)
        ended = end_at_cloud(found, client_for, j, "db", timeout=5, poll=0)
        entries = [(e.launch_id, e.instance_id, e.state) for e in j.pending("db")]
        assert all(before <= e.at for e in j.pending("db"))
    assert [(e.launch.id, e.ended, e.still) for e in ended] == [
        ("gp-1", ["i-gp-1"], []), ("gp-2", [], ["i-gp-2"]), ("gp-3", ["i-gp-3"], [])]
    assert ended[1].note.startswith("not ended") and east.machines["i-gp-2"].state is InstanceState.RUNNING
    # each machine's ask is journaled once made (a failed one changed nothing), its end once the cloud shows it
    assert entries == [("gp-1", "i-gp-1", ENDING), ("gp-3", "i-gp-3", ENDING),
                       ("gp-1", "i-gp-1", ENDED), ("gp-3", "i-gp-3", ENDED)]
