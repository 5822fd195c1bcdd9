"""End to end through the real CLI process and Alibaba's official ECS SDK, against the strict fake ECS endpoint.

What an Alibaba user does (launch with their key, list, log in, end everything) and what must never happen: a
second import of the same key, SSH opened to more than port 22, a machine left running or without the cloud's own
release time, the AccessKey secret in any output or file under the home folders.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from providers.testing.fake_ecs import (
    TEST_KEY_ID,
    TEST_KEY_SECRET,
    FakeEcs,
    fake_ecs_server,
)

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ("launch", "--provider", "alibaba", "--instance-type", "ecs.gn7i-c8g1.2xlarge", "--region", "cn-shanghai",
          "--ttl", "2h", "--yes")


@pytest.fixture
def fake() -> Iterator[FakeEcs]:
    with fake_ecs_server() as f:
        yield f


@pytest.fixture
def env(fake: FakeEcs, tmp_path: Path) -> dict[str, str]:
    skip = ("ALIBABA_CLOUD_", "GPUPLAN_", "AWS_", "TENCENTCLOUD_")  # no other cloud's region is searched
    e = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    e.update({
        "ALIBABA_CLOUD_ACCESS_KEY_ID": TEST_KEY_ID, "ALIBABA_CLOUD_ACCESS_KEY_SECRET": TEST_KEY_SECRET,
        "GPUPLAN_ALIBABA_ENDPOINT": fake.endpoint,
        "GPUPLAN_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "user"), "NO_PROXY": "127.0.0.1,localhost",
        "GPUPLAN_POLL_SECONDS": "0.05", "PYTHONPATH": str(ROOT), "COLUMNS": "200",
        "PYTHONWARNINGS": "ignore::DeprecationWarning",
    })
    return e


def cli(env: dict[str, str], *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuplan", *args], check=False, env=env, capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


@pytest.fixture
def key(tmp_path: Path) -> Path:
    from tests.providers.test_ssh_keys import ed25519_line

    path = tmp_path / "id_ed25519.pub"
    path.write_text(ed25519_line())
    return path


def test_launch_ls_ssh_down_with_one_key_import_ssh_only_and_the_cloud_release_time(
        fake: FakeEcs, env: dict[str, str], key: Path, tmp_path: Path) -> None:
    outputs: list[str] = []
    ids = []
    for _ in range(2):
        started = datetime.now(UTC)
        r = cli(env, *LAUNCH, "--ssh-key", str(key), "--disk-gb", "200", "--json")
        assert r.returncode == 0, r.stderr
        outputs += [r.stdout, r.stderr]
        ids.append(json.loads(r.stdout)["id"])
    # the key imported once, without its comment, and named in both launches
    [imported] = fake.calls_of("ImportKeyPair")
    assert imported.params["PublicKeyBody"] == " ".join(key.read_text().split()[:2])
    runs = fake.calls_of("RunInstances")
    assert len(runs) == 2 and {c.params["KeyPairName"] for c in runs} == {imported.params["KeyPairName"]}
    # one security group, opening TCP 22 from anywhere and everything only between its own machines
    [(group_id, group)] = fake.groups.items()
    assert [(r["IpProtocol"], r["PortRange"], r.get("SourceCidrIp"), r.get("SourceGroupId")) for r in group["rules"]] \
        == [("TCP", "22/22", "0.0.0.0/0", None), ("ALL", "-1/-1", None, group_id)]
    for call, launch_id in zip(runs, ids, strict=True):
        p = call.params
        assert p["Tag.1.Key"] == "gpuplan:id" and p["Tag.1.Value"] == launch_id  # found again by its tag
        assert p["ClientToken"] and p["SecurityGroupId"] == group_id and p["SystemDisk.Size"] == "200"
        assert p["VSwitchId"] == "vsw-fake000l" and p["ZoneId"] == "cn-shanghai-l"  # the zone's default vSwitch
        assert p["InstanceChargeType"] == "PostPaid" and "SpotStrategy" not in p
        # the TTL as the cloud's own release time: 2 h after the launch, give or take the run
        release = datetime.strptime(p["AutoReleaseTime"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert timedelta(hours=2) - timedelta(minutes=2) < release - started < timedelta(hours=2, minutes=2)

    r = cli(env, "ls", "--json")
    assert r.returncode == 0, r.stderr
    outputs += [r.stdout, r.stderr]
    listed = {x["id"]: x for x in json.loads(r.stdout)["launches"]}
    assert set(listed) == set(ids) and all(x["state"] == "running" for x in listed.values())

    r = cli(env, "ssh", ids[0], "--print")
    assert r.returncode == 0, r.stderr
    outputs += [r.stdout, r.stderr]
    machine = next(i for i in fake.instances.values() if i.tags["gpuplan:id"] == ids[0])
    assert r.stdout.strip().endswith(f"@{machine.public_ip}") and machine.public_ip

    r = cli(env, "down", "--all", "--yes")
    assert r.returncode == 0, r.stderr
    outputs += [r.stdout, r.stderr]
    assert fake.live() == []
    assert json.loads(cli(env, "ls", "--json").stdout)["launches"] == []

    assert not any(TEST_KEY_SECRET in text for text in outputs)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert TEST_KEY_SECRET.encode() not in path.read_bytes(), path


def test_a_wrong_secret_is_refused_by_the_signature_check_and_exits_3_without_the_secret(
        fake: FakeEcs, env: dict[str, str], key: Path) -> None:
    wrong = "gpuplanWrongSecret000000000000000"
    r = cli({**env, "ALIBABA_CLOUD_ACCESS_KEY_SECRET": wrong}, *LAUNCH, "--ssh-key", str(key))
    assert r.returncode == 3, r.stderr
    assert "SignatureDoesNotMatch" in r.stderr and "ALIBABA_CLOUD_ACCESS_KEY_SECRET" in r.stderr
    assert wrong not in r.stdout + r.stderr and "Traceback" not in r.stderr
    assert "SignatureDoesNotMatch" in fake.rejected and fake.instances == {}


def test_a_dry_run_validates_with_ecs_and_starts_or_makes_nothing(fake: FakeEcs, env: dict[str, str],
                                                                   key: Path) -> None:
    r = cli(env, *LAUNCH[:-1], "--ssh-key", str(key), "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["dry_run"] is True and "RunInstances not validated" in r.stdout + r.stderr
    assert fake.instances == {} and fake.key_pairs == {} and fake.groups == {}  # nothing made on a dry run
    assert cli(env, *LAUNCH, "--ssh-key", str(key)).returncode == 0
    r = cli(env, *LAUNCH[:-1], "--ssh-key", str(key), "--dry-run", "--json")  # the group and key exist now
    assert r.returncode == 0, r.stderr
    assert fake.calls_of("RunInstances")[-1].params["DryRun"] == "true" and len(fake.live()) == 1


def test_a_zone_without_a_default_vswitch_names_what_to_create(fake: FakeEcs, env: dict[str, str]) -> None:
    r = cli(env, *LAUNCH, "--zone", "cn-shanghai-g")
    assert r.returncode == 2, r.stderr
    assert "cn-shanghai-g has no default vSwitch" in r.stderr and "CreateDefaultVSwitch" in r.stderr
    assert not fake.calls_of("RunInstances")


def test_a_zone_without_stock_is_skipped_before_anything_is_made(env: dict[str, str], key: Path) -> None:
    with fake_ecs_server(no_stock=("cn-shanghai-l",)) as fake:
        r = cli({**env, "GPUPLAN_ALIBABA_ENDPOINT": fake.endpoint}, *LAUNCH, "--ssh-key", str(key), "--json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["zone"] == "cn-shanghai-m"
        assert [c.params["ZoneId"] for c in fake.calls_of("RunInstances")] == ["cn-shanghai-m"]
    with fake_ecs_server(no_stock=("cn-shanghai-l", "cn-shanghai-m")) as fake:
        r = cli({**env, "GPUPLAN_ALIBABA_ENDPOINT": fake.endpoint}, *LAUNCH, "--ssh-key", str(key))
        assert r.returncode == 4 and "not in stock" in r.stderr, r.stderr
        assert not fake.calls_of("RunInstances") and fake.key_pairs == {} and fake.groups == {}


def test_stock_gone_at_launch_time_moves_to_the_next_zone(env: dict[str, str], key: Path) -> None:
    with fake_ecs_server(hidden_no_stock=("cn-shanghai-l",)) as fake:
        r = cli({**env, "GPUPLAN_ALIBABA_ENDPOINT": fake.endpoint}, *LAUNCH, "--ssh-key", str(key), "--json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["zone"] == "cn-shanghai-m"
        assert [c.params["ZoneId"] for c in fake.calls_of("RunInstances")] == ["cn-shanghai-l", "cn-shanghai-m"]
        assert [i.zone for i in fake.live()] == ["cn-shanghai-m"]


def test_a_launch_lost_in_a_crash_is_found_by_its_tag_and_ended(fake: FakeEcs, env: dict[str, str],
                                                                key: Path) -> None:
    r = cli({**env, "GPUPLAN_CRASH_AT": "after-run"}, *LAUNCH, "--ssh-key", str(key))
    assert r.returncode != 0
    assert len(fake.live()) == 1  # started, but its id never reached the ledger
    r = cli(env, "ls", "--json")
    assert r.returncode == 0, r.stderr
    [launch] = json.loads(r.stdout)["launches"]
    assert [m["id"] for m in launch["instances"]] == [fake.live()[0].instance_id]
    r = cli(env, "down", launch["id"], "--yes")
    assert r.returncode == 0, r.stderr
    assert fake.live() == []


def test_a_machine_cannot_be_asked_to_end_itself_and_the_ttl_is_named(env: dict[str, str], key: Path) -> None:
    r = cli(env, *LAUNCH, "--ssh-key", str(key), "--run", "python train.py", "--down-when", "done")
    assert r.returncode == 2
    assert "cannot end itself" in r.stderr and "--ttl" in r.stderr


def test_quote_is_the_accounts_price_of_the_instance_and_a_launch_in_that_zone_is_priced_at_it(
        fake: FakeEcs, env: dict[str, str], key: Path) -> None:
    r = cli(env, "quote", "--provider", "alibaba", "--instance-type", "ecs.gn7i-c8g1.2xlarge", "--zone",
            "cn-shanghai-l", "--json")
    assert r.returncode == 0, r.stderr
    q = json.loads(r.stdout)
    # the fake's TEST VALUES: list 10.00, paid 9.00 CNY an hour, and not the 0.50 of its system-disk line
    assert (q["unit_price"], q["unit_price_discount"], q["payable"], q["currency"]) == ("10.00", "9.00", "9.00", "CNY")
    assert q["provider_quote"]["region"] == "cn-shanghai" and "DescribePrice" in q["source"]
    r = cli(env, "quote", "--provider", "alibaba", "--instance-type", "ecs.gn7i-c8g1.2xlarge", "--zone",
            "cn-shanghai-l", "--billing", "monthly", "--months", "2", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["payable"] == "9000.00"  # 9.00 x 500 x 2: the fake's test rule for a month
    r = cli(env, *LAUNCH, "--zone", "cn-shanghai-l", "--ssh-key", str(key), "--json")
    assert r.returncode == 0, r.stderr
    assert "priced at the provider's live quote" in r.stderr and "DescribePrice, cn-shanghai-l" in r.stderr
    assert json.loads(r.stdout)["unit_price"]["amount"] in ("9", "9.00")


def test_a_machine_tagged_by_gpuplan_but_in_no_ledger_is_found_and_ended(fake: FakeEcs, env: dict[str, str]) -> None:
    from providers.testing.fake_ecs import FakeInstance

    fake.instances["i-lost"] = FakeInstance("i-lost", "ecs.gn7i-c8g1.2xlarge", "cn-shanghai-l", {},
                                            {"gpuplan:managed": "true", "gpuplan:id": "gp-0123456789"}, "Running")
    fake.instances["i-theirs"] = FakeInstance("i-theirs", "ecs.gn7i-c8g1.2xlarge", "cn-shanghai-l", {},
                                              {"team": "vision"}, "Running")
    r = cli(env, "ls", "--reconcile", "--provider", "alibaba", "--region", "cn-shanghai")
    assert r.returncode == 0, r.stderr
    assert "untracked: alibaba cn-shanghai i-lost" in r.stderr and "i-theirs" not in r.stderr
    r = cli(env, "down", "--untracked", "--provider", "alibaba", "--region", "cn-shanghai", "--yes")
    assert r.returncode == 0, r.stderr
    assert [i.instance_id for i in fake.live()] == ["i-theirs"]  # a machine gpuplan did not start is never touched


def test_an_unknown_access_key_exits_3(fake: FakeEcs, env: dict[str, str]) -> None:
    r = cli({**env, "ALIBABA_CLOUD_ACCESS_KEY_ID": "LTAI5tNotThisAccount0000"}, *LAUNCH, "--no-ssh-key")
    assert r.returncode == 3 and "InvalidAccessKeyId.NotFound" in r.stderr, r.stderr
    assert fake.instances == {}


@pytest.mark.parametrize("step", ["intent", "after-run", "after-record", "waiting"])
def test_kill_9_at_any_step_leaves_nothing_unfindable(fake: FakeEcs, env: dict[str, str], step: str) -> None:
    import signal
    import sqlite3

    r = cli({**env, "GPUPLAN_CRASH_AT": step}, *LAUNCH, "--no-ssh-key")
    assert r.returncode == -signal.SIGKILL, r.stderr
    ls = cli(env, "ls", "--json")
    assert ls.returncode == 0, ls.stderr
    (row,) = json.loads(ls.stdout)["launches"]
    assert sorted(row["instance_ids"]) == sorted(fake.instances)  # the ledger knows every machine the fake has
    assert bool(row["instance_ids"]) == (step != "intent")
    if step == "intent":  # no machine yet: `down` waits out the time a started one takes to show its tag
        db = sqlite3.connect(Path(env["GPUPLAN_HOME"]) / "data" / "ledger.sqlite3")
        with db:
            db.execute("UPDATE launches SET created_at = '2000-01-01T00:00:00+00:00' WHERE id = ?", (row["id"],))
        db.close()
    down = cli(env, "down", row["id"], "--yes", "--json")
    assert down.returncode == 0, down.stderr
    assert fake.live() == []


def test_refresh_reads_list_prices_and_stock_and_plans_use_them(env: dict[str, str]) -> None:
    with fake_ecs_server(no_stock=("cn-shanghai-l", "cn-shanghai-m", "cn-shanghai-g")) as fake:
        e = {**env, "GPUPLAN_ALIBABA_ENDPOINT": fake.endpoint}
        r = cli(e, "catalog", "refresh", "--provider", "alibaba", "--region", "cn-shanghai")
        assert r.returncode == 0, r.stderr
        assert "GPUPLAN_ALIBABA_ENDPOINT" in r.stderr  # prices from a fake are never taken for Alibaba's own
        plan = json.loads(cli(e, "plan", "--gpu-hours", "100", "--provider", "alibaba", "--billing", "hourly",
                              "--json", "--explain").stdout)
        # nothing in stock in any zone: every live row is sold out, left out and said
        assert any(x["offer"] == "ecs.gn7i-c8g1.2xlarge" and x["rule"] == "sold_out" for x in plan["excluded"])
    with fake_ecs_server() as fake:
        e = {**env, "GPUPLAN_ALIBABA_ENDPOINT": fake.endpoint}
        assert cli(e, "catalog", "refresh", "--provider", "alibaba", "--region", "cn-shanghai").returncode == 0
        r = cli(e, "plan", "--gpu-hours", "100", "--provider", "alibaba", "--billing", "hourly", "--json")
        assert r.returncode == 0, r.stderr
        a10 = next(o for o in json.loads(r.stdout)["options"] if o["offer"] == "ecs.gn7i-c8g1.2xlarge"
                   and o["region"] == "cn-shanghai")
        # the fake's TEST VALUE list price, 10.00 CNY an hour, not the shipped 9.5326
        assert a10["live"] is True and a10["line_items"][0]["unit_price"]["amount"] in ("10", "10.00")
