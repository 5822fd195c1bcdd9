"""How many instances serve the peak: enough headroom for random arrivals, and the TTFT target met in the queue.

The fleet starts at the fewest instances whose capacity at ``max_load`` covers the peak; with a
TTFT target it grows until the chosen percentile of time to first token, queueing included
(:mod:`planner.serve.queueing`), meets it. The replicas share the requests evenly (the engines'
load balancers round-robin or pick the least loaded).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.serve.layout import Layout
from planner.serve.queueing import wait_quantile
from planner.serve.spec import ServeWorkload


@dataclass(frozen=True, slots=True)
class Sized:
    instances: int
    load: float  # peak demand over the fleet's capacity
    ttft_s: float  # the workload's percentile of time to first token at the peak, its wait for a slot included
    wait_s: float  # of which waiting for a batch slot


def ttft_at(w: ServeWorkload, lay: Layout, peak_requests_per_s: float, instances: int) -> tuple[float, float]:
    """(TTFT at the workload's percentile, of which queueing) with ``instances`` of ``lay`` at the peak."""
    service_s = w.output_tokens * lay.tpot_s  # a request holds its slot for every iteration of its answer
    per_replica = peak_requests_per_s / (instances * lay.replicas)
    wait = wait_quantile(lay.batch, per_replica, service_s, w.percentile)
    return lay.ttft_s + wait, wait


def size(w: ServeWorkload, lay: Layout, peak_tokens_per_s: float, limit: int) -> Sized | None:
    """The fleet of ``lay`` instances for the peak, or None when it takes more than ``limit``."""
    need = max(1, math.ceil(peak_tokens_per_s / (lay.tokens_per_s * w.max_load) - 1e-9))
    requests = peak_tokens_per_s / w.output_tokens
    target = w.ttft_s

    def meets(n: int) -> bool:
        return target is None or ttft_at(w, lay, requests, n)[0] <= target

    if need > limit:
        return None
    if not meets(need):  # more instances only shorten the wait: double until it holds, then bisect
        lo, hi = need, need * 2
        while hi <= limit and not meets(hi):
            lo, hi = hi, hi * 2
        if hi > limit:
            if not meets(limit):
                return None
            hi = limit
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if meets(mid) else (mid, hi)
        need = hi
    ttft, wait = ttft_at(w, lay, requests, need)
    return Sized(need, peak_tokens_per_s / (lay.tokens_per_s * need), ttft, wait)


def instances_if_slow(w: ServeWorkload, lay: Layout, peak_tokens_per_s: float, low: float, instances: int) -> int:
    """Instances for the same headroom if the model serves at ``low`` x its expected rate (its range's low end)."""
    return max(instances, math.ceil(peak_tokens_per_s / (lay.tokens_per_s * low * w.max_load) - 1e-9))
