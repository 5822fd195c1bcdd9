"""`gpuplan launch / ls / down` through the CLI, over an in-memory provider (no network, no SDK)."""

from __future__ import annotations

import json
import os
import math
import shlex
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.fakes.fake_compute import Cloud, FakeCompute

Run = Callable[..., CliResult]


@pytest.fixture
def cloud(monkeypatch: pytest.MonkeyPatch) -> Iterator[Cloud]:
    shared = Cloud()
    import providers.registry as registry

    monkeypatch.setattr(registry, "compute_client",
                        lambda provider, region, **_: FakeCompute(shared, provider, region))
    monkeypatch.setenv("GPUPLAN_POLL_SECONDS", "0")
    yield shared


AWS = ("launch", "--provider", "aws", "--instance-type", "p3.2xlarge", "--region", "us-east-1")


def test_launch_ls_down_round_trip(gpuplan: Run, cloud: Cloud) -> None:
    code, out, err = gpuplan(*AWS, "--ttl", "6h", "--yes", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert set(got) >= {"id", "provider", "instance_ids", "state", "region", "zone", "billing", "unit_price",
                        "expires_at"}
    assert got["state"] == "running" and got["unit_price"] == {"amount": "3.06", "currency": "USD"}
    assert "price: 3.06 USD per machine-hour" in err and "18.36 USD" in err  # quote shown before launching
    code, out, _ = gpuplan("ls", "--json")
    (row,) = json.loads(out)["launches"]
    # ls projects the same whole bill the confirmation showed: 6 h of the instance, its 256 GB gp3 disk and address
    whole = 3.06 * 6 + 0.08 * 256 * 6 / 730 + 0.005 * 6
    assert f"whole bill until the TTL (6 h): {whole:.2f} USD" in err
    assert row["id"] == got["id"] and row["projected_cost"] == {"amount": f"{whole:.2f}", "currency": "USD"}
    assert row["accrued_cost"]["currency"] == "USD"
    code, out, err = gpuplan("down", got["id"], "--yes", "--json")
    assert code == 0, err
    assert json.loads(out)["ended"][0]["state"] == "terminated"
    assert json.loads(out)["ended"][0]["projected_cost"] is None  # an ended launch has no cost to its TTL
    assert cloud.live() == []
    # the wait (minutes on a real cloud) is said: a spinner on a terminal, the line once elsewhere
    assert "waiting until it says they are gone ..." in " ".join(err.split())


def test_no_terminal_and_no_yes_refuses(gpuplan: Run, cloud: Cloud, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False)
    code, out, err = gpuplan(*AWS)
    assert code == 2 and "--yes" in err and cloud.machines == {}


def test_dry_run_creates_nothing(gpuplan: Run, cloud: Cloud) -> None:
    code, out, err = gpuplan(*AWS, "--dry-run", "--json")
    assert code == 0, err
    assert json.loads(out)["dry_run"] is True
    assert cloud.machines == {} and cloud.calls == ["run"]
    _, out, _ = gpuplan("ls", "--json")
    assert json.loads(out)["launches"] == []


def test_budget_refusal_exits_7_and_creates_nothing(gpuplan: Run, cloud: Cloud) -> None:
    code, _, err = gpuplan(*AWS, "--ttl", "10h", "--max-cost", "30", "--yes")
    assert code == 7 and "over --max-cost" in err and cloud.machines == {}


def test_several_nodes_print_the_torchrun_rendezvous(gpuplan: Run, cloud: Cloud) -> None:
    code, out, err = gpuplan("launch", "--provider", "aws", "--instance-type", "p3.16xlarge", "--region",
                             "us-east-1", "--count", "2", "--yes")
    assert code == 0, err
    assert "--nnodes=2 --nproc-per-node=8 --node-rank=0" in out and "--node-rank=1" in out


def test_from_plan_launches_the_winner(gpuplan: Run, cloud: Cloud) -> None:
    code, _, err = gpuplan("plan", "--gpu-hours", "200", "--provider", "aws", "--billing", "hourly", "--json")
    assert code == 0, err
    code, out, err = gpuplan("launch", "--from-plan", "--yes", "--json")
    assert code == 0, err
    plan_winner = json.loads(gpuplan("plan", "--gpu-hours", "200", "--provider", "aws", "--billing", "hourly",
                                     "--json")[1])["cheapest"]
    got = json.loads(out)
    assert (got["provider"], got["region"]) == ("aws", plan_winner["region"])
    assert cloud.machines and next(iter(cloud.machines.values())).instance_type == plan_winner["offer"]


def test_down_expired_ends_only_expired(gpuplan: Run, cloud: Cloud) -> None:
    assert gpuplan(*AWS, "--ttl", "1h", "--yes")[0] == 0
    assert gpuplan(*AWS, "--ttl", "5d", "--yes")[0] == 0
    from gpuplan.paths import ledger_file
    from launch.ledger import Ledger

    with Ledger(ledger_file()) as ledger:  # an hour passes for the first one
        first = ledger.launches()[0]
        ledger.db.execute("UPDATE launches SET expires_at = '2000-01-01T00:00:00+00:00' WHERE id = ?", (first.id,))
    code, out, err = gpuplan("down", "--expired", "--json")
    assert code == 0, err
    assert len(json.loads(out)["ended"]) == 1 and len(cloud.live()) == 1


def test_reconcile_finds_tagged_machines_missing_from_the_ledger(gpuplan: Run, cloud: Cloud) -> None:
    assert gpuplan(*AWS, "--yes")[0] == 0
    from gpuplan.paths import data_dir

    (data_dir() / "ledger.sqlite3").unlink()  # the ledger file is lost
    for side in data_dir().glob("ledger.sqlite3-*"):
        side.unlink()
    code, out, _ = gpuplan("ls", "--reconcile", "--provider", "aws", "--region", "us-east-1", "--json")
    assert code == 0
    (found,) = json.loads(out)["untracked"]
    assert found["instance_id"] in cloud.machines and found["tags"]["gpuplan:managed"] == "true"


@pytest.mark.parametrize(("args", "words"), [
    (("launch", "--provider", "aws", "--instance-type", "g6.xlarge"), "--region or --zone"),
    (("launch", "--provider", "aws", "--instance-type", "p9.huge", "--region", "us-east-1"), "unknown instance type"),
    ((*AWS, "--billing", "reserved_1y", "--yes"), "hourly, monthly or spot"),
    ((*AWS, "--count", "0", "--yes"), "--count"),
    ((*AWS, "--ttl", "soon", "--yes"), "duration"),
    (("launch", "--from-plan", "--plan-file", "/nonexistent/plan.json"), "no plan"),
    (("down",), "launch ids, --all or --expired"),
    (("down", "gp-nothing", "--yes"), "not in the ledger"),
])
def test_bad_input_is_one_line_exit_2(gpuplan: Run, cloud: Cloud, args: tuple[str, ...], words: str) -> None:
    code, out, err = gpuplan(*args)
    assert code == 2, err
    assert words in err and "Traceback" not in err and cloud.machines == {}


# -- issue 27: faults that cost money


def _three(gpuplan: Run) -> list[str]:
    ids = []
    for _ in range(3):
        code, out, err = gpuplan(*AWS, "--ttl", "6h", "--yes", "--json")
        assert code == 0, err
        ids.append(json.loads(out)["id"])
    return ids


def test_down_all_asks_the_cloud_to_end_every_launch_even_when_terminations_are_slow(gpuplan: Run,
                                                                                     cloud: Cloud) -> None:
    ids = _three(gpuplan)
    cloud.slow_terminate = True
    code, out, err = gpuplan("down", "--all", "--yes", "--wait-timeout", "0.05m")
    # every machine was asked to end, none is still running, and the exit code says the wait was cut short
    assert [m.state.value for m in cloud.machines.values()] == ["terminating"] * 3
    assert code == 1 and "internal error" not in err
    for i in ids:
        assert f"{i}: still ending" in out
    # they stay in the ledger as ending, so `ls` and the next `down` still see them
    _, out, _ = gpuplan("ls", "--json")
    assert [r["state"] for r in json.loads(out)["launches"]] == ["terminating"] * 3


def test_one_failed_termination_never_blocks_the_others(gpuplan: Run, cloud: Cloud) -> None:
    ids = _three(gpuplan)
    first = next(iter(cloud.machines))
    cloud.fail_terminate = {first}
    code, out, err = gpuplan("down", "--all", "--yes")
    assert code == 1 and "internal error" not in err
    assert [m.state.value for m in cloud.machines.values()] == ["running", "terminated", "terminated"]
    assert f"{ids[0]}: not ended" in out and "InternalError" in out
    assert f"ended {ids[1]}" in out and f"ended {ids[2]}" in out
    _, out, _ = gpuplan("ls", "--json")
    (left,) = json.loads(out)["launches"]
    assert left["id"] == ids[0]


def test_down_expired_goes_on_past_a_launch_whose_cloud_fails(gpuplan: Run, cloud: Cloud,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from datetime import UTC, datetime, timedelta

    from launch import service

    ids = _three(gpuplan)
    real_now = service.datetime
    monkeypatch.setattr(service, "datetime", type("Later", (real_now,), {
        "now": staticmethod(lambda tz=None: real_now.now(UTC) + timedelta(hours=7))}))
    cloud.fail_terminate = {next(iter(cloud.machines))}
    code, out, err = gpuplan("down", "--expired", "--json")
    assert code == 1, err
    ended = {e["id"]: e["state"] for e in json.loads(out)["ended"]}
    assert ended == {ids[0]: "running", ids[1]: "terminated", ids[2]: "terminated"}
    assert json.loads(out)["not_ended"] == [ids[0]]
    assert datetime.now(UTC)  # the real clock was left alone


@pytest.mark.parametrize("flag,value", [
    ("--wait-timeout", "0"), ("--wait-timeout", "nan"), ("--wait-timeout", "-1"), ("--wait-timeout", "abc"),
    ("--wait-timeout", "1e400h"), ("--wait-timeout", ""), ("--ttl", ""), ("--max-cost", ""), ("--ttl", "  "),
    ("--image", ""), ("--region", ""), ("--zone", ""),
])
def test_a_bad_launch_flag_is_refused_before_any_machine_starts(gpuplan: Run, cloud: Cloud, flag: str,
                                                                value: str) -> None:
    args = [a for a in AWS if a]
    if flag == "--region":
        args = list(AWS[:-2])
    code, _, err = gpuplan(*args, flag, value, "--ttl" if flag != "--ttl" else "--count", "6h" if flag != "--ttl"
                             else "1", "--yes")
    assert code == 2, err
    assert cloud.machines == {} and "run" not in cloud.calls


def test_a_bad_poll_interval_is_refused_before_any_machine_starts(gpuplan: Run, cloud: Cloud,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for bad in ("abc", "-1", "nan", "inf", ""):
        monkeypatch.setenv("GPUPLAN_POLL_SECONDS", bad)
        code, _, err = gpuplan(*AWS, "--ttl", "6h", "--yes")
        assert code == 2 and "GPUPLAN_POLL_SECONDS" in err, err
    assert cloud.machines == {}


@pytest.mark.parametrize("key", ["", "%", "_", "gp-%", "gp_"])
def test_down_never_matches_wildcards_or_an_empty_id(gpuplan: Run, cloud: Cloud, key: str) -> None:
    code, _, err = gpuplan(*AWS, "--ttl", "6h", "--yes", "--json")
    assert code == 0, err
    code, _, err = gpuplan("down", key, "--yes")
    assert code == 2, err
    assert [m.state.value for m in cloud.machines.values()] == ["running"]


def test_down_takes_an_unambiguous_prefix_and_says_which_launch_it_matched(gpuplan: Run, cloud: Cloud) -> None:
    code, out, err = gpuplan(*AWS, "--ttl", "6h", "--yes", "--json")
    lid = json.loads(out)["id"]
    code, out, err = gpuplan("down", lid[:6], "--yes")
    assert code == 0, err
    assert f"{lid[:6]!r} is launch {lid}" in err
    assert cloud.live() == []


def test_a_hostile_address_never_reaches_the_ssh_line_or_json(gpuplan: Run, cloud: Cloud) -> None:
    cloud.public_ip = "1.2.3.4;touch /tmp/pwned"
    code, out, err = gpuplan(*AWS, "--ttl", "6h", "--yes")
    assert code == 0, err
    assert "touch" not in out and "ssh ubuntu@10.0.0.7" in out  # the valid private address is used instead
    _, out, _ = gpuplan("ls", "--json")
    (row,) = json.loads(out)["launches"]
    assert "touch" not in out and row["instances"][0]["public_ip"] is None


def test_terminal_escapes_from_the_provider_are_stripped_before_printing(gpuplan: Run, cloud: Cloud) -> None:
    from pricing.errors import ProviderError

    cloud.zone_text = "us-east-1a\x1b]0;owned\x07\x1b[2J"
    code, out, err = gpuplan(*AWS, "--ttl", "6h", "--yes")
    assert code == 0, err
    code, out, err = gpuplan("ls")
    assert "\x1b" not in out + err and "\x07" not in out + err
    cloud.fail_next_run = ProviderError("InternalError\x1b[31m: \x9b2J call failed\x07")
    code, out, err = gpuplan(*AWS, "--ttl", "6h", "--yes")
    assert code == 6
    assert "InternalError" in err and not any(ch in err for ch in "\x1b\x07\x9b")


def test_a_count_that_disagrees_with_the_plan_is_refused_not_silently_overridden(gpuplan: Run, cloud: Cloud) -> None:
    code, out, err = gpuplan("plan", "--gpu-hours", "200", "--provider", "aws", "--billing", "hourly", "--json")
    assert code == 0, err
    nodes = json.loads(out)["cheapest"]["nodes"]
    code, _, err = gpuplan("launch", "--from-plan", "--count", str(nodes + 1), "--yes")
    assert code == 2 and f"{nodes} node" in err and "--count" in err, err
    assert cloud.machines == {}
    code, _, err = gpuplan("launch", "--from-plan", "--count", str(nodes), "--yes")  # agreeing is fine
    assert code == 0, err
    assert len(cloud.machines) == nodes


def test_the_quote_says_what_its_cost_covers_in_readable_hours(gpuplan: Run, cloud: Cloud) -> None:
    code, _, err = gpuplan(*AWS, "--ttl", "0.001m", "--dry-run")
    assert code == 0, err
    assert "until the TTL (1.667e-05 h)" in err  # 0.001 / 60 h, not 32 digits
    code, _, err = gpuplan("launch", "--provider", "aws", "--instance-type", "p3.2xlarge", "--region", "us-east-1",
                           "--ttl", "90m", "--dry-run")
    assert "until the TTL (1.5 h)" in err


def test_a_monthly_quote_is_the_prepaid_period_even_with_a_ttl(gpuplan: Run, cloud: Cloud) -> None:
    code, _, err = gpuplan("launch", "--provider", "tencent", "--instance-type", "GN10Xp.20XLARGE320", "--zone",
                           "ap-guangzhou-3", "--billing", "monthly", "--ttl", "6h", "--dry-run")
    assert code == 0, err
    # + 5 Mbps by tier (2 x 20 + 3 x 25 = 115 CNY) + the 256 GB premium disk (0.35 CNY/GB-month = 89.60 CNY)
    assert "instances: 46,000.00 CNY" in err and "for the prepaid period: 46,204.60 CNY" in err
    assert "until the TTL" not in err


def test_credentials_in_the_endpoint_url_are_never_printed_or_stored(gpuplan: Run,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from gpuplan.paths import ledger_file

    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://user:s3cr3tpw@127.0.0.1:1")  # a closed local port
    code, out, err = gpuplan(*AWS, "--ttl", "1h", "--yes")
    assert code == 6 and "cannot reach" in err, err
    assert "s3cr3tpw" not in out + err
    db = sqlite3.connect(ledger_file())
    stored = " ".join(str(v) for row in db.execute("SELECT * FROM events") for v in row)
    stored += " ".join(str(v) for row in db.execute("SELECT * FROM launches") for v in row)
    db.close()
    assert "cannot reach" in stored and "s3cr3tpw" not in stored


def test_ls_notes_a_provider_it_cannot_read_and_goes_on(gpuplan: Run, cloud: Cloud) -> None:
    code, out, err = gpuplan(*AWS, "--ttl", "6h", "--yes", "--json")
    assert code == 0, err
    lid = json.loads(out)["id"]
    cloud.fail_describe = ValueError("<html><body>502 Bad Gateway</body></html>")  # not an SDK error gpuplan maps
    code, out, err = gpuplan("ls")
    assert code == 0 and "internal error" not in err, err
    assert lid in out and f"{lid}: provider not reachable" in err and "502 Bad Gateway" in err


def test_down_untracked_ends_tagged_machines_the_ledger_lost(gpuplan: Run, cloud: Cloud) -> None:
    assert gpuplan(*AWS, "--yes")[0] == 0
    assert gpuplan(*AWS, "--ttl", "2h", "--yes")[0] == 0
    from gpuplan.paths import ledger_file
    from launch.ledger import Ledger

    with Ledger(ledger_file()) as ledger:  # the first launch's record is lost
        lost = ledger.launches()[0].id
        ledger.db.execute("DELETE FROM events WHERE launch_id = ?", (lost,))
        ledger.db.execute("DELETE FROM instances WHERE launch_id = ?", (lost,))
        ledger.db.execute("DELETE FROM launches WHERE id = ?", (lost,))
    orphan = next(m.instance_id for m in cloud.machines.values() if m.tags["gpuplan:id"] == lost)
    code, out, err = gpuplan("down", "--untracked", "--provider", "aws", "--region", "us-east-1", "--yes", "--json")
    assert code == 0, err
    assert json.loads(out)["untracked_ended"] == [orphan]
    assert [m.instance_id for m in cloud.live()] != [] and orphan not in [m.instance_id for m in cloud.live()]
    _, out, _ = gpuplan("ls", "--json")
    assert len(json.loads(out)["launches"]) == 1  # the tracked launch is left alone


def test_the_confirmation_shows_the_whole_bill_and_the_launch_creates_the_disk_it_priced(
        gpuplan: Run, cloud: Cloud) -> None:
    code, _, err = gpuplan(*AWS, "--ttl", "6h", "--disk-gb", "500", "--dry-run")
    assert code == 0, err
    # p3.2xlarge at 3.06 USD/h for 6 h, a 500 GB gp3 disk and one public address for the same 6 h, by hand
    instance = 3.06 * 6
    disk = 0.08 * 500 * 6 / 730
    address = 0.005 * 6
    assert f"instances: {instance:.2f} USD" in err
    assert "500 GB gp3 disk" in err and "public IPv4 address" in err
    assert f"whole bill until the TTL (6 h): {instance + disk + address:.2f} USD" in err
    assert cloud.requests[-1].disk_gb == 500 and cloud.machines == {}


def test_launch_creates_the_default_disk_the_exports_ask_for(gpuplan: Run, cloud: Cloud) -> None:
    code, _, err = gpuplan(*AWS, "--ttl", "1h", "--yes")
    assert code == 0, err
    assert cloud.requests[-1].disk_gb == 256


@pytest.mark.parametrize(("flag", "value", "needle"), [("--disk-gb", "10.5", "whole number"),
                                                      ("--disk-type", "io2", "launch creates gp3 disks")])
def test_a_disk_launch_cannot_create_as_priced_is_refused(gpuplan: Run, cloud: Cloud, flag: str, value: str,
                                                          needle: str) -> None:
    code, _, err = gpuplan(*AWS, flag, value, "--yes")
    assert code == 2 and needle in err and cloud.machines == {}


def test_from_plan_creates_the_disk_the_plan_priced(gpuplan: Run, cloud: Cloud) -> None:
    code, _, err = gpuplan("plan", "--gpu-hours", "200", "--provider", "aws", "--billing", "hourly",
                           "--disk-gb", "500", "--json")
    assert code == 0, err
    code, _, err = gpuplan("launch", "--from-plan", "--ttl", "2h", "--dry-run")
    assert code == 0, err
    assert cloud.requests[-1].disk_gb == 500 and "500 GB gp3 disk" in err
    code, _, err = gpuplan("launch", "--from-plan", "--ttl", "2h", "--disk-gb", "300", "--dry-run")
    assert code == 0, err
    assert cloud.requests[-1].disk_gb == 300  # a flag given wins over the plan


def test_a_ttl_shorter_than_the_planned_run_is_warned_before_the_launch(gpuplan: Run, cloud: Cloud) -> None:
    code, out, err = gpuplan("plan", "--gpu-hours", "2000", "--provider", "aws", "--billing", "hourly", "--json")
    assert code == 0, err
    run = json.loads(out)["cheapest"]["wall_hours"]
    assert run > 12
    code, _, err = gpuplan("launch", "--from-plan", "--ttl", "12h", "--dry-run")
    assert code == 0, err
    assert f"expects the job to run {run:,.1f} h, but --ttl 12 h ends the machine" in err
    assert f"--ttl {math.ceil(run * 1.2)}h" in err
    code, _, err = gpuplan("launch", "--from-plan", "--ttl", f"{math.ceil(run) + 1}h", "--dry-run")
    assert code == 0 and "expects the job to run" not in err


def test_ssh_logs_in_to_a_launched_machine_or_prints_how(gpuplan: Run, cloud: Cloud,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = gpuplan(*AWS, "--count", "2", "--ttl", "1h", "--yes", "--json")
    assert code == 0, err
    got = json.loads(out)
    code, out, _ = gpuplan("ssh", got["id"], "1", "--print", "-i", "/home/me/.ssh/work key")
    # quoted for a shell; a machine that does not answer is given up after 15 s, not the system's TCP timeout
    assert code == 0 and out.strip() == "ssh -o ConnectTimeout=15 -i '/home/me/.ssh/work key' ubuntu@203.0.113.7"
    ran: list[list[str]] = []
    monkeypatch.setattr(os, "execvp", lambda file, args: ran.append(list(args)))
    assert gpuplan("ssh", got["instance_ids"][0])[0] == 0  # an instance id names its machine
    assert ran == [["ssh", "-o", "ConnectTimeout=15", "ubuntu@203.0.113.7"]]
    code, _, err = gpuplan("ssh", got["id"], "2")
    assert code == 2 and "nodes 0 to 1" in err
    assert gpuplan("down", got["id"], "--yes")[0] == 0
    code, _, err = gpuplan("ssh", got["id"], "--print")
    assert code == 2 and "has ended" in err


def test_ssh_and_logs_log_in_with_the_key_the_launch_was_given(gpuplan: Run, cloud: Cloud, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.providers.test_ssh_keys import ed25519_line

    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "work_key.pub").write_text(ed25519_line())
    (keys / "work_key").write_text("private\n")
    monkeypatch.chdir(keys)  # a relative --ssh-key, as a user types it: ssh later runs from anywhere
    code, out, err = gpuplan(*AWS, "--ssh-key", "work_key.pub", "--ttl", "1h", "--yes", "--json")
    assert code == 0, err
    lid = json.loads(out)["id"]
    monkeypatch.chdir(tmp_path)
    code, out, err = gpuplan("ssh", lid, "--print")
    assert code == 0, err
    assert shlex.split(out)[:5] == ["ssh", "-o", "ConnectTimeout=15", "-i", str(keys / "work_key")]
    code, out, err = gpuplan("logs", lid, "--print")
    assert code == 0 and f"-i {keys / 'work_key'} ubuntu@" in out
    code, out, err = gpuplan("ssh", lid, "--print", "-i", "/elsewhere/key")  # -i given wins
    assert code == 0 and "-i /elsewhere/key " in out and "work_key" not in out
    (keys / "work_key").unlink()  # the private half is gone: said, and ssh offers its defaults
    code, out, err = gpuplan("ssh", lid, "--print")
    assert code == 0 and "-i" not in shlex.split(out)
    said = "".join(err.split())  # the console wraps long lines
    assert f"giventhekey{keys / 'work_key.pub'},but{keys / 'work_key'}isnotthere" in said


def test_ssh_says_when_the_launch_had_no_key(gpuplan: Run, cloud: Cloud) -> None:
    code, out, err = gpuplan(*AWS, "--no-ssh-key", "--ttl", "1h", "--yes", "--json")
    assert code == 0, err
    code, out, err = gpuplan("ssh", json.loads(out)["id"], "--print")
    assert code == 0 and "-i" not in shlex.split(out) and "was given no SSH key (--no-ssh-key)" in " ".join(err.split())


def test_from_plan_names_the_plan_it_launches_and_refuses_a_newer_serve_plan(gpuplan: Run, cloud: Cloud) -> None:
    train = ("plan", "--gpu-hours", "200", "--provider", "aws", "--billing", "hourly")
    assert gpuplan(*train)[0] == 0
    code, _, err = gpuplan("launch", "--from-plan", "--dry-run")
    said = " ".join(err.split())
    assert code == 0 and "plan: `gpuplan plan --gpu-hours 200 --provider aws --billing hourly` (under a minute ago)" \
        in said, err
    code, _, err = gpuplan("plan", "--serve", "llama-3-8b", "--rate", "1", "--provider", "aws")
    assert code == 0, err
    runs = len(cloud.requests)
    code, _, err = gpuplan("launch", "--from-plan", "--dry-run")
    said = " ".join(err.split())
    assert code == 2 and "your last plan, `gpuplan plan --serve llama-3-8b --rate 1 --provider aws`" in said, err
    assert "is a serve plan" in said and "the last one is `gpuplan plan --gpu-hours 200" in said
    assert len(cloud.requests) == runs  # nothing asked of the provider
    from gpuplan.last_plan import last_plan_path, serve_plan_path

    code, _, err = gpuplan("launch", "--from-plan", "--dry-run", "--plan", str(last_plan_path()))  # named: launched
    assert code == 0 and "plan: `gpuplan plan --gpu-hours 200" in " ".join(err.split()), err
    code, _, err = gpuplan("launch", "--from-plan", "--dry-run", "--plan", str(serve_plan_path()))
    assert code == 2 and "is a serve plan" in err
    assert gpuplan(*train)[0] == 0  # planned again: the training plan is the newest
    assert gpuplan("launch", "--from-plan", "--dry-run")[0] == 0


def test_from_plan_refuses_a_plan_over_a_day_old_unless_named(gpuplan: Run, cloud: Cloud) -> None:
    assert gpuplan("plan", "--gpu-hours", "200", "--provider", "aws", "--billing", "hourly")[0] == 0
    from gpuplan.last_plan import last_plan_path

    path = last_plan_path()
    plan = json.loads(path.read_text())
    plan["saved"]["saved_at"] = "2000-01-01T00:00:00+00:00"
    path.write_text(json.dumps(plan))
    code, _, err = gpuplan("launch", "--from-plan", "--dry-run")
    said = " ".join(err.split())
    assert code == 2 and "days ago), is over 24 h old" in said and f"--plan {path}" in said, err
    code, _, err = gpuplan("launch", "--from-plan", "--dry-run", "--plan", str(path))
    assert code == 0 and "days ago): 1 x " in " ".join(err.split()), err


def test_reconcile_reports_a_place_it_cannot_read_and_still_lists_and_ends_the_others(
        gpuplan: Run, cloud: Cloud, monkeypatch: pytest.MonkeyPatch) -> None:
    assert gpuplan(*AWS, "--yes")[0] == 0
    from gpuplan.paths import data_dir

    for f in data_dir().glob("ledger.sqlite3*"):  # the ledger is lost: that machine is now untracked
        f.unlink()
    from gpuplan.ledger import open_ledger
    from launch.ledger import LaunchState

    # a Tencent launch the new ledger knows (ended: no machine), so `ls`/`down` look in Tencent too
    assert gpuplan("launch", "--provider", "tencent", "--instance-type", "GN10Xp.2XLARGE40", "--region",
                   "ap-guangzhou", "--yes")[0] == 0
    with open_ledger() as ledger:
        (mine,) = ledger.launches()
        ledger.set_state(mine.id, LaunchState.TERMINATED)
    cloud.machines = {k: m for k, m in cloud.machines.items() if m.instance_type != "GN10Xp.2XLARGE40"}
    from pricing.errors import CredentialsError
    from providers import registry

    def client(provider: str, region: str, **_: object) -> FakeCompute:
        if provider == "tencent":
            raise CredentialsError("no Tencent Cloud credentials", "set TENCENTCLOUD_SECRET_ID")
        return FakeCompute(cloud, provider, region)

    monkeypatch.setattr(registry, "compute_client", client)
    code, out, err = gpuplan("ls", "--reconcile", "--provider", "aws", "--region", "us-east-1", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert len(got["untracked"]) == 1 and got["not_looked"][0]["provider"] == "tencent"
    said = " ".join(err.split())
    assert "could not look for untracked machines in tencent ap-guangzhou: no Tencent Cloud credentials" in said
    code, out, err = gpuplan("ls", "--reconcile", "--provider", "tencent", "--region", "ap-guangzhou")
    assert code == 3 and mine.id in out  # the place asked for fails the command, after the table is shown
    code, out, err = gpuplan("down", "--untracked", "--provider", "aws", "--region", "us-east-1", "--yes")
    said = " ".join(err.split())
    assert code == 1 and "ended untracked" in out and "could not look for untracked machines in tencent" in said
    assert cloud.live() == []


def test_an_offer_the_shipped_catalog_places_nowhere_points_to_a_refresh(gpuplan: Run, cloud: Cloud) -> None:
    code, _, err = gpuplan("launch", "--provider", "tencent", "--instance-type", "GN8.LARGE56", "--region",
                           "ap-guangzhou", "--dry-run")
    said = " ".join(err.split())
    assert code == 2 and "its regions: " not in said  # was an empty list
    assert "`gpuplan catalog refresh --provider tencent --region ap-guangzhou`" in said


def test_answering_no_is_not_an_error(gpuplan: Run, cloud: Cloud, monkeypatch: pytest.MonkeyPatch) -> None:
    import typer

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(typer, "confirm", lambda *a, **k: False)  # the user answers "n"
    code, _, err = gpuplan(*AWS)
    assert code == 0 and "not launched" in err and "error" not in err and cloud.machines == {}
    monkeypatch.setattr(typer, "confirm", lambda *a, **k: True)
    assert gpuplan(*AWS)[0] == 0
    monkeypatch.setattr(typer, "confirm", lambda *a, **k: False)
    code, _, err = gpuplan("down", "--all")
    assert code == 0 and "nothing ended" in err and len(cloud.live()) == 1


def test_ls_with_nothing_says_so_in_one_line(gpuplan: Run, cloud: Cloud) -> None:
    code, out, _ = gpuplan("ls")
    assert code == 0 and out.strip() == "nothing launched"  # no empty table frame


def test_a_ttl_no_machine_enforces_is_left_to_down_expired_and_said_so(gpuplan: Run, cloud: Cloud) -> None:
    code, out, err = gpuplan(*AWS, "--ttl", "2h", "--yes")  # the fake cloud has no TTL of its own
    assert code == 0, err
    assert "run `gpuplan down --expired` from cron" in out and "ends it then" not in out
