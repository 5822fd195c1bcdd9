"""A Tencent machine ends itself: its boot script terminates it through the API with its CAM role's keys.

The launch goes through the real SDK to the fake CVM; the boot script then runs in a sandbox whose
metadata service and CVM endpoint are the fake's, so the TerminateInstances it sends is signed with
the temporary keys and session token the fake handed to that machine's role, and nothing else.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from launch.boot import BootConfig, BootSpec, Driver
from providers.capabilities import TAG_ID, LaunchRequest, SelfEnd
from providers.tencent.compute import TencentCompute
from providers.testing.fake_cvm import FakeCvm
from tests.fakes.machine import Machine

GZ = "ap-guangzhou"
ROLE = "gpuplan-self-end"


def launch(tencent_env: FakeCvm, sleeps: list[float], role: str | None) -> str:
    compute = TencentCompute(GZ, sleep=sleeps.append)
    result = compute.run(LaunchRequest(region=GZ, zone="ap-guangzhou-3", instance_type="GN10Xp.2XLARGE40",
                                       client_token="tok-end", tags={TAG_ID: "gp-0000000001"}, cam_role=role,
                                       user_data="#!/bin/bash\ntrue\n"))
    (iid,) = result.instance_ids
    return iid


def boot(machine: Machine, fake: FakeCvm, iid: str, role: str) -> None:
    cfg = BootConfig(launch_id="gp-0000000001", region=GZ, nodes=1, driver=Driver.CHECK, end=SelfEnd.TENCENT_ROLE,
                     user="", cam_role=role, metadata_url=fake.metadata_url(iid), tencent_api=fake.endpoint)
    machine.boot_with(BootSpec(run="echo trained\n", down_when_done=True, cam_role=role), cfg,
                      GPUPLAN_END_RETRY_SECONDS="0.1")


def test_the_role_is_sent_with_the_launch_and_the_machine_terminates_itself(
        tencent_env: FakeCvm, sleeps: list[float], tmp_path: Path) -> None:
    iid = launch(tencent_env, sleeps, ROLE)
    assert tencent_env.calls_of("RunInstances")[0].params["CamRoleName"] == ROLE
    machine = Machine(tmp_path / "m")
    boot(machine, tencent_env, iid, ROLE)
    machine.wait_for(lambda: "TerminateInstances accepted" in machine.state())
    (call,) = tencent_env.calls_of("TerminateInstances")
    assert call.params == {"InstanceIds": [iid]} and call.outcome == "ok"
    assert tencent_env.instances[iid].state == "TERMINATING"
    assert not any(c.startswith("shutdown") for c in machine.calls)  # a shutdown would stop it and keep billing


def test_without_the_role_the_machine_cannot_end_itself_and_says_so(
        tencent_env: FakeCvm, sleeps: list[float], tmp_path: Path) -> None:
    iid = launch(tencent_env, sleeps, None)  # launched without the role: the metadata has no keys for it
    machine = Machine(tmp_path / "m")
    boot(machine, tencent_env, iid, ROLE)
    machine.wait_for(lambda: "gave up" in machine.state())
    assert "TerminateInstances failed (try 5 of 5" in machine.state()
    assert not tencent_env.calls_of("TerminateInstances")
    assert tencent_env.instances[iid].state in ("PENDING", "RUNNING")
    assert "404" in (machine.log / "end.log").read_text()


def test_the_temporary_keys_need_their_token(tencent_env: FakeCvm, sleeps: list[float]) -> None:
    """The fake refuses a temporary key without its session token, as Tencent does: the signer must send it."""
    import json
    import time
    import urllib.request
    from urllib.parse import urlsplit

    from launch.boot.end_tencent import signed_headers

    iid = launch(tencent_env, sleeps, ROLE)
    creds = json.loads(tencent_env.metadata(iid, f"cam/security-credentials/{ROLE}") or "{}")
    for token, want in (("", "AuthFailure.TokenFailure"), (creds["Token"], None)):
        headers = signed_headers(secret_id=creds["TmpSecretId"], secret_key=creds["TmpSecretKey"], token=token,
                                 host=urlsplit(tencent_env.endpoint).netloc, action="DescribeInstances", region=GZ,
                                 body=b"{}", timestamp=int(time.time()))
        req = urllib.request.Request(tencent_env.endpoint + "/", data=b"{}", headers=headers, method="POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            answer = json.loads(r.read())["Response"]
        assert answer.get("Error", {}).get("Code") == want


@pytest.mark.parametrize("path", ["cam/security-credentials/another-role", "cam/security-credentials/"])
def test_the_metadata_gives_keys_only_for_the_machines_own_role(tencent_env: FakeCvm, sleeps: list[float],
                                                                 path: str) -> None:
    iid = launch(tencent_env, sleeps, ROLE)
    assert tencent_env.metadata(iid, path) is None
    assert tencent_env.metadata(iid, "instance-id") == iid
