"""Whose word ends a launch, at the service level (an in-memory cloud per account): quick and exact.

The CLI probes against the strict fake CVM are in test_evidence.py; here each rule alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launch.ledger import LaunchState, Ledger
from launch.places import remember, remembered, search_places
from launch.service import down, status
from launch.untracked import reconcile
from tests.fakes.fake_compute import Cloud, FakeCompute
from tests.launch.test_service import _in_flight, launch


class Account(FakeCompute):
    """A client of one account: ``account()`` names it, as the Tencent and AWS clients do."""

    def __init__(self, cloud: Cloud, name: str) -> None:
        super().__init__(cloud)
        self.name = name

    def account(self) -> str:
        return self.name


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger(tmp_path / "ledger.sqlite3")


def test_a_listing_through_another_account_changes_nothing_and_says_so(ledger: Ledger) -> None:
    mine, theirs = Cloud(), Cloud()  # the machine lives in mine; theirs knows no such id
    from launch.service import quote_launch, start
    from tests.launch.test_service import CAT, HPM, spec

    q = quote_launch(spec(), CAT, hours_per_month=HPM)
    out = start(q, ledger=ledger, client=Account(mine, "acct-A"), progress=lambda _: None)
    assert ledger.launch(out.record.id).account == "acct-A"
    before = (ledger.launch(out.record.id), ledger.instances(out.record.id))
    (row,) = status(ledger, lambda p, r: Account(theirs, "acct-B"))
    assert any("launched through acct-A" in n and "nothing was changed" in n for n in row.notes)
    (got,) = down(ledger, lambda p, r: Account(theirs, "acct-B"), [ledger.launch(out.record.id)], timeout=1, poll=0,
                  sleep=lambda _: None)
    assert not got.ended and (ledger.launch(out.record.id), ledger.instances(out.record.id)) == before
    (got,) = down(ledger, lambda p, r: Account(mine, "acct-A"), [ledger.launch(out.record.id)], timeout=1, poll=0,
                  sleep=lambda _: None)
    assert got.ended and mine.live() == []


def test_a_listing_that_cannot_tell_its_account_is_no_evidence_either(ledger: Ledger) -> None:
    cloud = Cloud()
    from launch.service import quote_launch, start
    from tests.launch.test_service import CAT, HPM, spec

    out = start(quote_launch(spec(), CAT, hours_per_month=HPM), ledger=ledger, client=Account(cloud, "acct-A"),
                progress=lambda _: None)
    (row,) = status(ledger, lambda p, r: Account(Cloud(), ""))
    assert any("cannot be told" in n for n in row.notes)
    assert ledger.launch(out.record.id).state is LaunchState.PENDING


def test_a_launch_a_cut_short_down_left_terminating_with_no_machine_is_still_in_flight(ledger: Ledger) -> None:
    rid = _in_flight(ledger, LaunchState.TERMINATING)  # an older gpuplan's `down`, killed after marking it
    (got,) = down(ledger, lambda p, r: FakeCompute(Cloud()), [ledger.launch(rid)], timeout=1, poll=0,
                  sleep=lambda _: None)
    assert not got.ended and not ledger.launch(rid).state.is_final


def test_reconcile_reports_a_machine_the_ledger_thinks_ended_but_the_cloud_runs(ledger: Ledger) -> None:
    cloud = Cloud()
    _, client, out = launch(ledger, cloud)
    (iid,) = [i.instance_id for i in out.instances]
    assert reconcile(ledger, client, "aws", "us-east-1") == []  # tracked: ls and down follow it
    with ledger._tx() as db:  # what one foreign listing did before accounts were recorded
        db.execute("UPDATE instances SET state = 'terminated'")
        db.execute("UPDATE launches SET state = 'terminated'")
    assert [i.instance_id for i in reconcile(ledger, client, "aws", "us-east-1")] == [iid]


def test_places_are_remembered_beside_the_ledger_and_a_hostile_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "places.json"
    remember(path, "tencent", "ap-guangzhou")
    remember(path, "aws", "us-east-1")
    remember(path, "aws", "us-east-1; rm -rf /")  # never stored: not a region name
    assert remembered(path) == {("tencent", "ap-guangzhou"), ("aws", "us-east-1")}
    assert (path.stat().st_mode & 0o777) == 0o600
    assert ("aws", "eu-west-1") in search_places(set(), path, {"AWS_REGION": "eu-west-1"})
    path.write_text(json.dumps([["aws", "us-east-1"]] * 10_000))
    assert remembered(path) == set()

