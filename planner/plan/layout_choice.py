"""Per option: the data-parallel layout that trains fastest under the memory fit, and what its traffic costs.

Candidates are every ZeRO stage the user allows (DDP, ZeRO-1, ZeRO-2, ZeRO-3) with every recompute level
allowed (none, selective, full) that fits the GPUs' memory with headroom (:func:`planner.workload.memory.fitted`),
and across several nodes hybrid sharding (ZeRO-3 inside a node, replicas across nodes) where the states fit in
one node. Each is timed per micro-batch by :mod:`planner.perf.comm` at the largest micro-batch that fits (up to
the GPU's share of the global batch), with gradient accumulation up to the global batch, over the node's link
and network as :mod:`planner.perf.links` describes them (topology, achievable share of line rate, hidden share).
The one that trains the most tokens per GPU-second (:func:`_useful`: each candidate at its own micro-batch's pace,
full recompute's extra pass included) wins; at one node count that is also the cheapest. A layout whose traffic
cannot be hidden (efficiency under 1/3 on either link) is dropped, and if none is left the option is excluded with
the bandwidth it would need.

For models of 30B and up, and for any model whose best data-parallel layout keeps under ``EXPOSED_DP`` across nodes,
the search also tries tensor/pipeline/expert-parallel layouts with ZeRO-1, and tensor parallelism with FSDP (ZeRO-3)
over the replicas at one stage (:mod:`planner.perf.parallel3d`, memory in :mod:`planner.workload.memory_3d`); on nodes
without NVLink, pipeline and expert splits only (no tensor parallelism). The fastest of both families wins, and
``alternatives`` names the best of the other family first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from planner.perf import comm, links
from planner.perf.offload import host_for, offload_seconds
from planner.perf.moe_routing import a2a_overlapped
from planner.workload.memory import RECOMPUTE_ORDER, SHARD_ORDER, Layout, fitted, offload_stage
from planner.workload.spec import Offload, Precision, Recompute, Sharding, TrainingWorkload

if TYPE_CHECKING:
    from planner.perf.offload import Host

GLOBAL_BATCH_TOKENS = 4e6  # Llama 2 (Touvron et al. 2023, table 1): 4M-token global batch, the default
ALTERNATIVES_SHOWN = 3
# a data-parallel layout across nodes keeping less than this (its traffic exposed on the network) has tensor/pipeline
# layouts searched too, whatever the model's size: a search-scope rule (the search's cost), not physics
EXPOSED_DP = 0.85


def global_batch(w: TrainingWorkload) -> float:
    """Tokens per optimizer step: the workload's ``--global-batch``, else 4M."""
    return w.global_batch_tokens or GLOBAL_BATCH_TOKENS


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
    accumulation: int = 1  # micro-batches per optimizer step
    global_batch_tokens: float = GLOBAL_BATCH_TOKENS
    network: str = ""
    hidden_intra: float = comm.HIDDEN_SHARE
    alternatives: tuple[str, ...] = field(default=())  # the best layouts that lost, in words, with why
    # tensor/pipeline/expert layouts (planner.perf.parallel3d): degrees, bubble and per-micro-batch seconds
    parallel: dict[str, Any] | None = None
    # CPU optimizer offload (planner.perf.offload): its seconds per micro-batch and per step
    offload: dict[str, float] | None = None

    @property
    def efficiency(self) -> float:
        return self.intra_node * self.inter_node

    @property
    def layout(self) -> str:
        """The layout's name, e.g. ``zero1+full-recompute``."""
        return (self.strategy + ("+offload" if self.offload else "")
                + ("" if self.recompute == Recompute.NONE.value else f"+{self.recompute}-recompute"))

    def as_json(self) -> dict[str, Any]:
        return {"layout": self.layout, "strategy": self.strategy, "intra_node": round(self.intra_node, 4),
                "inter_node": round(self.inter_node, 4),
                "comm_s_per_microbatch": round(self.comm_s_per_microbatch, 4),
                "compute_s_per_microbatch": round(self.compute_s_per_microbatch, 4),
                "micro_batch": self.micro_batch, "recompute": self.recompute,
                "accumulation_steps": self.accumulation, "global_batch_tokens": self.global_batch_tokens,
                **(self.parallel or {}), **({"offload": self.offload} if self.offload else {}),
                "alternatives": list(self.alternatives)}

    def describe(self) -> str:
        net = f"; between nodes {self.network}" if self.network else ""
        return (f"{words(self.as_json())} (link inside a node: {self.link}{net}; "
                f"{self.compute_s_per_microbatch:.2f} s compute, {self.comm_s_per_microbatch:.2f} s traffic "
                f"per micro-batch, {self.accumulation} micro-batches per "
                f"{self.global_batch_tokens / 1e6:g}M-token step)")


_LABEL = {"ddp": "DDP", "zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3/FSDP",
          "hsdp": "hybrid sharding (ZeRO-3 inside a node, replicas across nodes)"}


def words(scaling: dict[str, Any]) -> str:
    """A ``plan --json`` scaling object in words, for notes and --explain."""
    rc = f", {scaling['recompute']} recompute" if scaling["recompute"] != Recompute.NONE.value else ""
    if "tensor_parallel" in scaling:
        # name only the splits the layout has: a dense model has no experts, one node no pipeline
        v = scaling.get("interleaved_stages", 1)
        parts = [f"tensor {scaling['tensor_parallel']} inside a node" if scaling["tensor_parallel"] > 1 else "",
                 (f"pipeline {scaling['pipeline_parallel']} stages" + (f" of {v} interleaved chunks" if v > 1 else "")
                  + f" with a {scaling['bubble']:.1%} bubble") if scaling["pipeline_parallel"] > 1 else "",
                 f"each sequence over {scaling['context_parallel']} GPUs (context parallelism)"
                 if scaling.get("context_parallel", 1) > 1 else "",
                 f"experts over {scaling['expert_parallel']} GPUs" if scaling["expert_parallel"] > 1 else "",
                 f"{'FSDP (ZeRO-3)' if 'fsdp_s_per_microbatch' in scaling else 'ZeRO-1'} over "
                 f"{scaling['data_parallel']} replicas"]
        return (f"{scaling['strategy']} ({', '.join(x for x in parts if x)}) at micro-batch "
                f"{scaling['micro_batch']}{rc}: {scaling['intra_node']:.0%} inside a node (tensor-parallel traffic), "
                f"{scaling['inter_node']:.0%} for the bubble and traffic across nodes")
    off = ""
    if o := scaling.get("offload"):
        off = (f" with the optimizer on the CPU ({o['cpu_step_s'] + o['params_back_s']:.2f} s exposed per optimizer "
               "step)")
    if off and scaling["strategy"] == "ddp":  # offload without sharding is one GPU's layout (memory.offload_stage)
        return (f"one GPU{off} at micro-batch {scaling['micro_batch']}{rc}: {scaling['intra_node']:.0%} of the time "
                "computing, the rest waiting on the CPU step and the PCIe copies")
    return (f"{_LABEL.get(scaling['strategy'], scaling['strategy'])}{off} at micro-batch {scaling['micro_batch']}{rc}: "
            f"{scaling['intra_node']:.0%} scaling inside a node, {scaling['inter_node']:.0%} across nodes")


def _strategy(sh: Sharding) -> str:
    return {Sharding.NONE: "ddp", Sharding.FSDP: "zero3"}.get(sh, sh.value)


def _state_bytes(w: TrainingWorkload, gpus: int) -> float:
    """Bytes of weights/gradients each GPU's data-parallel collectives carry: with expert parallelism (a mixture
    of experts with --experts) a GPU holds 1/EP of the experts, which are reduced and gathered only among the
    GPUs holding the same experts, so it moves the dense layers plus its share of the experts."""
    from planner.workload.memory import expert_parallel
    from planner.workload.params import param_groups

    per = 4.0 if w.precision is Precision.FP32 else 2.0
    ep = expert_parallel(w, gpus)
    if ep <= 1:
        return w.arch.params * per
    g = param_groups(w)
    return (g.dense + g.experts / ep) * per


def all_to_all_seconds(w: TrainingWorkload, tokens: float, per_node: int, nodes: int, link: comm.Link,
                       net: links.Network | None) -> float:
    """Seconds per micro-batch of expert parallelism's token exchange (0 for a dense model).

    Each token's hidden state goes to its k experts and back (dispatch and combine), in the forward and the
    backward pass: 4 k h x 2 bytes per token and MoE layer, of which (EP-1)/EP leaves the GPU. Destinations in the
    GPU's own node go over its link; the rest leave the node through its NIC, which carries the node's GPUs'
    share. The exchange sits on the critical path between attention and the experts, so none of it is hidden, unless
    the model's training overlaps it with another micro-batch (``moe_routing.csv``: DeepSeek-V3's DualPipe); a model
    with group-limited routing sends a token to at most that many nodes.
    """
    from planner.perf.parallel3d import a2a_seconds
    from planner.workload.memory import expert_parallel

    a = w.arch
    ep = expert_parallel(w, per_node * nodes)
    if ep <= 1 or not (a.hidden and a.layers):
        return 0.0
    return a2a_seconds(w, tokens, a.layers, ep, per_node, link, net)


def _offload(w: TrainingWorkload, gpus: int, per_node: int, k: float, host: Host | None) -> dict[str, float]:
    """Offload's seconds (:mod:`planner.perf.offload`) for one of ``gpus`` GPUs owning 1/gpus of the parameters (ZeRO-2
    partitions), ``per_node`` of them sharing a host, ``k`` micro-batches per step; PCIe Gen4 where the host is
    unknown."""
    h = host or host_for(None, None)
    per = 4.0 if w.precision is Precision.FP32 else 2.0
    o = offload_seconds(w.arch.params / gpus, per, per, k, h.pcie_gbytes_s, per_node)
    return {"pcie_s_per_microbatch": round(o.pcie_s_per_microbatch, 4),
            "pcie_s_per_step_hidden": round(o.pcie_s_per_step_hidden, 4), "cpu_step_s": round(o.cpu_step_s, 4),
            "params_back_s": round(o.params_back_s, 4), "pcie_gbytes_s": h.pcie_gbytes_s}


def _one(w: TrainingWorkload, lay: Layout, strategy: str, per_node: int, nodes: int, link: comm.Link,
         net: links.Network | None, flops_per_s: comm.Rate, host: Host | None = None
         ) -> tuple[Scaling | None, str | None]:
    gpus = per_node * nodes
    state = _state_bytes(w, gpus)
    batch = global_batch(w)
    share = max(1, int(batch / gpus / w.seq_len))
    mb = w.micro_batch or max(1, min(lay.max_batch or 1, share))
    k = max(1.0, batch / gpus / (mb * w.seq_len))
    # the GPU's pace may depend on the micro-batch and recompute (utilisation keyed by the work)
    compute = comm.compute_seconds(w.arch.active_params or w.arch.params, mb * w.seq_len,
                                   comm.pace(flops_per_s, mb, lay.recompute),
                                   lay.recompute is Recompute.FULL)
    if strategy == "hsdp":  # ZeRO-3 inside the node; replicas all-reduce once per step across nodes
        intra_mb, intra_step = comm.comm_seconds("zero3", state, per_node, link.bus_gbytes_s)
        inter_mb_b, inter_step_b = comm.traffic("ddp", state, nodes)
    else:
        intra_mb, intra_step = comm.comm_seconds(strategy, state, per_node, link.bus_gbytes_s)
        # a flat ring crosses each node's NIC once per byte, so the NIC carries one GPU's traffic
        inter_mb_b, inter_step_b = comm.traffic(strategy, state, gpus) if nodes > 1 else (0.0, 0.0)
    nic = net.gbytes_s * 1e9 if nodes > 1 and net is not None else None
    inter_mb, inter_step = (inter_mb_b / nic, inter_step_b / nic) if nic else (0.0, 0.0)
    # the two links carry the same collective at once: its time is the slower link's
    comm_s = max(intra_mb + intra_step / k, inter_mb + inter_step / k)
    slow = links.overlap_slowdown()
    off = _offload(w, gpus, per_node, k, host) if lay.offload else None
    if off:
        # the host copies run in backward hooks beside the collectives: they share the hidden share of compute
        intra_mb += off["pcie_s_per_microbatch"]
        intra_step += off["pcie_s_per_step_hidden"]
    intra = comm.efficiency(compute, intra_mb, intra_step, k, link.hidden_share, slow)
    if off:
        # the CPU step and the updated weights' return stall the GPU once per step: k micro-batches wait for them
        intra = 1.0 / (1.0 / intra + (off["cpu_step_s"] + off["params_back_s"]) / (k * compute))
    inter = comm.efficiency(compute, inter_mb, inter_step, k, net.hidden_share if net else comm.HIDDEN_SHARE, slow)
    if (a2a := all_to_all_seconds(w, mb * w.seq_len, per_node, nodes, link, net)) > 0:
        if a2a_overlapped(w.arch.name):
            # the model's authors overlap it with another micro-batch's compute (DeepSeek's DualPipe): it shares the
            # hidden share of compute with the node's collectives
            intra = comm.efficiency(compute, intra_mb + a2a, intra_step, k, link.hidden_share, slow)
        else:
            # exposed on every micro-batch: charged on the node's link, where compute waits for it
            intra = compute / (compute / intra + a2a)
        comm_s += a2a
    label = _LABEL[strategy] + (" with CPU optimizer offload" if lay.offload else "")
    if inter < comm.MIN_EFFICIENCY:
        assert net is not None
        need = comm.needed_gbytes_s(compute, inter_mb_b, inter_step_b, k, hidden=net.hidden_share) * 8 / net.fraction
        return None, (f"{label} traffic cannot be hidden across nodes: needs >= {need:,.0f} Gbps "
                      "between nodes")
    if intra < comm.MIN_EFFICIENCY:
        return None, f"{label} traffic cannot be hidden over {link.name} inside a node"
    fits = lay.describe() + (f", max micro-batch {lay.max_batch}" if lay.max_batch else "")
    return Scaling(strategy, intra, inter, comm_s, compute, mb, lay.recompute.value, link.name, fits,
                   accumulation=round(k), global_batch_tokens=batch, network=net.describe() if nic and net else "",
                   hidden_intra=link.hidden_share, offload=off), None


def _useful(w: TrainingWorkload, s: Scaling) -> float:
    """Tokens each GPU trains per second: a micro-batch's tokens over its compute time and the layout's efficiency,
    per GPU of a tensor x pipeline replica. Full recompute's extra pass is in the compute time, and where the
    utilisation depends on the work each candidate is timed at its own pace."""
    split = (s.parallel["tensor_parallel"] * s.parallel["pipeline_parallel"] * s.parallel.get("context_parallel", 1)
             if s.parallel else 1)
    return s.efficiency * s.micro_batch * w.seq_len / (s.compute_s_per_microbatch * split)


def candidates(w: TrainingWorkload, vram_gb: float, per_node: int, nodes: int,
               host: Host | None = None) -> list[tuple[Layout, str]]:
    """Every (layout, strategy) the user's sharding, recompute and offload allow that fits, hybrid sharding included;
    optimizer offload (ZeRO-2, or one GPU unsharded) where ``host``'s RAM holds its GPUs' offloaded states."""
    gpus = per_node * nodes
    stages = SHARD_ORDER if w.sharding is Sharding.AUTO else (Sharding.ZERO3 if w.sharding is Sharding.FSDP
                                                              else w.sharding,)
    levels = RECOMPUTE_ORDER if w.recompute is Recompute.AUTO else (w.recompute,)
    out: list[tuple[Layout, str]] = []
    offloaded: list[tuple[Layout, str]] = []
    if (stage := offload_stage(w, gpus)) is not None and host is not None and host.ram_gb:
        for rc in levels:
            if (lay := fitted(w, vram_gb, gpus, stage, rc, True, True)) and host.holds(lay.memory.host_offloaded,
                                                                                       per_node):
                offloaded.append((lay, _strategy(stage)))
    if w.offload is Offload.CPU:
        return offloaded
    share = max(1, int(global_batch(w) / gpus / w.seq_len))

    def runs(lay: Layout) -> int:  # the micro-batch _one runs the layout at
        return w.micro_batch or max(1, min(lay.max_batch or 1, share))

    for rc in levels:
        for sh in stages:
            if gpus == 1 and sh is not Sharding.NONE and w.sharding is Sharding.AUTO:
                continue
            if (lay := fitted(w, vram_gb, gpus, sh, rc)) is not None:
                out.append((lay, _strategy(sh)))
        hybrid = nodes > 1 and any(sh in (Sharding.ZERO2, Sharding.ZERO3) for sh in stages)
        if hybrid and (in_node := fitted(w, vram_gb, per_node, Sharding.ZERO3, rc)) is not None:
            out.append((in_node, "hsdp"))
    # offload only adds time to the same layout at the same micro-batch: it is timed only where it runs a larger one
    # than that layout does without it (or where that layout does not fit), to keep the search's cost down
    plain = {(c.sharding, c.recompute): runs(c) for c, s in out if s != "hsdp"}
    return [*(c for c in offloaded if plain.get((c[0].sharding, c[0].recompute), 0) < runs(c[0])), *out]


def split_may_fit(w: TrainingWorkload, gpus: int) -> bool:
    """Whether a tensor/pipeline layout may hold ``w`` on ``gpus`` GPUs where no data-parallel layout fits: the search
    tries them for models of ``MIN_PARAMS_3D`` and up on two GPUs or more (callers skip the search otherwise)."""
    from planner.perf.parallel3d import MIN_PARAMS_3D

    return gpus >= 2 and (w.arch.params >= MIN_PARAMS_3D or w.split_pinned)


def _three_d(w: TrainingWorkload, vram_gb: float, per_node: int, nodes: int, link: comm.Link,
             net: links.Network | None, flops_per_s: comm.Rate, floor: float = 0.0,
             dp_efficiency: float = 1.0) -> list[Scaling]:
    """Tensor/pipeline/expert layouts with ZeRO-1, and FSDP x TP (:mod:`planner.perf.parallel3d`), as scalings (no
    tensor parallelism on a node without NVLink); none for a pinned ZeRO-2 or DDP, nor a pinned ZeRO-3 without a
    pinned --tp, nor for a model under 30B (data parallelism hides its traffic there, see ``MIN_PARAMS_3D``) unless the
    best data-parallel layout across nodes keeps under ``EXPOSED_DP``: over a slow network (ZeRO-3 over 25 Gbps TCP)
    keeping the weights whole inside a node, or splitting the layers into stages across nodes, moves far fewer bytes
    between nodes. ``floor`` is in tokens per GPU-second (:func:`_useful`)."""
    from planner.perf import parallel3d as p3

    if w.tensor_parallel == 1 and w.pipeline_parallel == 1 and w.cp == 1:  # --tp 1 --pp 1: data parallelism only
        return []
    exposed = nodes > 1 and dp_efficiency < EXPOSED_DP
    wanted = w.split_pinned or exposed or w.arch.params >= p3.MIN_PARAMS_3D
    # FSDP x TP (zero3 over the replicas) is searched beside ZeRO-1 under auto; a pinned --sharding zero3/fsdp times it
    # only with a pinned --tp (unpinned, zero3 keeps to the data-parallel family it always named)
    fsdp_tp = w.split_pinned and w.sharding in (Sharding.ZERO3, Sharding.FSDP)
    if not wanted or not (fsdp_tp or w.sharding in (Sharding.AUTO, Sharding.ZERO1)):
        return []
    if w.method.value != "full" or w.offload is Offload.CPU:  # LoRA/QLoRA: no optimizer states to shard
        return []
    levels = RECOMPUTE_ORDER if w.recompute is Recompute.AUTO else (w.recompute,)
    batch = global_batch(w)
    out = []
    for tm, rc in p3.search(w, vram_gb, per_node, nodes, link, net, flops_per_s, batch, levels, round(floor, 3)):
        if min(tm.intra_node, tm.inter_node) < comm.MIN_EFFICIENCY:  # as for data-parallel layouts: not sensible
            continue
        d = tm.degrees
        parallel = {"tensor_parallel": d.tp, "pipeline_parallel": d.pp, "interleaved_stages": d.v,
                    "expert_parallel": d.ep, "data_parallel": d.dp, "bubble": round(tm.bubble, 4),
                    "micro_batches_per_pipeline": round(tm.micro_batches, 2),
                    "tp_s_per_microbatch": round(tm.tp_s, 4), "pp_s_per_microbatch": round(tm.pp_s, 4),
                    "all_to_all_s_per_microbatch": round(tm.a2a_s, 4), "dp_s_per_step": round(tm.dp_s, 4)}
        if d.cp > 1:  # only where pinned (--cp): default layouts' JSON keeps its keys
            parallel |= {"context_parallel": d.cp, "cp_s_per_microbatch": round(tm.cp_s, 4)}
        if d.zero == 3:  # FSDP x TP: its replicas' gathers and reduce-scatter, every micro-batch
            parallel["fsdp_s_per_microbatch"] = round(tm.fsdp_s, 4)
        fits = (f"{d.name}: tensor {d.tp} x pipeline {d.pp}" + (f" x context {d.cp}" if d.cp > 1 else "")
                + f" x data {d.dp}"
                + (" (FSDP: weights, gradients and optimizer states sharded over the replicas)" if d.zero == 3 else "")
                + (f", experts over {d.ep} GPUs" if d.ep > 1 else "")
                + (f", {rc.value} activation recompute" if rc is not Recompute.NONE else "")
                + f", micro-batch {tm.micro_batch}")
        out.append(Scaling(d.name, tm.intra_node, tm.inter_node, tm.tp_s + tm.pp_s + tm.a2a_s + tm.cp_s + tm.fsdp_s,
                           tm.compute_s,
                           tm.micro_batch, rc.value, link.name, fits, accumulation=round(tm.micro_batches),
                           global_batch_tokens=batch, network=net.describe() if net else "",
                           hidden_intra=link.hidden_share, parallel=parallel))
    return out


def _pinned(w: TrainingWorkload, vram_gb: float, per_node: int, nodes: int, link: comm.Link,
            net: links.Network | None, flops_per_s: comm.Rate) -> Scaling | str:
    """The split the user pinned (--tp/--pp/--cp) at its best micro-batch, recompute and interleaving, or why it cannot
    run here: no data-parallel layout competes with it."""
    from planner.perf.parallel3d import nvlink_node

    t, p, c = w.tensor_parallel or 1, w.pipeline_parallel or 1, w.cp
    name = "x".join(x for x in (f"tp{t}" if t > 1 else "", f"pp{p}" if p > 1 else "", f"cp{c}" if c > 1 else "")
                    if x)
    if c > 1 and per_node * nodes % (t * p * c):
        return f"{name}: {t * p * c} GPUs (tp x pp x cp) do not divide the {per_node * nodes} GPUs"
    if c > 1 and not nvlink_node(link, per_node):
        return (f"{name}: context parallelism is timed on NVLink nodes (its ring and the layout search's traffic model "
                f"are), and this node's GPUs are joined by {link.name}")
    if t > 1 and per_node % t:
        return f"{name}: {t} tensor-parallel GPUs do not divide a node's {per_node}"
    if t > 1 and not nvlink_node(link, per_node):
        return f"{name}: tensor parallelism runs inside an NVLink node, and this node's GPUs are joined by {link.name}"
    if p > 1 and (per_node * nodes // t) % p:
        return (f"{name}: {p} pipeline stages do not divide the {per_node * nodes // t} tensor groups of "
                f"{per_node * nodes} GPUs")
    found = _three_d(w, vram_gb, per_node, nodes, link, net, flops_per_s)
    if not found:
        return f"{name} does not fit the GPUs' memory (or its traffic cannot be hidden) at any micro-batch or recompute"
    return Scaling(**{**found[0].__dict__, "alternatives": _other_sharding(w, found)})


def _other_sharding(w: TrainingWorkload, found: list[Scaling]) -> tuple[str, ...]:
    """Where a pinned split could run with ZeRO-1 or FSDP over its replicas (--tp alone, one pipeline stage), why the
    one not chosen lost: its share of the chosen's tokens per GPU-second, or that it does not fit."""
    from planner.perf.parallel3d import fsdp_variant
    from planner.perf.split import Degrees

    best = found[0]
    assert best.parallel is not None
    p = best.parallel
    split = Degrees(p["tensor_parallel"], p["pipeline_parallel"], p["expert_parallel"], p["data_parallel"],
                    cp=p.get("context_parallel", 1))
    if w.sharding is not Sharding.AUTO or not fsdp_variant(w, split):
        return ()
    zero3 = "fsdp_s_per_microbatch" in p
    other = next((s for s in found[1:] if s.parallel and ("fsdp_s_per_microbatch" in s.parallel) != zero3), None)
    if other is None and zero3:
        return (f"{best.strategy[:-1]}1: does not fit the GPUs' memory (or its traffic cannot be hidden) at any "
                "micro-batch or recompute",)
    if other is None:  # parallel3d.search times FSDP only where it fits a larger micro-batch than ZeRO-1
        return (f"{best.strategy[:-1]}3: fits no larger micro-batch than ZeRO-1 does here, so its weight gathers "
                "every micro-batch only slow it down",)
    if not zero3:
        extra = f", {other.parallel['fsdp_s_per_microbatch']:.3f} s of FSDP gathers per micro-batch"  # type: ignore[index]
    else:  # ZeRO-1 keeps its share's weights and gradients whole: less room for activations
        extra = (", full recompute's extra pass" if other.recompute == Recompute.FULL.value != best.recompute else "")
        if other.micro_batch < best.micro_batch:
            extra += f", its whole weights and gradients leave room for micro-batch {other.micro_batch} only"
    return (f"{other.layout} at micro-batch {other.micro_batch}: {_useful(w, other) / _useful(w, best):.0%} of the "
            f"chosen layout's tokens per GPU-second ({other.intra_node:.0%} inside, {other.inter_node:.0%} across "
            f"nodes{extra})",)


def choose(w: TrainingWorkload, lay: Layout | None, vram_gb: float, per_node: int, nodes: int, link: comm.Link,
           nic_gbps: float | None, flops_per_s: comm.Rate, fabric: str = "unknown",
           host: Host | None = None) -> Scaling | str:
    """The fastest layout's scaling, or why every candidate's traffic cannot be hidden.

    ``lay`` (the least-memory layout) is tried too, so a pinned micro-batch or layout always has a candidate;
    ``nic_gbps`` is the node's line rate over ``fabric`` (efa, rdma, ethernet; other values are charged as TCP).
    ``host`` (:func:`planner.perf.offload.host_for`: the node's RAM and PCIe) lets optimizer-offload layouts be
    searched; None: they are not, but an offloaded ``lay`` is still timed (at PCIe Gen4).
    """
    net = links.network(nic_gbps, fabric) if nodes > 1 and nic_gbps else None
    if w.split_pinned:
        return _pinned(w, vram_gb, per_node, nodes, link, net, flops_per_s)
    cands = candidates(w, vram_gb, per_node, nodes, host)
    short = (lay is not None and lay.offload and host is not None and host.ram_gb is not None
             and not host.holds(lay.memory.host_offloaded, per_node))
    if short and not cands:
        assert lay is not None and host is not None and host.ram_gb is not None
        return (f"fits only with the optimizer offloaded to the CPU, which needs "
                f"{lay.memory.host_offloaded * per_node:,.0f} GiB of host RAM; the node has {host.ram_gb:,.0f}")
    if lay is not None and not short and all((c.sharding, c.recompute, c.offload) != (lay.sharding, lay.recompute,
                                                                                      lay.offload)
                                             for c, s in cands if s != "hsdp"):
        cands.insert(0, (lay, _strategy(lay.sharding)))
    scored: list[Scaling] = []
    why = ""
    for cand, strategy in cands:
        s, reason = _one(w, cand, strategy, per_node, nodes, link, net, flops_per_s, host)
        if s is None:
            why = why or (reason or "")
        else:
            scored.append(s)
    # splits that cannot come within 10% of the best data-parallel layout are not timed (the search's cost); the
    # best tensor/pipeline layout is still shown among the alternatives when it comes that close
    dp_best = max(scored, key=lambda s: _useful(w, s), default=None)
    floor = 0.9 * _useful(w, dp_best) if dp_best else 0.0
    scored += _three_d(w, vram_gb, per_node, nodes, link, net, flops_per_s, floor,
                       dp_best.efficiency if dp_best else 0.0)
    if not scored:
        return why or "no layout fits the GPUs' memory"
    scored.sort(key=lambda s: _useful(w, s), reverse=True)
    best = scored[0]
    lost: list[str] = []
    # the best of the other family (data-parallel vs tensor/pipeline) first, so --explain says why it lost
    other = next((s for s in scored[1:] if (s.parallel is None) != (best.parallel is None)), None)
    if other is not None:
        scored = [best, other, *(s for s in scored[1:] if s is not other)]
    # selective recompute that bought no larger micro-batch is the same layout in effect: shown once
    seen = {(best.strategy, best.micro_batch, round(best.efficiency, 4))}
    for s in scored[1:]:
        if len(lost) >= ALTERNATIVES_SHOWN:
            break
        key = (s.strategy, s.micro_batch, round(s.efficiency, 4))
        if s.layout == best.layout or key in seen or any(x.startswith(f"{s.layout} at") for x in lost):
            continue
        seen.add(key)
        bub = f", {s.parallel['bubble']:.1%} bubble" if s.parallel else ""
        lost.append(f"{s.layout} at micro-batch {s.micro_batch}: {_useful(w, s) / _useful(w, best):.0%} of the "
                    f"chosen layout's tokens per GPU-second ({s.intra_node:.0%} inside, {s.inter_node:.0%} across "
                    f"nodes{bub}" + (", full recompute's extra pass" if s.recompute == Recompute.FULL.value else "")
                    + ")")
    return Scaling(**{**best.__dict__, "alternatives": tuple(lost)})
