"""Communication of data-parallel and sharded training, per micro-batch, over the link that carries it.

Bytes each GPU moves (S = gradient/parameter bytes, n = GPUs sharing the states; DeepSpeed
``runtime/engine.py::allreduce_gradients``, PyTorch FSDP2 PR #126166, ZeRO paper sec. 7):

- DDP / ZeRO-1: one all-reduce 2S(n-1)/n per optimizer step (no_sync while accumulating);
- ZeRO-2: a reduce-scatter S(n-1)/n on every micro-batch (the gradients are partitioned, so they cannot accumulate
  whole), and once per optimizer step an all-gather S(n-1)/n of the updated 16-bit parameters (DeepSpeed stage 2:
  each rank steps its partition, then all-gathers; the ZeRO paper's 2 x Psi for stage 2, sec. 7.2.1);
- ZeRO-3 / FSDP: all-gather in forward and backward plus a reduce-scatter, 3S(n-1)/n per micro-batch.

Time = bytes / bus bandwidth. Communication overlaps the backward pass, so up to a link's hidden
share of a micro-batch's compute hides it (2/3 by default: backward is ~2/3 of 6N FLOPs; per link
class in planner/data/link_physics.csv);
the rest is exposed and efficiency = compute / (compute + exposed). A once-per-step
all-reduce (DDP/ZeRO-1) overlaps only the last micro-batch's backward. An option whose exposed
traffic exceeds twice its compute (efficiency under 1/3) cannot be trained sensibly on that link.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pricing.datafiles import data_rows

HIDDEN_SHARE = 2.0 / 3.0  # share of compute that can hide communication (backward pass)
MIN_EFFICIENCY = 1.0 / 3.0  # exposed traffic over 2x compute: excluded

# One GPU's achieved FLOP/s, or a function of (micro-batch, recompute) where the utilisation depends on the work
# (planner.plan.keyed_choice.KeyedRate); hashable either way, as the cached layout searches take it.
Rate = float | Callable[[int, Any], float]


def pace(rate: Rate, micro_batch: int, recompute: Any) -> float:
    """FLOP/s of one GPU at ``micro_batch`` and ``recompute`` under ``rate``."""
    return rate(micro_batch, recompute) if callable(rate) else rate


@dataclass(frozen=True)
class Link:
    """One GPU's intra-node link, as a collective sees it."""

    name: str
    bus_gbytes_s: float
    estimate: bool
    source: str
    hidden_share: float = 2.0 / 3.0  # share of compute that can hide traffic on this link (planner/perf/links.py)


@lru_cache(maxsize=1)
def _links() -> dict[tuple[str, str], Link]:
    return {(r["gpu"], r["interconnect"]): Link(r["link"], float(r["bus_gbytes_s"]), r["estimate"] == "yes",
                                                r["source"])
            for r in data_rows("intra_links.csv", "planner.data")}


def intra_link(gpu: str, interconnect: str) -> Link | None:
    """The bus bandwidth of ``gpu`` over ``interconnect`` inside one node; None where no row ships."""
    return _links().get((gpu, str(interconnect)))


def traffic(strategy: str, state_bytes: float, n: int) -> tuple[float, float]:
    """(bytes per micro-batch, bytes per optimizer step) each GPU moves for ``strategy`` over ``n`` GPUs."""
    if n <= 1:
        return 0.0, 0.0
    ring = state_bytes * (n - 1) / n
    if strategy in ("zero3", "fsdp"):
        return 3.0 * ring, 0.0
    if strategy == "zero2":
        return ring, ring
    return 0.0, 2.0 * ring  # ddp / zero1 / none


def comm_seconds(strategy: str, state_bytes: float, n: int, gbytes_s: float) -> tuple[float, float]:
    """(seconds per micro-batch, seconds per optimizer step) of traffic over a link of ``gbytes_s``."""
    per_mb, per_step = traffic(strategy, state_bytes, n)
    return per_mb / (gbytes_s * 1e9), per_step / (gbytes_s * 1e9)


def compute_seconds(params: float, tokens: float, flops_per_s: float, full_recompute: bool = False) -> float:
    """Seconds of one micro-batch's compute: 6 N per token, 8 N with full recompute."""
    return (8.0 if full_recompute else 6.0) * params * tokens / flops_per_s


def efficiency(compute_s: float, comm_mb_s: float, comm_step_s: float = 0.0, microbatches: float = 1.0,
               hidden: float = HIDDEN_SHARE, slowdown: float = 0.0) -> float:
    """Share of time spent computing over one optimizer step of ``microbatches`` micro-batches.

    Per-micro-batch traffic hides behind up to ``hidden`` of each micro-batch's compute; the
    once-per-step all-reduce overlaps only the last micro-batch's backward pass. While traffic
    overlaps compute, compute runs ``slowdown`` slower for the overlapped seconds.
    """
    k = max(1.0, microbatches)
    waits = k * exposed(comm_mb_s, compute_s, hidden, slowdown) + exposed(comm_step_s, compute_s, hidden, slowdown)
    return k * compute_s / (k * compute_s + waits)


def exposed(traffic_s: float, compute_s: float, hidden: float, slowdown: float) -> float:
    """Seconds ``traffic_s`` adds to a micro-batch of ``compute_s``: what ``hidden`` of the compute cannot hide, plus
    ``slowdown`` of the seconds it does hide (compute runs slower while it overlaps traffic)."""
    hid = min(traffic_s, hidden * compute_s)
    return traffic_s - hid + slowdown * hid


def needed_gbytes_s(compute_s: float, bytes_mb: float, bytes_step: float = 0.0, microbatches: float = 1.0,
                    floor: float = MIN_EFFICIENCY, hidden: float = HIDDEN_SHARE) -> float:
    """Bandwidth at which :func:`efficiency` reaches ``floor`` (both kinds of traffic exposed; slowdown left out)."""
    k = max(1.0, microbatches)
    hidden_s = (k if bytes_mb else 0.0) * hidden * compute_s + (hidden * compute_s if bytes_step else 0.0)
    allowed = k * compute_s * (1.0 / floor - 1.0) + hidden_s
    return (k * bytes_mb + bytes_step) / allowed / 1e9
