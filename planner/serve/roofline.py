"""Seconds per forward pass of a transformer being served, from bytes and FLOPs.

A decode step reads the weights (split over the tensor-parallel GPUs; of a mixture of
experts only the experts its tokens are routed to) and the KV cache of every sequence in the
batch, and does 2 FLOPs per active parameter per token plus the attention over the context;
the two times, at the fractions of datasheet bandwidth and peak that :class:`Efficiency` says,
combine as far as they overlap (fitted), plus the tensor-parallel all-reduces (bytes over the
bus and a fixed latency each), a fixed cost per pass and one per sequence. A prefill is the
same pass over the prompt's tokens: compute-bound for any prompt longer than a few dozen tokens.

Formulas (``docs/performance.md``, "Serving"): weights Psi x bytes per weight; KV cache per
token 2 x layers x kv_heads x head_dim x bytes; attention 4 x layers x hidden FLOPs per token
per token of context; two all-reduces per layer of batch x hidden x 2 bytes, each moving
2(t-1)/t of that over the GPU's bus.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pricing.catalog import GpuSpec
from planner.workload.anchors import FP8_ARCHS, peak_tflops
from planner.workload.memory import GIB, kv_bytes_per_token
from planner.workload.spec import Precision, TransformerArch

# vLLM's default gpu_memory_utilization (docs.vllm.ai EngineArgs, "--gpu-memory-utilization ... default 0.9") and
# TensorRT-LLM's kv_cache_free_gpu_mem_fraction (perf-overview: "the default setting of 0.90"): the rest is the
# engine's activations, CUDA graphs and allocator slack.
MEMORY_FRACTION = 0.9
ACT_BYTES = 2  # activations stay 16-bit whatever the weights are


class WeightFormat(StrEnum):
    """How the weights are stored, and so what a GPU reads per decode step and which tensor rate computes."""

    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"

    @property
    def bytes_per_param(self) -> float:
        # int4 (GPTQ/AWQ) keeps a 16-bit scale and zero per group of 128 weights: 4 bytes per 128.
        return {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5 + 4 / 128}[self.value]

    def tensor_multiplier(self, arch: str) -> float:
        """The matmul rate over the 16-bit one. The datasheets double it for FP8 on Ada and Hopper (H100 1979 vs
        989 dense, L40S 733 vs 362) and for INT8 from Turing on, but engines measure less: quantising the
        activations, scales and the kernels left in 16 bits eat part of it (:data:`MEASURED_8BIT_GAIN`).
        Elsewhere (and int4, weight-only) the matmuls run in 16 bits after dequantising."""
        if self is WeightFormat.FP8 and arch in FP8_ARCHS:
            return MEASURED_8BIT_GAIN
        if self is WeightFormat.INT8 and arch in INT8_ARCHS:
            return MEASURED_8BIT_GAIN
        return 1.0


INT8_ARCHS = frozenset({"Turing", "Ampere", "Ada Lovelace", "Hopper", "Blackwell"})
# What an engine gets from 8-bit matmuls over 16-bit ones where the tensor cores run them at twice the rate:
# vLLM's FP8 W8A8 page (docs.vllm.ai/en/stable/features/quantization/fp8/, read 2026-12-05): "up to a 1.6x
# improvement in throughput". Taken for the compute-bound part only (the halved weight bytes count on their own);
# INT8 W8A8 is given the same gain (no engine publishes its own figure: an assumption).
MEASURED_8BIT_GAIN = 1.6
# Fixed latency of one all-reduce, whatever its size: the ring's 2(t-1) hops each pay a launch and a
# synchronisation. Over NVLink it is fitted per engine (Efficiency.allreduce_s); over PCIe, whose peer traffic
# crosses a switch or the CPU's root complex, it is taken as this many times that: an estimate (30 us against
# 8 us, no citable per-instance table was found, and no published multi-GPU PCIe serving result is in the data).
PCIE_LATENCY_FACTOR = 30 / 8


class KvFormat(StrEnum):
    FP16 = "fp16"
    BF16 = "bf16"
    FP8 = "fp8"

    @property
    def bytes(self) -> float:
        return 1.0 if self is KvFormat.FP8 else 2.0


@dataclass(frozen=True, slots=True)
class Efficiency:
    """What the engine gets out of the hardware: the calibrated constants (``serving_fit.toml``)."""

    memory: float  # fraction of datasheet memory bandwidth a decode step streams at
    compute: float  # fraction of peak tensor FLOP/s the matmuls reach
    pass_s: float  # fixed seconds per forward pass: kernel launches, the step's scheduling
    request_s: float = 0.0  # fixed seconds before a request's first pass: admission, context set-up
    seq_s: float = 0.0  # seconds per sequence in a pass: its sampling, bookkeeping and attention set-up
    # How far a pass's memory traffic and its math overlap: the pass takes (t_mem^p + t_flops^p)^(1/p), the sum
    # of the two at 1 (no overlap), their maximum (a pure roofline) as p grows. Fitted: the published results
    # sit closest to the sum (the loss over them is half the max's, docs/performance.md).
    overlap: float = 1.0
    allreduce_s: float = 8e-6  # fixed seconds of one all-reduce over NVLink, whatever its size


def link_kind(interconnect: str) -> str:
    """The all-reduce latency class of an intra-node interconnect (``intra_links.csv``'s names)."""
    return "pcie" if "pcie" in interconnect.lower() else "nvlink"


@dataclass(frozen=True, slots=True)
class Replica:
    """One copy of the model: ``tp`` GPUs of one kind, tensor-parallel over a bus of ``bus_gbytes_s``."""

    gpu: GpuSpec
    tp: int
    bus_gbytes_s: float | None  # None: one GPU, or no known link (tp must then be 1)
    link: str = "nvlink"  # "nvlink" or "pcie": what an all-reduce's fixed latency is (PCIE_LATENCY_FACTOR)

    @property
    def peak_16bit_flops(self) -> float:
        return peak_tflops(self.gpu, Precision.BF16)[0] * 1e12

    @property
    def bandwidth(self) -> float:
        return (self.gpu.mem_bw_gbs or 0.0) * 1e9


@dataclass(frozen=True, slots=True)
class Model:
    """The numbers of a served model that the pass times need."""

    arch: TransformerArch
    weights: WeightFormat
    kv: KvFormat

    @property
    def layers(self) -> int:
        return int(self.arch.layers or 0)

    @property
    def hidden(self) -> int:
        return int(self.arch.hidden or 0)

    @property
    def kv_heads(self) -> int:
        return int(self.arch.kv_heads or self.arch.heads or 0)

    @property
    def weight_bytes(self) -> float:
        return self.arch.params * self.weights.bytes_per_param

    def weight_bytes_read(self, tokens: float) -> float:
        """Weight bytes a pass of ``tokens`` tokens reads. A mixture of experts reads only the experts its tokens
        are routed to: with k of E experts per token, chosen evenly, a layer's tokens touch E (1 - (1 - k/E)^T)
        of them on average (T tokens); the rest of the model (attention, embeddings, router) is read whole."""
        a = self.arch
        if not (a.moe and a.experts and a.experts_per_token):
            return self.weight_bytes
        share = a.experts_per_token / a.experts
        experts = (a.params - a.compute_params) / (1 - share)  # the weights of all experts together
        touched = 1 - (1 - share) ** max(tokens, 1.0)
        return (a.params - experts + experts * touched) * self.weights.bytes_per_param

    @property
    def kv_bytes_per_token(self) -> float:
        return kv_bytes_per_token(self.arch, self.kv.bytes) or 0.0

    def kv_split(self, tp: int) -> int:
        """How many ways the KV cache divides: by heads, so never more than the KV heads (others replicate)."""
        return max(1, min(tp, self.kv_heads))


def _comm_s(m: Model, r: Replica, e: Efficiency, tokens: float) -> float:
    """Two all-reduces per layer of the pass's activations, ring traffic over the bus, each with its fixed
    latency over the link (a decode step of a small batch is latency-bound here, not bandwidth-bound)."""
    if r.tp <= 1 or not r.bus_gbytes_s:
        return 0.0
    per_gpu = 2 * m.layers * tokens * m.hidden * ACT_BYTES * 2 * (r.tp - 1) / r.tp
    latency = 2 * m.layers * e.allreduce_s * (PCIE_LATENCY_FACTOR if r.link == "pcie" else 1.0)
    return per_gpu / (r.bus_gbytes_s * 1e9) + latency


def pass_seconds(m: Model, r: Replica, e: Efficiency, *, batch: float, new_tokens: float, context: float,
                 extra_flops: float = 0.0) -> float:
    """One forward pass of ``batch`` sequences, each adding ``new_tokens`` at an average attended ``context``.

    ``extra_flops`` is compute that shares the pass without reading the weights again (the prompts a
    continuous batcher folds into a decode step)."""
    tokens = batch * new_tokens
    read = m.weight_bytes_read(tokens) / r.tp + batch * context * m.kv_bytes_per_token / m.kv_split(r.tp)
    flops = (2.0 * m.arch.compute_params * tokens + 4.0 * m.layers * m.hidden * context * tokens + extra_flops) / r.tp
    peak = r.peak_16bit_flops * m.weights.tensor_multiplier(r.gpu.arch)
    t_mem = read / (r.bandwidth * e.memory)
    t_flops = flops / (peak * e.compute)
    both = (t_mem ** e.overlap + t_flops ** e.overlap) ** (1 / e.overlap)
    return both + _comm_s(m, r, e, tokens) + e.pass_s + batch * e.seq_s


def prompt_flops(m: Model, prompt: int) -> float:
    """FLOPs of one prompt's prefill: 2 per active parameter per token, plus causal attention (half the square)."""
    return 2.0 * m.arch.compute_params * prompt + 4.0 * m.layers * m.hidden * prompt * prompt / 2


def ttft_seconds(m: Model, r: Replica, e: Efficiency, prompt: int) -> float:
    """Time to the first token of one prompt on an idle replica: its admission and its prefill pass."""
    return e.request_s + pass_seconds(m, r, e, batch=1, new_tokens=prompt, context=prompt / 2)


def static_tokens_per_s(m: Model, r: Replica, e: Efficiency, *, batch: int, prompt: int, output: int) -> float:
    """Output tokens/s of a static batch: all prompts prefilled in one pass, then ``output - 1`` decode steps."""
    prefill = pass_seconds(m, r, e, batch=batch, new_tokens=prompt, context=prompt / 2)
    step = pass_seconds(m, r, e, batch=batch, new_tokens=1, context=prompt + output / 2)
    return batch * output / (prefill + (output - 1) * step)


def max_batch(m: Model, r: Replica, *, prompt: int, output: int) -> int:
    """Sequences whose KV cache fits beside the weights: each holds, on average, its prompt and half its answer
    (paged attention allocates as a sequence grows, so a steady batch is halfway through its answers)."""
    per_gpu = r.gpu.vram_gb * GIB * MEMORY_FRACTION - m.weight_bytes / r.tp
    if per_gpu <= 0:
        return 0
    per_seq = (prompt + output / 2) * m.kv_bytes_per_token / m.kv_split(r.tp)
    return int(per_gpu // per_seq) if per_seq > 0 else 0


def continuous_step(m: Model, r: Replica, e: Efficiency, *, batch: float, prompt: int, output: int) -> float:
    """Seconds of one iteration of a continuous batcher at ``batch`` running sequences: a decode step for all
    of them plus the prefill of the ``batch / output`` prompts that replace the ones finishing."""
    return pass_seconds(m, r, e, batch=batch, new_tokens=1, context=prompt + output / 2,
                        extra_flops=batch / output * prompt_flops(m, prompt))


def continuous_tokens_per_s(m: Model, r: Replica, e: Efficiency, *, batch: float, prompt: int, output: int) -> float:
    return batch / continuous_step(m, r, e, batch=batch, prompt=prompt, output=output)
