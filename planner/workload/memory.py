"""Does a workload fit in a GPU's memory, with what batch, and on how few GPUs when sharded.

Sources (see docs/accuracy.md for the comparison with measured batch sizes):

- model states, mixed-precision Adam: 2 B/param weights + 2 gradients + 12 optimizer
  (fp32 master, m, v) = 16 B/param; ZeRO-1 divides the optimizer states across the
  data-parallel GPUs, ZeRO-2 also the gradients, ZeRO-3/FSDP everything
  (Rajbhandari et al. 2019, arXiv 1910.02054, section 3.1). Other optimizers follow the
  same accounting with their own state sizes (see ``_OPTIMIZER_BYTES``).
- activations per layer and sample, 16-bit: s*h*(34 + 5*a*s/h) bytes without flash
  attention; flash attention or selective recompute drop the 5*a*s/h term; full recompute
  keeps only the layer input, 2*s*h (Korthikanti et al. 2022, arXiv 2205.05198, section 4).
  The formula is for GPT blocks with a 4h GELU MLP and dropout; SwiGLU models differ
  somewhat. Logits add s*V*bytes per sample.
- inference: weights at 16/8/4 bits plus the KV cache, 2*L*kv_heads*head_dim*context*2 B
  per sequence.
- image models have no closed form for activations: the max batch is the measured Lambda
  batch size for that GPU, or scaled linearly with VRAM from the nearest measured GPU.
- LoRA/QLoRA (frozen 16-bit or NF4 base, states for adapters only) and mixtures of experts
  (every expert's states, split by expert parallelism): ``planner.workload.params`` and docs/memory.md.

"GB" here is GiB (2**30 bytes), the unit VRAM sizes are labelled in.
"""

from __future__ import annotations

import statistics
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from pricing.catalog import Catalog, GpuSpec
from planner.workload.spec import (
    ImageWorkload,
    InferenceWorkload,
    Method,
    Offload,
    Optimizer,
    Precision,
    Recompute,
    Sharding,
    TrainingWorkload,
    TransformerArch,
)

GIB = 2**30

# CUDA context, cuBLAS/cuDNN workspaces and allocator slack. ASSUMPTION: the midpoint of
# the 0.5-2 GB rule of thumb in the reference notes, not a measured figure; --overhead-gb
# overrides it.
DEFAULT_OVERHEAD_GB = 1.25

# (optimizer-state bytes per parameter in mixed precision incl. the fp32 master copy, in fp32)
# adamw: ZeRO paper K=12 (master 4 + m 4 + v 4); fp32 Adam keeps m and v only.
# sgd: momentum SGD by the same accounting: master 4 + momentum 4.
# adam8bit: 8-bit m and v, 1 B each (Dettmers et al. 2021, arXiv 2110.02861; RECALLED) + master 4.
# adafactor: factored second moment, O(rows+cols), no first moment by default: ~0 beyond the master copy.
# adamw-bf16: m and v in 16 bits, 2 B each, and no master copy (the 16-bit weights are updated in place): NeMo's
#   distributed_fused_adam with dtype bf16 under bf16 weights sets store_params False (NeMo megatron_base_model.py
#   l.806-807 @e938df32; Apex DistributedFusedAdam allocates exp_avg/exp_avg_sq in that dtype and a master shard only
#   when asked, apex/contrib/optimizers/distributed_fused_adam.py l.453-479 @b7a4acc1), as NVIDIA's Nemotron-4 340B
#   benchmark config does (dgxc-benchmarking nemotron4-340b-synth.yaml l.182-189 @35a9aecc). In fp32 training the
#   weights are the master, so it keeps fp32 moments like adamw.
_OPTIMIZER_BYTES: dict[Optimizer, tuple[float, float]] = {
    Optimizer.ADAMW: (12, 8),
    Optimizer.SGD: (8, 4),
    Optimizer.ADAM_8BIT: (6, 2),
    Optimizer.ADAFACTOR: (4, 0),
    Optimizer.ADAMW_BF16: (4, 8),
}

# Bytes per logit (sequence x vocabulary) held at the loss: Hugging Face's causal-LM heads upcast the 16-bit
# logits to fp32 before the loss (`logits = logits.float()`), and cross-entropy's log-softmax saves its fp32
# output for the backward pass, so mixed precision holds 2 + 4 + 4 bytes, fp32 training 4 + 4 (RECALLED from
# transformers' LlamaForCausalLM.forward and PyTorch's log_softmax backward). A 2048-token Llama-2 sequence:
# 2048 x 32000 x 10 B = 0.61 GiB where 16-bit logits alone were 0.12 GiB.
# Their gradient adds 4 B more at the loss's backward (cross-entropy hands back an fp32 gradient of the logits before
# it is cast to the head's 16 bits), the step's transient peak, so the logits are charged 14 / 12 B (issue 41).
LOGIT_BYTES = {True: 14.0, False: 12.0}
# ZeRO-3/FSDP all-gather a layer's full weights before using them and prefetch the next one, so two layers'
# 16-bit weights are whole on every GPU at once (PyTorch FSDP's limit_all_gathers allows two in flight;
# DeepSpeed's prefetch bucket works the same way; RECALLED).
GATHERED_LAYERS = 2

# "Fits" keeps this much of the usable memory free for transient peaks the count does not see: the caching allocator's
# fragmentation, cuBLAS workspaces growing with the batch, temporaries of fused kernels. ESTIMATE (issue 41): 8% and at
# least 1.5 GiB; runs counted at 96-100% of a card (7B LoRA and 13B QLoRA on a 4090, 7B QLoRA on a T4) go out of memory.
HEADROOM_SHARE = 0.08
HEADROOM_MIN_GB = 1.5
# NCCL's communicator buffers on a multi-GPU job: NCCL_BUFFSIZE (4 MiB default) per channel and peer, plus DDP/FSDP's
# flat buckets. ESTIMATE: 0.5 GiB per GPU when the job has more than one GPU (a few hundred MiB measured per
# communicator is the usual report; not a sourced table).
NCCL_BUFFERS_GB = 0.5
# ZeRO-Offload (Ren et al. 2021, arXiv 2101.06840; DeepSpeed stage 1/2 with offload_optimizer.device "cpu"): the fp32
# master weights and optimizer states live in host RAM and the CPU updates them; reduced gradients leave the GPU bucket
# by bucket during backward (stage_1_and_2.py copy_grads_in_partition ->
# async_inplace_copy_grad_to_fp32_buffer_from_gpu) into an fp32 gradient partition in host RAM. The GPU keeps the
# 16-bit weights and one reduce bucket of gradients:
# DeepSpeed's default reduce_bucket_size is 5e8 elements (deepspeed/runtime/zero/config.py,
# `reduce_bucket_size: int = Field(pp_int(5e8), ge=0)`, deepspeedai/DeepSpeed @edaa7221, 2026-08-22), one buffer for
# stages 1/2 (overlap_comm defaults to True only for stage 3, same file: a second buffer then).
OFFLOAD_BUCKET_ELEMENTS = 5e8
HOST_GRAD_BYTES = 4.0  # the fp32 gradient partition the CPU optimizer reads (single_partition_of_fp32_groups' .grad)


def headroom_gb(usable_gb: float) -> float:
    """GiB of ``usable_gb`` that a fit leaves free: 8%, at least 1.5 GiB."""
    return max(HEADROOM_SHARE * usable_gb, HEADROOM_MIN_GB)


SHARD_ORDER = (Sharding.NONE, Sharding.ZERO1, Sharding.ZERO2, Sharding.ZERO3)


@lru_cache(maxsize=1)
def _usable() -> dict[str, tuple[float, str]]:
    from pricing.datafiles import data_rows

    return {r["gpu"]: (float(r["usable_gib"]), f"{r['measure']} total, {r['source']}")
            for r in data_rows("usable_vram.csv", "planner.data")}


def usable_vram(spec: GpuSpec) -> tuple[float, str]:
    """GiB a training process can use on ``spec`` and where the figure is from: a measured total where one
    ships (``planner/data/usable_vram.csv``: an L40S gives 44.42 of its 48), else the label's figure."""
    return _usable().get(spec.key, (spec.vram_gb, "the label's figure (no measured total)"))
RECOMPUTE_ORDER = (Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL)


class MemoryBreakdown(BaseModel):
    """Per-GPU memory in GB (GiB); per-sample terms multiply by the batch."""

    model_config = ConfigDict(frozen=True)

    weights: float
    gradients: float = 0.0
    optimizer: float = 0.0
    gathered: float = 0.0  # ZeRO-3/FSDP: the layers' weights all-gathered whole for compute
    host_offloaded: float = 0.0  # optimizer offload: host RAM per GPU (its optimizer states + fp32 gradient partition)
    activations_per_sample: float | None = None
    kv_cache_per_sample: float | None = None
    overhead: float

    @property
    def fixed(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.gathered + self.overhead

    @property
    def per_sample(self) -> float | None:
        if self.activations_per_sample is None and self.kv_cache_per_sample is None:
            return None
        return (self.activations_per_sample or 0.0) + (self.kv_cache_per_sample or 0.0)

    def total(self, batch: int) -> float:
        return self.fixed + (self.per_sample or 0.0) * batch

    def max_batch(self, vram_gb: float) -> int | None:
        """Largest batch that fits, 0 if not even one sample does, None if activations are unknown."""
        free = vram_gb - self.fixed
        if self.per_sample is None:
            return None if free >= 0 else 0
        if free < self.per_sample:
            return 0
        return int(free // self.per_sample)

    def as_dict(self, batch: int) -> dict[str, float | None]:
        r = lambda v: None if v is None else round(v, 3)  # noqa: E731
        return {
            "weights": r(self.weights),
            "gradients": r(self.gradients),
            "optimizer": r(self.optimizer),
            "gathered": r(self.gathered),
            "activations_per_sample": r(self.activations_per_sample),
            "kv_cache_per_sample": r(self.kv_cache_per_sample),
            "overhead": r(self.overhead),
            "host_offloaded": r(self.host_offloaded),
            "total": r(self.total(batch)),
        }


def state_bytes_per_param(precision: Precision, optimizer: Optimizer) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes per parameter, unsharded."""
    # fp8 training (Transformer Engine) keeps 16-bit weights and casts per matmul, so
    # its memory is that of bf16 mixed precision.
    if precision.mixed:
        return 2.0, 2.0, _OPTIMIZER_BYTES[optimizer][0]
    return 4.0, 4.0, _OPTIMIZER_BYTES[optimizer][1]


def _norm_shard(s: Sharding) -> Sharding:
    return Sharding.ZERO3 if s is Sharding.FSDP else s


def layer_activation_bytes(w: TrainingWorkload, recompute: Recompute, tensor_parallel: int = 1) -> tuple[float, float]:
    """(bytes one sequence keeps per layer for the backward pass, bytes of one layer's activations held while it is
    recomputed: 0 but with full recompute), per GPU of ``tensor_parallel`` ranks with sequence parallelism, which
    split every term (Korthikanti et al. 2022). Needs the model's shape."""
    a = w.arch
    s, h, heads = w.seq_len, a.hidden, a.heads
    assert h is not None and heads is not None
    # Korthikanti's coefficients count 2-byte activations; fp32 doubles them (the 1-byte
    # dropout masks stay, so this slightly overstates fp32).
    scale = (1.0 if w.precision.mixed else 2.0) / tensor_parallel
    quadratic = 0.0 if w.flash_attention else 5.0 * heads * s / h
    full_layer = s * h * (34.0 + quadratic) * scale
    if recompute is Recompute.NONE:
        return full_layer, 0.0
    if recompute is Recompute.SELECTIVE:
        return s * h * 34.0 * scale, 0.0
    # layer inputs for every layer, plus one layer's activations while it is recomputed
    return 2.0 * s * h * scale, full_layer


def activation_bytes_per_sample(w: TrainingWorkload, recompute: Recompute) -> float | None:
    """Activation bytes one sequence keeps for the backward pass, or None without the model's shape."""
    a = w.arch
    if not a.has_shape:
        return None
    assert a.layers is not None
    per_layer, extra = layer_activation_bytes(w, recompute)
    return a.layers * per_layer + extra + w.seq_len * (a.vocab or 0) * LOGIT_BYTES[w.precision.mixed]


def expert_parallel(w: TrainingWorkload, gpus: int) -> int:
    """Expert-parallel degree: experts spread over up to one GPU each (1 for a dense model)."""
    e = w.arch.experts
    return min(max(1, gpus), e) if e and w.arch.moe else 1


def training_memory(
    w: TrainingWorkload, gpus: int = 1, sharding: Sharding = Sharding.NONE, recompute: Recompute = Recompute.NONE,
    offload: bool = False,
) -> MemoryBreakdown:
    """Per-GPU memory of ``w`` data-parallel on ``gpus`` GPUs with that sharding and recompute.

    Mixture of experts: expert parallelism spreads the E experts over EP = min(GPUs, E)
    GPUs, so a GPU keeps 1/EP of every expert state ZeRO leaves whole; a state ZeRO shards
    is split over all the GPUs (experts over EP, each expert's shard over its GPUs/EP
    replicas). Even splits are assumed: the GPU count and E share their factors.
    LoRA/QLoRA: the frozen base has weights only; gradients and optimizer states are the
    adapters' (``planner.workload.params``).
    ``offload`` (full training, ZeRO-2 or one GPU): optimizer states in host RAM (``host_offloaded``, with the fp32
    gradient partition, both divided over the GPUs as ZeRO-2 divides them); the GPU keeps its 16-bit weights and one
    reduce bucket of gradients (``OFFLOAD_BUCKET_ELEMENTS``).
    """
    from planner.workload.params import frozen_bytes_per_param, param_groups

    wb, gb, ob = state_bytes_per_param(w.precision, w.optimizer)
    n = max(1, gpus)
    stage = _norm_shard(sharding)
    # divisors of (weights, gradients, optimizer states) under the ZeRO stage
    zw = n if stage is Sharding.ZERO3 else 1
    zg = n if stage in (Sharding.ZERO2, Sharding.ZERO3) else 1
    zo = n if stage in (Sharding.ZERO1, Sharding.ZERO2, Sharding.ZERO3) else 1
    g = param_groups(w)
    ep = expert_parallel(w, n)

    def per_gpu(dense: float, experts: float, divisor: int) -> float:
        return dense / divisor + experts / (n if divisor > 1 else ep)

    if g.adapters:
        lin, emb = frozen_bytes_per_param(w)
        base = per_gpu((g.dense - g.embeddings) * lin + g.embeddings * emb, g.experts * lin, zw)
        weights = base + g.adapters * wb / zw
        gradients, optimizer = g.adapters * gb / zg, g.adapters * ob / zo
    else:
        weights = per_gpu(g.dense * wb, g.experts * wb, zw)
        gradients = per_gpu(g.dense * gb, g.experts * gb, zg)
        optimizer = per_gpu(g.dense * ob, g.experts * ob, zo)
    host = 0.0
    if offload and not g.adapters:
        # ZeRO-2 partitions: each GPU's host process keeps 1/n of the states (experts split as ZeRO splits them)
        host = per_gpu(g.dense * (ob + HOST_GRAD_BYTES), g.experts * (ob + HOST_GRAD_BYTES), n)
        gradients = min(gradients, OFFLOAD_BUCKET_ELEMENTS * gb)
        optimizer = 0.0
    gathered = 0.0
    if zw > 1 and w.arch.layers:
        # one layer's weights whole (its experts: this GPU's share of them), at the bytes they are kept in
        per_param = lin if g.adapters else wb
        layer = ((g.dense - g.embeddings) * per_param + g.experts * per_param / ep) / w.arch.layers
        gathered = GATHERED_LAYERS * layer
    act = activation_bytes_per_sample(w, recompute)
    return MemoryBreakdown(
        weights=weights / GIB,
        gradients=gradients / GIB,
        optimizer=optimizer / GIB,
        gathered=gathered / GIB,
        host_offloaded=host / GIB,
        activations_per_sample=None if act is None else act / GIB,
        overhead=(DEFAULT_OVERHEAD_GB if w.overhead_gb is None else w.overhead_gb)
        + (NCCL_BUFFERS_GB if gpus > 1 else 0.0),
    )


def kv_bytes_per_token(a: TransformerArch, bytes_per_value: float = 2.0) -> float | None:
    """KV-cache bytes one token keeps: K and V, per layer, per KV head, head_dim values each; None without a shape."""
    if not a.has_shape:
        return None
    assert a.hidden is not None and a.heads is not None and a.layers is not None
    return 2 * a.layers * (a.kv_heads or a.heads) * (a.hidden / a.heads) * bytes_per_value


def inference_memory(w: InferenceWorkload) -> MemoryBreakdown:
    a = w.arch
    per_token = kv_bytes_per_token(a)
    kv = None if per_token is None else per_token * w.context / GIB
    return MemoryBreakdown(
        weights=a.params * w.weight_bits / 8 / GIB,
        kv_cache_per_sample=kv,
        overhead=DEFAULT_OVERHEAD_GB if w.overhead_gb is None else w.overhead_gb,
    )


class Layout(BaseModel):
    """How a training job is laid out on some GPUs, and what that needs per GPU."""

    model_config = ConfigDict(frozen=True)

    gpus: int
    sharding: Sharding
    recompute: Recompute
    memory: MemoryBreakdown
    max_batch: int | None
    offload: bool = False

    def describe(self) -> str:
        parts = []
        if self.sharding is not Sharding.NONE:
            parts.append(f"{self.sharding.value.upper().replace('ZERO', 'ZeRO-')} over {self.gpus} GPUs")
        if self.offload:
            parts.append(f"optimizer offloaded to the CPU (needs {self.memory.host_offloaded:,.1f} GiB of host RAM "
                         "per GPU)")
        if self.recompute is not Recompute.NONE:
            parts.append(f"{self.recompute.value} activation recompute")
        return ", ".join(parts) or "no sharding or recompute"


def _choices(chosen: Sharding | Recompute, order: tuple) -> tuple:  # type: ignore[type-arg]
    if chosen in (Sharding.AUTO, Recompute.AUTO):
        return order
    return (_norm_shard(chosen) if isinstance(chosen, Sharding) else chosen,)


@lru_cache(maxsize=8192)  # the layout search asks the same GPU memory, count and layout for many offers
def fitted(w: TrainingWorkload, vram_gb: float, gpus: int, sharding: Sharding, recompute: Recompute,
           headroom: bool = True, offload: bool = False) -> Layout | None:
    """``w`` on ``gpus`` GPUs with that sharding, recompute and optimizer offload, if its micro-batch (else one
    sample) fits in ``vram_gb`` less the headroom kept free (:func:`headroom_gb`); None if not."""
    mem = training_memory(w, gpus, sharding, recompute, offload)
    mb = mem.max_batch(vram_gb - (headroom_gb(vram_gb) if headroom else 0.0))
    if mb is None or mb >= (w.micro_batch or 1):
        return Layout(gpus=gpus, sharding=_norm_shard(sharding), recompute=recompute, memory=mem, max_batch=mb,
                      offload=offload)
    return None


def offload_stage(w: TrainingWorkload, gpus: int) -> Sharding | None:
    """The sharding an optimizer-offload layout of ``w`` runs on ``gpus`` GPUs, or None where none is modelled: full
    training only (adapters' states are tiny), not forbidden by ``--offload none``, as DeepSpeed ZeRO-2 (on one GPU
    that is no sharding). ZeRO-1/3 and DDP with offload are not modelled: a pinned one gets none; nor is the 16-bit
    Adam (DeepSpeed's CPU Adam keeps fp32 master weights and moments)."""
    if w.offload is Offload.NONE or w.method is not Method.FULL or w.optimizer is Optimizer.ADAMW_BF16:
        return None
    stage = Sharding.NONE if gpus == 1 else Sharding.ZERO2
    allowed = (Sharding.AUTO, Sharding.ZERO2) + ((Sharding.NONE,) if gpus == 1 else ())
    return stage if w.sharding in allowed else None


def layout(w: TrainingWorkload, vram_gb: float, gpus: int, headroom: bool = True) -> Layout | None:
    """The least sharding and recompute that fit ``w`` (at its micro-batch, else one sample) on ``gpus`` GPUs,
    keeping :func:`headroom_gb` of ``vram_gb`` free. Optimizer offload (:func:`offload_stage`) is tried only when
    nothing fits without it, or alone when ``--offload cpu`` pins it."""
    if w.offload is not Offload.CPU:
        for rc in _choices(w.recompute, RECOMPUTE_ORDER):
            for sh in _choices(w.sharding, SHARD_ORDER):
                if gpus == 1 and sh is not Sharding.NONE and w.sharding is Sharding.AUTO:
                    continue
                if (lay := fitted(w, vram_gb, gpus, sh, rc, headroom)) is not None:
                    return lay
    if (stage := offload_stage(w, gpus)) is not None:
        for rc in _choices(w.recompute, RECOMPUTE_ORDER):
            if (lay := fitted(w, vram_gb, gpus, stage, rc, headroom, True)) is not None:
                return lay
    return None


def fewest_gpus(w: TrainingWorkload, vram_gb: float, limit: int = 1 << 20) -> Layout | None:
    """The fewest GPUs of ``vram_gb`` that fit ``w`` with the sharding allowed (ZeRO-3 when auto).

    From two GPUs on, per-GPU memory never grows with the GPU count (states divide, activations
    stay, NCCL's buffers are the same), so whether ``n`` GPUs fit is monotone in ``n`` and a
    bisection finds the fewest. One GPU needs no NCCL buffers: it is tried first, on its own.
    """
    sharding = Sharding.ZERO3 if w.sharding is Sharding.AUTO else _norm_shard(w.sharding)
    if w.offload is Offload.CPU:
        # offload is modelled with ZeRO-2 (weights whole on every GPU): more GPUs shrink only host RAM
        sharding = Sharding.ZERO2 if w.sharding is Sharding.AUTO else sharding
    else:
        # "fewest GPUs sharded" counts GPUs that hold the states; offload is what `fit --gpus 1` reports
        w = w.model_copy(update={"offload": Offload.NONE})
    best: Layout | None = None
    for rc in _choices(w.recompute, RECOMPUTE_ORDER):
        fixed = w.model_copy(update={"sharding": sharding, "recompute": rc})
        top = limit if best is None else best.gpus - 1
        if top < 1:
            continue
        if (one := layout(fixed, vram_gb, 1)) is not None:
            best = one  # nothing fewer exists
            break
        if top < 2 or layout(fixed, vram_gb, top) is None:
            continue
        lo, hi = 2, top  # hi fits
        while lo < hi:
            mid = (lo + hi) // 2
            if layout(fixed, vram_gb, mid) is None:
                lo = mid + 1
            else:
                hi = mid
        lay = layout(fixed, vram_gb, hi)
        if lay is not None and (best is None or lay.gpus < best.gpus):
            best = lay
    return best


def image_max_batch(w: ImageWorkload, spec: GpuSpec, vram_gb: float, catalog: Catalog) -> tuple[int | None, str]:
    """Measured Lambda batch size on this GPU, or scaled by VRAM from measured GPUs; with its basis."""
    from planner.perf.speed import SAME_SPEED, benchmark_rows

    p = w.preset
    rows = [r for r in benchmark_rows() if r.model == p.benchmark_model and r.precision == w.precision.benchmark_label
            and r.batch_size and r.suite == "lambda-tf" and r.gpu_key]
    if not p.benchmark_model or not rows:
        return None, "no measured batch size for this model"
    key = SAME_SPEED.get(spec.key, spec.key)
    own = [r.batch_size for r in rows if SAME_SPEED.get(r.gpu_key, r.gpu_key) == key and r.batch_size]
    if own and vram_gb >= spec.vram_gb:
        return int(statistics.median(own)), "measured (Lambda TF: a large batch that fits, not an OOM threshold)"
    per_gb = statistics.median(r.batch_size / catalog.gpus[r.gpu_key].vram_gb for r in rows if r.batch_size)
    return int(per_gb * vram_gb), "scaled linearly with VRAM from Lambda TF batch sizes"


# SQuAD fine-tuning sequence length in the BERT reference scripts (google-research/bert
# README run_squad example: --max_seq_length=384), which NVIDIA's and Lambda's BERT runs follow.
SQUAD_SEQ_LEN = 384


class BatchCheck(BaseModel):
    """The memory model's max batch next to a batch size Lambda ran on the same GPU."""

    model_config = ConfigDict(frozen=True)

    gpu: str
    model: str
    precision: str
    suite: str
    measured_batch: int
    predicted_max_batch: int

    @property
    def ratio(self) -> float:
        return self.predicted_max_batch / self.measured_batch


def lambda_batch_checks(catalog: Catalog) -> list[BatchCheck]:
    """Predicted max batch vs Lambda's BERT SQuAD batch sizes (large batches that fit, not OOM thresholds)."""
    from planner.perf.speed import benchmark_rows
    from planner.workload.spec import TransformerArch
    from planner.workload.presets import preset

    cat = catalog
    names = {"BERT-base SQuAD fine-tune": "bert-base", "BERT-large SQuAD fine-tune": "bert-large"}
    out = []
    for r in benchmark_rows():
        if r.model not in names or not r.gpu_key or not r.batch_size:
            continue
        p = preset(names[r.model])
        # SQuAD's head gives two logits a token (answer start and end), not one per vocabulary word
        w = TrainingWorkload(
            arch=TransformerArch(name=p.name, params=p.params, layers=p.layers, hidden=p.hidden, heads=p.heads,
                                 vocab=2),
            seq_len=SQUAD_SEQ_LEN, precision=Precision.FP16 if r.precision == "fp16" else Precision.FP32,
            optimizer=Optimizer.ADAMW, recompute=Recompute.NONE, flash_attention=False, sharding=Sharding.NONE,
        )
        mb = training_memory(w).max_batch(cat.gpus[r.gpu_key].vram_gb) or 0
        out.append(BatchCheck(gpu=r.gpu_key, model=p.name, precision=r.precision, suite=r.suite,
                              measured_batch=r.batch_size, predicted_max_batch=mb))
    return out
