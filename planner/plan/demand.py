"""What a job needs from an offer: how long it runs there, or why it cannot.

The first step of the planner's one-way flow. A :class:`Demand` is either GPU-hours
measured on a reference GPU (:class:`RefGpuHours`) or a model-based workload
(:class:`planner.plan.workload_demand.WorkloadDemand`); both answer :meth:`Demand.run` per offer.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from pricing.catalog import Catalog, GpuSpec
from providers.base import Offer
from planner.perf.speed import SpeedPrecision, WorkloadClass, relative_speed
from planner.perf.scaling import efficiency

if TYPE_CHECKING:
    # Imported when an option spans nodes: a one-node plan (most) never loads the network model (~3 ms cold).
    from planner.perf.cluster import Scaling


class Run(NamedTuple):
    """How long a job takes on one offer's GPUs: a plain value, made per offer shape and node count."""

    wall_hours: Decimal
    gpu_hours: Decimal
    notes: tuple[str, ...] = ()
    # (low, high) multipliers of a calibrated range around these hours, when the demand has one
    spread: tuple[float, float] | None = None
    # the chosen data-parallel layout and its per-micro-batch scaling (model workloads with a known link)
    scaling: dict[str, Any] | None = None


class Demand(Protocol):
    """A workload as the planner sees it: a run time per offer, or why it cannot run.

    A demand may set ``runs_by_shape = True`` when its run reads nothing of an offer but
    what :func:`planner.plan.shape_key` keys on (GPU, GPU count, interconnect, and for
    several nodes the instance type's network): the planner then computes one run per shape.
    """

    def run(self, offer: Offer, spec: GpuSpec, nodes: int = 1) -> Run | str: ...

    def assumptions(self) -> dict[str, Any]: ...


def scaled_run(ref_hours: Decimal, offer: Offer, speed: float, basis: str, measured: bool,
               cluster: Scaling | None = None, cls: WorkloadClass = WorkloadClass.TRANSFORMER) -> Run:
    """``ref_hours`` of single-reference-GPU work spread over the offer's GPUs (and nodes)."""
    eff = efficiency(offer.gpu_count, offer.interconnect, cls)
    nodes = cluster.nodes if cluster else 1
    across = cluster.efficiency if cluster else 1.0
    wall = ref_hours / Decimal(repr(speed * offer.gpu_count * eff * nodes * across))
    notes = []
    if cluster is not None and cluster.nodes > 1:
        notes.append(cluster.note)
    if not measured:
        notes.append(f"speed is a {basis}")
    if offer.gpu_count > 1:
        notes.append(f"{eff:.0%} scaling efficiency on {offer.gpu_count:g} GPUs over {offer.interconnect}")
    return Run(wall_hours=wall, gpu_hours=wall * Decimal(repr(offer.gpu_count * nodes)), notes=tuple(notes))


class RefGpuHours:
    """GPU-hours measured on a reference GPU, scaled to each GPU by relative throughput."""

    runs_by_shape = True  # run() reads the spec, gpu_count, interconnect and (nodes > 1) the network

    def __init__(
        self,
        gpu_hours: Decimal,
        ref_gpu: str,
        catalog: Catalog,
        workload_class: WorkloadClass = WorkloadClass.TRANSFORMER,
        precision: SpeedPrecision = SpeedPrecision.MIXED,
    ) -> None:
        self.gpu_hours = gpu_hours
        self.ref_gpu = ref_gpu
        self.catalog = catalog
        self.workload_class = workload_class
        self.precision = precision

    def run(self, offer: Offer, spec: GpuSpec, nodes: int = 1) -> Run | str:
        speed = relative_speed(self.catalog, spec.key, self.ref_gpu, self.workload_class, self.precision)
        cluster = None
        if nodes > 1:
            from planner.perf.cluster import internode

            scaling = internode(nodes, self.catalog.network(offer.provider, offer.name), self.workload_class,
                                grad_bytes=None)
            if isinstance(scaling, str):
                return scaling
            cluster = scaling
        return scaled_run(self.gpu_hours, offer, speed.relative, speed.basis, speed.measured, cluster,
                          self.workload_class)

    def assumptions(self) -> dict[str, Any]:
        return {
            "gpu_hours_on_ref": str(self.gpu_hours),
            "ref_gpu": self.ref_gpu,
            "workload_class": self.workload_class.value,
            "precision": self.precision.value,
        }
