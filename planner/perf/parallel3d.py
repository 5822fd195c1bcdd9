"""Tensor, pipeline and expert parallelism with ZeRO-1 data parallelism ("3D" layouts, as Megatron-LM trains), and
tensor parallelism with FSDP (ZeRO-3) data parallelism (as torchtitan trains).

Each term is bytes over a link's achievable bytes per second, or a share of the step; per GPU and micro-batch of
``b`` sequences of ``s`` tokens (``tokens = b*s``), hidden size ``h``, 16-bit activations:

- **Tensor parallelism** over ``t`` GPUs of one NVLink/NVSwitch node (Shoeybi et al. 2019, arXiv 1909.08053, section
  3: two all-reduces of the layer's output in the forward pass, one after attention and one after the MLP, and two in
  the backward pass). Each moves a ``tokens*h*2``-byte message; a ring all-reduce sends ``2(t-1)/t`` of it per GPU.
  With sequence parallelism the all-reduce becomes a reduce-scatter plus an all-gather of the same total bytes
  (Korthikanti et al. 2022, arXiv 2205.05198, section 4.2.2). Full recompute reruns the forward pass and its two
  all-reduces per layer: 6 instead of 4. The all-reduces sit between dependent matmuls: Megatron overlaps them only
  with ``tp_comm_overlap`` (Transformer Engine userbuffers, off by default and needing sequence parallelism; NVIDIA
  NeMo Megatron-Bridge docs, "Communication Overlap", docs.nvidia.com/nemo/megatron-bridge/latest/training/
  communication-overlap.html, read 2026-12-07), so they are charged exposed here.
- **Pipeline parallelism** over ``p`` stages across nodes, 1F1B schedule: the bubble is ``(p-1)/m`` of the ideal
  step for ``m`` micro-batches per step, ``(p-1)/(v*m)`` with ``v`` interleaved stages per GPU (Narayanan et al. 2021,
  arXiv 2104.04473, sections 2.2.1-2.2.2). At each stage boundary a micro-batch's activations (forward) and their
  gradient (backward) cross, ``tokens*h*2`` bytes each, split over the ``t`` tensor ranks (the paper's
  scatter/gather optimisation, section 4.1). Without interleaving Megatron batches these sends and receives rather
  than overlapping them (``overlap_p2p_comm`` only with virtual stages, same NeMo page): charged exposed.
- **Interleaved stages** (``v`` model chunks per GPU, "virtual pipeline" in Megatron/NeMo; Narayanan et al. 2021,
  section 2.2.2): each GPU holds ``v`` chunks of ``L/(p*v)`` whole layers, so the bubble shrinks to ``(p-1)/(v*m)``
  while every micro-batch crosses ``v`` times as many stage boundaries: ``v`` x the sends above ("the amount of
  communication also increases by v", same section), still charged exposed (Megatron may overlap them with virtual
  stages; not counted, so interleaving is not flattered). The first stage holds more activations:
  :func:`planner.workload.memory_3d.activation_bytes_3d`. Searched for ``v`` in 1, 2, 4, ... where ``L/(p*v)`` is
  whole and each pipeline runs at least ``p`` micro-batches a step (Megatron's interleaved schedule runs micro-batches
  in groups of ``p``).
- **Data parallelism** over the remaining ``d`` replicas with the distributed optimizer (ZeRO-1): a reduce-scatter of
  the gradients and an all-gather of the updated weights once per step, ``2 S (d-1)/d`` bytes per GPU for its
  ``S`` bytes of 16-bit gradients, i.e. its ``1/(t*p)`` share of the dense weights and ``1/(p*ep)`` of the experts
  (whose replicas are the ``t*d/ep`` GPUs holding the same experts). It overlaps the last micro-batch's backward
  pass as every once-per-step all-reduce does here (:func:`planner.perf.comm.efficiency`).
- **FSDP x TP** (``zero == 3``, torchtitan's 2D parallelism: FSDP2 over the data-parallel replicas, tensor parallelism
  inside the node; one pipeline stage, no expert or context parallelism): the replicas shard the weights too (ZeRO-3),
  so on every micro-batch each GPU all-gathers its tensor shard's 16-bit weights forward and backward and
  reduce-scatters their gradients, ``3 S (d-1)/d`` bytes for its ``S = 2 x params/(t*p)`` bytes
  (:func:`planner.perf.comm.traffic`, 'zero3', on the GPU's share; torchtitan reduces in fp32 by default,
  ``mixed_precision_reduce = "float32"``, which would make it ``4 S``: not counted, as the data-parallel ZeRO-3 model
  does not count it). It crosses the link the data-parallel group does, as the ZeRO-1 step's bytes above: where the
  replicas span nodes each of the node's ``t`` tensor ranks drives its own ring through the NIC, which carries ``t`` x
  one GPU's bytes. It overlaps up to that link's hidden share of each micro-batch's compute, as ZeRO-3 does in
  :func:`planner.perf.comm.efficiency`; no step-end collective is left (the optimizer steps its shard in place).
- **Expert parallelism** over ``ep`` GPUs of a stage: the experts are split, never gathered; every MoE layer
  dispatches each token's hidden state to its ``k`` experts and combines it back, forward and backward,
  ``4*k*h*2`` bytes a token of which ``(ep-1)/ep`` leaves the GPU (:func:`a2a_seconds`). With sequence parallelism a
  tensor rank dispatches its ``1/t`` of the tokens.
- **Context parallelism** over ``cp`` GPUs (pinned only, ``--cp``; Megatron-Core with Transformer Engine): each GPU
  runs ``s/cp`` tokens of every sequence through all its layers (the per-GPU tokens that set the compute, the TP and
  PP messages, the all-to-all and the utilisation's key), while each of its tokens still attends to the whole
  sequence, load-balanced by cutting it into ``2 cp`` chunks (Megatron-LM docs/source/api-guide/context_parallel.rst
  @1df56dcb, read 2026-12-07). Attention exchanges K and V in a ring (:func:`cp_ring_bytes`, Transformer Engine
  ``AttnFuncWithCPAndKVP2P``), overlapped with the attention of the chunk already received: the ring's seconds hide
  behind the attention share of the compute at the link's hidden share. The ring stays on NVLink where a node holds
  the ``t x cp`` GPUs of a sequence (Megatron orders ranks tensor, then context), else the node's GPUs' rings cross
  its NIC at once. Gradients are reduced and the distributed optimizer sharded over the ``dp x cp`` GPUs holding the
  same weights (Megatron-Core's ``intra_dp_cp_group``, :mod:`planner.workload.memory_3d`).

Step time = ``(m + (p-1)/v) x (compute + TP + PP + exposed all-to-all + exposed CP ring + exposed FSDP) + exposed
DP``; efficiency = ``m x compute / step time``. Not modelled: FP8 dispatch, uneven stages (the embedding and the
output head sit on the first and last stage; the layers are taken as evenly split), load imbalance among experts, FSDP
under pipeline stages or beside expert or context parallelism.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from planner.perf import comm, links
from planner.perf.moe_routing import a2a_overlapped, max_nodes_per_token
from planner.perf.split import Degrees, groups
from planner.workload.spec import Precision, Recompute, Sharding, TrainingWorkload

TP_DEGREES = (2, 4, 8)  # tensor parallelism stays inside one NVLink node: its traffic is per layer
PP_MAX = 64
TP_HIDDEN = 0.0  # Megatron's default: tensor-parallel collectives not overlapped (module docstring)
P2P_HIDDEN = 0.0  # non-interleaved 1F1B: batched sends/receives, not overlapped (module docstring)
# Models this size and up are searched for tensor/pipeline layouts. Below it, 16 B/param of states (<= 480 GB) fit
# one 8 x 80 GB node's ZeRO shards and a data-parallel layout hides its traffic on NVSwitch, while tensor parallelism
# only adds exposed per-layer traffic; Megatron's Table 1 starts tensor parallelism at 1.7B on 32 GPUs for weak
# scaling, but its 18B-and-down rows would beat ZeRO only where memory forces it, which the fit below also catches.
MIN_PARAMS_3D = 30e9


def bubble(p: int, m: float, v: int = 1) -> float:
    """Pipeline bubble as a share of the ideal step: (p-1)/(v*m) (Narayanan et al. 2021, 1F1B, interleaved)."""
    return 0.0 if p <= 1 else (p - 1) / (v * max(1.0, m))


def tp_bytes(tokens: float, hidden: int, layers: float, t: int, full_recompute: bool = False) -> float:
    """Bytes each GPU sends per micro-batch for tensor parallelism over ``t`` GPUs, ``layers`` layers of its stage:
    4 ring all-reduces per layer (6 with full recompute) of a ``tokens*h*2``-byte message, 2(t-1)/t of it each."""
    if t <= 1:
        return 0.0
    per_layer = 6 if full_recompute else 4
    return layers * per_layer * 2.0 * (t - 1) / t * tokens * hidden * 2.0


def p2p_bytes(tokens: float, hidden: int, t: int, v: int = 1) -> float:
    """Bytes one GPU sends per micro-batch at its stage boundaries: activations forward and their gradient backward,
    ``tokens*h*2`` each, split over the ``t`` tensor ranks; ``v`` interleaved chunks send at ``v`` boundaries."""
    return v * 2.0 * tokens * hidden * 2.0 / t


def cp_ring_bytes(micro_batch: int, seq: int, kv_width: int, layers: float, t: int, cp: int,
                  full_recompute: bool = False) -> float:
    """Bytes one GPU sends per micro-batch for context parallelism's ring attention over ``cp`` GPUs through
    ``layers`` layers, ``kv_width`` = KV heads x head dimension, 16-bit K and V.

    Transformer Engine's ``AttnFuncWithCPAndKVP2P`` (transformer_engine/pytorch/attention/dot_product_attention/
    context_parallel.py, NVIDIA/TransformerEngine @d0067d0da6cb01811b8072a7d304f0e00344ce2b, read 2026-12-07): in the
    forward pass each rank sends its K and V chunk (``b x s/cp`` tokens x ``kv_width/t``, its tensor rank's heads)
    to the next rank ``cp - 1`` times (``if i < (cp_size - 1)``: send, compute on what it holds); in the backward pass
    it passes K,V round again while the partial dK,dV follow them (``cp - 1`` sends of each), twice the forward's
    bytes. Full recompute reruns the forward ring: 4 instead of 3 forward rings a layer."""
    if cp <= 1:
        return 0.0
    forward = (cp - 1) * 2.0 * micro_batch * (seq / cp) * kv_width / t * 2.0  # K and V, 2 bytes each
    return layers * forward * (4.0 if full_recompute else 3.0)


def dp_bytes(dense_bytes: float, expert_bytes: float, d: int, expert_replicas: int) -> float:
    """Bytes per step each GPU moves for the distributed optimizer: reduce-scatter + all-gather (one all-reduce's
    2S(n-1)/n) of its dense share over ``d`` replicas and of its experts over ``expert_replicas``."""
    out = 2.0 * dense_bytes * (d - 1) / d if d > 1 else 0.0
    return out + (2.0 * expert_bytes * (expert_replicas - 1) / expert_replicas if expert_replicas > 1 else 0.0)


def a2a_seconds(w: TrainingWorkload, tokens: float, layers: float, ep: int, per_node: int, link: comm.Link,
                net: links.Network | None) -> float:
    """Seconds per micro-batch of expert parallelism's token exchange for ``tokens`` tokens a GPU dispatches through
    ``layers`` MoE layers over ``ep`` expert-parallel GPUs laid out node by node (0 for a dense model).

    Each token's hidden state goes to its k experts and back (dispatch and combine), in the forward and the
    backward pass: 4 k h x 2 bytes per token and MoE layer, of which (EP-1)/EP leaves the GPU. Destinations in the
    GPU's own node go over its link; the rest leave the node through its NIC, which carries the node's GPUs' share.
    """
    a = w.arch
    if ep <= 1 or not a.hidden:
        return 0.0
    k = a.experts_per_token or 1
    per_copy = tokens * layers * 4.0 * a.hidden * 2.0  # one copy of every token's state, there and back, fwd+bwd
    per_gpu = per_copy * k * (ep - 1) / ep
    inside = (min(ep, per_node) - 1) / (ep - 1)  # share of a GPU's other expert peers in its own node
    t_link = per_gpu * inside / (link.bus_gbytes_s * 1e9)
    if net is None or inside >= 1:
        return t_link
    # across nodes a token crosses once per distinct remote node its k experts sit on, then fans out over the
    # node's own link (hierarchical dispatch, as NCCL's and DeepEP's all-to-all do): expected distinct nodes of k
    # uniform picks among the EP group's m nodes
    m = -(-ep // per_node)
    remote = (m - 1) * (1 - (1 - 1 / m) ** k)
    if (cap := max_nodes_per_token(a.name)) is not None:
        # group-limited routing (DeepSeek-V3: experts from at most 4 groups, one group per node): at most cap nodes,
        # one of which is the token's own as often as a uniform pick among the m nodes makes it
        remote = min(remote, cap * (m - 1) / m)
    t_nic = per_node * per_copy * remote / (net.gbytes_s * 1e9)
    return max(t_link, t_nic)


@dataclass(frozen=True)
class Timing:
    """One 3D layout timed per micro-batch: seconds per GPU, the bubble and the step's efficiency."""

    degrees: Degrees
    micro_batch: int
    micro_batches: float  # per pipeline and optimizer step
    compute_s: float
    tp_s: float
    pp_s: float
    a2a_s: float
    dp_s: float  # per optimizer step
    bubble: float
    efficiency: float  # m x compute / step time
    per_mb_s: float = 0.0  # compute and exposed traffic of one micro-batch (TP, PP, all-to-all, CP ring, FSDP)
    dp_exposed_s: float = 0.0  # the data-parallel step's exposed seconds
    cp_s: float = 0.0  # context parallelism's ring seconds per micro-batch (before hiding)
    fsdp_s: float = 0.0  # FSDP x TP: the replicas' all-gathers and reduce-scatter per micro-batch (0 with ZeRO-1)

    def interleaved(self, v: int) -> Timing:
        """The same split, micro-batch and pace with ``v`` interleaved chunks per GPU instead of one: the bubble over
        ``v``, ``v`` x the stage-boundary sends (module docstring); everything else unchanged."""
        assert self.degrees.v == 1 and self.degrees.pp > 1
        d = self.degrees
        pp_s = self.pp_s * v
        per_mb = self.per_mb_s + (pp_s - self.pp_s) * (1 - P2P_HIDDEN)
        b = bubble(d.pp, self.micro_batches, v)
        m = self.micro_batches
        step = (m + m * b) * per_mb + self.dp_exposed_s
        return Timing(d.with_v(v), self.micro_batch, m, self.compute_s, self.tp_s, pp_s, self.a2a_s, self.dp_s, b,
                      m * self.compute_s / step, per_mb, self.dp_exposed_s, self.cp_s, self.fsdp_s)

    @property
    def intra_node(self) -> float:
        """Inside a node: tensor parallelism's exposed share alone."""
        return self.compute_s / (self.compute_s + self.tp_s)

    @property
    def inter_node(self) -> float:
        """The rest: bubble, pipeline sends, all-to-all and the data-parallel traffic (the ZeRO-1 step, FSDP's
        per-micro-batch gathers), so the product is the efficiency."""
        return self.efficiency / self.intra_node


def time_layout(w: TrainingWorkload, deg: Degrees, micro_batch: int, recompute: Recompute, per_node: int,
                link: comm.Link, net: links.Network | None, flops_per_s: float, global_tokens: float) -> Timing:
    """``w`` at ``deg`` (tensor ranks inside a node, then data-parallel replicas, stages across nodes) timed per
    micro-batch of ``micro_batch`` sequences; ``flops_per_s`` is one GPU's achieved rate."""
    a = w.arch
    assert a.hidden and a.layers
    t, p, c = deg.tp, deg.pp, deg.cp
    tokens = micro_batch * w.seq_len  # whole sequences: the micro-batch a context-parallel group of c GPUs runs
    mine = tokens / c  # the tokens each GPU of that group runs through its layers
    full = recompute is Recompute.FULL
    stage_layers = a.layers / p
    compute = comm.compute_seconds((a.active_params or a.params) / (t * p), mine, flops_per_s, full)
    tp_s = tp_bytes(mine, a.hidden, stage_layers, t, full) / (link.bus_gbytes_s * 1e9)
    nic = net.gbytes_s * 1e9 if net is not None else None
    # a node's GPUs all send their stage's boundary traffic through its NIC at once
    pp_s = per_node * p2p_bytes(mine, a.hidden, t, deg.v) / nic if p > 1 and nic else 0.0
    a2a = a2a_seconds(w, mine / t, stage_layers, deg.ep, per_node, link, net)
    cp_s, cp_hidden = _cp_ring(w, deg, micro_batch, stage_layers, full, per_node, link, net)
    g = groups(w)
    per = 4.0 if w.precision is Precision.FP32 else 2.0
    # gradients are reduced over the dp x cp GPUs holding the same weights (Megatron-Core's intra_dp_cp_group)
    replicas = deg.dp * c
    expert_replicas = max(1, t * replicas // deg.ep) if deg.ep > 1 else 1
    dense_share = (g.dense if deg.ep > 1 else a.params) / (t * p) * per
    expert_share = g.experts / (p * deg.ep) * per if deg.ep > 1 else 0.0
    in_node = max(1, per_node // t)  # a tensor rank's data-parallel peers inside its node

    def over_dp_link(nbytes: float) -> float:
        # seconds of one GPU's data-parallel bytes: over its node's link, and where the replicas span nodes through
        # the NIC, which each of the node's t tensor ranks rings through once per byte
        out = nbytes / (link.bus_gbytes_s * 1e9)
        return max(out, t * nbytes / nic) if replicas > in_node and nic else out

    # ZeRO-1: the distributed optimizer's once-per-step reduce-scatter and all-gather; FSDP x TP: none at the step's
    # end, ZeRO-3's 3 S (d-1)/d on every micro-batch instead
    step_bytes = 0.0 if deg.zero == 3 else dp_bytes(dense_share, expert_share, replicas, expert_replicas)
    dp_s = over_dp_link(step_bytes)
    fsdp_s = over_dp_link(comm.traffic("zero3", dense_share, replicas)[0]) if deg.zero == 3 else 0.0
    m = max(1.0, global_tokens / (deg.dp * tokens))
    slow = links.overlap_slowdown()
    a2a_exp = (comm.exposed(a2a, compute, link.hidden_share, slow) if a2a_overlapped(a.name) else a2a)
    hidden_dp = net.hidden_share if (replicas > in_node and net is not None) else link.hidden_share
    per_mb = (compute + tp_s * (1 - TP_HIDDEN) + pp_s * (1 - P2P_HIDDEN) + a2a_exp
              + comm.exposed(fsdp_s, compute, hidden_dp, slow))
    if cp_s:
        # the ring overlaps the attention of the chunk already received: it hides behind the attention share of the
        # compute (its hardware FLOPs over all of them, planner.workload.utilisation) at the link's hidden share
        from planner.workload.utilisation import attention_flops_per_token

        attn = attention_flops_per_token(a.layers, a.hidden, w.seq_len, full)
        dense = (8.0 if full else 6.0) * (a.active_params or a.params)
        per_mb += comm.exposed(cp_s, compute * attn / (dense + attn), cp_hidden, slow)
    b = bubble(p, m, deg.v)
    dp_exposed = comm.exposed(dp_s, compute, hidden_dp, slow)
    step = (m + m * b) * per_mb + dp_exposed
    return Timing(deg, micro_batch, m, compute, tp_s, pp_s, a2a, dp_s, b, m * compute / step, per_mb, dp_exposed,
                  cp_s, fsdp_s)


def _cp_ring(w: TrainingWorkload, deg: Degrees, micro_batch: int, layers: float, full: bool, per_node: int,
             link: comm.Link, net: links.Network | None) -> tuple[float, float]:
    """(seconds per micro-batch of the context-parallel ring, the hidden share of its link): over NVLink where one node
    holds a sequence's ``t x cp`` GPUs, else through the NIC, which all the node's GPUs' rings cross at once (some
    hops of a ring that spans nodes stay inside one: a little pessimistic)."""
    a = w.arch
    if deg.cp <= 1:
        return 0.0, 0.0
    assert a.hidden and a.heads
    kv_width = (a.kv_heads or a.heads) * (a.hidden // a.heads)
    sent = cp_ring_bytes(micro_batch, w.seq_len, kv_width, layers, deg.tp, deg.cp, full)
    if deg.tp * deg.cp <= per_node or net is None:
        return sent / (link.bus_gbytes_s * 1e9), link.hidden_share
    return per_node * sent / (net.gbytes_s * 1e9), net.hidden_share


def nvlink_node(link: comm.Link, per_node: int) -> bool:
    """Whether tensor parallelism may run on this node: two or more GPUs joined by NVLink/NVSwitch, not PCIe."""
    return per_node >= 2 and ("NVLink" in link.name or "NVSwitch" in link.name) and "PCIe" not in link.name


def _powers(top: int) -> list[int]:
    out, x = [], 1
    while x <= top:
        out.append(x)
        x *= 2
    return out


@lru_cache(maxsize=256)
def interleavings(layers: int, p: int) -> tuple[int, ...]:
    """Interleaved chunks per GPU (``v > 1``) searched for ``p`` stages, largest first: ..., 4, 2 while ``layers/(p*v)``
    is whole. The largest needs the least first-stage memory (``1 + (p-1)/(p*v)`` x the plain schedule's)."""
    if p <= 1:
        return ()
    return tuple(sorted((v for v in _powers(layers // p) if v > 1 and layers % (p * v) == 0), reverse=True))


def degrees(w: TrainingWorkload, per_node: int, nodes: int, tensor: bool = True) -> list[Degrees]:
    """Every tensor (2, 4, 8 inside a node; none where ``tensor`` is False: a node without NVLink) x pipeline (powers
    of two up to the nodes and the layers) x expert (powers of two dividing the experts and a stage's GPUs) split of
    ``per_node`` x ``nodes`` GPUs, not interleaved (:func:`search` times each pipeline split's interleavings beside
    it)."""
    a = w.arch
    c = w.cp  # context parallelism: pinned only (--cp), 1 otherwise
    out = []
    # t = 1 with pipeline or expert parallelism too (DeepSeek-V3 trained with 16-way pipeline and 64-way expert
    # parallelism and no tensor parallelism, arXiv 2412.19437 section 3.2, RECALLED); t = 1, p = 1 without experts
    # is plain ZeRO-1, which the data-parallel search covers
    for t in (x for x in (1, *(TP_DEGREES if tensor else ())) if x <= per_node and per_node % x == 0):
        # stages need not be whole nodes (13 nodes of 8 at t=4: 26 tensor groups, 2 stages of 13); every boundary is
        # charged over the network all the same
        # a pinned pipeline (--pp) may put stages inside a node too (NeMo's 13B runs 4 stages on 2 nodes): boundary
        # sends are then charged over the NIC all the same, a little pessimistic for the ones that stay on NVLink
        stages = ([w.pipeline_parallel] if w.pipeline_parallel and w.pipeline_parallel <= (a.layers or 1)
                  else _powers(min(PP_MAX, nodes, a.layers or 1)))
        for p in (x for x in stages if (per_node * nodes // t) % (x * c) == 0):
            d = per_node * nodes // (t * p * c)
            eps = [1]
            if a.moe and a.experts:
                eps = [e for e in _powers(min(a.experts, t * d)) if e > 1 and a.experts % e == 0 and (t * d) % e == 0]
            out += [Degrees(t, p, e, d, 1, c) for e in eps or [1] if t > 1 or p > 1 or e > 1 or c > 1]
    out = [x for s in out for x in (s, *fsdp_variant(w, s))]
    # a split the user pinned (--tp/--pp): only it, with its experts and interleavings still searched
    return [d for d in out if (w.tensor_parallel is None or d.tp == w.tensor_parallel)
            and (w.pipeline_parallel is None or d.pp == w.pipeline_parallel)
            and (d.zero == 3 or w.sharding not in (Sharding.ZERO3, Sharding.FSDP))]


def fsdp_variant(w: TrainingWorkload, deg: Degrees) -> list[Degrees]:
    """``deg`` with FSDP (ZeRO-3) over its replicas instead of ZeRO-1, where that layout is modelled and allowed: tensor
    parallelism with one pipeline stage and no expert or context parallelism (torchtitan's FSDP x TP), over two
    replicas or more; the sharding auto (both are timed, the faster kept), zero3 or fsdp. Three more splits at most
    (t = 2, 4, 8)."""
    if not (deg.tp > 1 and deg.pp == 1 and deg.ep == 1 and deg.cp == 1 and deg.dp > 1):
        return []
    return [deg.with_zero(3)] if w.sharding in (Sharding.AUTO, Sharding.ZERO3, Sharding.FSDP) else []


def useful_rate(tm: Timing, seq_len: int) -> float:
    """Tokens each GPU trains per second: a replica of ``t x p x cp`` GPUs runs a micro-batch's tokens in its compute
    time over the layout's efficiency (full recompute's extra pass is in that compute time, so it costs here)."""
    d = tm.degrees
    return tm.efficiency * tm.micro_batch * seq_len / (tm.compute_s * d.tp * d.pp * d.cp)


def _bound(w: TrainingWorkload, deg: Degrees, link: comm.Link, slowest: float, fastest: float,
           global_tokens: float, per_node: int = 1, net: links.Network | None = None) -> float:
    """An upper bound on a split's tokens per GPU-second: its efficiency bound (TP's exposed share per token, the
    same at every micro-batch, the least without recompute, at the slowest pace, where compute hides the most; the
    stage-boundary sends through the NIC, exposed and as many bytes a token at every micro-batch, counted without
    interleaving, the fewest; the least bubble, at micro-batch 1, the most micro-batches; all other traffic free) at
    the fastest pace, 6N a token."""
    a = w.arch
    assert a.hidden and a.layers
    tp = tp_bytes(1.0, a.hidden, a.layers / deg.pp, deg.tp) / (link.bus_gbytes_s * 1e9)
    pp = per_node * p2p_bytes(1.0, a.hidden, deg.tp) / (net.gbytes_s * 1e9) if deg.pp > 1 and net else 0.0
    c = comm.compute_seconds((a.active_params or a.params) / (deg.tp * deg.pp), 1.0, slowest)
    v = max((deg.v, *interleavings(a.layers, deg.pp)))  # the least bubble among the split's interleavings
    eff = c / (c + tp + pp * (1 - P2P_HIDDEN)) / (1.0 + bubble(deg.pp, global_tokens / (deg.dp * w.seq_len), v))
    return eff * fastest / (6.0 * (a.active_params or a.params))


@lru_cache(maxsize=4096)  # plan asks for the same GPU, node size and count across providers, regions and billings
def search(w: TrainingWorkload, vram_gb: float, per_node: int, nodes: int, link: comm.Link,
           net: links.Network | None, rate: comm.Rate, global_tokens: float,
           levels: tuple[Recompute, ...], floor: float = 0.0) -> list[tuple[Timing, Recompute]]:
    """Each tensor/pipeline/expert split at its best micro-batch and recompute level that fits, fastest first (tokens
    per GPU-second, :func:`useful_rate`); without tensor parallelism where the node has no NVLink, empty where the
    model has no shape. ``rate`` is one GPU's achieved FLOP/s, or a hashable callable of (micro-batch, recompute)
    where the utilisation depends on the work (:class:`planner.plan.keyed_choice.KeyedRate`). Splits whose
    :func:`_bound` is under ``floor`` (tokens per GPU-second) or under the best split already timed are skipped. A
    pipeline split is timed with each of its interleavings too (:meth:`Timing.interleaved`) where it fits and runs
    ``p`` micro-batches a step; the best is kept."""
    from planner.workload.memory_3d import max_micro_batch

    a = w.arch
    if not (a.hidden and a.layers and a.heads):
        return []
    # tensor parallelism's per-layer all-reduces need NVLink; pipeline stages (and experts) without it need only
    # their boundary sends (and dispatches), which cross the NIC or the node's own link as they do on NVLink nodes
    tensor = nvlink_node(link, per_node)
    most = max(1, int(global_tokens / w.seq_len))
    slowest = min(comm.pace(rate, 1, rc) for rc in levels)
    fastest = max(comm.pace(rate, most, rc) for rc in levels)
    found: list[tuple[float, Timing, Recompute]] = []
    top_useful = floor
    splits = sorted(((_bound(w, d, link, slowest, fastest, global_tokens, per_node, net), d)
                     for d in degrees(w, per_node, nodes, tensor)), key=lambda x: x[0], reverse=True)
    for bound, deg in splits:
        if bound <= top_useful:  # cannot beat the best split found so far, whatever its micro-batch and recompute
            continue
        best: tuple[float, Timing, Recompute] | None = None
        reached = 0  # largest micro-batch an earlier (cheaper) recompute level fits: a later one only pays off above it
        share = max(1, int(global_tokens / deg.dp / w.seq_len))
        for rc in levels:
            if reached >= share or (w.micro_batch and reached):  # a cheaper level already fits all it could use
                break
            top = max_micro_batch(w, deg, rc, vram_gb)
            if w.micro_batch:
                sizes = [w.micro_batch] if w.micro_batch <= top else []
            else:
                sizes = sorted({*(x for x in _powers(min(top, share))), min(top, share)} - {0})
            if not sizes or sizes[-1] <= reached:
                continue
            reached, last = sizes[-1], -1.0
            if deg.zero == 3 and w.sharding is Sharding.AUTO:
                # ZeRO-1 at the same split, micro-batch and recompute is never slower (the same compute; FSDP's
                # 3S(d-1)/d a micro-batch exposes no less than ZeRO-1's 2S(d-1)/d a step): FSDP x TP can only win at
                # a micro-batch ZeRO-1 does not fit, so only those are timed (the search's cost)
                zero1_top = max_micro_batch(w, deg.with_zero(1), rc, vram_gb)
                sizes = [x for x in sizes if x > zero1_top]
            inter = interleavings(a.layers, deg.pp)
            # FSDP x TP has one stage, no bubble: a larger micro-batch only hides more of its per-micro-batch gathers,
            # so it is timed from the largest down, stopping where it stops paying (one or two sizes, not all)
            for mb in (sizes[::-1] if deg.zero == 3 else sizes):
                tm = time_layout(w, deg, mb, rc, per_node, link, net, comm.pace(rate, mb, rc), global_tokens)
                useful = useful_rate(tm, w.seq_len)
                # the interleaved schedule runs micro-batches in groups of p: it needs p of them a step
                plain = tm
                for v in (inter if plain.micro_batches >= deg.pp else ()):
                    if mb > max_micro_batch(w, deg.with_v(v), rc, vram_gb):
                        break  # smaller v hold more activations on the first stage: they do not fit either
                    if (u := useful_rate(tv := plain.interleaved(v), w.seq_len)) > useful:
                        tm, useful = tv, u
                if best is None or useful > best[0]:
                    best = (useful, tm, rc)
                if useful < last:  # traffic amortised, bubble growing: larger micro-batches only lose from here
                    break
                last = useful
        if best is not None:
            found.append(best)
            top_useful = max(top_useful, best[0])
    found.sort(key=lambda x: x[0], reverse=True)
    return [(tm, rc) for _, tm, rc in found]
