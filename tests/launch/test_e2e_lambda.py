"""End to end through the real CLI process against the strict fake Lambda Cloud API.

What a Lambda user does (launch with their key, list, log in, end everything) and what must never
happen: a second registration of the same key, a machine left running, the API key in any output or
file under the home folders.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from providers.testing.fake_lambda import TEST_API_KEY, FakeLambda, fake_lambda_server

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ("launch", "--provider", "lambda", "--instance-type", "gpu_1x_a10", "--region", "us-east-1", "--ttl", "2h",
          "--yes")


@pytest.fixture
def fake() -> Iterator[FakeLambda]:
    with fake_lambda_server() as f:
        yield f


@pytest.fixture
def env(fake: FakeLambda, tmp_path: Path) -> dict[str, str]:
    skip = ("LAMBDA_", "GPUPLAN_", "AWS_", "TENCENTCLOUD_")  # no other cloud's region is searched
    e = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    e.update({
        "LAMBDA_API_KEY": TEST_API_KEY, "GPUPLAN_LAMBDA_ENDPOINT": fake.endpoint,
        "GPUPLAN_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "user"), "NO_PROXY": "127.0.0.1,localhost",
        "GPUPLAN_POLL_SECONDS": "0.05", "PYTHONPATH": str(ROOT), "COLUMNS": "200",
        "PYTHONWARNINGS": "ignore::DeprecationWarning",
    })
    return e


def cli(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuplan", *args], check=False, env=env, capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


@pytest.fixture
def key(tmp_path: Path) -> Path:
    from tests.providers.test_ssh_keys import ed25519_line

    path = tmp_path / "id_ed25519.pub"
    path.write_text(ed25519_line())
    return path


def test_key_registered_once_listed_reached_and_ended_without_the_api_key_anywhere(
        fake: FakeLambda, env: dict[str, str], key: Path, tmp_path: Path) -> None:
    outputs = []
    ids = []
    for _ in range(2):
        r = cli(env, *LAUNCH, "--ssh-key", str(key), "--json")
        assert r.returncode == 0, r.stderr
        outputs += [r.stdout, r.stderr]
        ids.append(json.loads(r.stdout)["id"])
    # one key registered, under the fingerprint name, and named in both launches
    assert [b for b in fake.bodies if "public_key" in b] == [{"name": next(iter(fake.ssh_keys)),
                                                              "public_key": " ".join(key.read_text().split()[:2])}]
    name = next(iter(fake.ssh_keys))
    assert name.startswith("gpuplan_")
    launches = [b for b in fake.bodies if "instance_type_name" in b]
    assert [b["ssh_key_names"] for b in launches] == [[name], [name]]
    # each launch named with its launch id (Lambda has no tags), in the region asked for
    assert sorted(b["name"] for b in launches) == sorted(f"gpuplan-{i}" for i in ids)
    assert {b["region_name"] for b in launches} == {"us-east-1"}

    r = cli(env, "ls", "--json")
    assert r.returncode == 0, r.stderr
    outputs += [r.stdout, r.stderr]
    listed = {x["id"]: x for x in json.loads(r.stdout)["launches"]}
    assert set(listed) == set(ids)
    assert all(x["state"] == "running" for x in listed.values())

    r = cli(env, "ssh", ids[0], "--print")
    assert r.returncode == 0, r.stderr
    outputs += [r.stdout, r.stderr]
    machine = next(i for i in fake.instances.values() if i.name == f"gpuplan-{ids[0]}")
    assert r.stdout.strip().endswith(f"ubuntu@{machine.ip}")

    r = cli(env, "down", "--all", "--yes")
    assert r.returncode == 0, r.stderr
    outputs += [r.stdout, r.stderr]
    assert fake.live() == []
    r = cli(env, "ls", "--json")
    assert json.loads(r.stdout)["launches"] == []

    assert not any(TEST_API_KEY in text for text in outputs)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert TEST_API_KEY.encode() not in path.read_bytes(), path


def test_a_sold_out_region_starts_nothing_and_names_the_regions_with_capacity(
        fake: FakeLambda, env: dict[str, str], key: Path) -> None:
    r = cli(env, "launch", "--provider", "lambda", "--instance-type", "gpu_1x_h100_pcie", "--region", "us-east-1",
            "--ttl", "1h", "--yes", "--ssh-key", str(key))
    assert r.returncode == 4, r.stderr
    assert "sold out in us-east-1" in r.stderr and "us-west-3" in r.stderr
    assert not [b for b in fake.bodies if "instance_type_name" in b]


def test_a_launch_lost_in_a_crash_is_found_by_its_name_and_ended(
        fake: FakeLambda, env: dict[str, str], key: Path) -> None:
    r = cli({**env, "GPUPLAN_CRASH_AT": "after-run"}, *LAUNCH, "--ssh-key", str(key))
    assert r.returncode != 0
    assert len(fake.live()) == 1  # started, but its id never reached the ledger
    r = cli(env, "ls", "--json")
    assert r.returncode == 0, r.stderr
    [launch] = json.loads(r.stdout)["launches"]
    assert [m["id"] for m in launch["instances"]] == [fake.live()[0].id]
    r = cli(env, "down", launch["id"], "--yes")
    assert r.returncode == 0, r.stderr
    assert fake.live() == []


def test_no_api_key_is_one_line_naming_where_to_put_it(env: dict[str, str], key: Path) -> None:
    env = {k: v for k, v in env.items() if k != "LAMBDA_API_KEY"}
    r = cli(env, *LAUNCH, "--ssh-key", str(key))
    assert r.returncode == 3
    assert "LAMBDA_API_KEY" in r.stderr and "lambda_keys" in r.stderr and "Traceback" not in r.stderr


def test_the_key_file_skypilot_writes_is_read(fake: FakeLambda, env: dict[str, str], key: Path,
                                              tmp_path: Path) -> None:
    env = {k: v for k, v in env.items() if k != "LAMBDA_API_KEY"}
    folder = tmp_path / "user" / ".lambda_cloud"
    folder.mkdir(parents=True)
    (folder / "lambda_keys").write_text(f"api_key = {TEST_API_KEY}\n")
    r = cli(env, *LAUNCH, "--ssh-key", str(key), "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "capacity in us-east-1" in r.stderr + r.stdout
    assert fake.instances == {} and fake.ssh_keys == {}  # a dry run registers and starts nothing


def test_a_machine_cannot_be_asked_to_end_itself(env: dict[str, str], key: Path) -> None:
    r = cli(env, *LAUNCH, "--ssh-key", str(key), "--run", "python train.py", "--down-when", "done")
    assert r.returncode == 2
    assert "cannot end itself" in r.stderr and "down --expired" in r.stderr


def test_refresh_reads_live_prices_and_capacity_and_plans_use_them(fake: FakeLambda, env: dict[str, str]) -> None:
    r = cli(env, "catalog", "refresh", "--provider", "lambda", "--region", "global")
    assert r.returncode == 0, r.stderr
    assert "GPUPLAN_LAMBDA_ENDPOINT" in r.stderr  # prices from a fake are never taken for Lambda's own
    r = cli(env, "plan", "--gpu-hours", "100", "--provider", "lambda", "--billing", "hourly", "--json", "--explain")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    a10 = next(o for o in plan["options"] if o["offer"] == "gpu_1x_a10")
    # the fake's TEST VALUE, 100 cents an hour, not the shipped 1.29 USD
    assert a10["live"] is True and a10["line_items"][0]["unit_price"]["amount"] in ("1", "1.00")
    # no region has capacity for the 8x A100 80GB now: left out of the plan, and said
    assert not any(o["offer"] == "gpu_8x_a100_80gb_sxm4" for o in plan["options"])
    assert any(e["offer"] == "gpu_8x_a100_80gb_sxm4" and e["rule"] == "sold_out" for e in plan["excluded"])
    r = cli(env, "catalog", "refresh", "--provider", "lambda", "--region", "us-east-1")
    assert r.returncode == 2 and "--region global" in r.stderr


def test_an_expired_launch_is_ended_by_down_expired(fake: FakeLambda, env: dict[str, str], key: Path) -> None:
    import sqlite3

    r = cli(env, *LAUNCH, "--ssh-key", str(key), "--json")
    assert r.returncode == 0, r.stderr
    launch_id = json.loads(r.stdout)["id"]
    with sqlite3.connect(Path(env["GPUPLAN_HOME"]) / "data" / "ledger.sqlite3") as db:  # its TTL has passed
        db.execute("UPDATE launches SET expires_at = '2020-01-01T00:00:00+00:00' WHERE id = ?", (launch_id,))
    r = cli(env, "down", "--expired")  # from cron: no question asked
    assert r.returncode == 0, r.stderr
    assert launch_id in r.stdout and fake.live() == []


def test_a_machine_named_by_gpuplan_but_in_no_ledger_is_found_and_ended(
        fake: FakeLambda, env: dict[str, str]) -> None:
    from providers.testing.fake_lambda import FakeInstance

    fake.instances["lost"] = FakeInstance(id="lost", name="gpuplan-gp-0123456789", type="gpu_1x_a10",
                                          region="us-east-1", ssh_key="k", status="active", ip="203.0.113.9")
    fake.instances["theirs"] = FakeInstance(id="theirs", name="my-notebook", type="gpu_1x_a10", region="us-east-1",
                                            ssh_key="k", status="active")
    r = cli(env, "ls", "--reconcile", "--provider", "lambda", "--region", "us-east-1")
    assert r.returncode == 0, r.stderr
    assert "untracked: lambda us-east-1 lost" in r.stderr and "theirs" not in r.stderr
    r = cli(env, "down", "--untracked", "--provider", "lambda", "--region", "us-east-1", "--yes")
    assert r.returncode == 0, r.stderr
    assert [i.id for i in fake.live()] == ["theirs"]  # a machine gpuplan did not start is never touched


def test_without_a_region_the_launch_goes_where_there_is_capacity(fake: FakeLambda, env: dict[str, str],
                                                                  key: Path) -> None:
    r = cli(env, "launch", "--provider", "lambda", "--instance-type", "gpu_1x_h100_pcie", "--ttl", "1h", "--yes",
            "--ssh-key", str(key), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["zone"] == "us-west-3"  # the one region with capacity for it in the fake
    assert [i.region for i in fake.live()] == ["us-west-3"]
