"""How a tensor/pipeline/expert layout splits a model: its degrees, and the parameter groups it splits.

Apart from :mod:`planner.perf.parallel3d` (the timing) so that :mod:`planner.workload.memory_3d` (the memory of a
split) and the timing, which asks the memory what fits, need not import each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from planner.workload.spec import TrainingWorkload


@dataclass(frozen=True)
class Degrees:
    """Tensor, pipeline, expert and data-parallel degrees; ``v`` interleaved stages per GPU; ``cp`` GPUs sharing each
    sequence (context parallelism); ``zero`` the ZeRO stage over the data-parallel replicas: 1 (Megatron's distributed
    optimizer) or 3 (FSDP x TP: weights, gradients and optimizer states sharded over the replicas, torchtitan's 2D
    parallelism). The GPUs number ``tp x pp x cp x dp``: ``dp`` counts whole-sequence replicas."""

    tp: int
    pp: int
    ep: int
    dp: int
    v: int = 1
    cp: int = 1
    zero: int = 1

    def with_v(self, v: int) -> Degrees:
        """The same split with ``v`` interleaved chunks per GPU (the constructor, not ``dataclasses.replace``: the
        search makes tens of thousands of these per plan, and replace costs several times a plain construction)."""
        return Degrees(self.tp, self.pp, self.ep, self.dp, v, self.cp, self.zero)

    def with_zero(self, zero: int) -> Degrees:
        """The same split with ZeRO stage ``zero`` over the replicas."""
        return Degrees(self.tp, self.pp, self.ep, self.dp, self.v, self.cp, zero)

    @property
    def name(self) -> str:
        """The layout's name, e.g. ``tp4+pp4+ep8+zero1``; ``pp4v5`` for 4 stages of 5 interleaved chunks each,
        ``cp2`` for each sequence split over 2 GPUs; ``tp8+zero3`` for FSDP x TP."""
        parts = [f"tp{self.tp}"] if self.tp > 1 else []
        parts += [f"pp{self.pp}" + (f"v{self.v}" if self.v > 1 else "")] if self.pp > 1 else []
        parts += [f"cp{self.cp}"] if self.cp > 1 else []
        parts += [f"ep{self.ep}"] if self.ep > 1 else []
        return "+".join([*parts, f"zero{self.zero}"])


@lru_cache(maxsize=256)
def groups(w: TrainingWorkload) -> Any:
    """Dense and expert parameter counts of ``w`` (:func:`planner.workload.params.param_groups`), kept per
    workload: the search asks for them for every split and micro-batch."""
    from planner.workload.params import param_groups

    return param_groups(w)
