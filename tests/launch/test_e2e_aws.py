"""End to end through the real CLI process and boto3, against a moto server on 127.0.0.1.

The CLI reaches moto through the standard AWS_ENDPOINT_URL, exactly as it would a private
endpoint; the test's fake keys replace any real ones, so no real account can be touched.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECRET = "gpuplanFAKEawsSECRETkey0000000000000000"  # never a real key: only moto sees it
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def moto_url() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    # moto keeps its state per process, not per server: start every test from an empty cloud
    urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"), timeout=10).close()
    yield url
    server.stop()


@pytest.fixture
def ec2(moto_url: str) -> Any:
    import boto3

    return boto3.client("ec2", endpoint_url=moto_url, region_name="us-east-1",
                        aws_access_key_id="gpuplan-FAKE-access-key-id",
                        aws_secret_access_key=SECRET)


@pytest.fixture
def env(moto_url: str, tmp_path: Path) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TENCENTCLOUD_"))}
    e.update({"AWS_ENDPOINT_URL": moto_url, "AWS_ACCESS_KEY_ID": "gpuplan-FAKE-access-key-id",
              "AWS_SECRET_ACCESS_KEY": SECRET,
              "AWS_DEFAULT_REGION": "us-east-1", "GPUPLAN_HOME": str(tmp_path / "home"),
              "HOME": str(tmp_path / "user"), "GPUPLAN_POLL_SECONDS": "0.05", "PYTHONPATH": str(ROOT),
              "NO_PROXY": "127.0.0.1,localhost", "COLUMNS": "200", "PYTHONWARNINGS": "ignore::DeprecationWarning"})
    return e


@pytest.fixture
def ami(ec2: Any) -> str:
    return str(ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"])


def cli(env: dict[str, str], *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuplan", *args], env={**env, **extra}, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def states(ec2: Any) -> dict[str, str]:
    return {i["InstanceId"]: i["State"]["Name"] for r in ec2.describe_instances()["Reservations"]
            for i in r["Instances"]}


def launch_args(ami: str, *more: str) -> tuple[str, ...]:
    return ("launch", "--provider", "aws", "--instance-type", "p3.2xlarge", "--region", "us-east-1", "--image", ami,
            "--ttl", "2h", "--yes", *more)


@pytest.mark.parametrize("billing", ["hourly", "spot"])
def test_launch_running_ls_down(env: dict[str, str], ec2: Any, ami: str, billing: str) -> None:
    r = cli(env, *launch_args(ami, "--billing", billing, "--json"))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["state"] == "running" and got["billing"] == billing
    (iid,) = got["instance_ids"]
    tags = {t["Key"]: t["Value"] for res in ec2.describe_instances(InstanceIds=[iid])["Reservations"]
            for i in res["Instances"] for t in i.get("Tags", [])}
    assert tags["gpuplan:id"] == got["id"] and tags["gpuplan:managed"] == "true" and "gpuplan:expires" in tags
    ls = json.loads(cli(env, "ls", "--json").stdout)["launches"]
    assert [x["id"] for x in ls] == [got["id"]]
    assert cli(env, "down", got["id"], "--yes").returncode == 0
    assert states(ec2)[iid] == "terminated"


def test_dry_run_answers_without_creating_anything(env: dict[str, str], ec2: Any, ami: str) -> None:
    r = cli(env, *launch_args(ami, "--dry-run", "--json"))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["dry_run"] is True and states(ec2) == {}


@pytest.mark.parametrize("step", ["intent", "after-run", "after-record", "waiting"])
def test_kill_9_at_any_step_leaves_nothing_unfindable(env: dict[str, str], ec2: Any, ami: str, step: str) -> None:
    r = cli(env, *launch_args(ami), GPUPLAN_CRASH_AT=step)
    assert r.returncode == -signal.SIGKILL, r.stderr
    (row,) = json.loads(cli(env, "ls", "--json").stdout)["launches"]
    assert sorted(row["instance_ids"]) == sorted(i for i, s in states(ec2).items() if s != "terminated")
    assert bool(row["instance_ids"]) == (step != "intent")
    if step == "intent":  # a machine may still appear: not ended until the settle time has passed
        assert cli(env, "down", row["id"], "--yes").returncode == 1
        _age(env, row["id"])
    assert cli(env, "down", row["id"], "--yes").returncode == 0
    assert all(s == "terminated" for s in states(ec2).values())


def _age(env: dict[str, str], launch_id: str) -> None:
    """Move a launch's start back, past the time a started machine takes to show its tag."""
    import sqlite3

    db = sqlite3.connect(Path(env["GPUPLAN_HOME"]) / "data" / "ledger.sqlite3")
    with db:
        db.execute("UPDATE launches SET created_at = '2000-01-01T00:00:00+00:00' WHERE id = ?", (launch_id,))
    db.close()


def test_reconcile_finds_gpuplan_machines_the_ledger_lost(env: dict[str, str], ec2: Any, ami: str) -> None:
    got = json.loads(cli(env, *launch_args(ami, "--json")).stdout)
    ledger = Path(env["GPUPLAN_HOME"]) / "data" / "ledger.sqlite3"
    for f in ledger.parent.glob("ledger.sqlite3*"):
        f.unlink()
    r = cli(env, "ls", "--reconcile", "--provider", "aws", "--region", "us-east-1", "--json")
    assert r.returncode == 0, r.stderr
    assert [u["instance_id"] for u in json.loads(r.stdout)["untracked"]] == got["instance_ids"]


def test_capacity_in_a_pinned_zone_is_a_clear_error(env: dict[str, str], ami: str) -> None:
    r = cli(env, "launch", "--provider", "aws", "--instance-type", "p3.2xlarge", "--zone", "us-east-1z", "--image",
            ami, "--yes")
    assert r.returncode in (2, 4, 6) and "Traceback" not in r.stderr and r.stderr.strip()


def test_missing_credentials_say_what_to_set(env: dict[str, str], ami: str, tmp_path: Path) -> None:
    bare = {k: v for k, v in env.items() if not k.startswith("AWS_ACCESS") and not k.startswith("AWS_SECRET")}
    bare["AWS_CONFIG_FILE"] = str(tmp_path / "none")
    bare["AWS_SHARED_CREDENTIALS_FILE"] = str(tmp_path / "none")
    bare["AWS_EC2_METADATA_DISABLED"] = "true"
    r = subprocess.run([sys.executable, "-m", "gpuplan", *launch_args(ami)], env=bare, capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    assert r.returncode == 3 and "AWS_ACCESS_KEY_ID" in r.stderr


def test_no_secret_in_any_output_or_file(env: dict[str, str], ami: str) -> None:
    runs = [cli(env, *launch_args(ami, "--json")), cli(env, "ls", "--json"), cli(env, "--debug", "ls"),
            cli(env, "down", "--all", "--yes")]
    for r in runs:
        assert r.returncode == 0, r.stderr
        assert SECRET not in r.stdout and SECRET not in r.stderr
    for path in Path(env["GPUPLAN_HOME"]).rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_from_plan_launches_the_spot_winner_in_the_zone_its_price_is_from(env: dict[str, str], moto_url: str) -> None:
    import boto3

    r = cli(env, "plan", "--gpu-hours", "200", "--provider", "aws", "--billing", "spot", "--json")
    assert r.returncode == 0, r.stderr
    win = json.loads(r.stdout)["cheapest"]
    assert win["zone"]  # a spot price is one zone's price, and the plan names it
    ec2 = boto3.client("ec2", endpoint_url=moto_url, region_name=win["region"],
                       aws_access_key_id="gpuplan-FAKE-access-key-id",
                       aws_secret_access_key=SECRET)
    image = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    r = cli(env, "launch", "--from-plan", "--image", image, "--yes", "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    name = {z["ZoneId"]: z["ZoneName"] for z in ec2.describe_availability_zones()["AvailabilityZones"]}[win["zone"]]
    assert (got["billing"], got["region"], got["instances"][0]["zone"]) == ("spot", win["region"], name)
    assert cli(env, "down", got["id"], "--yes").returncode == 0


def _one_error_line(r: subprocess.CompletedProcess[str], *names: str) -> str:
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == 6, r.stderr
    assert len(errors) == 1 and "<" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not r.stderr.splitlines()[-1].startswith("hint:"), r.stderr
    assert all(n in errors[0] for n in names), errors[0]
    return errors[0]


def test_a_cluster_launch_moto_cannot_serve_is_one_provider_error_line(env: dict[str, str], ami: str) -> None:
    # moto answers the placement-group lookup of a 2-node launch with an HTML error page.
    r = cli(env, "launch", "--provider", "aws", "--instance-type", "p3.2xlarge", "--region", "us-east-1",
            "--count", "2", "--image", ami, "--ttl", "2h", "--yes")
    _one_error_line(r, "DescribePlacementGroups", "us-east-1")


def test_a_price_refresh_moto_cannot_serve_is_one_provider_error_line(env: dict[str, str]) -> None:
    # moto has no Price List API: every GetProducts gets an HTML 500 page.
    r = cli(env, "catalog", "refresh", "--provider", "aws", "--region", "us-east-1")
    _one_error_line(r, "GetProducts", "us-east-1")


def test_a_job_launch_carries_key_disk_and_a_boot_script_that_ends_the_machine(env: dict[str, str], ec2: Any, ami: str,
                                                                              tmp_path: Path) -> None:
    """Against moto: KeyName, the disk size, shutdown behaviour terminate and the boot script; the boot script,
    run on a sandboxed machine, checks the driver (the image has it), runs the job and shuts down."""
    import base64

    from tests.fakes.machine import Machine, unpack_user_data
    from tests.providers.test_ssh_keys import ed25519_line

    key = tmp_path / "id.pub"
    key.write_text(ed25519_line())
    r = cli(env, *launch_args(ami, "--ssh-key", str(key), "--disk-gb", "300", "--run", "echo step 1 of 1",
                              "--down-when", "done", "--json"))
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["teardown"] == "when the run exits"
    (iid,) = got["instance_ids"]
    (res,) = ec2.describe_instances(InstanceIds=[iid])["Reservations"]
    assert res["Instances"][0]["KeyName"].startswith("gpuplan_")
    (tmp_path / "id").write_text("private\n")  # ssh logs in with the private half of the launch's key
    r = cli(env, "ssh", got["id"], "--print")
    assert r.returncode == 0 and f"-i {tmp_path / 'id'} ubuntu@" in r.stdout, r.stderr
    behaviour = ec2.describe_instance_attribute(InstanceId=iid, Attribute="instanceInitiatedShutdownBehavior")
    assert behaviour["InstanceInitiatedShutdownBehavior"]["Value"] == "terminate"
    volumes = ec2.describe_volumes(Filters=[{"Name": "attachment.instance-id", "Values": [iid]}])["Volumes"]
    assert volumes[0]["Size"] == 300
    user_data = ec2.describe_instance_attribute(InstanceId=iid, Attribute="userData")["UserData"]["Value"]
    files = unpack_user_data(user_data)
    config = dict(line.split("=", 1) for line in files["config.env"].splitlines() if "=" in line)
    # the image is the user's (--image): checked, not installed over; the 2 h TTL is a shutdown, which terminates
    assert config["GPUPLAN_DRIVER"] == "check" and config["GPUPLAN_END"] == "shutdown"
    assert config["GPUPLAN_TTL_MINUTES"] == "120" and files["run.sh"] == "echo step 1 of 1\n"

    machine = Machine(tmp_path / "machine")
    machine.run_user_data(base64.b64decode(user_data).decode())
    machine.wait_for(lambda: "shutdown -h now" in machine.calls)
    assert machine.calls[0] == "shutdown -h +120" and (machine.log / "run.log").read_text() == "step 1 of 1\n"
    assert "ending: the run exited 0" in machine.state()



@pytest.mark.parametrize("how", ["no default AMI", "image not found", "dead endpoint"])
def test_a_launch_that_never_reached_run_instances_is_failed_at_once(env: dict[str, str], ec2: Any, ami: str,
                                                                      how: str) -> None:
    """Nothing can have started: the launch is failed (not unknown for 10 minutes, holding its budget) with the
    evidence in its history, and `down --all` has nothing left to end."""
    import sqlite3

    args = [a for a in launch_args(ami) if a not in ("--image", ami)]  # moto publishes no Deep Learning AMI
    extra = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_MAX_ATTEMPTS": "1"} if how == "dead endpoint" else {}
    if how == "image not found":
        args += ["--image", "ami-0123456789abcdef0"]
    r = cli(env, *args, **extra)
    assert r.returncode != 0, r.stderr
    with sqlite3.connect(Path(env["GPUPLAN_HOME"]) / "data" / "ledger.sqlite3") as db:
        ((state,),) = db.execute("SELECT state FROM launches").fetchall()
        events = [w for (w,) in db.execute("SELECT what FROM events ORDER BY seq")]
    assert state == "failed", events
    assert "AWS created nothing: the launch failed before RunInstances was sent" in events[-1]
    assert states(ec2) == {}
    r = cli(env, "down", "--all", "--yes")
    assert r.returncode == 0 and "nothing to end" in r.stderr, r.stderr
