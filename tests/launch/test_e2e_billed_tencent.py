"""`spend --billed` on Tencent Cloud: the billing API of the fake CVM endpoint, through the real SDK and CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from providers.testing.fake_cvm import TEST_SECRET_KEY, FakeCvm
from tests.launch import test_e2e_tencent as tencent
from tests.launch.test_e2e_tencent import LAUNCH, cli

fake, env = tencent.fake, tencent.env  # the fake CVM endpoint and the CLI's environment, as the launch tests have them

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcfromtimestamp:DeprecationWarning")


def test_the_months_bill_of_each_machine_stands_beside_its_estimate(fake: FakeCvm, env: dict[str, str]) -> None:
    r = cli(env, *LAUNCH, "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    (instance,) = got["instance_ids"]
    month = f"{datetime.now(UTC):%Y-%m}"
    fake.bill(instance, month, "123.45")
    fake.bill("ins-notours1", month, "999.00")  # another machine of the account: not this ledger's
    r = cli(env, "spend", "--billed", "--json")
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(r.stdout)["launches"]
    assert (row["id"], row["billed"], row["currency"]) == (got["id"], "123.45", "CNY")
    assert row["flagged"] is True  # minutes of running cannot have cost 123.45 CNY
    assert [c.params["Month"] for c in fake.calls_of("DescribeBillResourceSummary")] == [month]
    assert cli(env, "down", "--all", "--yes").returncode == 0
    home = Path(env["GPUPLAN_HOME"])
    assert not any(TEST_SECRET_KEY.encode() in f.read_bytes() for f in home.rglob("*") if f.is_file())
    assert TEST_SECRET_KEY not in r.stdout + r.stderr


def test_without_billing_rights_the_estimate_stands(fake: FakeCvm, env: dict[str, str]) -> None:
    assert cli(env, *LAUNCH).returncode == 0
    fake.fail_next("AuthFailure.UnauthorizedOperation", "you are not authorized", action="DescribeBillResourceSummary")
    r = cli(env, "spend", "--billed", "--json")
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(r.stdout)["launches"]
    assert row["billed"] is None and row["estimated"] is not None
    assert "estimates are shown instead" in r.stderr, r.stderr
    assert cli(env, "down", "--all", "--yes").returncode == 0


def test_a_bad_page_is_no_internal_error(fake: FakeCvm, env: dict[str, str]) -> None:
    assert cli(env, *LAUNCH).returncode == 0
    fake.non_json(action="DescribeBillResourceSummary", n=10)
    r = cli(env, "spend", "--billed", "--json")
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr and "could not be read" in r.stderr
    assert cli(env, "down", "--all", "--yes").returncode == 0
