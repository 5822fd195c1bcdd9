"""The layout choice at the pace the utilisation keyed by each candidate's work gives.

The layout model (``layout_choice.choose``) needs the compute time of a micro-batch, and the utilisation
(``planner.workload.utilisation``) depends on the micro-batch and recompute a candidate layout runs: each candidate
is timed at its own pace, and the chosen one re-estimated at its micro-batch and recompute.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from planner.workload.spec import Recompute


def choose_keyed(estimate: Callable[[Recompute | None, int | None], Any],
                 choose_at: Callable[[Callable[[int, Recompute], float]], Any]) -> tuple[Any, Any]:
    """(the chosen Scaling or why none, the estimate at its recompute and micro-batch, or None with no Scaling).

    ``estimate(recompute, micro_batch)`` estimates the workload; ``choose_at(rate)`` runs the layout choice with
    ``rate(micro_batch, recompute)``, the FLOP/s of a GPU (peak x hardware utilisation) at that work."""

    @lru_cache(maxsize=64)
    def at(rc: Recompute | None, mb: int | None) -> Any:
        return estimate(rc, mb)

    def rate(mb: int, rc: Recompute) -> float:
        a = at(rc, mb).assumptions
        return float(a["peak_tflops"]) * 1e12 * float(a["hardware_utilization"])

    chosen = choose_at(rate)
    if isinstance(chosen, str):
        return chosen, None
    return chosen, at(Recompute(chosen.recompute), chosen.micro_batch)
