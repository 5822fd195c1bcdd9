"""On AWS too, a listing through another endpoint or account is no evidence that a launch ended (moto, real boto3).

Each launch records ``endpoint/account-id`` (STS GetCallerIdentity); `ls` and `down` through another
``AWS_ENDPOINT_URL`` change nothing in the ledger and say so; through the launch's own, `down` ends it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.launch.test_e2e_aws import ami, cli, ec2, env, launch_args, moto_url, states  # noqa: F401 - fixtures

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def other_url() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def test_a_listing_through_another_endpoint_changes_nothing(env: dict[str, str], ec2: Any, ami: str,  # noqa: F811
                                                            other_url: str) -> None:
    r = cli(env, *launch_args(ami, "--json"))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    (iid,) = got["instance_ids"]
    ledger = next(Path(env["GPUPLAN_HOME"]).rglob("ledger.sqlite3"))
    with sqlite3.connect(ledger) as db:
        ((account,),) = db.execute("SELECT account FROM launches").fetchall()
    assert account.endswith("/123456789012") and env["AWS_ENDPOINT_URL"].split("//")[1] in account  # moto's account
    before = sqlite3.connect(ledger).execute("SELECT state FROM launches").fetchall()
    for args in (("ls",), ("down", "--all", "--yes")):
        r = cli(env, *args, AWS_ENDPOINT_URL=other_url)
        assert "nothing was changed" in " ".join((r.stdout + r.stderr).split()), r.stdout + r.stderr
    assert sqlite3.connect(ledger).execute("SELECT state FROM launches").fetchall() == before
    assert states(ec2)[iid] == "running"
    assert cli(env, "down", "--all", "--yes").returncode == 0
    assert states(ec2)[iid] == "terminated"
