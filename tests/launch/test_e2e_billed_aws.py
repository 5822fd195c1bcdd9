"""`spend --billed` end to end: launches made through moto's EC2, their bill from moto's Cost Explorer.

moto's Cost Explorer tracks no cost: it answers GetCostAndUsage with results queued through its
own API, one per distinct request, whatever was asked. The queued answer here is grouped by
the gpuplan:id tag alone, which the reader must take as well as tag-and-service groups.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.launch import test_e2e_aws as aws
from tests.launch.test_e2e_aws import SECRET, cli, launch_args

# the moto server, its EC2 client, an image and the CLI's environment, as the launch tests have them
moto_url, ec2, ami, env = aws.moto_url, aws.ec2, aws.ami, aws.env

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def queue_bills(url: str, *results: list[dict[str, Any]]) -> None:
    """Queue moto's answers to GetCostAndUsage: each a ResultsByTime list."""
    body = json.dumps({"results": [{"ResultsByTime": r, "DimensionValueAttributes": []} for r in results]}).encode()
    req = urllib.request.Request(f"{url}/moto-api/static/ce/cost-and-usage-results", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as answer:
        assert answer.status == 201


def day(d: datetime, groups: dict[str, str]) -> dict[str, Any]:
    """One day of Cost Explorer's answer, grouped by the gpuplan:id tag alone."""
    return {"TimePeriod": {"Start": f"{d:%Y-%m-%d}", "End": f"{d + timedelta(days=1):%Y-%m-%d}"}, "Total": {},
            "Groups": [{"Keys": [f"gpuplan:id${k}"], "Metrics": {"UnblendedCost": {"Amount": v, "Unit": "USD"}}}
                       for k, v in groups.items()], "Estimated": False}


def launched(env: dict[str, str], ami: str, *more: str) -> str:
    r = cli(env, *launch_args(ami, "--json", *more))
    assert r.returncode == 0, r.stderr
    return str(json.loads(r.stdout)["id"])


def move(env: dict[str, str], launch_id: str, start: datetime, end: datetime) -> None:
    """Say in the ledger that a launch ran from ``start`` to ``end`` (as if it had been made then)."""
    db = sqlite3.connect(Path(env["GPUPLAN_HOME"]) / "data" / "ledger.sqlite3")
    with db:
        db.execute("UPDATE launches SET created_at = ?, expires_at = NULL WHERE id = ?",
                   (start.isoformat(), launch_id))
        db.execute("UPDATE instances SET started_at = ?, ended_at = ? WHERE launch_id = ?",
                   (start.isoformat(), end.isoformat(), launch_id))
    db.close()


def hourly_rate(env: dict[str, str], launch_id: str) -> Decimal:
    db = sqlite3.connect(Path(env["GPUPLAN_HOME"]) / "data" / "ledger.sqlite3")
    unit, extras = db.execute("SELECT unit_price, extras_unit FROM launches WHERE id = ?", (launch_id,)).fetchone()
    db.close()
    assert Decimal(unit) == Decimal("3.06")
    return Decimal(unit) + Decimal(extras or 0)


def secret_kept_out(env: dict[str, str], *outputs: str) -> None:
    assert not any(SECRET in o for o in outputs)
    for folder in (env["GPUPLAN_HOME"], env["HOME"]):
        for f in Path(folder).rglob("*"):
            assert not f.is_file() or SECRET.encode() not in f.read_bytes(), f


def test_spend_billed_shows_each_bill_beside_its_estimate_and_budgets_count_it(
        env: dict[str, str], ec2: Any, ami: str, moto_url: str) -> None:
    outputs: list[str] = []
    # two launches of last month, ended: p3.2xlarge at 3.06 USD/h (the shipped price the launch records)
    first_of_month = datetime.now(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    d1, d2 = first_of_month - timedelta(days=2), first_of_month - timedelta(days=1)
    short, lost = launched(env, ami), launched(env, ami)
    for i in (short, lost):
        assert cli(env, "down", i, "--yes").returncode == 0
    move(env, short, d1 + timedelta(hours=10), d1 + timedelta(hours=12))  # 2 h: 6.12 estimated
    move(env, lost, d1, d1 + timedelta(hours=1))  # 1 h on the ledger, but billed a whole day after
    # this month's launch, still running, held to a project budget
    running = launched(env, ami, "--project", "vision")
    assert cli(env, "budget", "set", "--project", "vision", "--monthly", "1000 USD").returncode == 0
    today = datetime.now(UTC)
    queue_bills(moto_url,
                [day(d1, {short: "9.00", lost: "3.06"}), day(d2, {lost: "73.44"})],  # last month's request
                [day(today, {running: "5.00"})])  # this month's

    r = cli(env, "spend", "--billed", "--json", "--month", f"{d1:%Y-%m}")
    assert r.returncode == 0, r.stderr
    outputs += [r.stdout, r.stderr]
    got = {x["id"]: x for x in json.loads(r.stdout)["launches"]}
    hourly = hourly_rate(env, short)  # the instance and its disk, as the launch recorded them (3.06 + the disk)
    estimated = (2 * hourly).quantize(Decimal("0.01"))
    assert (got[short]["estimated"], got[short]["billed"]) == (f"{estimated}", "9.00")
    assert Decimal(got[short]["difference"]) == Decimal("9.00") - estimated
    assert got[short]["flagged"] is True and got[short]["alarm"] is None  # ~45% and ~2.8 USD over
    assert got[lost]["billed"] == "76.50" and f"{d2:%Y-%m-%d}" in got[lost]["alarm"]
    assert "Cost Explorer" in r.stderr and "--activate-tag" in r.stderr  # where the figures came from, said once

    r = cli(env, "spend", "--billed", "--json")
    outputs += [r.stdout, r.stderr]
    (this,) = [x for x in json.loads(r.stdout)["launches"] if x["id"] == running]
    assert this["billed"] == "5.00"
    r = cli(env, "budget", "ls", "--json")
    outputs += [r.stdout, r.stderr]
    (vision,) = json.loads(r.stdout)["budgets"]
    assert vision["billed"]["amount"] == "5.00"
    assert Decimal(vision["committed"]["amount"]) == Decimal("5.00") + Decimal(vision["estimated"]["amount"])

    # asked again today: the kept answer, no new (charged) request; moto's queue is empty, so one would read zero
    r = cli(env, "spend", "--billed", "--json")
    outputs += [r.stdout, r.stderr]
    assert [x["billed"] for x in json.loads(r.stdout)["launches"] if x["id"] == running] == ["5.00"]
    assert json.loads(r.stdout)["clouds"][0]["kept_from_earlier_read"] is True
    cli(env, "down", "--all", "--yes")
    secret_kept_out(env, *outputs)


class Denied(BaseHTTPRequestHandler):
    """Cost Explorer as it answers credentials without ce:GetCostAndUsage."""

    def do_POST(self) -> None:  # noqa: N802 - the standard library's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps({"__type": "AccessDeniedException", "Message": "User: arn:aws:iam::123456789012:user/x "
                           "is not authorized to perform: ce:GetCostAndUsage"}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def denied_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Denied)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_without_cost_explorer_rights_spend_falls_back_to_estimates_with_one_line(
        env: dict[str, str], ec2: Any, ami: str, denied_url: str) -> None:
    running = launched(env, ami)
    r = cli(env, "spend", "--billed", "--json", AWS_ENDPOINT_URL_COST_EXPLORER=denied_url)
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(r.stdout)["launches"]
    assert row["id"] == running and row["billed"] is None and row["estimated"] is not None
    said = [line for line in r.stderr.splitlines() if "ce:GetCostAndUsage" in line]
    assert len(said) == 1 and "estimates" in said[0]
    assert cli(env, "down", "--all", "--yes").returncode == 0
    secret_kept_out(env, r.stdout, r.stderr)
