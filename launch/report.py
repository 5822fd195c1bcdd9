"""How launches are shown: the JSON contracts of ``launch --json`` and ``ls --json``, and connect hints."""

from __future__ import annotations

from typing import Any

from pricing.money import Money
from providers.capabilities import InstanceInfo
from launch.ledger import LaunchRecord
from launch.service import LaunchOutcome, LaunchStatus


def money(m: Money | None) -> dict[str, str] | None:
    return None if m is None else {"amount": f"{m.amount:.2f}" if abs(m.amount) >= 1 else f"{m.amount:.4f}",
                                   "currency": m.currency.value}


def record_payload(r: LaunchRecord, instances: list[InstanceInfo]) -> dict[str, Any]:
    return {
        "id": r.id, "provider": r.provider, "instance_type": r.instance_type, "count": r.count,
        "instance_ids": [i.instance_id for i in instances], "state": r.state.value, "region": r.region,
        "zone": r.zone, "billing": r.billing.value, "months": r.months if r.billing == "monthly" else None,
        "unit_price": {"amount": str(r.unit_price.amount), "currency": r.unit_price.currency.value},
        "created_at": r.created_at.isoformat(timespec="seconds"),
        "expires_at": None if r.expires_at is None else r.expires_at.isoformat(timespec="seconds"),
        "instances": [{"id": i.instance_id, "state": i.state.value, "zone": i.zone, "public_ip": i.public_ip,
                       "private_ip": i.private_ip} for i in instances],
    }


def launch_payload(out: LaunchOutcome, dry_run: bool) -> dict[str, Any]:
    return {**record_payload(out.record, out.instances), "dry_run": dry_run, "notes": out.notes}


def status_payload(s: LaunchStatus) -> dict[str, Any]:
    return {**record_payload(s.record, s.instances), "accrued_cost": money(s.accrued),
            "projected_cost": money(s.projected), "age_hours": f"{s.age_hours:.2f}", "notes": s.notes}


def connect_lines(out: LaunchOutcome, gpus_per_node: int | None) -> list[str]:
    """How to reach the machines, and for several nodes the torchrun rendezvous line per node."""
    lines = []
    for i in out.instances:
        where = i.public_ip or i.private_ip
        lines.append(f"{i.instance_id}: ssh ubuntu@{where}" if where else f"{i.instance_id}: no address yet "
                     "(`gpuplan ls` shows it once the provider assigns one)")
    if len(out.instances) > 1:
        master = out.instances[0].private_ip or out.instances[0].public_ip or "<node-0 address>"
        nproc = gpus_per_node or "<GPUs per node>"
        for rank, i in enumerate(out.instances):
            lines.append(f"node {rank} ({i.instance_id}): torchrun --nnodes={len(out.instances)} "
                         f"--nproc-per-node={nproc} --node-rank={rank} --master-addr={master} --master-port=29500 "
                         "train.py")
    return lines
