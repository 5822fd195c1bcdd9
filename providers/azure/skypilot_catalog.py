"""Azure rows for ``pricing/data/instances/azure.csv`` from a SkyPilot catalog of Azure.

SkyPilot's ``catalogs/v8/azure/vms.csv`` lists every VM size once per region with its
pay-as-you-go and spot price (USD/h; Azure prices a GPU size whole, GPU included) and the GPU
as SkyPilot names it. Only the NC and ND series are kept, and only sizes whose GPU model and
form factor are known from Azure's size documentation for the series (the table below): the
SkyPilot name alone does not tell a V100 PCIe from an SXM2 or an A100 80 GB PCIe from an SXM4.
A size with another GPU (K80, H100 NVL) or a count that disagrees with the series is reported,
not guessed. A spot price that is not below pay-as-you-go is no spot offer
(SkyPilot writes the on-demand price there for the H100 sizes) and is left empty.

Run: ``python -m providers.azure.skypilot_catalog vms.csv --commit SHA --read 2026-12-04 > azure.csv``.
"""

from __future__ import annotations

import csv
import re
import sys
from collections.abc import Iterable

from providers.converter import Skipped, main

SOURCE = ("github.com/coopslarhette/skypilot-catalog (a fork of skypilot-org/skypilot-catalog, whose own Azure file "
          "was not to be had) catalogs/v8/azure/vms.csv @{commit} (row InstanceType=<type>, Region=<region>: "
          "Price = pay-as-you-go USD/h, SpotPrice = spot USD/h)")
# Series: size pattern -> (series, SkyPilot's accelerator name, catalog GPU key, GPUs per size or None to take the
# row's, what Azure's size page says of the GPU). The pages are learn.microsoft.com/azure/virtual-machines/sizes/...
SERIES = (
    (r"Standard_NC\d+as_T4_v3", "NCasT4_v3", "T4", "T4", None, "NCasT4_v3: NVIDIA Tesla T4"),
    (r"Standard_NC\d+r?s_v3", "NCv3", "V100", "V100-PCIE-16GB", None, "NCv3: NVIDIA Tesla V100 PCIe 16 GB"),
    (r"Standard_NC\d+ads_A100_v4", "NC_A100_v4", "A100-80GB", "A100-PCIE-80GB", None,
     "NC A100 v4: NVIDIA A100 PCIe 80 GB"),
    (r"Standard_ND96asr_v4", "ND_A100_v4", "A100", "A100-SXM4-40GB", 8, "ND A100 v4: 8 NVIDIA A100 40 GB SXM4, NVLink"),
    (r"Standard_ND96amsr_A100_v4", "NDm_A100_v4", "A100-80GB", "A100-SXM4-80GB", 8,
     "NDm A100 v4: 8 NVIDIA A100 80 GB SXM4, NVLink"),
    (r"Standard_ND40rs_v2", "NDv2", "V100-32GB", "V100-SXM2-32GB", 8, "NDv2: 8 NVIDIA Tesla V100 SXM2 32 GB, NVLink"),
)
# Sizes the source lists that are left out, and why.
LEFT_OUT = (
    (r"Standard_NC\d+r?(_Promo)?", "K80 (NC series, retired): no spec row in gpus.csv"),
    (r"Standard_NC\d+adi?s_H100_v5", "NC H100 v5 carries the H100 NVL (94 GB): no spec row in gpus.csv"),
    (r"Standard_ND96isr_H100_v5",
     "the source says {count} x H100, where ND H100 v5 has 8 H100 80 GB SXM5: not guessed"),
)
_LEFT_OUT = tuple((re.compile(p + r"\Z"), why) for p, why in LEFT_OUT)
_SERIES = tuple((re.compile(p + r"\Z"), *rest) for p, *rest in SERIES)


def _series(size: str) -> tuple[str, str, str, int | None, str] | None:
    for pattern, *rest in _SERIES:
        if pattern.match(size):
            return tuple(rest)  # type: ignore[return-value]
    return None


def rows(lines: Iterable[str], *, commit: str, read: str) -> tuple[list[dict[str, str]], list[Skipped]]:
    """gpuplan rows (one per NC/ND size and region) and the sizes left out with why (once per size)."""
    out: list[dict[str, str]] = []
    skipped: dict[str, Skipped] = {}
    for r in csv.DictReader(lines):
        size, name = r["InstanceType"], r["AcceleratorName"]
        if not size.startswith(("Standard_NC", "Standard_ND")) or not name:
            continue
        count = int(float(r["AcceleratorCount"]))
        if (why := next((w for p, w in _LEFT_OUT if p.match(size)), None)) is not None:
            skipped.setdefault(size, Skipped(size, why.format(count=count)))
            continue
        series = _series(size)
        if series is None:
            skipped.setdefault(size, Skipped(size, f"{name} x{count}: no series with a catalog GPU for this size"))
            continue
        family, sky_name, key, per_size, gpu_text = series
        if name != sky_name or (per_size is not None and count != per_size):
            skipped.setdefault(size, Skipped(size, f"the source says {count} x {name}, where {gpu_text}"))
            continue
        price = r["Price"]
        if not price:
            skipped.setdefault(size, Skipped(size, f"no pay-as-you-go price in {r['Region']}"))
            continue
        spot = r["SpotPrice"]
        notes = [f"GPU from Azure's size page ({gpu_text})"]
        if spot and float(spot) >= float(price):
            notes.append(f"the source's spot price {spot} is not below pay-as-you-go: no spot price kept")
            spot = ""
        notes.append("no reservation prices in the source")
        out.append({
            "instance_type": size, "family": family, "gpu": key, "gpu_count": str(count),
            "vcpu": str(int(float(r["vCPUs"]))), "mem_gb": f"{float(r['MemoryGiB']):g}", "region": r["Region"],
            "zone": "", "zones": "", "currency": "USD", "hourly": price, "spot": spot, "as_of_kind": "read_date",
            "source": SOURCE.format(commit=commit), "as_of": read, "notes": "; ".join(notes),
        })
    return out, list(skipped.values())


if __name__ == "__main__":
    sys.exit(main(__doc__, rows, sys.argv[1:], source_help="the catalog repository's commit the file was read at"))
