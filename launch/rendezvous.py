"""The torchrun rendezvous of a several-node launch: which node is which, handed to each over SSH.

Every node boots the same user data, and no node can know the others' addresses before they
exist; once all run, the launcher knows them. It writes each node a ``cluster.env`` (its rank,
the node count, node 0's private address and port) into the boot folder; the boot script waits
for that file before the run, and exports the values under torchrun's own environment names
(``PET_NNODES``, ``PET_NODE_RANK``, ``PET_MASTER_ADDR``, ``PET_MASTER_PORT``: torchrun reads each
of its options from ``PET_<OPTION>``), so a plain ``torchrun train.py`` joins the job.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from launch.boot import BOOT_DIR
from providers.ssh_keys import ssh_command

MASTER_PORT = 29500  # torchrun's default --master-port
Runner = Callable[..., subprocess.CompletedProcess[str]]


@dataclass(frozen=True, slots=True)
class Node:
    instance_id: str
    address: str  # where the launcher reaches it (public, else private)
    private_ip: str  # where the other nodes reach it


def cluster_env(rank: int, nodes: Sequence[Node]) -> str:
    """The ``cluster.env`` of node ``rank``: shell-quoted assignments, sourced by the boot script."""
    values = {"NODE_RANK": rank, "NNODES": len(nodes), "MASTER_ADDR": nodes[0].private_ip, "MASTER_PORT": MASTER_PORT}
    return "".join(f"{k}={shlex.quote(str(v))}\n" for k, v in values.items())


def push_command(node: Node, identity: Path | None) -> list[str]:
    # written beside config.env, to the root-owned boot folder: through sudo (passwordless for ubuntu)
    return ssh_command(node.address, identity, ["sudo", "-n", "tee", f"{BOOT_DIR}/cluster.env"], batch=True)


def push(nodes: Sequence[Node], identity: Path | None, *, deadline_s: float = 300, retry_s: float = 10,
         run: Runner = subprocess.run, clock: Callable[[], float] = time.monotonic,
         sleep: Callable[[float], None] = time.sleep) -> list[str]:
    """Hand every node its rank, retrying while sshd comes up; what could not be handed over, in words."""
    left = dict(enumerate(nodes))
    end = clock() + deadline_s
    why: dict[int, str] = {}
    while left:
        for rank, node in list(left.items()):
            try:
                done = run(push_command(node, identity), input=cluster_env(rank, nodes), capture_output=True,
                           text=True, timeout=60)
            except (OSError, subprocess.TimeoutExpired) as exc:
                why[rank] = str(exc)
                continue
            if done.returncode == 0:
                del left[rank]
            else:
                why[rank] = (done.stderr.strip().splitlines() or [f"ssh exited {done.returncode}"])[-1]
        if not left or clock() >= end:
            break
        sleep(retry_s)
    return [f"node {rank} ({nodes[rank].instance_id}): {why.get(rank, 'not tried')}" for rank in left]


def manual_lines(nodes: Sequence[Node], identity: Path | None) -> list[str]:
    """The commands that hand each node its rank by hand (when the launcher could not log in)."""
    return [f"printf %s {shlex.quote(cluster_env(rank, nodes))} | {shlex.join(push_command(node, identity))}"
            for rank, node in enumerate(nodes)]
