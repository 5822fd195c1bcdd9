"""Spot at scale: the expected run time of a synchronous job on spot machines, by node count and checkpoint interval.

A data- or model-parallel job stops when any of its nodes is taken back, and restarts from its last
checkpoint. With interruptions arriving at ``lam`` per node-hour, ``n`` nodes and a checkpoint every
``tau`` hours, a stretch of ``tau`` hours of work takes (e^(n·lam·tau) − 1) / (n·lam) hours in expectation
(the exponential renewal argument behind Young's and Daly's checkpoint intervals, restart time left out),
so the run takes F = (e^x − 1) / x times as long, x = n·lam·tau.

No citable interruption rate per instance type ships (AWS's Spot advisor gives only monthly buckets, and
nothing at all for Tencent), so ``lam`` is what ``--spot-overhead`` implies: one node losing that share
of its run time with a checkpoint every :data:`REFERENCE_HOURS` hour. One node at that interval keeps
``1 + --spot-overhead`` exactly; more nodes and longer intervals grow it by the formula above.
"""

from __future__ import annotations

import math
from decimal import Decimal
from functools import lru_cache

REFERENCE_HOURS = Decimal(1)  # the checkpoint interval --spot-overhead is taken at
MAX_FACTOR = Decimal(1000)  # beyond this the run never finishes in any sense that matters


def _x_for(factor: float) -> float:
    """The x with (e^x - 1) / x = factor (factor > 1), by bisection: the function rises monotonically from 1."""
    lo, hi = 0.0, 1.0
    while math.expm1(hi) / hi < factor:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        if math.expm1(mid) / mid < factor:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@lru_cache(maxsize=1024)
def spot_factor(overhead: Decimal, nodes: int, checkpoint_hours: Decimal | None = None) -> Decimal:
    """Expected run time on spot over the run time without interruptions, for ``nodes`` nodes."""
    base = 1 + overhead
    tau = REFERENCE_HOURS if checkpoint_hours is None else checkpoint_hours
    if overhead <= 0:
        return Decimal(1)
    if nodes <= 1 and tau == REFERENCE_HOURS:
        return base  # the assumption itself, exactly
    x = _x_for(float(base)) * nodes * float(tau / REFERENCE_HOURS)
    if x > math.log(float(MAX_FACTOR) * x + 1):
        return MAX_FACTOR
    return min(MAX_FACTOR, Decimal(repr(math.expm1(x) / x)))


def _interval(hours: Decimal) -> str:
    return f"{float(hours) * 60:.0f} min" if hours < 1 else f"{float(hours):g} h"


@lru_cache(maxsize=1024)  # the same few notes for every spot option of a plan (12k of them at 50k catalog rows)
def spot_note(overhead: Decimal, nodes: int, checkpoint_hours: Decimal | None, factor: Decimal) -> str:
    tau = REFERENCE_HOURS if checkpoint_hours is None else checkpoint_hours
    head = (f"spot: expected run time x{factor:.2f} for interruptions (assumed: one node loses {overhead:.0%} with a "
            f"checkpoint every {_interval(REFERENCE_HOURS)}; here {nodes} node(s), a checkpoint every "
            f"{_interval(tau)}; --spot-overhead, --checkpoint-every)")
    if nodes > 1 and factor >= Decimal("1.5"):
        return (f"SPOT AT SCALE: any of the {nodes} nodes being taken back stops all of them; {head}; "
                "on demand it runs without this")
    return head
