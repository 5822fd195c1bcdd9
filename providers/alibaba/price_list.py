"""Alibaba Cloud rows for ``pricing/data/instances/alibaba.csv`` from a copy of its China-site ECS price list.

No Alibaba price list is in SkyPilot's or gpuhunt's catalogs. CloudPilot AI's Karpenter provider
ships ``pkg/providers/pricing/initial-on-demand-prices.json`` (github.com/cloudpilot-ai/
karpenter-provider-alibabacloud): ``{region: {instance type: pay-as-you-go price per hour}}``,
Linux, scraped by its price server from Alibaba's China-site price file (aliyun.com/price,
``ecs-price-info``), so in CNY; the file gives no date: its commit date is the latest its
prices can be from, and rows carry it as their date. Mainland regions only (not cn-hongkong).

The price file has no specs: vCPUs, memory and GPUs per type are ``instance_specs.csv`` here, each
with its source; the GPU model and form factor follow Alibaba's family names (gn5 P100 PCIe,
gn6v V100 SXM2 16 GB, gn6e V100 SXM2 32 GB, gn6i T4, gn7 A100 SXM4 40 GB, gn7e A100 SXM4 80 GB,
gn7i A10). A type with no spec row is reported. Monthly subscription prices exist only for
cn-shanghai, in a third-party table of June 2023 (``monthly_cn_shanghai.csv``); a type takes its
monthly price only where that table's hourly price is the price file's cut to two decimals,
that is where the list did not change between the two. No preemptible prices in any source.

Run: ``python -m providers.alibaba.price_list prices.json --commit SHA --committed 2024-12-31 > alibaba.csv``.
"""

from __future__ import annotations

import csv
import json
import sys
from decimal import ROUND_DOWN, Decimal
from pathlib import Path
from typing import TextIO

from providers.converter import Skipped, main

HERE = Path(__file__).resolve().parent
SOURCE = ("github.com/cloudpilot-ai/karpenter-provider-alibabacloud "
          "pkg/providers/pricing/initial-on-demand-prices.json "
          "@{commit} (key <region>.<type>: pay-as-you-go CNY/h, Linux, from Alibaba's China-site price file)")
NOT_MAINLAND = {"cn-hongkong"}


def _specs() -> dict[str, dict[str, str]]:
    with (HERE / "instance_specs.csv").open(encoding="utf-8") as f:
        return {r["instance_type"]: r for r in csv.DictReader(f)}


def _monthly() -> dict[tuple[str, str], dict[str, str]]:
    with (HERE / "monthly_cn_shanghai.csv").open(encoding="utf-8") as f:
        return {(r["instance_type"], r["region"]): r for r in csv.DictReader(f)}


def rows(source: TextIO, *, commit: str, committed: str) -> tuple[list[dict[str, str]], list[Skipped]]:
    """gpuplan rows (one per GPU type and mainland region) and the types left out with why (once per type)."""
    specs, monthly = _specs(), _monthly()
    out: list[dict[str, str]] = []
    skipped: dict[str, Skipped] = {}
    for region, prices in json.load(source, parse_float=str).items():
        if not region.startswith("cn-") or region in NOT_MAINLAND:
            continue
        for name, price in prices.items():
            family = name.split(".")[1].split("-")[0] if name.count(".") >= 2 else ""
            if not family.removeprefix("ebm").startswith("gn"):  # gn*, and bare-metal ebmgn*
                continue  # not a GPU family
            spec = specs.get(name)
            if spec is None:
                skipped.setdefault(name, Skipped(name, "no source gives its vCPUs, memory and GPUs"))
                continue
            notes = [f"spec from {spec['spec_source']}",
                     f"as_of is the price file's commit date ({committed}): its prices are at least that old"]
            month = ""
            if (m := monthly.get((name, region))) is not None:
                if Decimal(price).quantize(Decimal("0.01"), ROUND_DOWN) == Decimal(m["hourly"]):
                    month = m["monthly"]
                    notes.append(f"monthly from {m['source']}, whose hourly price {m['hourly']} agrees with the file's")
                else:
                    notes.append(f"no monthly price: the June 2023 table's hourly {m['hourly']} differs from {price}")
            out.append({
                "instance_type": name, "family": spec["family"], "gpu": spec["gpu"], "gpu_count": spec["gpu_count"],
                "vcpu": spec["vcpu"], "mem_gb": spec["mem_gb"], "region": region, "zone": "", "zones": "",
                "currency": "CNY", "hourly": price, "monthly": month, "as_of_kind": "price_date",
                "source": SOURCE.format(commit=commit), "as_of": committed, "notes": "; ".join(notes),
            })
    return out, list(skipped.values())


if __name__ == "__main__":
    sys.exit(main(__doc__, rows, sys.argv[1:], source_help="the commit the price file was read at",
                  date="committed", date_help="that commit's date (YYYY-MM-DD), the rows' as_of"))
