"""``launch --via skypilot|dstack`` end to end through the CLI, with fake ``sky`` and ``dstack`` first on PATH.

The engine launches; gpuplan must still quote and hold the budget first, record the engine, its
cluster or run and the cloud in the ledger, read state back from the engine for ``ls``, and end it
through the engine with ``down``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_engines import IP, install

ROOT = Path(__file__).resolve().parents[2]
# SkyPilot's and dstack's own imports (their validators) warn about their dependencies: not ours to fix.
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::PendingDeprecationWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]
AWS = ("launch", "--provider", "aws", "--instance-type", "p3.2xlarge", "--region", "us-east-1", "--ttl", "2h", "--yes")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("GPUPLAN_", "AWS_"))}
    e.update({"GPUPLAN_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "user"), "PYTHONPATH": str(ROOT),
              "GPUPLAN_POLL_SECONDS": "0.05", "COLUMNS": "200", "PYTHONWARNINGS": "ignore::DeprecationWarning"})
    e.update(install(tmp_path / "bin", tmp_path / "engines.json"))
    return e


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuplan", *args], env=env, capture_output=True, text=True,
                          timeout=120, cwd=ROOT, check=False)


def engine_state(env: dict[str, str]) -> dict[str, Any]:
    return json.loads(Path(env["FAKE_ENGINE_STATE"]).read_text())


def ledger_row(env: dict[str, str], launch_id: str) -> dict[str, Any]:
    db = Path(env["GPUPLAN_HOME"]) / "data" / "ledger.sqlite3"
    with sqlite3.connect(db) as con:
        con.row_factory = sqlite3.Row
        row = dict(con.execute("SELECT * FROM launches WHERE id = ?", (launch_id,)).fetchone())
        row["machines"] = [dict(r) for r in con.execute("SELECT * FROM instances WHERE launch_id = ?", (launch_id,))]
    return row


def test_skypilot_launch_is_recorded_listed_reached_and_taken_down(env: dict[str, str]) -> None:
    from tests.gpuplan.render.test_export import sky_validate

    r = cli(env, *AWS, "--via", "skypilot", "--max-cost", "100", "--json")
    assert r.returncode == 0, r.stderr
    launch_id = json.loads(r.stdout)["id"]
    name = f"gpuplan-{launch_id}"
    launch = next(c for c in engine_state(env)["calls"] if c[:2] == ["sky", "launch"])
    assert launch[:5] == ["sky", "launch", "-y", "-c", name] and "--detach-run" in launch
    task = sky_validate(Path(launch[-1]))  # SkyPilot's own schema takes the task gpuplan wrote
    assert task["name"] == name and task["resources"]["cloud"] == "aws"
    assert task["resources"]["instance_type"] == "p3.2xlarge" and task["resources"]["region"] == "us-east-1"

    row = ledger_row(env, launch_id)
    assert (row["provider"], row["region"], row["instance_type"], row["state"]) == (
        "skypilot", "aws:us-east-1", "p3.2xlarge", "running")
    assert [m["instance_id"] for m in row["machines"]] == [name]

    r = cli(env, "ls", "--json")
    assert r.returncode == 0, r.stderr
    [listed] = json.loads(r.stdout)["launches"]
    assert listed["id"] == launch_id and listed["instances"][0]["public_ip"] == IP
    r = cli(env, "ssh", launch_id, "--print")
    assert r.returncode == 0 and r.stdout.strip().endswith(f"@{IP}"), r.stderr

    r = cli(env, "down", "--all", "--yes")
    assert r.returncode == 0, r.stderr
    assert ["sky", "down", "-y", name] in engine_state(env)["calls"]
    assert engine_state(env)["clusters"] == {}
    assert ledger_row(env, launch_id)["state"] == "terminated"


def test_the_budget_is_held_before_the_engine_is_asked(env: dict[str, str]) -> None:
    r = cli(env, *AWS, "--via", "skypilot", "--max-cost", "1")
    assert r.returncode == 7, r.stderr
    assert engine_state(env)["calls"] == []


def test_spot_is_a_managed_job_cancelled_by_down(env: dict[str, str]) -> None:
    r = cli(env, *AWS, "--via", "skypilot", "--billing", "spot", "--run", "python train.py", "--json")
    assert r.returncode == 0, r.stderr
    launch_id = json.loads(r.stdout)["id"]
    name = f"gpuplan-{launch_id}"
    assert any(c[:6] == ["sky", "jobs", "launch", "-y", "-d", "-n"] and c[6] == name
               for c in engine_state(env)["calls"])
    r = cli(env, "ls", "--json")
    assert json.loads(r.stdout)["launches"][0]["state"] == "running"
    r = cli(env, "down", launch_id, "--yes")
    assert r.returncode == 0, r.stderr
    assert ["sky", "jobs", "cancel", "-y", "-n", name] in engine_state(env)["calls"]


def test_dstack_runs_it_with_the_ttl_as_max_duration_and_stops_it(env: dict[str, str]) -> None:
    from tests.gpuplan.render.test_export import dstack_parse

    r = cli(env, *AWS, "--via", "dstack", "--run", "python train.py", "--json")
    assert r.returncode == 0, r.stderr
    launch_id = json.loads(r.stdout)["id"]
    apply = next(c for c in engine_state(env)["calls"] if c[:2] == ["dstack", "apply"])
    conf = dstack_parse(Path(apply[apply.index("-f") + 1]))  # dstack's own parser takes it
    assert conf.name == f"gpuplan-{launch_id}" and conf.max_duration == 120 * 60
    assert ledger_row(env, launch_id)["provider"] == "dstack"
    r = cli(env, "down", "--all", "--yes")
    assert r.returncode == 0, r.stderr
    assert ["dstack", "stop", "-y", f"gpuplan-{launch_id}"] in engine_state(env)["calls"]


def test_a_missing_engine_or_its_credentials_is_one_line_naming_the_step(env: dict[str, str]) -> None:
    r = cli({**env, "PATH": str(Path(sys.executable).parent.parent / "nothing")}, *AWS, "--via", "skypilot")
    assert r.returncode == 2 and "pip install 'skypilot[aws]'" in r.stderr and "sky check" in r.stderr, r.stderr
    state = engine_state(env)
    Path(env["FAKE_ENGINE_STATE"]).write_text(json.dumps({**state, "no_credentials": True}))
    r = cli(env, *AWS, "--via", "skypilot")
    assert r.returncode == 3 and "sky check" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_an_engine_that_does_not_run_the_cloud_is_refused(env: dict[str, str]) -> None:
    r = cli(env, "launch", "--provider", "tencent", "--instance-type", "GN10Xp.2XLARGE40", "--zone",
            "ap-guangzhou-3", "--via", "skypilot", "--yes")
    assert r.returncode == 2 and "skypilot does not launch on tencent" in r.stderr, r.stderr
    assert engine_state(env)["calls"] == []


def test_the_plans_winner_goes_through_the_engine_on_its_cloud(env: dict[str, str]) -> None:
    r = cli(env, "plan", "--gpu-hours", "10", "--provider", "gcp", "--billing", "hourly", "--json")
    assert r.returncode == 0, r.stderr
    win = json.loads(r.stdout)["cheapest"]
    r = cli(env, "launch", "--from-plan", "--via", "skypilot", "--ttl", "3h", "--yes", "--json")
    assert r.returncode == 0, r.stderr
    launch_id = json.loads(r.stdout)["id"]
    row = ledger_row(env, launch_id)
    assert (row["provider"], row["region"], row["instance_type"]) == ("skypilot", f"gcp:{win['region']}",
                                                                       win["offer"])
    r = cli(env, "ls")
    assert f"gcp:{win['region']}" in r.stdout  # where it runs: the engine's cloud and region


def test_a_launch_killed_after_the_engine_started_it_is_found_by_name_and_ended(env: dict[str, str]) -> None:
    r = cli({**env, "GPUPLAN_CRASH_AT": "after-run"}, *AWS, "--via", "skypilot")
    assert r.returncode != 0
    [name] = engine_state(env)["clusters"]  # the engine started it; its name never reached the ledger
    r = cli(env, "ls", "--json")
    assert r.returncode == 0, r.stderr
    [launch] = json.loads(r.stdout)["launches"]
    assert [m["id"] for m in launch["instances"]] == [name] and launch["state"] == "running"
    r = cli(env, "down", launch["id"], "--yes")
    assert r.returncode == 0, r.stderr
    assert engine_state(env)["clusters"] == {}


def test_ls_without_the_engine_still_lists_the_launch_and_says_why(env: dict[str, str]) -> None:
    r = cli(env, *AWS, "--via", "skypilot")
    assert r.returncode == 0, r.stderr
    r = cli({**env, "PATH": "/nonexistent"}, "ls")
    assert r.returncode == 0, r.stderr
    assert "skypilot" in r.stdout and "provider not reachable: skypilot is not installed" in r.stderr
