"""Handing each node of a several-node launch its torchrun rank, and the boot script waiting for it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from launch.boot import BootConfig, BootSpec, Driver
from launch.rendezvous import Node, cluster_env, manual_lines, push
from providers.capabilities import SelfEnd
from tests.fakes.machine import Machine

NODES = [Node("ins-a", "203.0.113.5", "10.0.0.5"), Node("ins-b", "203.0.113.6", "10.0.0.6")]


class FakeSsh:
    """An ssh that refuses until sshd is 'up' (after ``down_for`` tries per host), recording what it was sent."""

    def __init__(self, down_for: int = 0) -> None:
        self.down_for = down_for
        self.tries: dict[str, int] = {}
        self.sent: dict[str, str] = {}

    def __call__(self, command: list[str], *, input: str, **_: Any) -> subprocess.CompletedProcess[str]:
        host = next(a for a in command if a.startswith("ubuntu@")).split("@")[1]
        self.tries[host] = self.tries.get(host, 0) + 1
        if self.tries[host] <= self.down_for:
            return subprocess.CompletedProcess(command, 255, "",
                                               f"ssh: connect to host {host} port 22: Connection refused\n")
        assert command[-1] == "sudo -n tee /var/lib/gpuplan/cluster.env" and "BatchMode=yes" in command
        self.sent[host] = input
        return subprocess.CompletedProcess(command, 0, "", "")


def test_each_node_gets_its_rank_and_node_0_leads() -> None:
    ssh = FakeSsh(down_for=2)
    sleeps: list[float] = []
    assert push(NODES, None, run=ssh, sleep=sleeps.append, clock=lambda: 0.0) == []
    assert ssh.sent == {"203.0.113.5": "NODE_RANK=0\nNNODES=2\nMASTER_ADDR=10.0.0.5\nMASTER_PORT=29500\n",
                        "203.0.113.6": "NODE_RANK=1\nNNODES=2\nMASTER_ADDR=10.0.0.5\nMASTER_PORT=29500\n"}
    assert len(sleeps) == 2  # retried while sshd came up


def test_a_node_that_never_answers_is_named_with_sshs_reason() -> None:
    t = iter(range(0, 10_000, 100))
    failed = push(NODES, Path("/k/id"), run=FakeSsh(down_for=99), sleep=lambda s: None, clock=lambda: float(next(t)),
                  deadline_s=250)
    assert failed == ["node 0 (ins-a): ssh: connect to host 203.0.113.5 port 22: Connection refused",
                      "node 1 (ins-b): ssh: connect to host 203.0.113.6 port 22: Connection refused"]


def test_the_manual_lines_send_what_push_sends(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ssh").write_text('#!/bin/bash\ncat > "$OUT/$(echo "$@" | grep -o "ubuntu@[0-9.]*")"\n')
    (bin_dir / "ssh").chmod(0o755)
    for line in manual_lines(NODES, None):
        subprocess.run(["bash", "-c", line], check=True, env={"PATH": f"{bin_dir}:/usr/bin:/bin", "OUT": str(tmp_path)})
    assert (tmp_path / "ubuntu@203.0.113.6").read_text() == cluster_env(1, NODES)


def test_the_run_waits_for_its_rank_and_torchrun_sees_it(tmp_path: Path) -> None:
    m = Machine(tmp_path / "m")
    cfg = BootConfig(launch_id="gp-1", region="us-east-1", nodes=2, driver=Driver.CHECK, end=SelfEnd.SHUTDOWN, user="")
    run = 'echo "$PET_NODE_RANK/$PET_NNODES $PET_MASTER_ADDR:$PET_MASTER_PORT x$PET_NPROC_PER_NODE"\n'
    m.boot_with(BootSpec(run=run), cfg)
    m.wait_for(lambda: "rendezvous: waiting" in m.state())
    assert "run: started" not in m.state()
    (m.boot / "cluster.env").write_text(cluster_env(1, NODES))
    m.wait_for(lambda: "run: exited 0" in m.state())
    assert (m.log / "run.log").read_text() == "1/2 10.0.0.5:29500 x2\n"


def test_a_rank_that_never_comes_ends_a_done_launch_and_says_why(tmp_path: Path) -> None:
    m = Machine(tmp_path / "m")
    cfg = BootConfig(launch_id="gp-1", region="us-east-1", nodes=2, driver=Driver.CHECK, end=SelfEnd.SHUTDOWN, user="",
                     rendezvous_wait_seconds=2)
    m.boot_with(BootSpec(run="true\n", down_when_done=True), cfg)
    m.wait_for(lambda: "shutdown -h now" in m.calls)
    assert "run: not started: no rendezvous" in m.state()


def test_rank_values_are_data() -> None:
    hostile = [Node("i", "h", "10.0.0.1; touch pwned")]
    out = subprocess.run(["bash", "-c", f"{cluster_env(0, hostile)}\nprintf %s \"$MASTER_ADDR\""],
                         capture_output=True, text=True, check=True)
    assert out.stdout == "10.0.0.1; touch pwned"
