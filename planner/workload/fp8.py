"""FP8 training time as physics on top of the bf16 utilisation model.

FP8 training (Transformer Engine, torchao float8) runs only the linear layers' GEMMs on the FP8 tensor cores, at up to
twice the bf16 math rate. The attention scores (FlashAttention, bf16), norms, activations, residuals, the optimizer and
the communication keep their bf16 time; the casts to FP8 and the amax/scale bookkeeping add memory-bound work. So

    FP8 step time = bf16 step time x (1 - g + g / s)

with ``g`` the share of the bf16 step time spent in the linear GEMMs and ``s`` the speed-up those GEMMs reach in FP8,
their casts included (s <= 2, the ratio of the dense peaks).

``g`` comes from the bf16 utilisation model of :mod:`planner.workload.utilisation`, whose terms are seconds per
hardware FLOP at the dense bf16 peak: ``1/u = c0 + c1*1024/h + c2*4096/tokens + c3*a``, with ``a`` the attention share
of the FLOPs. Its dense FLOPs (the linear layers) take ``c0*(1-a)`` of that time, the attention scores ``(c0+c3)*a``,
the memory-bound work beside the GEMMs ``c1*1024/h`` and the per-micro-batch fixed costs ``c2*4096/tokens``; so
``g = c0*(1-a) / (1/u)``: small where long sequences make attention the bulk of the time, or a narrow layer makes the
elementwise work large.

``s`` is calibrated on measured bf16/FP8 pairs of the same model on the same system (``data/fp8_pairs.csv``): each pair
gives ``s = g / (bf16/fp8 time ratio - 1 + g)`` and ``s`` is the median of those, capped at 2. Leave-one-out: each
pair's speed-up predicted with the median of the others (:func:`leave_one_out`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import lru_cache

from pricing.catalog import Catalog
from planner.workload import utilisation as ut

S_MAX = 2.0  # FP8 dense peak = 2x the bf16 dense peak on Hopper/Ada (planner.workload.anchors.peak_tflops)


def gemm_share(coef: tuple[float, ...], work: ut.Work) -> float:
    """``g``: the share of the bf16 time per hardware FLOP the linear layers' GEMMs take, ``c0*(1-a) / (1/u)``."""
    return coef[0] * (1.0 - work.attention_share) * ut.predict(coef, work)


def speedup(g: float, s: float) -> float:
    """bf16 step time over FP8 step time: ``1 / (1 - g + g/s)``."""
    return 1.0 / (1.0 - g + g / s)


def implied_s(g: float, ratio: float) -> float:
    """The GEMM speed-up ``s`` a measured bf16/FP8 throughput ``ratio`` implies at GEMM share ``g``
    (``ratio = 1/(1 - g + g/s)`` solved for ``s``); at or below 1 where FP8 gained nothing."""
    return g / (1.0 / ratio - 1.0 + g)


@dataclass(frozen=True)
class Pair:
    """A data/fp8_pairs.csv row: bf16 and FP8 tokens/s per GPU of the same run."""

    name: str
    arch: str
    work: ut.Work
    bf16: float
    fp8: float
    source: str

    @property
    def ratio(self) -> float:
        return self.fp8 / self.bf16


@lru_cache(maxsize=4)
def pairs(catalog: Catalog) -> tuple[Pair, ...]:
    from pricing.datafiles import data_rows

    out = []
    for r in data_rows("fp8_pairs.csv", "planner.data"):
        work = ut.work_of(float(r["params"]), int(r["layers"]), int(r["hidden"]), int(r["seq"]),
                          int(r["micro_batch"]), r["recompute"] == "full")
        out.append(Pair(r["pair"], catalog.gpus[r["gpu_key"]].arch, work, float(r["bf16"]), float(r["fp8"]),
                        r["source"]))
    return tuple(out)


def _g(catalog: Catalog, p: Pair) -> float | None:
    fitted = ut.coefficients(catalog, p.arch, False)
    if fitted is None:
        return None
    return gemm_share(fitted[0], ut.clamp(p.work, catalog, p.arch, False))


def _calibrate(catalog: Catalog, used: tuple[Pair, ...]) -> float:
    vals = [implied_s(g, p.ratio) for p in used if (g := _g(catalog, p)) is not None]
    return min(S_MAX, statistics.median(vals))


@lru_cache(maxsize=4)
def gemm_speedup(catalog: Catalog) -> tuple[float, int]:
    """(``s``, pairs it is the median over)."""
    ps = pairs(catalog)
    return _calibrate(catalog, ps), len(ps)


def leave_one_out(catalog: Catalog) -> list[tuple[Pair, float, float]]:
    """(pair, its GEMM share g, its speed-up predicted with ``s`` calibrated on the other pairs)."""
    ps = pairs(catalog)
    out = []
    for i, p in enumerate(ps):
        g = _g(catalog, p)
        if g is None:
            continue
        out.append((p, g, speedup(g, _calibrate(catalog, ps[:i] + ps[i + 1:]))))
    return out
