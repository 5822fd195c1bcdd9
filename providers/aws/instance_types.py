"""What EC2 says about instance types (GPUs, vCPUs, memory, EFA), and GPU names mapped to catalog keys.

``DescribeInstanceTypes`` reports GPUs as a bare model name and a memory size
(``{"Name": "A100", "Count": 8, "MemoryInfo": {"SizeInMiB": 40960}}``). It names no
form factor, so "A100 40 GB" fits both the SXM4 and the PCIe key of the catalog; such a
tie is broken by the GPU the catalog already gives that instance type (or its family),
and left unmapped otherwise rather than guessed. Memory is compared loosely because
AWS reports usable rather than marketed memory (A10G and L4: 22888 MiB for 24 GB).

Queries use the ``instance-type`` filter, not ``InstanceTypes=[...]``: the latter fails
the whole call when one name is unknown in the region (moto lacks every p3 size).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pricing.catalog import Catalog, normalize

MEMORY_TOLERANCE = 0.10  # usable vs marketed GPU memory differ by up to ~7% (A10G, L4, L40S)
_FILTER_CHUNK = 100  # values per filter: well inside EC2's limits, few calls for a catalog's types


@dataclass(frozen=True)
class GpuDevice:
    manufacturer: str
    name: str
    count: int
    memory_mib: int


@dataclass(frozen=True)
class TypeInfo:
    """The parts of one ``DescribeInstanceTypes`` entry that gpuplan uses."""

    instance_type: str
    vcpu: int | None
    mem_gb: float | None
    gpus: tuple[GpuDevice, ...]
    efa_supported: bool
    max_efa_interfaces: int
    max_network_cards: int
    architectures: tuple[str, ...] = ()

    @property
    def gpu_count(self) -> int:
        return sum(g.count for g in self.gpus)


def chunks(values: Sequence[str], size: int = _FILTER_CHUNK) -> Iterable[list[str]]:
    for start in range(0, len(values), size):
        yield list(values[start:start + size])


def parse_type_info(entry: dict[str, Any]) -> TypeInfo:
    """One ``InstanceTypes[]`` entry of a DescribeInstanceTypes response."""
    gpu_info = entry.get("GpuInfo") or {}
    gpus = tuple(
        GpuDevice(manufacturer=str(g.get("Manufacturer", "")), name=str(g.get("Name", "")),
                  count=int(g.get("Count", 0)), memory_mib=int((g.get("MemoryInfo") or {}).get("SizeInMiB", 0)))
        for g in gpu_info.get("Gpus", [])
    )
    net = entry.get("NetworkInfo") or {}
    mib = (entry.get("MemoryInfo") or {}).get("SizeInMiB")
    vcpus = (entry.get("VCpuInfo") or {}).get("DefaultVCpus")
    return TypeInfo(
        instance_type=str(entry["InstanceType"]),
        vcpu=int(vcpus) if vcpus is not None else None,
        mem_gb=round(int(mib) / 1024, 3) if mib is not None else None,
        gpus=gpus,
        efa_supported=bool(net.get("EfaSupported", False)),
        max_efa_interfaces=int((net.get("EfaInfo") or {}).get("MaximumEfaInterfaces", 0)),
        max_network_cards=int(net.get("MaximumNetworkCards", 1) or 1),
        architectures=tuple(str(a) for a in (entry.get("ProcessorInfo") or {}).get("SupportedArchitectures", [])),
    )


def describe_types(ec2: Any, instance_types: Iterable[str]) -> dict[str, TypeInfo]:
    """TypeInfo for each type EC2 knows in the client's region; unknown types are simply absent."""
    names = sorted(set(instance_types))
    found: dict[str, TypeInfo] = {}
    paginator = ec2.get_paginator("describe_instance_types")
    for chunk in chunks(names):
        for page in paginator.paginate(Filters=[{"Name": "instance-type", "Values": chunk}]):
            for entry in page.get("InstanceTypes", []):
                info = parse_type_info(entry)
                found[info.instance_type] = info
    return found


def offered_zones(ec2: Any, instance_types: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Availability zones of the client's region that sell each type (DescribeInstanceTypeOfferings)."""
    names = sorted(set(instance_types))
    zones: dict[str, set[str]] = {}
    paginator = ec2.get_paginator("describe_instance_type_offerings")
    for chunk in chunks(names):
        for page in paginator.paginate(LocationType="availability-zone",
                                       Filters=[{"Name": "instance-type", "Values": chunk}]):
            for offer in page.get("InstanceTypeOfferings", []):
                zones.setdefault(str(offer["InstanceType"]), set()).add(str(offer["Location"]))
    return {t: tuple(sorted(z)) for t, z in zones.items()}


_FORM_TOKENS = re.compile(r"^(sxm\d*|pcie|nvlink|\d+gb)$")


def gpu_model(name: str) -> str:
    """The model part of a GPU name: 'A100-SXM4-40GB', 'A100 40GB PCIe' and 'A100' all give 'a100'."""
    tokens = [t for t in normalize(name).split("-") if t and not _FORM_TOKENS.match(t)]
    return "-".join(tokens)


def gpu_key(device: GpuDevice, catalog: Catalog, prefer: Sequence[str] = ()) -> tuple[str | None, str]:
    """The catalog GPU key for an EC2 GPU (name + memory), and why when there is none.

    ``prefer`` lists keys the catalog already uses for this type or family, in order;
    the first of them among several equally good candidates wins.
    """
    model = gpu_model(device.name)
    if not model:
        return None, "no GPU name"
    gib = device.memory_mib / 1024
    candidates = []
    for spec in catalog.gpus.values():
        names = (spec.key, spec.name, *spec.aliases)
        if not any(gpu_model(n) == model for n in names):
            continue
        if device.memory_mib and abs(gib - spec.vram_gb) > MEMORY_TOLERANCE * spec.vram_gb:
            continue
        candidates.append(spec.key)
    if len(candidates) == 1:
        return candidates[0], "DescribeInstanceTypes GpuInfo"
    if not candidates:
        return None, f"GPU {device.name} {gib:.0f} GiB is not in the catalog"
    for key in prefer:
        if key in candidates:
            return key, "DescribeInstanceTypes GpuInfo, form factor from the catalog"
    return None, f"GPU {device.name} {gib:.0f} GiB matches several catalog GPUs ({', '.join(sorted(candidates))})"
