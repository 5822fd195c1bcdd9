"""Attention without FlashAttention: the time the seq x seq score matrices spend crossing GPU memory.

The standard attention kernels write the scores S = QK^T, the probabilities P = softmax(S) and their gradients to
memory and read them back (Dao et al. 2022, arXiv 2205.14135, Algorithm 0 and its standard backward pass);
FlashAttention keeps them on chip. The utilisation model (:mod:`planner.workload.utilisation`) was fitted on runs that
all used FlashAttention, so without it these bytes are time it has not counted:

    bytes per training token = layers x heads x seq x (forward + backward [+ forward again with recompute])

bytes per score element from ``planner/data/attention_traffic.csv`` (a token's query row of one head is seq scores
long: the standard kernels compute the masked half too). Seconds = bytes / (datasheet memory bandwidth x the share
these kernels stream at), the share calibrated on measured standard-attention kernel times
(``planner/data/attention_kernels.csv``, :func:`streaming_share`). Tensor, pipeline and context parallelism divide
these bytes and the FLOPs between the GPUs alike, so the share of time they add does not depend on the layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pricing.catalog import Catalog
from pricing.datafiles import data_rows


@lru_cache(maxsize=2)
def bytes_per_element(dropout: bool = True) -> dict[str, float]:
    """phase (forward, backward) -> bytes moved per score element, with or without attention dropout's steps."""
    out: dict[str, float] = {}
    for r in data_rows("attention_traffic.csv", "planner.data"):
        if dropout or r["dropout_only"] == "no":
            out[r["phase"]] = out.get(r["phase"], 0.0) + float(r["bytes_per_element"])
    return out


def score_bytes_per_token(layers: int, heads: int, seq: int, recompute: bool, dropout: bool = True) -> float:
    """Bytes of score matrices one training token moves through memory, summed over the model's layers and heads;
    ``recompute`` (full or selective: both rerun the attention core in backward) adds the forward once more."""
    b = bytes_per_element(dropout)
    per_element = b["forward"] * (2 if recompute else 1) + b["backward"]
    return float(layers) * heads * seq * per_element


@dataclass(frozen=True)
class KernelRun:
    """A measured forward + backward of standard attention (data/attention_kernels.csv)."""

    name: str
    gpu_key: str
    batch: int
    heads: int
    head_dim: int
    seq: int
    dropout: bool
    measured_s: float
    use: str

    @property
    def score_bytes(self) -> float:
        """Bytes of score matrices the run moves: batch x heads x seq^2 elements, forward and backward."""
        b = bytes_per_element(self.dropout)
        return self.batch * self.heads * self.seq**2 * (b["forward"] + b["backward"])

    @property
    def gemm_flops(self) -> float:
        """QK^T and P.V forward (2 FLOPs a multiply-add, seq^2 x head_dim each per head), x3 with the backward."""
        return 3 * 2 * 2 * self.batch * self.heads * self.seq**2 * self.head_dim


@lru_cache(maxsize=1)
def kernel_runs() -> tuple[KernelRun, ...]:
    return tuple(KernelRun(r["run"], r["gpu_key"], int(r["batch"]), int(r["heads"]), int(r["head_dim"]),
                           int(r["seq"]), r["dropout"] == "yes", float(r["measured_ms"]) / 1e3, r["use"])
                 for r in data_rows("attention_kernels.csv", "planner.data"))


def _gpu(key: str, catalog: Catalog) -> tuple[float, float]:
    """(datasheet memory bandwidth in GB/s, dense 16-bit tensor peak in TFLOP/s) of a GPU of ``catalog``."""
    g = catalog.gpus[key]
    assert g.mem_bw_gbs and g.tensor_fp16_tflops, key
    return g.mem_bw_gbs, g.tensor_fp16_tflops


def run_share(run: KernelRun, catalog: Catalog) -> float:
    """Share of datasheet bandwidth the run's score bytes streamed at, its GEMMs taken at tensor-core peak."""
    bw, peak = _gpu(run.gpu_key, catalog)
    return run.score_bytes / (bw * 1e9 * (run.measured_s - run.gemm_flops / (peak * 1e12)))


def predicted_seconds(run: KernelRun, share: float, catalog: Catalog) -> float:
    bw, peak = _gpu(run.gpu_key, catalog)
    return run.score_bytes / (bw * 1e9 * share) + run.gemm_flops / (peak * 1e12)


@lru_cache(maxsize=4)
def streaming_share(catalog: Catalog) -> tuple[float, str]:
    """(share of datasheet memory bandwidth the standard kernels' score traffic streams at, its basis): the mean over
    the measured runs marked use=fit, with their GPUs' figures from ``catalog``."""
    fit = [k for k in kernel_runs() if k.use == "fit"]
    share = sum(run_share(k, catalog) for k in fit) / len(fit)
    return share, (f"mean of {len(fit)} measured Megatron-LM standard-attention kernel runs "
                   "(FlashAttention paper, Appendix E.5; data/attention_kernels.csv)")


def seconds_per_token(mem_bw_gbs: float, share: float, layers: int, heads: int, seq: int, recompute: bool) -> float:
    """Seconds one GPU spends moving one token's score matrices (the whole model's) at ``share`` of ``mem_bw_gbs``;
    spread over N GPUs the job's time grows by tokens x this / N."""
    return score_bytes_per_token(layers, heads, seq, recompute) / (mem_bw_gbs * 1e9 * share)
