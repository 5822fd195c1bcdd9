"""Utilisation keyed by the work a GPU's kernels see, not by the GPU count.

Hardware FLOPs per token (Narayanan et al. 2021, arXiv 2104.04473, eq. 3, the count llm-foundry's
benchmark table uses for its MFU/HFU): 6N for the dense layers plus 12*layers*hidden*seq for the attention
scores (QK^T and softmax.V: 2 matmuls x 2 FLOPs x seq x hidden per layer and token, forward, x3 for
training), with full recompute one more forward pass: 8N + 16*layers*hidden*seq.

The time a GPU needs per hardware FLOP, as a share of its dense peak, is modelled as

    1/u = c0 + c1 * (1024 / hidden) + c2 * (4096 / tokens) + c3 * attention_share

- c0: the best a large GEMM reaches (1/c0 is the utilisation of an infinitely wide layer and micro-batch);
- c1/hidden: the memory-bound work beside the GEMMs (norms, activations, residuals, rotary, optimizer) moves
  ~hidden bytes per token and layer against ~24*hidden^2 GEMM FLOPs, so its time per FLOP falls as 1/hidden;
- c2/tokens: per-micro-batch fixed costs (kernel launches, FSDP's per-layer gathers waiting on the first
  layer, the loss) are paid once per micro-batch, so per FLOP they fall with the tokens a GPU processes in one;
- c3 * attention_share: the attention scores run in their own kernel (FlashAttention, which skips the causal
  half the count charges) at a different pace from the GEMMs: time = F_dense/u_d + F_attn/u_a, so the inverse
  utilisation is linear in the attention share of the FLOPs.

Fitted per GPU architecture and precision by least squares on 1/u (errors in time, the quantity a plan
pays for), over the anchors of ``data/mfu.csv`` whose micro-batch, sequence and shape are sourced. FP8 is fitted
apart and has too few keyed anchors, so it keeps the median tiers of :mod:`planner.workload.estimate`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pricing.catalog import Catalog

MIN_KEYED = 8  # anchors per architecture below which 4 coefficients are not fitted (the median tiers apply)
H_REF, T_REF = 1024.0, 4096.0


def attention_flops_per_token(layers: int, hidden: int, seq: int, full_recompute: bool) -> float:
    """Attention-score FLOPs per training token: 12*L*h*s (forward 4*L*h*s: QK^T and scores.V, 2 FLOPs a MAC;
    backward twice that), one more forward (x4/3) with full recompute."""
    f = 12.0 * layers * hidden * seq
    return f * 4.0 / 3.0 if full_recompute else f


@dataclass(frozen=True)
class Work:
    """What one GPU's kernels see: the layer width, the tokens in one micro-batch, the attention share of FLOPs."""

    hidden: int
    tokens: float
    attention_share: float

    def features(self) -> tuple[float, float, float, float]:
        return 1.0, H_REF / self.hidden, T_REF / self.tokens, self.attention_share


def work_of(params: float, layers: int, hidden: int, seq: int, micro_batch: float, full_recompute: bool) -> Work:
    dense = (8.0 if full_recompute else 6.0) * params
    attn = attention_flops_per_token(layers, hidden, seq, full_recompute)
    return Work(hidden, micro_batch * seq, attn / (dense + attn))


@dataclass(frozen=True)
class Keyed:
    """An anchor of data/mfu.csv with its work sourced: measured hardware utilisation (attention counted)."""

    run: str
    gpu_key: str
    gpu_count: int | None
    arch: str
    fp8: bool
    recompute: bool
    params: float
    layers: int
    hidden: int
    seq: int
    micro_batch: int
    utilization: float

    @property
    def work(self) -> Work:
        return work_of(self.params, self.layers, self.hidden, self.seq, self.micro_batch, self.recompute)

    @property
    def label(self) -> str:
        return (f"{self.run.split(' llm-foundry')[0]} seq {self.seq} mb {self.micro_batch} x{self.gpu_count} "
                f"{self.gpu_key}{' rc' if self.recompute else ''}")


@lru_cache(maxsize=4)
def keyed_anchors(catalog: Catalog) -> tuple[Keyed, ...]:
    """The anchors whose micro-batch, sequence and shape are sourced (llm-foundry's table); the others (cluster runs
    with tensor/pipeline parallelism, no micro-batch given) stay out of the keyed model."""
    from planner.workload.anchors import mfu_anchors
    from pricing.datafiles import data_rows

    by_run = {(r["run"], r["gpu_key"], r["gpu_count"], r["precision"]): r for r in data_rows("mfu.csv", "planner.data")}
    out = []
    for a in mfu_anchors():
        r = by_run[(a.run, a.gpu_key, str(a.gpu_count) if a.gpu_count else "", a.precision)]
        u = a.utilization(catalog)
        if not (r.get("micro_batch") and r.get("hidden") and u is not None):
            continue
        out.append(Keyed(a.run, a.gpu_key, a.gpu_count, catalog.gpus[a.gpu_key].arch, a.fp8, a.recompute == "full",
                         float(r["params"]), int(r["layers"]), int(r["hidden"]), int(r["seq_len"]),
                         int(r["micro_batch"]), u))
    return tuple(out)


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (4 unknowns: no numpy import on the plan path)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda i: abs(m[i][c]))
        m[c], m[p] = m[p], m[c]
        for i in range(c + 1, n):
            f = m[i][c] / m[c][c]
            m[i] = [x - f * y for x, y in zip(m[i], m[c], strict=True)]
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        x[i] = (m[i][n] - sum(m[i][j] * x[j] for j in range(i + 1, n))) / m[i][i]
    return x


def fit(points: tuple[Keyed, ...] | list[Keyed]) -> tuple[float, ...]:
    """Least-squares coefficients (c0, c1, c2, c3) of 1/u over ``points``; a coefficient whose fit comes out
    negative (a cost that would speed the GPU up) is dropped and the rest refitted."""
    active = [0, 1, 2, 3]
    while True:
        xs = [[p.work.features()[j] for j in active] for p in points]
        ys = [1.0 / p.utilization for p in points]
        k = len(active)
        ata = [[sum(x[i] * x[j] for x in xs) for j in range(k)] for i in range(k)]
        aty = [sum(x[i] * y for x, y in zip(xs, ys, strict=True)) for i in range(k)]
        sol = _solve(ata, aty)
        neg = [active[i] for i in range(1, k) if sol[i] < 0]
        if not neg:
            coef = [0.0, 0.0, 0.0, 0.0]
            for i, j in enumerate(active):
                coef[j] = sol[i]
            return tuple(coef)
        active.remove(min(neg, key=lambda j: sol[active.index(j)]))


def predict(coef: tuple[float, ...], work: Work) -> float:
    return 1.0 / sum(c * x for c, x in zip(coef, work.features(), strict=True))


@lru_cache(maxsize=1)
def _stacks() -> dict[str, tuple[bool, str]]:
    from pricing.datafiles import data_rows

    return {r["stack"]: (r["per_microbatch_term"] == "charged", r["basis"])
            for r in data_rows("stacks.csv", "planner.data")}


def for_stack(coef: tuple[float, ...], stack: str) -> tuple[tuple[float, ...], str]:
    """The coefficients a GPU pays under ``stack`` (``data/stacks.csv``), and a note where they differ: the
    per-micro-batch term c2 was fitted on PyTorch FSDP runs, whose per-layer hooks and weight gathers a stack without
    them (Megatron-Core's distributed optimizer, XLA-compiled JAX) does not pay."""
    charged, basis = _stacks()[stack]
    if charged:
        return coef, ""
    return ((coef[0], coef[1], 0.0, coef[3]),
            f"; {stack} stack: the per-micro-batch term fitted on PyTorch FSDP runs is not charged ({basis})")


def _group(catalog: Catalog, arch: str, fp8: bool) -> tuple[Keyed, ...]:
    return tuple(k for k in keyed_anchors(catalog) if k.arch == arch and k.fp8 == fp8)


@lru_cache(maxsize=16)
def coefficients(catalog: Catalog, arch: str, fp8: bool) -> tuple[tuple[float, ...], int] | None:
    """(coefficients, anchors) for an architecture and precision, or None with fewer than MIN_KEYED keyed anchors."""
    pts = _group(catalog, arch, fp8)
    if len(pts) < MIN_KEYED:
        return None
    return fit(pts), len(pts)


def leave_one_out(catalog: Catalog) -> list[tuple[Keyed, float]]:
    """Each keyed anchor of a fitted group predicted with the coefficients fitted on the others of its group."""
    out = []
    groups = {(k.arch, k.fp8) for k in keyed_anchors(catalog)}
    for arch, fp8 in sorted(groups):
        pts = _group(catalog, arch, fp8)
        if len(pts) < MIN_KEYED + 1:
            continue
        for i, p in enumerate(pts):
            coef = fit(pts[:i] + pts[i + 1:])
            out.append((p, predict(coef, p.work)))
    return out


@lru_cache(maxsize=16)
def work_range(catalog: Catalog, arch: str, fp8: bool) -> tuple[tuple[int, int], tuple[float, float]]:
    """((min, max) hidden, (min, max) tokens per micro-batch) of the architecture's keyed anchors."""
    pts = _group(catalog, arch, fp8)
    return ((min(p.hidden for p in pts), max(p.hidden for p in pts)),
            (min(p.work.tokens for p in pts), max(p.work.tokens for p in pts)))


def clamp(work: Work, catalog: Catalog, arch: str, fp8: bool) -> Work:
    """The work moved to the nearest edge of what the anchors measured: the fit is not extrapolated (a
    micro-batch of 2,048 tokens on an H100 would otherwise take the per-micro-batch term to twice anything
    measured)."""
    (h0, h1), (t0, t1) = work_range(catalog, arch, fp8)
    return Work(min(max(work.hidden, h0), h1), min(max(work.tokens, t0), t1), work.attention_share)
