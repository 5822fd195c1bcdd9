"""Google Cloud rows for ``pricing/data/instances/gcp.csv`` from SkyPilot's catalog of it.

Compute Engine bills the GPUs apart from the machine: SkyPilot's ``catalogs/v8/gcp/vms.csv``
has one row per machine type and zone (vCPUs and memory only) and one row per GPU model,
count and zone with no machine type. A gpuplan row is the sum of the two, on demand and spot,
as SkyPilot prices a machine with its GPUs:

- accelerator-optimized types come with their GPUs: ``a2-highgpu-Ng`` / ``a2-megagpu-16g``
  (A100 40 GB), ``a2-ultragpu-Ng`` (A100 80 GB), ``a3-highgpu-Ng`` / ``a3-megagpu-8g`` (H100),
  ``g2-standard-*`` (L4, 1-8 by size);
- T4, V100 and P100 attach to N1: gpuplan pairs N GPUs with ``n1-standard-(8N)`` (8 vCPUs a GPU,
  within Compute Engine's per-GPU vCPU limits) and names the row ``n1-standard-8+1xT4``; the
  engines are given the machine type and the GPUs apart.

One row per type and region, its zones those where both parts are listed (Compute Engine
prices a region's zones alike; the converter checks it). A GPU model whose price contradicts
itself somewhere (spot above on demand, as the source's A100 80 GB is in two regions) is not
trusted anywhere: its types are reported, not shipped; a
summed spot price not below on demand is no spot price. No committed-use prices in the source.

Run: ``python -m providers.gcp.skypilot_catalog vms.csv --commit SHA --read 2026-12-04 > gcp.csv``.
"""

from __future__ import annotations

import csv
import re
import sys
from collections.abc import Iterable
from decimal import Decimal

from providers.converter import Skipped, main
from providers.gcp import list_prices

SOURCE = ("github.com/skypilot-org/skypilot-catalog catalogs/v8/gcp/vms.csv @{commit} (rows InstanceType=<machine> "
          "and AcceleratorName=<gpu>, AcceleratorCount=<n>, per zone: Price and SpotPrice USD/h, summed)")
# SkyPilot's accelerator name -> catalog GPU key, and what Compute Engine's GPU page says of it.
GPU_KEYS = {
    "A100": ("A100-SXM4-40GB", "A100 40 GB (SXM4, NVLink within the machine)"),
    "A100-80GB": ("A100-SXM4-80GB", "A100 80 GB (SXM4)"),
    "H100": ("H100-SXM5-80GB", "H100 80 GB (SXM5)"),
    "H100-MEGA": ("H100-SXM5-80GB", "H100 80 GB (SXM5) on A3 Mega's faster network"),
    "L4": ("L4", "L4"),
    "T4": ("T4", "T4"),
    "V100": ("V100-SXM2-16GB", "V100 16 GB (SXM2)"),
    "P100": ("P100-PCIE-16GB", "P100 16 GB (PCIe)"),
}
# Machine types that come with their GPUs: pattern -> (accelerator name, GPUs, or None to take the size's N).
BUNDLED = (
    (r"a2-highgpu-(\d+)g", "A100", None), (r"a2-megagpu-16g", "A100", 16), (r"a2-ultragpu-(\d+)g", "A100-80GB", None),
    (r"a3-highgpu-(\d+)g", "H100", None), (r"a3-megagpu-8g", "H100-MEGA", 8),
)
G2_L4 = {"g2-standard-4": 1, "g2-standard-8": 1, "g2-standard-12": 1, "g2-standard-16": 1, "g2-standard-32": 1,
         "g2-standard-24": 2, "g2-standard-48": 4, "g2-standard-96": 8}  # Compute Engine's G2 machine table
N1_ATTACHED = {"T4": (1, 2, 4), "V100": (1, 2, 4, 8), "P100": (1, 2, 4)}  # the counts the source prices
_BUNDLED = tuple((re.compile(p + r"\Z"), name, n) for p, name, n in BUNDLED)


def _pairs(machine: str) -> list[tuple[str, str, int]]:
    """(row name, accelerator name, count) for each way gpuplan offers ``machine`` with GPUs."""
    for pattern, name, n in _BUNDLED:
        if m := pattern.match(machine):
            return [(machine, name, n if n is not None else int(m.group(1)))]
    if machine in G2_L4:
        return [(machine, "L4", G2_L4[machine])]
    if m := re.fullmatch(r"n1-standard-(\d+)", machine):
        count = int(m.group(1)) // 8
        return [(f"{machine}+{count}x{name}", name, count) for name, counts in N1_ATTACHED.items() if count in counts]
    return []


def rows(lines: Iterable[str], *, commit: str, read: str) -> tuple[list[dict[str, str]], list[Skipped]]:
    """gpuplan rows (one per machine with its GPUs and region) and what was left out with why (once per type)."""
    machines: dict[tuple[str, str], list[dict[str, str]]] = {}  # (machine, region) -> its zone rows
    gpus: dict[tuple[str, int, str], dict[str, str]] = {}  # (accelerator, count, zone) -> row
    for r in csv.DictReader(lines):
        if r["InstanceType"]:
            machines.setdefault((r["InstanceType"], r["Region"]), []).append(r)
        elif r["AcceleratorName"] in GPU_KEYS:
            gpus[(r["AcceleratorName"], int(float(r["AcceleratorCount"])), r["AvailabilityZone"])] = r
    # A GPU model whose spot price is above its on-demand price anywhere is not trusted anywhere.
    contradicted = {acc: f"{zone}: {r['SpotPrice']} > {r['Price']}" for (acc, _, zone), r in sorted(gpus.items())
                    if r["SpotPrice"] and Decimal(r["SpotPrice"]) > Decimal(r["Price"])}
    out: list[dict[str, str]] = []
    skipped: dict[str, Skipped] = {}
    for (machine, region), vm_rows in machines.items():
        for name, acc, count in _pairs(machine):
            zones = [(vm, g) for vm in vm_rows if (g := gpus.get((acc, count, vm["AvailabilityZone"]))) is not None]
            if not zones:
                continue
            if acc in contradicted:
                skipped.setdefault(name, Skipped(
                    name, f"the source's {acc} spot price is above its on-demand price "
                          f"({contradicted[acc]}): its {acc} prices contradict each other"))
                continue
            sums = {(_sum(vm, g, "Price"), _sum(vm, g, "SpotPrice")) for vm, g in zones}
            if len(sums) != 1:
                skipped.setdefault(name, Skipped(name, f"zones of {region} priced differently: not one price"))
                continue
            hourly, spot = sums.pop()
            key, gpu_text = GPU_KEYS[acc]
            vm = zones[0][0]
            notes = [f"the machine's price plus {count} x {gpu_text}, summed as SkyPilot prices it"]
            if "+" in name:
                notes.append(f"gpuplan's pairing: {count} GPU(s) on {machine} (8 vCPUs a GPU)")
            if spot is not None and spot >= hourly:
                notes.append("the summed spot price is not below on demand: no spot price kept")
                spot = None
            notes.append("no committed-use prices in the source")
            # GCP's own list price where SkyPilot's sum is off, none for a size not sold on demand
            out.append(list_prices.apply({
                "instance_type": name, "family": machine.rsplit("-", 1)[0], "gpu": key, "gpu_count": str(count),
                "vcpu": str(int(float(vm["vCPUs"]))), "mem_gb": f"{float(vm['MemoryGiB']):g}", "region": region,
                "zone": "", "zones": ";".join(v["AvailabilityZone"] for v, _ in zones), "currency": "USD",
                "hourly": str(hourly), "spot": "" if spot is None else str(spot), "as_of_kind": "read_date",
                "source": SOURCE.format(commit=commit), "as_of": read, "notes": "; ".join(notes),
            }))
    return out, list(skipped.values())


def _sum(vm: dict[str, str], gpu: dict[str, str], column: str) -> Decimal | None:
    """The machine's and its GPUs' price in one column, exactly (Decimal: no float noise in the shipped file)."""
    if not vm[column] or not gpu[column]:
        return None
    return Decimal(vm[column]) + Decimal(gpu[column])


if __name__ == "__main__":
    sys.exit(main(__doc__, rows, sys.argv[1:], source_help="the skypilot-catalog commit the file was read at"))
