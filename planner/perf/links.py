"""Link physics as data: what a collective achieves on each class of link, and how much compute hides it.

``planner/data/link_physics.csv`` holds, per class of link inside a node (NVLink/NVSwitch, bridged pairs,
PCIe under one root complex, PCIe across two sockets, PCIe without peer-to-peer) and per fabric between
nodes (RDMA, EFA, TCP), the share of the nominal rate an NCCL ring reaches, the share of a micro-batch's
compute that can hide its traffic, and the slowdown compute suffers while it overlaps traffic; every row
carries its source or says it is an estimate and on what basis. This module only reads the file and picks
the class for a node's topology; :mod:`planner.perf.comm` does the arithmetic.

Topology rule (PCIe): a GeForce card listed under ``pcie-no-p2p`` has no peer-to-peer; otherwise up to 4
GPUs sit under one root complex and more span two sockets (the 8-GPU PCIe boxes of every cloud).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from planner.perf import comm
from pricing.datafiles import data_rows

ONE_ROOT_MAX_GPUS = 4  # PCIe boxes with more GPUs than this split them over two CPU sockets
_PCIE_NOMINAL = {"Gen3": 16.0, "Gen4": 32.0, "Gen5": 64.0}  # GB/s per direction, x16 (PCI-SIG)


@dataclass(frozen=True)
class LinkClass:
    """One row of link_physics.csv."""

    kind: str
    name: str
    fraction: float
    hidden_share: float
    gpus: frozenset[str]
    estimate: bool
    basis: str
    source: str


@lru_cache(maxsize=1)
def link_classes() -> dict[tuple[str, str], LinkClass]:
    """(kind, name) -> its row."""
    out = {}
    for r in data_rows("link_physics.csv", "planner.data"):
        out[(r["kind"], r["name"])] = LinkClass(
            kind=r["kind"], name=r["name"], fraction=float(r["fraction"]),
            hidden_share=float(r["hidden_share"]) if r["hidden_share"] else 0.0,
            gpus=frozenset(g for g in r["gpus"].split(";") if g), estimate=r["estimate"] == "yes",
            basis=r["basis"], source=r["source"])
    return out


def overlap_slowdown() -> float:
    """Share by which compute slows while a collective overlaps it."""
    return link_classes()[("overlap", "slowdown")].fraction


def intra_class(gpu: str, interconnect: str, gpus_per_node: int) -> LinkClass:
    """The class of link ``gpus_per_node`` GPUs of ``gpu`` use inside one node."""
    classes = link_classes()
    if interconnect == "nvlink-bridge" and gpus_per_node > 2:
        interconnect = "pcie"  # a bridge joins a pair; more GPUs talk over PCIe
    if interconnect in ("nvlink", "nvlink-bridge"):
        return classes[("intra", interconnect)]
    if gpu in classes[("intra", "pcie-no-p2p")].gpus:
        return classes[("intra", "pcie-no-p2p")]
    return classes[("intra", "pcie-one-root" if gpus_per_node <= ONE_ROOT_MAX_GPUS else "pcie-two-sockets")]


def collective_link(gpu: str, interconnect: str, gpus_per_node: int) -> comm.Link | None:
    """The link a collective among ``gpus_per_node`` GPUs of ``gpu`` sees: its bus bandwidth by topology, its hidden
    share and its sources; None where intra_links.csv has no row for the GPU."""
    cls = intra_class(gpu, str(interconnect), gpus_per_node)
    ic = "pcie" if cls.name.startswith("pcie") else str(interconnect)
    base = comm.intra_link(gpu, ic)
    if base is None:
        return None
    if not cls.name.startswith("pcie"):
        return comm.Link(base.name, base.bus_gbytes_s * cls.fraction, base.estimate, base.source, cls.hidden_share)
    gen = next((g for g in _PCIE_NOMINAL if g in base.name), None)
    nominal = _PCIE_NOMINAL[gen] if gen else base.bus_gbytes_s / 0.75
    where = {"pcie-one-root": f"{gpus_per_node} GPUs under one root complex" if gpus_per_node > 1 else "one GPU",
             "pcie-two-sockets": f"{gpus_per_node} GPUs across two CPU sockets",
             "pcie-no-p2p": "no peer-to-peer (through host memory)"}[cls.name]
    return comm.Link(f"{base.name}, {where}", nominal * cls.fraction, True, f"{cls.source}; {base.source}",
                     cls.hidden_share)


@dataclass(frozen=True)
class Network:
    """A node's network as a collective sees it: achievable bytes per second and the hidden share."""

    line_gbps: float
    fabric: str
    fraction: float
    hidden_share: float

    @property
    def gbytes_s(self) -> float:
        return self.line_gbps * self.fraction / 8.0

    def describe(self) -> str:
        name = {"efa": "EFA", "rdma": "RDMA", "ethernet": "TCP"}.get(self.fabric, "TCP (fabric unknown)")
        return f"{self.line_gbps:,.0f} Gbps {name}, {self.fraction:.0%} of line rate achievable"


def network(line_gbps: float, fabric: str) -> Network:
    """``line_gbps`` over ``fabric`` (efa, rdma, ethernet; anything else is charged as TCP)."""
    classes = link_classes()
    cls = classes.get(("network", fabric)) or classes[("network", "unknown")]
    return Network(line_gbps, fabric if ("network", fabric) in classes else "unknown", cls.fraction,
                   cls.hidden_share)
