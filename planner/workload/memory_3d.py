"""Per-GPU memory of a tensor/pipeline/expert-parallel layout with the distributed optimizer (ZeRO-1).

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
- Headroom, CUDA overhead and NCCL buffers as in :func:`planner.workload.memory.fitted`.
"""

from __future__ import annotations

from functools import lru_cache

from planner.perf.split import Degrees, groups
from planner.workload.memory import (
    DEFAULT_OVERHEAD_GB,
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
    return ((dense_share + expert_share) * wb / GIB, (dense_share + expert_share) * gb / GIB,
            (dense_share / (deg.dp * deg.cp) + expert_share / expert_replicas) * ob / GIB,
            activation_bytes_3d(w, deg, recompute) / GIB,
            (DEFAULT_OVERHEAD_GB if w.overhead_gb is None else w.overhead_gb) + NCCL_BUFFERS_GB)


def memory_3d(w: TrainingWorkload, deg: Degrees, recompute: Recompute) -> MemoryBreakdown:
    """Per-GPU memory of ``w`` at ``deg`` with ``recompute``."""
    weights, gradients, optimizer, act, overhead = _parts(w, deg, recompute)
    return MemoryBreakdown(weights=weights, gradients=gradients, optimizer=optimizer, activations_per_sample=act,
                           overhead=overhead)


@lru_cache(maxsize=8192)  # the same split recurs across the node counts and offers plan tries
def max_micro_batch(w: TrainingWorkload, deg: Degrees, recompute: Recompute, vram_gb: float) -> int:
    """Largest micro-batch that fits ``vram_gb`` less the headroom (0 if none), as ``MemoryBreakdown.max_batch``."""
    weights, gradients, optimizer, act, overhead = _parts(w, deg, recompute)
    free = vram_gb - headroom_gb(vram_gb) - (weights + gradients + optimizer + overhead)
    return 0 if free < act else int(free // act)
