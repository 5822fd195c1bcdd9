"""How launches are shown: the JSON contracts of ``launch --json`` and ``ls --json``, and connect hints."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pricing.money import Money, decimal_json, money_json
from providers.capabilities import InstanceInfo
from providers.ssh_keys import LOGIN_USER
from launch.rendezvous import MASTER_PORT
from launch.ledger import LaunchRecord
from launch.service import LaunchOutcome, LaunchStatus


def price_text(d: Decimal) -> str:
    """A price as a plain decimal string: at least 2 places, more only where the price has them."""
    return f"{d:.2f}" if d == round(d, 2) else format(d.normalize(), "f")


def quote_payload(q: Any) -> dict[str, Any]:
    """The JSON contract of ``gpuplan quote``: the provider's quote with prices as plain decimal strings."""
    def p(d: Decimal | None) -> str | None:
        return None if d is None else price_text(d)

    return {
        "provider_quote": {"region": q.region, "zone": q.zone, "instance_type": q.instance_type,
                           "billing": q.billing.value, "image": q.image, "request_id": q.request_id},
        "currency": q.currency.value, "payable": p(q.payable), "unit_price": p(q.unit_price),
        "unit_price_discount": p(q.unit_price_discount), "months": q.months, "period_price": p(q.period_price),
        "period_price_discount": p(q.period_price_discount),
        "discount_percent": None if q.discount_percent is None else format(q.discount_percent.normalize(), "f"),
        "steps": [{"from_hours": st.from_hours, "to_hours": st.to_hours, "unit_price": p(st.unit_price),
                   "unit_price_discount": p(st.unit_price_discount)} for st in q.steps],
        "source": q.source, "read_at": q.read_at.isoformat(timespec="seconds"),
    }


def extras_payload(bill: Any) -> dict[str, Any]:
    """The rest of a quoted machine's bill: each line as plan --json gives it, and what is not priced."""
    return {"extras": [{"item": i.item, "description": i.description, "quantity": decimal_json(i.quantity),
                        "unit": i.unit, "rate": {"amount": decimal_json(i.unit_price.amount),
                                                 "currency": i.unit_price.currency.value},
                        "amount": {"amount": money_json(i.cost.amount), "currency": i.cost.currency.value},
                        "source": i.source} for i in bill.items],
            "not_priced": list(bill.not_priced)}


def money(m: Money | None) -> dict[str, str] | None:
    return None if m is None else m.as_json()


def record_payload(r: LaunchRecord, instances: list[InstanceInfo]) -> dict[str, Any]:
    return {
        "id": r.id, "provider": r.provider, "instance_type": r.instance_type, "count": r.count,
        "instance_ids": [i.instance_id for i in instances], "state": r.state.value, "region": r.region,
        "zone": r.zone, "billing": r.billing.value, "months": r.months if r.billing == "monthly" else None,
        "unit_price": {"amount": price_text(r.unit_price.amount), "currency": r.unit_price.currency.value},
        "created_at": r.created_at.isoformat(timespec="seconds"),
        "expires_at": None if r.expires_at is None else r.expires_at.isoformat(timespec="seconds"),
        "teardown": r.teardown or None,
        "owner": r.owner or None, "project": r.project or None, "host": r.host or None,
        "instances": [{"id": i.instance_id, "state": i.state.value, "zone": i.zone, "public_ip": i.public_ip,
                       "private_ip": i.private_ip} for i in instances],
    }


def launch_payload(out: LaunchOutcome, dry_run: bool) -> dict[str, Any]:
    return {**record_payload(out.record, out.instances), "dry_run": dry_run, "notes": out.notes}


def status_payload(s: LaunchStatus) -> dict[str, Any]:
    return {**record_payload(s.record, s.instances), "accrued_cost": money(s.accrued),
            "projected_cost": money(s.projected), "age_hours": f"{s.age_hours:.2f}", "expired": s.expired,
            "notes": s.notes}




def connect_lines(out: LaunchOutcome, gpus_per_node: int | None) -> list[str]:
    """How to reach the machines, and for several nodes the torchrun rendezvous line per node."""
    lines = []
    for i in out.instances:
        where = i.public_ip or i.private_ip
        lines.append(f"{i.instance_id}: ssh {LOGIN_USER}@{where}" if where else f"{i.instance_id}: no address yet "
                     "(`gpuplan ls` shows it once the provider assigns one)")
    if len(out.instances) > 1:
        master = out.instances[0].private_ip or out.instances[0].public_ip or "<node-0 address>"
        nproc = gpus_per_node or "<GPUs per node>"
        for rank, i in enumerate(out.instances):
            lines.append(f"node {rank} ({i.instance_id}): torchrun --nnodes={len(out.instances)} "
                         f"--nproc-per-node={nproc} --node-rank={rank} --master-addr={master} "
                         f"--master-port={MASTER_PORT} train.py")
    return lines
