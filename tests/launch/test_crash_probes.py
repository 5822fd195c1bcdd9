"""The crashes and misleading messages of issue 42, each as the user met it.

A 300-character ``--run`` ("internal error: OSError: File name too long"); ledger rows with a bad state,
date or a 1e999999 price ("internal error" in `ls` and `down`, or one bad row hiding every other launch);
``catalog = ["/dev/zero"]`` in the config (killed for memory); a launch whose machine failed while it
waited printed "failed" with an ssh line and exited 0.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from launch.boot import read_script
from launch.ledger import LaunchRecord, LaunchState, Ledger
from pricing.billing import BillingMode
from pricing.money import Currency, Money
from providers.capabilities import InstanceInfo, InstanceState
from providers.testing.fake_cvm import (
    TEST_SECRET_ID,
    TEST_SECRET_KEY,
    FakeCvm,
    fake_cvm_server,
)

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcfromtimestamp:DeprecationWarning")


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuplan", *args], check=False, env=env, capture_output=True,
                          text=True, timeout=90, cwd=ROOT)


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TENCENTCLOUD_", "AWS_", "GPUPLAN_"))}
    env.update({"GPUPLAN_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "user"), "PYTHONPATH": str(ROOT),
                "COLUMNS": "200", "PYTHONWARNINGS": "ignore::DeprecationWarning", "GPUPLAN_POLL_SECONDS": "0.05",
                "NO_PROXY": "127.0.0.1,localhost"})
    return env


def test_a_long_run_command_is_a_command_not_a_file_name_too_long() -> None:
    command = "python train.py " + " ".join(f"--flag{i}=value" for i in range(25))
    assert len(command) > 300
    assert read_script(command, "--run") == command + "\n"


def _ledger_with(path: Path, column: str, value: object) -> None:
    good: dict[str, object] = {
        "provider": "aws", "region": "us-east-1", "zone": None, "instance_type": "p3.2xlarge",
        "billing": BillingMode.HOURLY, "months": 1, "count": 1, "image": None, "state": LaunchState.INTENT,
        "created_at": datetime.now(UTC), "expires_at": None, "max_cost": None,
        "unit_price": Money(amount=Decimal(3), currency=Currency.USD)}
    with Ledger(path) as ledger:
        ledger.record_intent(LaunchRecord(id="gp-bad", client_token="t1", **good))  # type: ignore[arg-type]
        ledger.record_intent(LaunchRecord(id="gp-good", client_token="t2", **good))  # type: ignore[arg-type]
        ledger.record_instances("gp-good", [InstanceInfo(instance_id="i-0123456789", state=InstanceState.RUNNING)])
    with sqlite3.connect(path) as db:
        table = "instances" if column.startswith("instances.") else "launches"
        where = "launch_id = 'gp-good'" if table == "instances" else "id = 'gp-bad'"
        db.execute(f"UPDATE {table} SET {column.removeprefix('instances.')} = ? WHERE {where}", (value,))


@pytest.mark.parametrize(("column", "value"), [
    ("state", "bogus"), ("created_at", "yesterday"), ("created_at", "2026-12-01T00:00:00"),
    ("unit_price", "1e999999"), ("unit_price", "NaN"), ("expires_at", "2026-13-45"),
    ("instances.state", "weird"), ("instances.started_at", "nope"),
])
def test_a_damaged_ledger_row_is_named_and_passed_over_never_an_internal_error(
        home: dict[str, str], column: str, value: object) -> None:
    path = Path(home["GPUPLAN_HOME"]) / "data" / "ledger.sqlite3"
    _ledger_with(path, column, value)
    env = {**home, "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y", "AWS_ENDPOINT_URL": "http://127.0.0.1:1",
           "AWS_MAX_ATTEMPTS": "1"}
    for args in (("ls", "--all", "--json"), ("ls",), ("down", "--all", "--yes", "--wait-timeout", "5s")):
        r = run(env, *args)
        assert "internal error" not in r.stderr, r.stderr
        if not column.startswith("instances."):
            said = " ".join(r.stderr.split())  # the warning wraps at the terminal's width
            assert "gp-bad" in said and "passed over" in said
        # the good launch is still listed (and asked to end: the endpoint is down, so it is "not ended")
        assert "gp-good" in r.stdout + r.stderr
    listed = json.loads(run(env, "ls", "--all", "--json").stdout)
    assert "gp-good" in [x["id"] for x in listed["launches"]]


def test_a_device_as_catalog_in_the_config_is_refused_not_read_forever(home: dict[str, str]) -> None:
    config = Path(home["GPUPLAN_HOME"]) / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('catalog = ["/dev/zero"]\n')
    r = run(home, "plan", "--gpu-hours", "10")
    assert r.returncode == 2 and "/dev/zero is not a regular file" in r.stderr, r.stderr


@pytest.fixture
def fake() -> Iterator[FakeCvm]:
    with fake_cvm_server() as f:
        yield f


def test_a_launch_whose_machine_failed_while_it_waited_fails_without_an_ssh_line(
        fake: FakeCvm, home: dict[str, str]) -> None:
    env = {**home, "TENCENTCLOUD_SECRET_ID": TEST_SECRET_ID, "TENCENTCLOUD_SECRET_KEY": TEST_SECRET_KEY,
           "GPUPLAN_TENCENT_ENDPOINT": fake.endpoint, "GPUPLAN_TENCENT_INSTANCE_ROLE": "0"}
    fake.fail_launches(1)
    r = run(env, "launch", "--provider", "tencent", "--instance-type", "GN10Xp.2XLARGE40", "--zone", "ap-guangzhou-3",
            "--image", "img-ubu22new", "--ttl", "1h", "--yes", "--no-ssh-key", "--wait-timeout", "30s")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "no machine is running" in r.stderr and "ssh" not in r.stdout
