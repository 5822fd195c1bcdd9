"""Per-GPU memory of a tensor/pipeline/expert-parallel layout with the distributed optimizer (ZeRO-1) or FSDP (ZeRO-3).

- States (16 B/param mixed-precision Adam as in :mod:`planner.workload.memory`): a GPU holds ``1/(t*p)`` of the dense
  weights and gradients (tensor ranks split each matrix, stages split the layers) and ``1/(p*ep)`` of the routed
  experts' (experts are split by expert parallelism, not by tensor parallelism); the optimizer states are further
  divided over the data-parallel replicas of each (Megatron's distributed optimizer, ZeRO stage 1).
- Activations with tensor and sequence parallelism: ``s*b*h*34/t`` bytes per layer with flash attention or selective
  recompute (plus ``5*a*s/h`` over ``t`` without flash attention), ``2*s*b*h/t`` per layer with full recompute (its
  input, sharded by sequence parallelism) plus one layer's activations while it is recomputed (Korthikanti et al.
  2022, arXiv 2205.05198, sections 4.2.2 and 5, Table 2). Under 1F1B the first stage holds ``p`` micro-batches of its
  ``L/p`` layers, i.e. ``L`` layers' worth of one micro-batch, whatever ``p`` (same paper, section 4.2.3); the last
  stage holds one micro-batch of its layers plus the logits and their gradient, split over the vocabulary by the
  tensor ranks. The larger of the two sets the micro-batch. With ``v`` interleaved chunks per GPU the first stage holds
  ``1 + (p-1)/(p*v)`` times that (Megatron-LM ``megatron/training/theoretical_memory_usage.py``,
  ``compute_activation_memory``, "interleaved_schedule_memory_penalty", NVIDIA/Megatron-LM
  @38644dd756c46142787b1bd5dc08ed82ca0e6de1, read 2026-12-07; it multiplies the first stage's layer and embedding
  activations), i.e. more than without interleaving, falling towards it as ``v`` grows.
- Context parallelism over ``cp`` GPUs (``Degrees.cp``) splits every activation along the sequence: each GPU holds
  the activations of ``s/cp`` tokens of each sequence, so all the activation bytes above (the logits too) divide by
  ``cp`` ("CP partitions the network inputs and all activations along sequence dimension ... The activation memory
  footprint per GPU is also CP times smaller", Megatron-LM docs/source/api-guide/context_parallel.rst
  @1df56dcbb858728d89292f0dae5ef4d035a95e97, read 2026-12-07). The ``cp`` GPUs of a sequence hold the same weights
  and gradients (the split is of the tokens, not the weights); Megatron-Core's gradient buffers and distributed
  optimizer use the data-parallel group *with* the context-parallel ranks (``intra_dp_cp_group`` in
  ``megatron/core/distributed/distributed_data_parallel.py``, whose size also lays out the distributed optimizer's
  shards, ``DistributedOptimizer.compute_full_param_layout``; NVIDIA/Megatron-LM
  @d98e8a64ddf34856e74b24714e3bedb2f5a39553, read 2026-12-07): the optimizer states are sharded over ``dp x cp``.
- FSDP x TP (``deg.zero == 3``, one pipeline stage, no expert parallelism; torchtitan's 2D parallelism): the 16-bit
  weights, gradients and optimizer states of the GPU's ``1/(t*p)`` share are all divided by the ``d`` data-parallel
  ranks (ZeRO-3 over the replicas), plus the weights FSDP2 holds unsharded (``gathered``): the block being computed and
  the next one, whose all-gather is prefetched (PyTorch ``torch.distributed.fsdp.fully_shard`` docs,
  ``FSDPModule.set_modules_to_forward_prefetch``/``set_modules_to_backward_prefetch``: "Passing a singleton list
  containing the next FSDP module gives the same all-gather overlap behavior as the default overlap behavior. Passing a
  list with at least length two is required for more aggressive overlap", docs.pytorch.org/docs/stable/
  distributed.fsdp.fully_shard.html, read 2026-12-07: one block prefetched by default, so two whole), each of the
  ``1/t`` tensor share; and the output head's ``1/t`` share, which torchtitan keeps unsharded from the end of the
  forward into the backward (``apply_fsdp``: ``fully_shard([model.norm, model.output], ...,
  reshard_after_forward=reshard_after_forward_policy == "always")``, default "default", pytorch/torchtitan
  torchtitan/models/llama3/infra/parallelize.py @018740b7, read 2026-12-07). The block's unsharded gradient before its
  reduce-scatter is not counted apart (the 8% headroom), as the data-parallel ZeRO-3 count leaves it out.
- Headroom, CUDA overhead and NCCL buffers as in :func:`planner.workload.memory.fitted`.
"""

from __future__ import annotations

from functools import lru_cache

from planner.perf.split import Degrees, groups
from planner.workload.memory import (
    DEFAULT_OVERHEAD_GB,
    GATHERED_LAYERS,
    GIB,
    LOGIT_BYTES,
    NCCL_BUFFERS_GB,
    MemoryBreakdown,
    headroom_gb,
    layer_activation_bytes,
    state_bytes_per_param,
)
from planner.workload.spec import Recompute, TrainingWorkload


def activation_bytes_3d(w: TrainingWorkload, deg: Degrees, recompute: Recompute) -> float:
    """Activation bytes per sequence on the fuller of the first and last pipeline stage (the GPU's ``1/cp`` of it with
    context parallelism: every activation is split along the sequence)."""
    a = w.arch
    assert a.hidden and a.heads and a.layers
    s, t, layers = w.seq_len, deg.tp, a.layers
    per_layer, extra = layer_activation_bytes(w, recompute, t)
    first = layers * per_layer  # p micro-batches in flight x L/p layers
    if deg.v > 1 and deg.pp > 1:
        first *= 1.0 + (deg.pp - 1) / (deg.pp * deg.v)  # Megatron's interleaved-schedule memory penalty
    first += extra
    last = layers / deg.pp * per_layer + extra + s * (a.vocab or 0) * LOGIT_BYTES[w.precision.mixed] / t
    return max(first, last) / deg.cp


def _parts(w: TrainingWorkload, deg: Degrees, recompute: Recompute) -> tuple[float, float, float, float, float]:
    """(weights, gradients, optimizer, activations per sequence, overhead) in GiB: plain floats, for the search."""
    wb, gb, ob = state_bytes_per_param(w.precision, w.optimizer)
    g = groups(w)
    t, p = deg.tp, deg.pp
    dense, experts = (g.dense, g.experts) if deg.ep > 1 else (w.arch.params, 0.0)
    dense_share = dense / (t * p)
    expert_share = experts / (p * deg.ep) if deg.ep > 1 else 0.0
    # the distributed optimizer shards over the data-parallel ranks with the context-parallel ones (module docstring)
    expert_replicas = max(1, t * deg.dp * deg.cp // deg.ep) if deg.ep > 1 else 1
    # FSDP x TP (ZeRO-3 over the replicas; no experts or context parallelism): weights and gradients divided too
    assert deg.zero == 1 or (deg.ep == 1 and deg.cp == 1), "FSDP x TP is modelled without expert or context parallelism"
    whole = (dense_share + expert_share) / (deg.dp if deg.zero == 3 else 1)
    return (whole * wb / GIB, whole * gb / GIB,
            (dense_share / (deg.dp * deg.cp) + expert_share / expert_replicas) * ob / GIB,
            activation_bytes_3d(w, deg, recompute) / GIB,
            (DEFAULT_OVERHEAD_GB if w.overhead_gb is None else w.overhead_gb) + NCCL_BUFFERS_GB)


def gathered_gib(w: TrainingWorkload, deg: Degrees) -> float:
    """GiB of weights FSDP x TP holds unsharded at once (module docstring): two transformer blocks' and the output
    head's ``1/t`` tensor share, at the bytes the weights are kept in; 0 with ZeRO-1 (weights never sharded)."""
    a = w.arch
    if deg.zero != 3 or not a.layers:
        return 0.0
    wb, _, _ = state_bytes_per_param(w.precision, w.optimizer)
    g = groups(w)
    block = (a.params - g.embeddings) / a.layers  # one transformer block's parameters, embeddings apart
    head = (a.vocab or 0) * (a.hidden or 0)  # the output projection (embeddings count it untied)
    return (GATHERED_LAYERS * block + head) / deg.tp * wb / GIB


def memory_3d(w: TrainingWorkload, deg: Degrees, recompute: Recompute) -> MemoryBreakdown:
    """Per-GPU memory of ``w`` at ``deg`` with ``recompute``."""
    weights, gradients, optimizer, act, overhead = _parts(w, deg, recompute)
    return MemoryBreakdown(weights=weights, gradients=gradients, optimizer=optimizer, gathered=gathered_gib(w, deg),
                           activations_per_sample=act, overhead=overhead)


@lru_cache(maxsize=8192)  # the same split recurs across the node counts and offers plan tries
def max_micro_batch(w: TrainingWorkload, deg: Degrees, recompute: Recompute, vram_gb: float) -> int:
    """Largest micro-batch that fits ``vram_gb`` less the headroom (0 if none), as ``MemoryBreakdown.max_batch``."""
    weights, gradients, optimizer, act, overhead = _parts(w, deg, recompute)
    free = vram_gb - headroom_gb(vram_gb) - (weights + gradients + optimizer + overhead + gathered_gib(w, deg))
    return 0 if free < act else int(free // act)
