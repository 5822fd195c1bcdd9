"""The snapshot shipped in ``pricing/data``: GPU specs, instance rows, card and electricity prices."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from importlib import resources

from pricing.billing import billing_rules
from pricing.catalog.parse import parse_instances
from pricing.catalog.rows import CardPrice, ElectricityPrice, GpuSpec, InstanceType, Interconnect, Layer
from pricing.datafiles import data_rows
from pricing.money import Currency


def _sourced(r: dict[str, str]) -> dict[str, object]:
    return {"source": r["source"], "as_of": date.fromisoformat(r["as_of"]), "notes": r.get("notes", "")}


def _opt_float(text: str) -> float | None:
    return float(text) if text.strip() else None


def shipped_gpus() -> dict[str, GpuSpec]:
    specs = {}
    for r in data_rows("gpus.csv"):
        spec = GpuSpec(
            key=r["key"],
            name=r["name"],
            aliases=tuple(a for a in r["aliases"].split(";") if a),
            arch=r["arch"],
            vram_gb=float(r["vram_gb"]),
            mem_bw_gbs=_opt_float(r["mem_bw_gbs"]),
            fp32_tflops=_opt_float(r["fp32_tflops"]),
            tensor_fp16_tflops=_opt_float(r["tensor_fp16_tflops"]),
            tdp_w=_opt_float(r["tdp_w"]),
            interconnect=Interconnect(r["interconnect"]),
            **_sourced(r),  # type: ignore[arg-type]
        )
        specs[spec.key] = spec
    return specs


def shipped_instance_files() -> dict[str, str]:
    """provider name -> CSV text of its shipped instance rows (``instances/<provider>.csv``)."""
    # Providers in the order the billing rules list them (the order tables show them in).
    order = list(dict.fromkeys(provider for provider, _ in billing_rules()))
    folder = resources.files("pricing.data").joinpath("instances")
    files = [f for f in folder.iterdir() if f.name.endswith(".csv")]
    files.sort(key=lambda f: (order.index(f.name[:-4]) if f.name[:-4] in order else len(order), f.name))
    return {f.name.removesuffix(".csv"): f.read_text(encoding="utf-8") for f in files}


def shipped_instances() -> list[InstanceType]:
    rows: list[InstanceType] = []
    for provider, text in shipped_instance_files().items():
        rows += parse_instances(text, origin=f"pricing/data/instances/{provider}.csv", layer=Layer.SHIPPED,
                                provider=provider)
    return rows


def shipped_cards() -> list[CardPrice]:
    return [
        CardPrice(gpu=r["gpu"], condition=r["condition"], price=Decimal(r["price"]), currency=Currency(r["currency"]),
                  **_sourced(r))  # type: ignore[arg-type]
        for r in data_rows("cards.csv")
    ]


def shipped_electricity() -> list[ElectricityPrice]:
    return [
        ElectricityPrice(region=r["region"], currency=Currency(r["currency"]),
                         price_per_kwh=Decimal(r["price_per_kwh"]),
                         customer_class=r.get("customer_class", ""), default=r.get("default", "") == "yes",
                         **_sourced(r))  # type: ignore[arg-type]
        for r in data_rows("electricity.csv")
    ]
