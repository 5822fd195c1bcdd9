"""End to end through the real CLI process and the real Tencent SDK, against the fake CVM endpoint.

Covers what a user of a real account would do: refresh live prices and plan on them, get an
exact quote, launch, list, end; and what must never happen: a machine lost after kill -9 at
any step of a launch, or a secret in any output, log or ledger row.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from providers.testing.fake_cvm import TEST_SECRET_ID, TEST_SECRET_KEY, FakeCvm, fake_cvm_server

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcfromtimestamp:DeprecationWarning")

LAUNCH = ("launch", "--provider", "tencent", "--instance-type", "GN10Xp.2XLARGE40", "--zone", "ap-guangzhou-3",
          "--image", "img-ubu22new", "--ttl", "6h", "--yes")


@pytest.fixture
def fake() -> Iterator[FakeCvm]:
    with fake_cvm_server() as f:
        yield f


@pytest.fixture
def env(fake: FakeCvm, tmp_path: Path) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("TENCENTCLOUD_", "AWS_"))}
    e.update({
        "TENCENTCLOUD_SECRET_ID": TEST_SECRET_ID, "TENCENTCLOUD_SECRET_KEY": TEST_SECRET_KEY,
        "GPUPLAN_TENCENT_ENDPOINT": fake.endpoint, "GPUPLAN_TENCENT_INSTANCE_ROLE": "0",
        "GPUPLAN_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "user"), "NO_PROXY": "127.0.0.1,localhost",
        "GPUPLAN_POLL_SECONDS": "0.05", "PYTHONPATH": str(ROOT), "COLUMNS": "200",
        "PYTHONWARNINGS": "ignore::DeprecationWarning",
    })
    return e


def cli(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuplan", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def live(fake: FakeCvm) -> list[str]:
    return [i.instance_id for i in fake.instances.values() if i.state not in ("TERMINATING", "LAUNCH_FAILED")]


def test_refresh_fills_the_cache_and_plan_prefers_it(fake: FakeCvm, env: dict[str, str]) -> None:
    r = cli(env, "catalog", "refresh", "--provider", "tencent", "--region", "ap-guangzhou")
    assert r.returncode == 0, r.stderr
    assert "sold out" in r.stderr
    r = cli(env, "plan", "--gpu-hours", "200", "--provider", "tencent", "--json", "--explain")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    one = [o for o in plan["options"] if o["offer"] == "GN10Xp.2XLARGE40"]
    spot = next(o for o in one if o["billing"] == "spot")
    # the live SPOTPAID price (test value 2.00 CNY in ap-guangzhou-3, 2.20 in -4): the typical price of two
    # zones is the dearer one, so "typical" never quietly means "cheapest" (--spot-price cheapest
    # asks for that)
    assert spot["region"] == "ap-guangzhou" and spot["estimate"] is False and spot["live"] is True
    price = spot["line_items"][0]["unit_price"]
    assert (Decimal(price["amount"]), price["currency"]) == (Decimal("2.20"), "CNY")
    assert spot["zone"] == "ap-guangzhou-4"
    # the fake endpoint's prices are not called live: the plan says where they were read
    assert "live prices" not in plan["assumptions"]["prices"]
    assert f"prices for tencent read through GPUPLAN_TENCENT_ENDPOINT={fake.endpoint}, not tencent's own API" in \
        plan["assumptions"]["prices"]
    # GN7.2XLARGE32 is sold out in ap-guangzhou-4: said in the exclusions, not silently dropped
    assert any(e["offer"] == "GN7.2XLARGE32" and e["rule"] == "sold_out" and "ap-guangzhou-4" in e["reason"]
               for e in plan["excluded"])


def test_prices_read_from_a_test_endpoint_are_shown_as_such_and_cleared(fake: FakeCvm, env: dict[str, str]) -> None:
    r = cli(env, "catalog", "refresh", "--provider", "tencent", "--region", "ap-guangzhou")
    assert r.returncode == 0 and f"read through GPUPLAN_TENCENT_ENDPOINT={fake.endpoint}" in r.stderr, r.stderr
    shown = json.loads(cli(env, "catalog", "show", "--json").stdout)
    (cache,) = [layer for layer in shown["layers"] if layer["layer"] == "cache"]
    assert cache["endpoint"] == f"GPUPLAN_TENCENT_ENDPOINT={fake.endpoint}" and "catalog clear" in cache["note"]
    assert "not the cloud's API" in cli({**env, "COLUMNS": "400"}, "catalog", "show").stdout
    r = cli(env, "catalog", "clear", "--provider", "aws")  # another cloud's: nothing of tencent's goes
    assert r.returncode == 0 and "no refreshed prices for aws" in r.stderr
    r = cli(env, "catalog", "clear", "--provider", "tencent", "--json")
    assert r.returncode == 0 and any(p.endswith("tencent/ap-guangzhou.csv") for p in json.loads(r.stdout)["removed"])
    shown = json.loads(cli(env, "catalog", "show", "--json").stdout)
    assert [layer["layer"] for layer in shown["layers"]] == ["shipped"] and shown["live_providers"] == []
    plan = json.loads(cli(env, "plan", "--gpu-hours", "200", "--provider", "tencent", "--json").stdout)
    assert "live prices" not in plan["assumptions"]["prices"]


def test_quote_is_the_providers_exact_price(fake: FakeCvm, env: dict[str, str]) -> None:
    r = cli(env, "quote", "--provider", "tencent", "--instance-type", "GN10Xp.20XLARGE320", "--zone",
            "ap-guangzhou-3", "--billing", "hourly", "--json")
    assert r.returncode == 0, r.stderr
    q = json.loads(r.stdout)
    # the fake's test prices, as plain decimal strings with two places (the JSON number contract)
    assert (q["unit_price"], q["currency"]) == ("80.00", "CNY")
    assert [s["unit_price"] for s in q["steps"]][1:] == ["40.00", "27.20"]
    # the rest of the bill: the CBS disk pay-as-you-go (traffic billing: no egress asked, no traffic line)
    assert [e["item"] for e in q["extras"]] == ["disk:cloud_premium"] and q["not_priced"] == []
    r = cli(env, "quote", "--provider", "tencent", "--instance-type", "GN10Xp.20XLARGE320", "--zone",
            "ap-guangzhou-3", "--billing", "monthly", "--months", "2", "--bandwidth-mbps", "3", "--json")
    assert r.returncode == 0, r.stderr
    extras = json.loads(r.stdout)["extras"]
    bw = [e for e in extras if e["item"] == "bandwidth"]
    # 3 Mbps by tier: 2 at 20 CNY and 1 at 25 CNY a month, for the 2 prepaid months
    assert [(e["rate"]["amount"], e["amount"]["amount"]) for e in bw] == [("20", f"{20 * 2 * 2:.2f}"),
                                                                          ("25", f"{25 * 1 * 2:.2f}")]
    assert {e["item"] for e in extras} == {"bandwidth", "disk:cloud_premium"}
    r = cli(env, "quote", "--provider", "aws", "--instance-type", "p3.2xlarge", "--zone", "us-east-1a")
    assert r.returncode == 2 and "exact price inquiry" in r.stderr
    # the text says money as every other command does: grouped, to the cent; a percentage without padding
    r = cli(env, "quote", "--provider", "tencent", "--instance-type", "GN10Xp.20XLARGE320", "--zone",
            "ap-guangzhou-3", "--billing", "monthly", "--months", "2")
    assert r.returncode == 0, r.stderr
    import re

    paid = re.search(r"list price ([\d,]+\.\d\d) CNY; you pay (\d+(?:\.\d*[1-9])?)% of it", r.stdout)
    assert paid is not None and "," in paid.group(1), r.stdout
    assert ".0 CNY" not in r.stdout and "000000" not in r.stdout


def test_launch_ls_down_through_the_sdk(fake: FakeCvm, env: dict[str, str]) -> None:
    r = cli(env, *LAUNCH, "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["state"] == "running" and got["zone"] == "ap-guangzhou-3" and len(got["instance_ids"]) == 1
    (inst,) = fake.instances.values()
    assert inst.tags["gpuplan:id"] == got["id"] and inst.state == "RUNNING"
    assert any(c.action == "RunInstances" and c.params.get("ClientToken") for c in fake.calls)
    r = cli(env, "ls", "--json")
    (row,) = json.loads(r.stdout)["launches"]
    assert row["state"] == "running" and row["projected_cost"]["currency"] == "CNY"
    r = cli(env, "down", got["id"], "--yes")
    assert r.returncode == 0, r.stderr
    assert live(fake) == []
    r = cli(env, "ls")  # not "nothing launched": the ended launch is one flag away
    assert "nothing running; 1 ended launch(es): `gpuplan ls --all`" in r.stdout


def test_an_endpoint_down_costs_ls_and_down_one_calls_retries_not_one_per_launch(fake: FakeCvm,
                                                                                  env: dict[str, str]) -> None:
    for _ in range(3):
        assert cli(env, *LAUNCH).returncode == 0
    # the launches' own endpoint stops answering (another endpoint would be another account: launch.evidence)
    fake.stop()
    for args in (("ls",), ("down", "--all", "--yes")):
        r = cli(env, *args)
        said = r.stdout + r.stderr
        # one call spends its bounded retries; the other two launches are not asked again
        assert said.count("failed 5 times") == 1 and said.count("not tried") == 2, said
        assert said.count("connection refused") == 3
    assert r.returncode != 0 and "3 of 3 launch(es) not seen to end" in r.stderr
    assert len(live(fake)) == 3  # nothing was ended behind the user's back, and `ls` still lists them


def test_launch_is_priced_at_the_same_live_quote_as_quote(fake: FakeCvm, env: dict[str, str]) -> None:
    # launch used to confirm at the catalog's list price while `quote` showed the provider's own
    q = cli(env, "quote", "--provider", "tencent", "--instance-type", "GN10Xp.2XLARGE40", "--zone", "ap-guangzhou-3",
            "--json")
    assert q.returncode == 0, q.stderr
    live = Decimal(json.loads(q.stdout)["unit_price_discount"] or json.loads(q.stdout)["unit_price"])
    r = cli(env, *LAUNCH, "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    assert "priced at the provider's live quote" in r.stderr and "InquiryPriceRunInstances, ap-guangzhou-3" in r.stderr
    assert Decimal(json.loads(r.stdout)["unit_price"]["amount"]) == live
    fake.fail_next("InternalError", n=99, action="InquiryPriceRunInstances")
    r = cli(env, *LAUNCH, "--dry-run")
    assert r.returncode == 0 and "no live quote" in r.stderr and "catalog's list price" in r.stderr


def test_the_users_ssh_key_is_imported_once_and_every_launch_logs_in_with_it(
    fake: FakeCvm, env: dict[str, str],
) -> None:
    from tests.providers.test_ssh_keys import ed25519_line

    ssh = Path(env["HOME"]) / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_ed25519.pub").write_text(ed25519_line())
    for _ in range(2):  # the default key, found in ~/.ssh and said
        r = cli(env, *LAUNCH)
        assert r.returncode == 0 and f"login key: {ssh / 'id_ed25519.pub'}" in r.stderr, r.stderr
    assert len(fake.calls_of("ImportKeyPair")) == 1 and "already in ap-guangzhou: reused" in r.stdout + r.stderr
    assert "log in with the launch's key: gpuplan ssh gp-" in r.stdout and f"(ssh -i {ssh / 'id_ed25519'})" in r.stdout
    (ssh / "id_ed25519").write_text("private\n")  # ssh logs in with the private half of the launch's key
    launched = r.stdout.split("launch ", 1)[1].split(":", 1)[0]
    r = cli(env, "ssh", launched, "--print")
    assert r.returncode == 0 and f"-i {ssh / 'id_ed25519'} ubuntu@" in r.stdout, r.stdout + r.stderr
    (key_id,) = fake.key_pairs
    runs = fake.calls_of("RunInstances")
    assert len(runs) == 2 and all(c.params["LoginSettings"] == {"KeyIds": [key_id]} for c in runs)
    assert fake.key_pairs[key_id]["PublicKey"] == ed25519_line().split(" me@")[0]  # no comment, no private part
    r = cli(env, *LAUNCH, "--no-ssh-key")
    assert r.returncode == 0 and "no SSH key given" in r.stdout + r.stderr
    assert "LoginSettings" not in fake.calls_of("RunInstances")[-1].params
    (ssh / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n")
    r = cli(env, *LAUNCH, "--ssh-key", str(ssh / "id_ed25519"))  # a private key is refused before any call
    assert r.returncode == 2 and "is a private key" in r.stderr and len(fake.calls_of("RunInstances")) == 3


def test_dry_run_creates_nothing(fake: FakeCvm, env: dict[str, str]) -> None:
    r = cli(env, *LAUNCH, "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["dry_run"] is True and fake.instances == {}


@pytest.mark.parametrize("step", ["intent", "after-run", "after-record", "waiting"] * 2)
def test_kill_9_at_any_step_leaves_nothing_unfindable(fake: FakeCvm, env: dict[str, str], step: str) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "gpuplan", *LAUNCH], env={**env, "GPUPLAN_CRASH_AT": step}, capture_output=True,
        text=True, timeout=60, cwd=ROOT)
    assert r.returncode == -signal.SIGKILL, r.stderr
    ls = cli(env, "ls", "--json")
    assert ls.returncode == 0, ls.stderr
    (row,) = json.loads(ls.stdout)["launches"]
    started = step != "intent"
    assert sorted(row["instance_ids"]) == sorted(fake.instances)  # the ledger knows every machine the fake has
    assert bool(row["instance_ids"]) == started
    if not started:
        # killed before or during RunInstances: a machine may still appear, so `down` does not call it ended yet
        down = cli(env, "down", row["id"], "--yes", "--json")
        assert down.returncode == 1 and json.loads(down.stdout)["not_ended"] == [row["id"]]
        _age(env, row["id"])  # ... until the settle time has passed with no machine under its tag
    down = cli(env, "down", row["id"], "--yes", "--json")
    assert down.returncode == 0, down.stderr
    assert json.loads(down.stdout)["ended"][0]["state"] == "terminated"
    assert live(fake) == []


def _age(env: dict[str, str], launch_id: str) -> None:
    """Move a launch's start 11 minutes back, past the time a started machine takes to show its tag."""
    import sqlite3

    db = sqlite3.connect(Path(env["GPUPLAN_HOME"]) / "data" / "ledger.sqlite3")
    with db:
        db.execute("UPDATE launches SET created_at = '2000-01-01T00:00:00+00:00' WHERE id = ?", (launch_id,))
    db.close()


def test_ctrl_c_while_waiting_keeps_the_record_and_says_how_to_end_it(env: dict[str, str]) -> None:
    with fake_cvm_server(pending_describes=10**6) as slow:
        e = {**env, "GPUPLAN_TENCENT_ENDPOINT": slow.endpoint}
        # Ctrl-C as at a terminal: a test session started in the background (`cmd &` in a script) ignores SIGINT,
        # and Python keeps an ignored SIGINT ignored, so the CLI gets the default disposition back here
        p = subprocess.Popen([sys.executable, "-m", "gpuplan", *LAUNCH], env=e, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=ROOT,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 30
        while not slow.instances and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        assert p.returncode == 130
        (iid,) = slow.instances
        assert iid in err and "gpuplan down gp-" in err
        ls = cli(e, "ls", "--json")
        (row,) = json.loads(ls.stdout)["launches"]
        assert row["instance_ids"] == [iid]
        assert cli(e, "down", row["id"], "--yes", "--wait-timeout", "1m").returncode == 0
        assert iid not in slow.instances


def test_a_wrong_key_fails_clearly_and_no_secret_is_printed_logged_or_stored(fake: FakeCvm, env: dict[str, str],
                                                                           tmp_path: Path) -> None:
    bad = {**env, "TENCENTCLOUD_SECRET_KEY": "gpuplanWRONGkey-do-not-print-0001"}
    r = cli(bad, *LAUNCH)
    assert r.returncode == 3, r.stderr
    assert "TENCENTCLOUD_SECRET" in r.stderr or "rejected" in r.stderr.lower()
    runs = [r, cli(env, *LAUNCH, "--json"), cli(env, "ls", "--json"), cli(env, "catalog", "refresh", "--provider",
            "tencent", "--region", "ap-guangzhou"), cli(env, "down", "--all", "--yes", "--debug")]
    secrets = (TEST_SECRET_KEY, TEST_SECRET_ID, "gpuplanWRONGkey-do-not-print-0001")
    for run in runs:
        for s in secrets:
            assert s not in run.stdout and s not in run.stderr
    home = Path(env["GPUPLAN_HOME"])
    files = [p for p in home.rglob("*") if p.is_file()]
    assert any(p.name == "ledger.sqlite3" for p in files)
    for path in files:
        data = path.read_bytes()
        for s in secrets:
            assert s.encode() not in data, path
    rows = sqlite3.connect(home / "data" / "ledger.sqlite3").execute("SELECT * FROM events").fetchall()
    assert rows and not any(s in str(rows) for s in secrets)


def test_a_ttl_launch_carries_the_clouds_own_termination_timer_and_ls_shows_it(fake: FakeCvm,
                                                                              env: dict[str, str]) -> None:
    from datetime import UTC, datetime, timedelta

    before = datetime.now(UTC)
    r = cli(env, *LAUNCH, "--json")  # with --ttl 6h
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    (inst,) = fake.instances.values()
    (call,) = [c for c in fake.calls if c.action == "RunInstances"]
    assert call.params["ActionTimer"]["TimerAction"] == "TerminateInstances"
    at = datetime.strptime(inst.action_time or "", "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    expires = datetime.fromisoformat(got["expires_at"])
    assert expires - timedelta(seconds=1) <= at <= expires + timedelta(seconds=1)  # launch time + TTL
    assert before + timedelta(hours=6) - timedelta(seconds=1) <= at
    r = cli(env, "ls", "--json")
    (row,) = json.loads(r.stdout)["launches"]
    assert any(f"the cloud terminates it at {at:%Y-%m-%d %H:%M:%S} UTC" in n for n in row["notes"])
    r = cli(env, "ls")
    assert f"{got['id']}: the cloud terminates it at {at:%Y-%m-%d %H:%M}" in r.stderr
    r = cli(env, *LAUNCH)  # the summary tells one story of the TTL: the cloud's timer, `down --expired` behind it
    assert r.returncode == 0 and "UTC: the cloud's own timer ends it then" in r.stdout
    assert "to enforce it" not in r.stdout


def test_a_job_launch_is_ready_to_train_and_ends_itself(fake: FakeCvm, env: dict[str, str], tmp_path: Path) -> None:
    """plan to a finished job: key, disk, SSH-only group, the role; the user data installs the driver, runs the
    set-up and the job on the (sandboxed) machine, and the machine terminates itself when the job exits."""
    from tests.fakes.machine import Machine, unpack_user_data
    from tests.providers.test_ssh_keys import ed25519_line

    key = tmp_path / "id.pub"
    key.write_text(ed25519_line())
    (tmp_path / "setup.sh").write_text("echo installing deps\n")
    (tmp_path / "train.sh").write_text('echo "training on $GPUPLAN_GPUS GPUs"\n')
    launch = [a for a in LAUNCH if a not in ("--image", "img-ubu22new")]  # the public image: no driver in it
    r = cli(env, *launch, "--ssh-key", str(key), "--disk-gb", "200", "--setup", str(tmp_path / "setup.sh"),
            "--run", str(tmp_path / "train.sh"), "--down-when", "done", "--idle", "30m",
            "--cam-role", "gpuplan-self-end")
    assert r.returncode == 0, r.stderr
    assert "ends itself when the run exits or after 30m idle (the TTL stays the backstop)" in r.stderr
    assert "the boot script installs Ubuntu's recommended NVIDIA server driver" in r.stdout
    # the confirmation named the same step, not both possibilities
    assert "at boot: install the GPU driver if missing" in r.stderr and "checked, or installed" not in r.stderr
    (call,) = fake.calls_of("RunInstances")
    p = call.params
    (key_id,) = fake.key_pairs
    assert p["CamRoleName"] == "gpuplan-self-end" and p["LoginSettings"] == {"KeyIds": [key_id]}
    assert p["SystemDisk"]["DiskSize"] == 200
    (group,) = p["SecurityGroupIds"]
    rules = fake.security_groups[group]["Ingress"]
    assert [(x.get("Port"), x.get("CidrBlock"), x.get("SecurityGroupId")) for x in rules] == [
        ("22", "0.0.0.0/0", None), ("ALL", None, group)]  # SSH from anywhere, and each other; nothing else
    files = unpack_user_data(p["UserData"])
    assert (files["setup.sh"] == "echo installing deps\n"
            and files["run.sh"] == 'echo "training on $GPUPLAN_GPUS GPUs"\n')
    config = dict(line.split("=", 1) for line in files["config.env"].splitlines() if "=" in line)
    assert config["GPUPLAN_DRIVER"] == "install" and config["GPUPLAN_END"] == "tencent-role"
    assert config["GPUPLAN_IDLE_SECONDS"] == "1800" and config["GPUPLAN_DOWN_WHEN"] == "done"
    assert "GPUPLAN_TTL_MINUTES" not in config  # Tencent's TTL is the cloud's own timer, not a shutdown
    ls = json.loads(cli(env, "ls", "--json").stdout)["launches"]
    assert [x["teardown"] for x in ls] == ["when the run exits or after 30m idle"]

    (iid,) = fake.instances
    machine = Machine(tmp_path / "machine", driver=False)
    machine.run_user_data(__import__("base64").b64decode(p["UserData"]).decode(),
                          GPUPLAN_METADATA_URL=fake.metadata_url(iid), GPUPLAN_TENCENT_API=fake.endpoint)
    machine.wait_for(lambda: "TerminateInstances accepted" in machine.state(), timeout=30)
    assert "ubuntu-drivers install --gpgpu" in machine.calls
    assert (machine.log / "run.log").read_text() == "training on 2 GPUs\n"
    assert fake.instances[iid].state == "TERMINATING"
    # the ledger learns it from the cloud: the machine ended itself, no `down` was run
    states = [json.loads(cli(env, "ls", "--all", "--json").stdout)["launches"][0]["state"] for _ in range(2)]
    assert states[-1] == "terminated", states


def test_a_teardown_the_machine_cannot_do_is_refused_before_anything(fake: FakeCvm, env: dict[str, str]) -> None:
    r = cli(env, *LAUNCH, "--run", "python train.py", "--down-when", "done")
    assert r.returncode == 2 and "can end itself only through a CAM role" in r.stderr and "--cam-role" in r.stderr
    assert not fake.calls_of("RunInstances") and "nothing launched" in cli(env, "ls").stdout
    for bad, said in ((["--down-when", "finished", "--run", "x"], "the one condition is 'done'"),
                      (["--down-when", "done"], "--down-when done needs --run"),
                      (["--idle", "0.5m"], "under a minute"), (["--driver", "maybe"], "unknown --driver"),
                      (["--run", "./missing.sh"], "no such file"), (["--cam-role", "bad role!"], "not a CAM role name"),
                      (["--ssh-from", "me"], "not an IP address"), (["--ssh-from", ""], "--ssh-from is empty")):
        r = cli(env, *LAUNCH, *bad)
        assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr, (bad, r.stderr)
    assert not fake.calls_of("RunInstances")


def test_a_two_node_job_gets_its_ranks_over_ssh(fake: FakeCvm, env: dict[str, str], tmp_path: Path) -> None:
    """Once both nodes run, launch hands each its rank through ssh (a recording ssh here), with the key's private
    half; node 0's private address leads."""
    from tests.providers.test_ssh_keys import ed25519_line

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ssh").write_text('#!/bin/bash\nn=$(ls "$OUT" | wc -l)\nprintf "%s\\n" "$@" > "$OUT/$n.args"\n'
                                 'cat > "$OUT/$n.stdin"\n')
    (bin_dir / "ssh").chmod(0o755)
    out = tmp_path / "ssh-calls"
    out.mkdir()
    key = tmp_path / "id_ed25519.pub"
    key.write_text(ed25519_line())
    (tmp_path / "id_ed25519").write_text("private half (never read by gpuplan, only named to ssh)\n")
    e = {**env, "PATH": f"{bin_dir}:{env['PATH']}", "OUT": str(out)}
    r = cli(e, *LAUNCH, "--count", "2", "--ssh-key", str(key), "--run", "torchrun train.py")
    assert r.returncode == 0, r.stderr
    ips = {i.public_ip: i.private_ip for i in fake.instances.values()}
    master = fake.instances[sorted(fake.instances)[0]].private_ip
    calls = sorted(out.glob("*.args"))
    assert len(calls) == 2
    sent = {}
    for a in calls:
        args = a.read_text().splitlines()
        assert args[args.index("-i") + 1] == str(tmp_path / "id_ed25519")
        host = next(x for x in args if x.startswith("ubuntu@")).split("@")[1]
        sent[ips[host]] = a.with_suffix(".stdin").read_text()
    assert {v.splitlines()[0] for v in sent.values()} == {"NODE_RANK=0", "NODE_RANK=1"}
    assert all(f"MASTER_ADDR={master}\n" in v and "NNODES=2\n" in v for v in sent.values())
    assert sent[master].startswith("NODE_RANK=0")
    assert "rendezvous: node 0" in r.stderr


def test_a_rank_that_cannot_be_handed_over_is_printed_to_do_by_hand(fake: FakeCvm, env: dict[str, str],
                                                                     tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ssh").write_text("#!/bin/bash\necho 'Permission denied (publickey).' >&2\nexit 255\n")
    (bin_dir / "ssh").chmod(0o755)
    e = {**env, "PATH": f"{bin_dir}:{env['PATH']}", "GPUPLAN_RENDEZVOUS_PUSH_SECONDS": "0"}
    r = cli(e, *LAUNCH, "--count", "2", "--run", "torchrun train.py")
    assert r.returncode == 0, r.stderr  # the machines run: the launch succeeded, the hand-over is the user's now
    assert r.stderr.count("not handed over") == 2 and "Permission denied (publickey)." in r.stderr
    assert r.stderr.count("| ssh -o BatchMode=yes") == 2 and "printf %s 'NODE_RANK=1" in r.stderr


def _launch_events(env: dict[str, str]) -> tuple[str, list[str]]:
    db = sqlite3.connect(Path(env["GPUPLAN_HOME"]) / "data" / "ledger.sqlite3")
    ((state,),) = db.execute("SELECT state FROM launches ORDER BY created_at DESC LIMIT 1").fetchall()
    events = [w for (w,) in db.execute("SELECT what FROM events ORDER BY seq")]
    db.close()
    return state, events


@pytest.mark.parametrize(("code", "action", "state", "evidence"), [
    # the provider's refusal of RunInstances itself: nothing was created, said with its RequestId
    ("FailedOperation.Unsupported", "RunInstances", "failed",
     "Tencent answered RunInstances with FailedOperation.Unsupported (RequestId "),
    # the default image cannot be looked up: RunInstances was never sent
    ("FailedOperation.Unsupported", "DescribeImages", "failed",
     "Tencent created nothing: the launch failed before RunInstances was sent"),
    # the provider's own fault mid-call may have started a machine: kept unknown, found again by its tag
    ("InternalError", "RunInstances", "unknown", None),
])
def test_a_launch_that_created_nothing_is_failed_at_once(fake: FakeCvm, env: dict[str, str], code: str, action: str,
                                                          state: str, evidence: str | None) -> None:
    args = [a for a in LAUNCH if a not in ("--image", "img-ubu22new")] if action == "DescribeImages" else LAUNCH
    fake.fail_next(code, action=action, n=10)
    r = cli(env, *args)
    assert r.returncode != 0 and live(fake) == []
    got, events = _launch_events(env)
    assert got == state, events
    if evidence is not None:
        assert evidence in events[-1]
        r = cli(env, "down", "--all", "--yes")  # nothing holds budget or waits 10 minutes to close
        assert r.returncode == 0 and "nothing to end" in r.stderr, r.stderr


def test_a_dead_endpoint_fails_the_launch_before_run_instances(fake: FakeCvm, env: dict[str, str]) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        env = {**env, "GPUPLAN_TENCENT_ENDPOINT": f"http://127.0.0.1:{s.getsockname()[1]}"}
    r = cli(env, *[a for a in LAUNCH if a not in ("--zone", "ap-guangzhou-3")], "--region", "ap-guangzhou")
    assert r.returncode != 0
    got, events = _launch_events(env)
    assert got == "failed" and "before RunInstances was sent" in events[-1], events
