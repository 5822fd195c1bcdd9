"""TCO usage counts work: GPU-hours on a reference GPU, and how much of it each option does.

As in ``gpuplan plan``: the work is measured in hours on the reference GPU (settings
``ref_gpu``, ``--ref-gpu``) for a workload class and precision; an option with n GPUs,
each ``speed`` times the reference, at multi-GPU scaling efficiency ``e`` does
``speed x e`` reference GPU-hours per GPU-hour, so the same work takes it
``usage / (speed x e)`` GPU-hours, or ``usage / (speed x e x n)`` hours of the machine.
"""

from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, ConfigDict

from pricing.catalog import Catalog, Interconnect
from planner.perf.speed import SpeedPrecision, WorkloadClass, relative_speed
from planner.perf.scaling import efficiency


class WorkUnit(BaseModel):
    """What one unit of usage is: an hour of this class of work on the reference GPU."""

    model_config = ConfigDict(frozen=True)

    ref_gpu: str
    workload_class: WorkloadClass = WorkloadClass.TRANSFORMER
    precision: SpeedPrecision = SpeedPrecision.MIXED

    @property
    def label(self) -> str:
        return f"GPU-hours on {self.ref_gpu} ({self.workload_class} work, {self.precision} precision)"


class WorkRate(BaseModel):
    """How much reference-GPU work one option does per hour."""

    model_config = ConfigDict(frozen=True)

    gpu: str
    gpu_count: float
    speed: float  # one GPU's throughput as a multiple of the reference GPU's
    speed_basis: str
    measured: bool
    efficiency: float  # multi-GPU scaling of gpu_count GPUs over interconnect
    interconnect: Interconnect

    @property
    def per_gpu_hour(self) -> Decimal:
        """Reference GPU-hours of work one GPU-hour of this option does."""
        return Decimal(repr(self.speed * self.efficiency))

    @property
    def per_machine_hour(self) -> Decimal:
        """Reference GPU-hours of work one hour of the whole machine does."""
        return self.per_gpu_hour * Decimal(repr(self.gpu_count))

    def note(self, unit: WorkUnit, usage: Decimal) -> str:
        """How the usage becomes this option's hours, in one line."""
        how = "measured" if self.measured else self.speed_basis
        text = f"{self.speed:.2f}x {unit.ref_gpu} per GPU ({how})"
        if self.gpu_count > 1:
            text += f", {self.efficiency:.0%} scaling on {self.gpu_count:g} GPUs over {self.interconnect}"
        gpu_hours = usage / self.per_gpu_hour
        return f"{text}: {usage:g} reference GPU-hours a month take {gpu_hours:,.1f} GPU-hours here"


def work_rate(catalog: Catalog, unit: WorkUnit, gpu: str, gpu_count: float, interconnect: Interconnect) -> WorkRate:
    """The work rate of ``gpu_count`` x ``gpu`` talking over ``interconnect``."""
    s = relative_speed(catalog, gpu, unit.ref_gpu, unit.workload_class, unit.precision)
    return WorkRate(gpu=gpu, gpu_count=gpu_count, speed=s.relative, speed_basis=s.basis, measured=s.measured,
                    efficiency=efficiency(gpu_count, interconnect, unit.workload_class), interconnect=interconnect)
