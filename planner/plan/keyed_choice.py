"""The layout choice at the pace the utilisation keyed by each candidate's work gives.

The layout model (``layout_choice.choose``) needs the compute time of a micro-batch, and the utilisation
(``planner.workload.utilisation``) depends on the micro-batch and recompute a candidate layout runs: each candidate
is timed at its own pace (``layout_choice.choose`` takes the rate), and the chosen one re-estimated at its
micro-batch and recompute (:meth:`KeyedRate.at`).

The pace is a :class:`KeyedRate`, a plain hashable value: the tensor/pipeline search
(:func:`planner.perf.parallel3d.search`) is cached per rate, so offers of one GPU and node shape share one search.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pricing.catalog import Catalog, GpuSpec, Interconnect
from planner.workload.spec import Recompute, TrainingWorkload


@dataclass(frozen=True)
class KeyedRate:
    """One GPU's achieved FLOP/s (peak x hardware utilisation) at a candidate's micro-batch and recompute."""

    workload: TrainingWorkload
    spec: GpuSpec
    gpus: float
    interconnect: Interconnect
    catalog: Catalog
    moe_factor: float | tuple[float, str] | None = None  # the MoE share (planner.plan.moe_share), with its basis
    # estimates already made with this rate, by (recompute, micro-batch): a search asks for the same few thousands of
    # times, and hashing the whole rate (workload, GPU, catalog) for the shared cache each time cost more than the rest
    _made: dict[tuple[Recompute | None, int | None], Any] = field(default_factory=dict, compare=False, repr=False)

    def estimate(self, recompute: Recompute | None, micro_batch: int | None) -> Any:
        key = (recompute, micro_batch)
        if (made := self._made.get(key)) is None:
            made = self._made[key] = _estimate(self, recompute, micro_batch)
        return made

    def at(self, chosen: Any) -> Any:
        """The estimate at a chosen layout's (a ``layout_choice.Scaling``) recompute and micro-batch."""
        return self.estimate(Recompute(chosen.recompute), chosen.micro_batch)

    def __call__(self, micro_batch: int, recompute: Recompute) -> float:
        a = self.estimate(recompute, micro_batch).assumptions
        return float(a["peak_tflops"]) * 1e12 * float(a["hardware_utilization"])


@lru_cache(maxsize=4096)
def _estimate(rate: KeyedRate, recompute: Recompute | None, micro_batch: int | None) -> Any:
    from planner.workload.estimate import estimate_training

    return estimate_training(rate.workload, rate.spec, rate.gpus, rate.interconnect, recompute,
                             catalog=rate.catalog, moe_factor=rate.moe_factor, micro_batch=micro_batch)
