"""Hand a plan's chosen option to an engine people already run: a SkyPilot task or a dstack task.

The files carry the plan's cost estimate as comments and leave ``setup`` to the user. Both
engines take the YAML below; Tencent Cloud is supported by neither, so a Tencent winner is
refused with a pointer to ``gpuplan launch --count N`` instead of a file that cannot run.
Accelerator names are the engines' own (SkyPilot's catalog ``AcceleratorName``; dstack's
``NAME:MEMORY:COUNT`` GPU spec).

Zones: a plan prices AWS spot per zone ID (``usw2-az2``), which is the same zone in every account.
SkyPilot takes zone *names* (``us-west-2a``), and AWS maps names to IDs differently per account, so
the priced zone cannot be named offline; the task pins the region only and says, in a comment,
which zone ID the price is for and how to look up its name in your account.

Names: :func:`task_name` fits a run name to dstack's rule (``^[a-z][a-z0-9-]{1,40}$``, checked at
``dstack apply``), which SkyPilot's task-name rule also accepts.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from decimal import Decimal
from enum import StrEnum
from pathlib import Path

from pricing.catalog import PSEUDO_REGIONS
from pricing.extras import DEFAULT_DISK_GB  # one size for the exports, the plan and the launch
from pricing.errors import InputError
from pricing.money import money_text
from providers.registry import engine_runs
from planner.plan import Option, Plan

# Our GPU keys -> the accelerator names SkyPilot's catalog uses (skypilot-catalog v8 vms.csv).
SKY_ACCELERATORS = {
    "V100-SXM2-16GB": "V100", "V100-SXM2-32GB": "V100-32GB", "A100-SXM4-40GB": "A100", "A100-SXM4-80GB": "A100-80GB",
    "H100-SXM5-80GB": "H100", "H200-SXM-141GB": "H200", "L4": "L4", "L40S": "L40S", "A10G": "A10G", "T4": "T4",
    # Lambda Cloud's, as SkyPilot's catalogs/v8/lambda/vms.csv names them
    "A10": "A10", "RTX-A6000": "A6000", "QUADRO-RTX-6000": "RTX6000", "A100-PCIE-40GB": "A100",
    "H100-PCIE-80GB": "H100",
    # Google Cloud's and Azure's, as SkyPilot's gcp and azure catalogs name them
    "P100-PCIE-16GB": "P100", "V100-PCIE-16GB": "V100", "A100-PCIE-80GB": "A100-80GB",
}
# Instance types whose GPUs SkyPilot's catalog names apart from the model (gcp/vms.csv: A3 Mega's are H100-MEGA).
SKY_TYPE_ACCELERATORS = {"a3-megagpu-8g": "H100-MEGA"}
NAME_MAX = 41  # dstack's run names: ^[a-z][a-z0-9-]{1,40}$ (dstack._internal.core.services)
NAME_HASH = 6  # hex digits of the fingerprint that keeps a shortened name apart from its neighbours


class Engine(StrEnum):
    SKYPILOT = "skypilot"
    DSTACK = "dstack"


def machine_type(offer: str) -> str:
    """The machine an engine launches: a catalog name ``n1-standard-8+1xT4`` is GCP's N1 machine with GPUs
    attached (see providers.gcp.skypilot_catalog), and the engines take the GPUs from the accelerators line."""
    return offer.split("+", 1)[0]


def q(value: str) -> str:
    """A YAML scalar that stays a string whatever it holds (JSON strings are valid YAML)."""
    return json.dumps(value)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def task_name(facts: Sequence[str]) -> str:
    """A run name from the plan's facts, most telling first (model, method, amount of work, precision).

    All of them when they fit dstack's 41 characters; otherwise, in order, each fact that still fits
    whole, then a fingerprint of all of them, so plans that differ only in a dropped fact keep apart.
    The first fact always leads (cut if it alone is too long), and a name must start with a letter:
    one that would not gets a ``gpuplan-`` prefix.
    """
    words = [w for w in map(_slug, facts) if w]
    if not words or not words[0][0].isalpha():
        words = ["gpuplan", *words]
    full = "-".join(words)
    if 2 <= len(full) <= NAME_MAX:
        return full
    tag = hashlib.sha256(full.encode()).hexdigest()[:NAME_HASH]
    room = NAME_MAX - NAME_HASH - 1
    kept = words[0][:room].rstrip("-")  # the first fact (the model) always leads, cut if it must be
    for w in words[1:]:
        if len(f"{kept}-{w}") <= room:
            kept = f"{kept}-{w}"
    return f"{kept}-{tag}"


def _check(option: Option, engine: Engine) -> None:
    if option.provider == "local":
        raise InputError("the plan's winner is buying cards: there is nothing to export to an engine",
                         "plan with --billing hourly,spot (or --provider aws) to get a cloud option")
    if not engine_runs(engine, option.provider):
        raise InputError(
            f"{engine} does not support {option.provider}: no file was written",
            f"launch it with gpuplan itself: gpuplan launch --from-plan --count {option.nodes}"
            + ("" if option.region not in PSEUDO_REGIONS else " --zone ZONE"),
        )


def accelerator_lines(gpu: str, count: float, offer: str = "") -> list[str]:
    """SkyPilot's ``accelerators`` line for ``count`` x ``gpu`` on ``offer``; none where SkyPilot's name for it is
    not known."""
    acc = SKY_TYPE_ACCELERATORS.get(offer) or SKY_ACCELERATORS.get(gpu)
    return [f"  accelerators: {q(f'{acc}:{count:g}')}"] if acc else []


def sky_resources(provider: str, region: str, offer: str, gpu: str, count: float, billing: str,
                  after_region: list[str] | None = None) -> list[str]:
    """A SkyPilot task's or service's ``resources`` entries for one machine of ``offer``, training and serving
    alike (``after_region``: what the task says of the zone)."""
    return [f"  cloud: {provider}", *region_lines(region, "  region: {}"), *(after_region or []),
            f"  instance_type: {q(machine_type(offer))}", *accelerator_lines(gpu, count, offer),
            f"  use_spot: {'true' if billing == 'spot' else 'false'}"]


def dstack_placement(provider: str, region: str, billing: str) -> list[str]:
    """A dstack run's spot policy, backend and region, training and serving alike."""
    return [f"spot_policy: {'spot' if billing == 'spot' else 'on-demand'}", f"backends: [{provider}]",
            *region_lines(region, "regions: [{}]")]


def dstack_gpu(gpu: str, memory_gb: float, count: float) -> str:
    """dstack's ``NAME:MEMORY:COUNT`` GPU spec, quoted: the SkyPilot name's model part (dstack has no form factors)."""
    acc = SKY_ACCELERATORS.get(gpu, gpu).split("-")[0]
    return q(f"{acc}:{memory_gb:g}GB:{count:g}")


def region_lines(region: str, template: str) -> list[str]:
    """The engine's region line; none for a price that holds in every region (``global``): the engine picks one."""
    if region in PSEUDO_REGIONS:
        return [f"# the price holds in every region ({region}): the engine picks one with capacity"]
    return [template.format(q(region))]


def _header(plan: Plan, option: Option) -> list[str]:
    o = option
    return [
        f"# Written by gpuplan: {o.nodes} x {o.offer} ({o.gpus_total:g} x {o.gpu}) {o.billing} in {o.region}",
        f"# Estimated cost {money_text(o.cost.amount, plan.currency)}"
        # the provider's currency only where it differs: "457,022.64 USD (457,022.64 USD)" said it twice
        f"{'' if o.native_cost.currency == plan.currency else f' ({o.native_cost})'} for {o.wall_hours:,.1f} h"
        " of wall time; prices and speeds are gpuplan's estimates, see `gpuplan plan --explain`.",
        *[f"# {n}" for n in o.notes[:3]],
    ]


def _torchrun(nodes: str, gpus: str, rank: str, master: str) -> str:
    return (f"torchrun --nnodes={nodes} --nproc-per-node={gpus} --node-rank={rank} --master-addr={master} "
            "--master-port=29500 train.py")


def _zone_comment(o: Option) -> list[str]:
    """Why the task names no zone, though the plan priced one (see the module notes on zones)."""
    return [
        f"  # The price is for zone ID {o.zone}. SkyPilot takes zone names, which AWS maps to zone IDs",
        "  # differently in each account, so no zone is pinned: SkyPilot picks among the region's zones.",
        f"  # To pin the priced one, add `zone: NAME`, NAME from: aws ec2 describe-availability-zones"
        f" --region {o.region} --zone-ids {o.zone} --query 'AvailabilityZones[0].ZoneName'",
    ]


def _disk_gb(plan: Plan) -> str:
    """The disk per node the plan priced (its --disk-gb), else the default both share, in whole GB."""
    given = (plan.assumptions.get("extras") or {}).get("disk_gb")
    gb = math.ceil(Decimal(given)) if given is not None else DEFAULT_DISK_GB
    return str(gb or DEFAULT_DISK_GB)


# A spot plan's cost assumes the run restarts after a preemption (its spot overhead): the task must recover.
# SkyPilot recovers only a managed job (`sky jobs launch`); FAILOVER retries the task's own region (the one
# priced) before any other. The run restarts from its start: resuming from a checkpoint is the run's job.
_SKY_MANAGED = ["# A managed job: run it with `sky jobs launch FILE`, which replaces a preempted spot machine and",
                "# restarts the run (`sky launch` does not). Save checkpoints to a bucket and resume from them."]
_SKY_RECOVERY = ["  job_recovery:", "    strategy: FAILOVER", "    max_restarts_on_errors: 0"]
# dstack retries a run that found no capacity or lost its spot machine, for dstack's default window (1h).
_DSTACK_RETRY = ["retry:", "  on_events: [no-capacity, interruption]", "  duration: 1h"]


def skypilot_task(plan: Plan, option: Option, name: str) -> str:
    _check(option, Engine.SKYPILOT)
    o = option
    lines = [*_header(plan, o), f"name: {q(name)}", f"num_nodes: {o.nodes}", "resources:",
             *sky_resources(o.provider, o.region, o.offer, o.gpu, o.gpu_count, str(o.billing),
                            _zone_comment(o) if o.zone else None)]
    if o.billing == "spot":
        lines = [*lines[:len(_header(plan, o))], *_SKY_MANAGED, *lines[len(_header(plan, o)):], *_SKY_RECOVERY]
    lines += [f"  disk_size: {_disk_gb(plan)}",
              "setup: |", "  # Your environment: e.g. pip install -r requirements.txt (gpuplan leaves this to you).",
              "  true", "run: |",
              '  MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)',
              "  " + _torchrun("$SKYPILOT_NUM_NODES", "$SKYPILOT_NUM_GPUS_PER_NODE", "$SKYPILOT_NODE_RANK",
                               "$MASTER_ADDR")]
    return "\n".join(lines) + "\n"


def dstack_task(plan: Plan, option: Option, name: str, gpu_memory_gb: float) -> str:
    _check(option, Engine.DSTACK)
    o = option
    lines = [*_header(plan, o), "type: task", f"name: {q(name)}", f"nodes: {o.nodes}", "commands:",
             "  # Your environment first: e.g. pip install -r requirements.txt (gpuplan leaves this to you).",
             "  - " + q(_torchrun("$DSTACK_NODES_NUM", "$DSTACK_GPUS_PER_NODE", "$DSTACK_NODE_RANK",
                                  "$DSTACK_MASTER_NODE_IP")),
             "resources:", f"  gpu: {dstack_gpu(o.gpu, gpu_memory_gb, o.gpu_count)}",
             f"  disk: {q(f'{_disk_gb(plan)}GB..')}", *dstack_placement(o.provider, o.region, str(o.billing))]
    if o.billing == "spot":
        lines += _DSTACK_RETRY
    if o.billing not in ("spot", "hourly"):
        lines.insert(len(_header(plan, o)), f"# note: dstack runs on-demand or spot; the plan's {o.billing} "
                     "billing is not something dstack can buy")
    return "\n".join(lines) + "\n"


def export(plan: Plan, engine: Engine, path: Path, *, name: str, gpu_memory_gb: float) -> Path:
    """Write the winner for ``engine`` to ``path``; nothing is written if it cannot run there."""
    if not path.parent.exists():
        raise InputError(f"folder {path.parent} does not exist: nothing was written", "create it or pick another path")
    option = plan.cheapest
    text = skypilot_task(plan, option, name) if engine is Engine.SKYPILOT else dstack_task(
        plan, option, name, gpu_memory_gb)
    path.write_text(text, encoding="utf-8")
    return path


def run_command(engine: Engine, billing: str, path: Path) -> str:
    """How to start the written task: a spot task as SkyPilot's managed job, the one kind it recovers."""
    if engine is Engine.SKYPILOT:
        return f"sky {'jobs launch' if billing == 'spot' else 'launch'} {path}"
    return f"dstack apply -f {path}"
