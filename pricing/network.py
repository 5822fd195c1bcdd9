"""How the nodes of a cluster talk: each instance type's network, with its source.

Read from ``pricing/data/networks.csv`` (one row per instance type: Gbps, fabric, GPUDirect).
An instance type without a row, or with an empty figure, has an unknown network: the
planner then says so instead of guessing how it scales across nodes.
"""

from __future__ import annotations

from enum import StrEnum
from importlib import resources

from pricing.datafiles import Sourced, data_rows


class Fabric(StrEnum):
    EFA = "efa"  # AWS Elastic Fabric Adapter (OS-bypass, NCCL over libfabric)
    RDMA = "rdma"  # InfiniBand/RoCE, e.g. Tencent's HCC cluster types
    ETHERNET = "ethernet"  # plain TCP networking
    UNKNOWN = "unknown"


class NetworkSpec(Sourced):
    provider: str
    instance_type: str
    gbps: float | None
    fabric: Fabric = Fabric.UNKNOWN
    gpudirect: bool | None = None

    def describe(self) -> str:
        if self.gbps is None:
            return "an unknown network"
        name = {Fabric.EFA: " EFA", Fabric.RDMA: " RDMA", Fabric.ETHERNET: " Ethernet"}.get(self.fabric, "")
        return f"{self.gbps:,.0f} Gbps{name}"


def shipped_networks() -> dict[tuple[str, str], NetworkSpec]:
    """(provider, instance type lower-cased) -> its network; empty when the data file is absent."""
    if not resources.files("pricing.data").joinpath("networks.csv").is_file():
        return {}
    out = {}
    for r in data_rows("networks.csv"):
        gbps = r.get("network_gbps", "").strip()
        gd = r.get("gpudirect", "").strip().lower()
        spec = NetworkSpec(
            provider=r["provider"].strip(), instance_type=r["instance_type"].strip(),
            gbps=float(gbps) if gbps else None, fabric=Fabric(r.get("fabric", "").strip() or "unknown"),
            gpudirect=None if not gd else gd == "yes", source=r["source"], as_of=r["as_of"],  # type: ignore[arg-type]
            notes=r.get("notes", ""),
        )
        out[(spec.provider, spec.instance_type.lower())] = spec
    return out
