"""Per option: the data-parallel layout that trains fastest under the memory fit, and what its traffic costs.

Candidates are the least-memory layout :func:`planner.workload.memory.layout` found and, across
several nodes, hybrid sharding (ZeRO-3 inside a node, replicas across nodes) when the states fit
in one node. Each is timed per micro-batch by :mod:`planner.perf.comm` at the largest micro-batch
that fits (up to the GPU's share of a 4M-token global batch); the one with the best combined
efficiency wins. A layout whose traffic cannot be hidden (efficiency under 1/3 on either link)
is dropped, and if none is left the option is excluded with the bandwidth it would need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.perf import comm
from planner.workload.memory import Layout, layout
from planner.workload.spec import Precision, Recompute, Sharding, TrainingWorkload

GLOBAL_BATCH_TOKENS = 4e6  # Llama 2 (Touvron et al. 2023, table 1): 4M-token global batch


@dataclass(frozen=True)
class Scaling:
    """The chosen layout's scaling, as ``plan --json`` shows it."""

    strategy: str
    intra_node: float
    inter_node: float
    comm_s_per_microbatch: float
    compute_s_per_microbatch: float
    micro_batch: int
    recompute: str
    link: str
    fits: str = ""  # the chosen layout in words, with its largest micro-batch


    @property
    def efficiency(self) -> float:
        return self.intra_node * self.inter_node

    def as_json(self) -> dict[str, Any]:
        return {"strategy": self.strategy, "intra_node": round(self.intra_node, 4),
                "inter_node": round(self.inter_node, 4),
                "comm_s_per_microbatch": round(self.comm_s_per_microbatch, 4),
                "compute_s_per_microbatch": round(self.compute_s_per_microbatch, 4),
                "micro_batch": self.micro_batch, "recompute": self.recompute}

    def describe(self) -> str:
        return (f"{words(self.as_json())} (link inside a node: {self.link}; "
                f"{self.compute_s_per_microbatch:.2f} s compute, {self.comm_s_per_microbatch:.2f} s traffic "
                "per micro-batch, up to 2/3 of compute hiding traffic)")


_LABEL = {"ddp": "DDP", "zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3/FSDP",
          "hsdp": "hybrid sharding (ZeRO-3 inside a node, replicas across nodes)"}


def words(scaling: dict[str, Any]) -> str:
    """A ``plan --json`` scaling object in words, for notes and --explain."""
    rc = f", {scaling['recompute']} recompute" if scaling["recompute"] != Recompute.NONE.value else ""
    return (f"{_LABEL.get(scaling['strategy'], scaling['strategy'])} at micro-batch {scaling['micro_batch']}{rc}: "
            f"{scaling['intra_node']:.0%} scaling inside a node, {scaling['inter_node']:.0%} across nodes")


def _strategy(sh: Sharding) -> str:
    return {Sharding.NONE: "ddp", Sharding.FSDP: "zero3"}.get(sh, sh.value)


def _one(w: TrainingWorkload, lay: Layout, strategy: str, per_node: int, nodes: int, link: comm.Link,
         nic_gbps: float | None, flops_per_s: float) -> tuple[Scaling | None, str | None]:
    gpus = per_node * nodes
    state = w.arch.params * (4.0 if w.precision is Precision.FP32 else 2.0)
    share = max(1, int(GLOBAL_BATCH_TOKENS / gpus / w.seq_len))
    mb = w.micro_batch or max(1, min(lay.max_batch or 1, share))
    k = max(1.0, GLOBAL_BATCH_TOKENS / gpus / (mb * w.seq_len))
    compute = comm.compute_seconds(w.arch.active_params or w.arch.params, mb * w.seq_len, flops_per_s,
                                   lay.recompute is Recompute.FULL)
    if strategy == "hsdp":  # ZeRO-3 inside the node; replicas all-reduce once per step across nodes
        intra_mb, intra_step = comm.comm_seconds("zero3", state, per_node, link.bus_gbytes_s)
        inter_mb_b, inter_step_b = comm.traffic("ddp", state, nodes)
    else:
        intra_mb, intra_step = comm.comm_seconds(strategy, state, per_node, link.bus_gbytes_s)
        # a flat ring crosses each node's NIC once per byte, so the NIC carries one GPU's traffic
        inter_mb_b, inter_step_b = comm.traffic(strategy, state, gpus) if nodes > 1 else (0.0, 0.0)
    nic = nic_gbps * 1e9 / 8 if nodes > 1 and nic_gbps else None
    inter_mb, inter_step = (inter_mb_b / nic, inter_step_b / nic) if nic else (0.0, 0.0)
    # the two links carry the same collective at once: its time is the slower link's
    comm_s = max(intra_mb + intra_step / k, inter_mb + inter_step / k)
    intra = comm.efficiency(compute, intra_mb, intra_step, k)
    inter = comm.efficiency(compute, inter_mb, inter_step, k)
    if inter < comm.MIN_EFFICIENCY:
        need = comm.needed_gbytes_s(compute, inter_mb_b, inter_step_b, k) * 8
        return None, f"{_LABEL[strategy]} traffic cannot be hidden across nodes: needs >= {need:,.0f} Gbps between nodes"
    if intra < comm.MIN_EFFICIENCY:
        return None, f"{_LABEL[strategy]} traffic cannot be hidden over {link.name} inside a node"
    fits = lay.describe() + (f", max micro-batch {lay.max_batch}" if lay.max_batch else "")
    return Scaling(strategy, intra, inter, comm_s, compute, mb, lay.recompute.value, link.name, fits), None


def _throughput(s: Scaling) -> float:
    """Useful work per second, relative: full recompute does 8N instead of 6N per token."""
    return s.efficiency * (6.0 / 8.0 if s.recompute == Recompute.FULL.value else 1.0)


def choose(w: TrainingWorkload, lay: Layout, vram_gb: float, per_node: int, nodes: int, link: comm.Link,
           nic_gbps: float | None, flops_per_s: float) -> Scaling | str:
    """The fastest layout's scaling, or why every candidate's traffic cannot be hidden."""
    cands: list[tuple[Layout, str]] = [(lay, _strategy(lay.sharding))]
    if lay.recompute is not Recompute.FULL and w.recompute is Recompute.AUTO:
        # full recompute buys a larger micro-batch, hiding more traffic per byte moved
        fixed = w.model_copy(update={"sharding": lay.sharding, "recompute": Recompute.FULL})
        if (more := layout(fixed, vram_gb, lay.gpus)) is not None:
            cands.append((more, _strategy(lay.sharding)))
    if nodes > 1 and lay.sharding in (Sharding.ZERO2, Sharding.ZERO3, Sharding.FSDP):
        for cand, _ in list(cands):
            fixed = w.model_copy(update={"sharding": Sharding.ZERO3, "recompute": cand.recompute})
            if (in_node := layout(fixed, vram_gb, per_node)) is not None:
                cands.append((in_node, "hsdp"))
    best: Scaling | None = None
    why = ""
    for cand, strategy in cands:
        s, reason = _one(w, cand, strategy, per_node, nodes, link, nic_gbps, flops_per_s)
        if s is None:
            why = why or (reason or "")
        elif best is None or _throughput(s) > _throughput(best):
            best = s
    return best if best is not None else why
