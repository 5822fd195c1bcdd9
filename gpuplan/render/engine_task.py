"""The task file ``gpuplan launch --via skypilot|dstack`` hands to the engine: the quoted machine, the user's set-up
and job, and the TTL where the engine can carry it (dstack's ``max_duration``).

It says the same resources as ``plan --export`` (the same helpers write them), for one quoted launch
rather than a plan's winner; the run's ``name`` is added by the engine client, which names it after
the launch.
"""

from __future__ import annotations

import math
from decimal import Decimal

from gpuplan.render.export import (
    dstack_gpu,
    dstack_placement,
    machine_type,
    q,
    sky_resources,
)
from pricing.errors import InputError


def _block(text: str) -> list[str]:
    """A YAML literal block's lines (two spaces in) for a shell script."""
    return ["  " + line if line.strip() else "" for line in text.strip("\n").splitlines()] or ["  true"]


def skypilot_task(*, cloud: str, region: str, offer: str, gpu: str, gpu_count: float, nodes: int, billing: str,
                  disk_gb: int | None, setup: str | None, run: str | None, quoted: str) -> str:
    if billing == "spot" and run is None:
        raise InputError("a SkyPilot managed spot job runs a command and ends with it: give --run",
                         "e.g. --run 'python train.py' (SkyPilot relaunches it after a preemption)")
    lines = [(f"# Written by gpuplan launch --via skypilot: {nodes} x {offer} ({billing}) on {cloud} {region}, "
             f"quoted at {quoted}"), f"num_nodes: {nodes}", "resources:",
             *sky_resources(cloud, region, offer, gpu, gpu_count, billing)]
    if disk_gb:
        lines.append(f"  disk_size: {disk_gb}")
    if setup is not None:
        lines += ["setup: |", *_block(setup)]
    if run is not None:
        lines += ["run: |", *_block(run)]
    return "\n".join(lines) + "\n"


def dstack_task(*, cloud: str, region: str, offer: str, gpu: str, gpu_count: float, gpu_memory_gb: float, nodes: int,
                billing: str, disk_gb: int | None, setup: str | None, run: str | None, ttl_hours: Decimal | None,
                quoted: str) -> str:
    commands = [c for c in (setup, run) if c is not None] or ["sleep infinity"]
    lines = [(f"# Written by gpuplan launch --via dstack: {nodes} x {offer} ({billing}) on {cloud} {region}, "
             f"quoted at {quoted}"), "type: task", f"nodes: {nodes}", "commands:",
             *(f"  - {q(c.strip())}" for c in commands),
             "resources:", f"  gpu: {dstack_gpu(gpu, gpu_memory_gb, gpu_count)}",
             *([f"  disk: {q(f'{disk_gb}GB..')}"] if disk_gb else []),
             *dstack_placement(cloud, region, billing), f"instance_types: [{q(machine_type(offer))}]"]
    if ttl_hours is not None:
        # dstack ends the run at its max_duration: the TTL, held by dstack's server (whole minutes, rounded up)
        lines.append(f"max_duration: {max(1, math.ceil(ttl_hours * 60))}m")
    return "\n".join(lines) + "\n"
