"""`gpuplan launch / ls / down` through the CLI, over an in-memory provider (no network, no SDK)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator

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
    assert cloud.live() == []


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
