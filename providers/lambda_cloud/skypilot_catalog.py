"""Lambda Cloud rows for ``pricing/data/instances/lambda.csv`` from SkyPilot's catalog of it.

SkyPilot's ``catalogs/v8/lambda/vms.csv`` (github.com/skypilot-org/skypilot-catalog) lists every
instance type once per region at one on-demand price (Lambda prices a type the same everywhere),
with the GPU as SkyPilot names it and its memory. gpuplan keeps one row per type in the pseudo-region
``global`` whose zones are the regions, so a plan shows a type once and ``--region us-east-1`` still
selects it. A GPU name maps to a catalog key by name and memory, with Lambda's type name deciding the
form factor where the two do not (``_pcie``, ``_sxm4``, ``_sxm5``); a type whose GPU has no key (B200,
GH200 at the time of writing) is reported, not guessed.

Run: ``python -m providers.lambda_cloud.skypilot_catalog vms.csv --commit SHA --read 2026-12-04 > lambda.csv``.
"""

from __future__ import annotations

import ast
import csv
import sys
from collections.abc import Iterable

from providers.converter import Skipped, main

SOURCE = ("github.com/skypilot-org/skypilot-catalog catalogs/v8/lambda/vms.csv @{commit} (row InstanceType=<type>: "
          "Price = on-demand USD/h, the same in every Region listed; GpuInfo = GPU name and memory)")
# (SkyPilot accelerator name, GiB of memory) -> catalog key; the type name's suffix decides where both fit.
GPU_KEYS = {
    ("V100", 16): "V100-SXM2-16GB", ("A6000", 48): "RTX-A6000", ("RTX6000", 24): "QUADRO-RTX-6000",
    ("A10", 24): "A10", ("A100", 40): "A100-SXM4-40GB", ("A100-80GB", 80): "A100-SXM4-80GB",
    ("H100", 80): "H100-SXM5-80GB",
}
BY_SUFFIX = {("A100", 40, "gpu_1x_a100"): "A100-PCIE-40GB", ("H100", 80, "_pcie"): "H100-PCIE-80GB"}
NOTES = {
    "V100-SXM2-16GB": "Lambda's 8x V100 types: SXM2 16 GB taken from SkyPilot's memory figure (16384 MiB) and "
                      "the 8-GPU NVLink server class; the form factor is not in the source",
    "A100-PCIE-40GB": "gpu_1x_a100 is the PCIe card and gpu_1x_a100_sxm4 the SXM4 one (Lambda's type names); "
                      "the multi-GPU A100 40 GB types are SXM4",
    "QUADRO-RTX-6000": "SkyPilot's RTX6000 (24 GB) is the Quadro RTX 6000",
}


def gpu_key(instance_type: str, name: str, memory_mib: int) -> str | None:
    gib = round(memory_mib / 1024)
    for (n, g, marker), key in BY_SUFFIX.items():
        if n == name and g == gib and (instance_type == marker or instance_type.endswith(marker)):
            return key
    return GPU_KEYS.get((name, gib))


def rows(lines: Iterable[str], *, commit: str, read: str) -> tuple[list[dict[str, str]], list[Skipped]]:
    """gpuplan rows (one per GPU instance type) and the types left out with why."""
    by_type: dict[str, dict[str, str]] = {}
    regions: dict[str, list[str]] = {}
    prices: dict[str, set[str]] = {}
    for r in csv.DictReader(lines):
        t = r["InstanceType"]
        if not r.get("AcceleratorName"):
            continue  # CPU-only types
        by_type.setdefault(t, r)
        regions.setdefault(t, []).append(r["Region"])
        prices.setdefault(t, set()).add(r["Price"])
    out, skipped = [], []
    for t, r in by_type.items():
        info = ast.literal_eval(r["GpuInfo"])  # SkyPilot writes the dict with Python quoting
        memory = int(info["Gpus"][0]["MemoryInfo"]["SizeInMiB"])
        key = gpu_key(t, r["AcceleratorName"], memory)
        if key is None:
            skipped.append(Skipped(t, f"no catalog GPU for {r['AcceleratorName']} with {memory} MiB"))
            continue
        if len(prices[t]) != 1:
            skipped.append(Skipped(t, f"prices differ by region ({', '.join(sorted(prices[t]))}): not one list price"))
            continue
        count = int(float(r["AcceleratorCount"]))
        note = "Lambda prices a type the same in every region; availability varies (SkyPilot lists every region)"
        if key in NOTES:
            note = f"{NOTES[key]}; {note}"
        out.append({
            "instance_type": t, "family": t.split("_", 2)[-1] if t.count("_") >= 2 else t, "gpu": key,
            "gpu_count": str(count), "vcpu": str(int(float(r["vCPUs"]))), "mem_gb": f"{float(r['MemoryGiB']):g}",
            "region": "global", "zone": "", "zones": ";".join(regions[t]), "currency": "USD",
            "hourly": r["Price"], "as_of_kind": "read_date", "source": SOURCE.format(commit=commit), "as_of": read,
            "notes": note,
        })
    return out, skipped


if __name__ == "__main__":
    sys.exit(main(__doc__, rows, sys.argv[1:], source_help="the skypilot-catalog commit the file was read at"))
