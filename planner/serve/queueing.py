"""Waiting for a batch slot when requests arrive at random: each replica as an M/M/c queue.

A replica running a continuous batcher at batch ``b`` holds ``b`` slots; a request occupies one
from its prefill until its last token (``output`` iterations of the batcher). Requests arrive as
a Poisson stream, spread evenly over the fleet's replicas. A request that finds every slot taken
waits in the engine's queue, and that wait adds to its time to first token.

Erlang C gives the probability of waiting, P(W > 0) = C(c, a) with a = lambda x S offered load in
slots; the wait beyond it is exponential with rate c/S - lambda, so the q-quantile of the wait is
ln(C / (1 - q)) / (c/S - lambda) when C > 1 - q, else 0 (Kleinrock, Queueing Systems vol. 1, 3.5;
any M/M/c text). Service times are taken as exponential (M/M/c): answer lengths vary widely in
real traffic, which makes the wait longer than fixed-length answers would (M/D/c waits about half
as long), so the fleet errs large.
"""

from __future__ import annotations

import math

from planner.serve.spec import Percentile

QUANTILE = {Percentile.P50: 0.50, Percentile.P95: 0.95}


def erlang_c(slots: int, offered: float) -> float:
    """P(an arrival waits) in M/M/c with ``slots`` servers and ``offered`` = lambda / mu erlangs; 1 when
    ``offered >= slots`` (the queue grows without bound). Erlang B by its recursion, stable for any c."""
    if offered <= 0:
        return 0.0
    if offered >= slots:
        return 1.0
    b = 1.0
    for k in range(1, slots + 1):
        b = offered * b / (k + offered * b)
    rho = offered / slots
    return b / (1 - rho * (1 - b))


def wait_quantile(slots: int, arrivals_per_s: float, service_s: float, percentile: Percentile) -> float:
    """Seconds the ``percentile`` request waits for a slot; ``inf`` at or past full load."""
    if arrivals_per_s <= 0:
        return 0.0
    offered = arrivals_per_s * service_s
    if offered >= slots:
        return math.inf
    c = erlang_c(slots, offered)
    tail = 1 - QUANTILE[percentile]
    if c <= tail:
        return 0.0
    return math.log(c / tail) / (slots / service_s - arrivals_per_s)
