"""The best way to serve a model on one machine: tensor-parallel degree, replicas and batch.

Each candidate splits the machine's GPUs into replicas of ``tp`` GPUs (tensor parallelism
needs the GPUs' bus, so only inside one machine). A replica runs a continuous batcher at the
largest batch that fits the KV cache, the engine's cap (``--max-batch``) and the latency
targets; the machine's throughput is the replicas' sum, and the layout with the highest wins.

Latency, under steady load (no queue: the fleet is sized with the peak in it):
- TPOT is one iteration of the batcher at that batch, for every running sequence;
- TTFT is a prompt's own prefill on the replica plus the wait for the iteration in flight, half
  of one at p50 and 95% of one at p95 (arrivals uniform over an iteration).
"""

from __future__ import annotations

from dataclasses import dataclass

from pricing.catalog import GpuSpec, Interconnect
from planner.perf.comm import intra_link
from planner.serve.calibration import Calibration
from planner.serve.roofline import Replica, continuous_step, link_kind, max_batch, ttft_seconds
from planner.serve.spec import Percentile, ServeWorkload
from planner.workload.memory import GIB

TP_DEGREES = (1, 2, 4, 8)
WAIT_SHARE = {Percentile.P50: 0.5, Percentile.P95: 0.95}


@dataclass(frozen=True, slots=True)
class Layout:
    tp: int
    replicas: int
    batch: int  # sequences per replica
    memory_batch: int  # what the KV cache alone would allow
    tokens_per_s: float  # output tokens/s of the whole machine, expected
    ttft_s: float
    tpot_s: float
    limited_by: str  # "memory", "max batch" or "latency"

    def as_json(self) -> dict[str, object]:
        return {"tensor_parallel": self.tp, "replicas": self.replicas, "batch_per_replica": self.batch,
                "max_batch_by_memory": self.memory_batch, "batch_limited_by": self.limited_by,
                "ttft_s": round(self.ttft_s, 4), "tpot_s": round(self.tpot_s, 5)}


def _latency(w: ServeWorkload, r: Replica, c: Calibration, batch: int) -> tuple[float, float]:
    e, m = c.efficiency, w.model
    step = continuous_step(m, r, e, batch=batch, prompt=w.prompt_tokens, output=w.output_tokens)
    return ttft_seconds(m, r, e, w.prompt_tokens) + WAIT_SHARE[w.percentile] * step, step


def _meets(w: ServeWorkload, ttft: float, tpot: float) -> bool:
    return (w.ttft_s is None or ttft <= w.ttft_s) and (w.tpot_s is None or tpot <= w.tpot_s)


def replica_layout(w: ServeWorkload, r: Replica, c: Calibration, *, targets: bool) -> tuple[int, int, str] | None:
    """(batch, batch by memory, what limits it) for one replica, or None when nothing fits or meets the targets."""
    mem = max_batch(w.model, r, prompt=w.prompt_tokens, output=w.output_tokens)
    if mem < 1:
        return None
    b, why = (mem, "memory") if mem <= w.max_batch else (w.max_batch, "max batch")
    if targets and w.has_targets and not _meets(w, *_latency(w, r, c, b)):
        lo, hi = 0, b  # the iteration time grows with the batch: the largest batch that still meets the targets
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if _meets(w, *_latency(w, r, c, mid)):
                lo = mid
            else:
                hi = mid - 1
        if lo < 1:
            return None
        b, why = lo, "latency"
    return b, mem, why


def best_layout(w: ServeWorkload, gpu: GpuSpec, gpus: int, interconnect: Interconnect, c: Calibration, *,
                targets: bool = True) -> Layout | str:
    """The layout with the most output tokens/s on ``gpus`` x ``gpu``, or why there is none."""
    link = intra_link(gpu.key, str(interconnect))
    best: Layout | None = None
    reasons: list[str] = []
    for tp in TP_DEGREES:
        if tp > gpus or gpus % tp:
            continue
        if tp > 1 and link is None:
            reasons.append(f"no bus bandwidth known for {gpu.key} over {interconnect}: tensor parallelism not modelled")
            break
        r = Replica(gpu, tp, link.bus_gbytes_s if (link and tp > 1) else None, link_kind(str(interconnect)))
        got = replica_layout(w, r, c, targets=targets)
        if got is None:
            continue
        b, mem, why = got
        ttft, tpot = _latency(w, r, c, b)
        tokens = gpus // tp * b / tpot
        cand = Layout(tp, gpus // tp, b, mem, tokens, ttft, tpot, why)
        if best is None or cand.tokens_per_s > best.tokens_per_s:
            best = cand
    if best is not None:
        return best
    need = w.model.weight_bytes / GIB
    if w.has_targets and targets and isinstance(best_layout(w, gpu, gpus, interconnect, c, targets=False), Layout):
        return f"cannot meet {_targets_text(w)} on {gpus}x {gpu.key} at any batch"
    return (reasons[0] if reasons else
            f"{w.arch.name} in {w.weights} ({need:,.0f} GiB of weights) and its KV cache do not fit {gpus}x {gpu.key}")


def _targets_text(w: ServeWorkload) -> str:
    parts = []
    if w.ttft_s is not None:
        parts.append(f"TTFT {w.percentile} <= {w.ttft_s:g} s")
    if w.tpot_s is not None:
        parts.append(f"TPOT <= {w.tpot_s * 1000:g} ms")
    return " and ".join(parts)
