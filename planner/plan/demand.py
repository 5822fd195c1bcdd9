"""What a job needs from an offer: how long it runs there, or why it cannot.

The first step of the planner's one-way flow. A :class:`Demand` is either GPU-hours
measured on a reference GPU (:class:`RefGpuHours`) or a model-based workload
(:class:`WorkloadDemand`); both answer :meth:`Demand.run` per offer.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from pricing.catalog import Catalog, GpuSpec
from pricing.errors import InputError
from pricing.money import to_decimal
from providers.base import Offer
from planner.perf.cluster import Scaling, internode
from planner.perf.speed import SpeedPrecision, WorkloadClass, relative_speed
from planner.perf.scaling import efficiency
from planner.workload.estimate import estimate_images, estimate_training, goodput_overhead
from planner.workload.ranges import Spread
from planner.workload.spec import ImageWorkload, Precision, Recompute, Sharding, TrainingWorkload


class Run(BaseModel):
    """How long a job takes on one offer's GPUs."""

    model_config = ConfigDict(frozen=True)

    wall_hours: Decimal
    gpu_hours: Decimal
    notes: tuple[str, ...] = ()
    # (low, high) multipliers of a calibrated range around these hours, when the demand has one
    spread: tuple[float, float] | None = None


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


class WorkloadDemand:
    """A model-based workload as the planner's Demand: fit on each offer, then time it on that GPU."""

    runs_by_shape = True  # run() reads the spec, gpu_count, interconnect and (nodes > 1) the network

    def __init__(self, workload: TrainingWorkload | ImageWorkload, catalog: Catalog) -> None:
        self.workload = workload
        self.catalog = catalog

    def run(self, offer: Any, spec: GpuSpec, nodes: int = 1) -> Any:
        """Run time on ``nodes`` identical nodes of ``offer`` (sharded across all their GPUs), or why not."""
        from planner.perf.cluster import GLOBAL_BATCH_TOKENS, internode
        from planner.workload.memory import image_max_batch, layout
        from planner.perf.speed import WorkloadClass

        vram = spec.vram_gb * min(offer.gpu_count, 1)
        per_node = max(1, int(offer.gpu_count))
        gpus = per_node * nodes
        count = offer.gpu_count * nodes
        w = self.workload
        notes: list[str] = []
        try:
            if isinstance(w, TrainingWorkload):
                lay = layout(w, vram, gpus)
                if lay is None:
                    return _no_fit_reason(w, vram, gpus, count, spec)
                est = estimate_training(w, spec, count, offer.interconnect, lay.recompute, catalog=self.catalog)
                notes.append(f"fits with {lay.describe()}" + (f", max micro-batch {lay.max_batch}" if lay.max_batch else ""))
                grad_bytes = w.arch.params * (4.0 if w.precision is Precision.FP32 else 2.0)
                zero3 = lay.sharding in (Sharding.ZERO3, Sharding.FSDP)
                cls = WorkloadClass.TRANSFORMER
                # compute per GPU between two all-reduces: its share of a 4M-token global batch
                tokens = max(GLOBAL_BATCH_TOKENS / gpus, float((lay.max_batch or 1) * w.seq_len))
                rate = est.assumptions["peak_tflops"] * 1e12 * est.assumptions["hardware_utilization"]
                step = 6.0 * w.arch.params * tokens / rate
            else:
                mb, basis = image_max_batch(w, spec, vram, self.catalog)
                if mb is not None and mb < (w.batch or 1):
                    return f"{w.model} fits a batch of {mb} in {vram:g} GB ({basis}), below the {w.batch or 1} asked for"
                est = estimate_images(w, spec, count, offer.interconnect, catalog=self.catalog)
                grad_bytes = w.preset.params * (4.0 if w.precision is Precision.FP32 else 2.0)
                zero3, cls = False, WorkloadClass.CNN
                step = float(w.batch or mb or 64) / est.assumptions["images_per_sec_per_gpu"]
        except InputError as exc:
            return exc.message
        wall = to_decimal(est.wall_hours)
        if nodes > 1:
            scaling = internode(nodes, self.catalog.network(offer.provider, offer.name), cls, grad_bytes=grad_bytes,
                                step_seconds=step, zero3=zero3)
            if isinstance(scaling, str):
                return scaling
            wall = wall / to_decimal(scaling.efficiency)
            notes.insert(0, scaling.note)
        notes.append(f"MFU {est.assumptions['mfu']:.0%}" if "mfu" in est.assumptions
                     else f"{est.assumptions['images_per_sec_per_gpu']:g} images/s per GPU")
        notes.extend(est.notes)
        s = self.spread()
        return Run(wall_hours=wall, gpu_hours=wall * to_decimal(count), notes=tuple(notes), spread=(s.low, s.high))

    def spread(self) -> Spread:
        from planner.workload.ranges import spread

        return spread(self.catalog, "transformer" if isinstance(self.workload, TrainingWorkload) else "image")

    def assumptions(self) -> dict[str, Any]:
        w = self.workload
        overhead = w.overhead if w.overhead is not None else goodput_overhead(self.catalog)[0]
        s = self.spread()
        out: dict[str, Any] = {"workload": w.model_dump(mode="json"), "goodput_overhead": round(overhead, 4),
                               "estimate_range": {"low": round(s.low, 4), "high": round(s.high, 4), "basis": s.basis}}
        if isinstance(w, TrainingWorkload):
            out["time_model"] = ("6*N*D (N = active parameters for a mixture of experts; (4*N + 6*N_adapter)*D for "
                                 "LoRA/QLoRA; one more forward pass with full recompute) / (GPUs x dense peak x MFU), "
                                 "MFU per GPU generation and scale")
            out["memory_model"] = ("16 B/param mixed-precision Adam (ZeRO), experts split by expert parallelism; "
                                   "LoRA: frozen 16-bit base, QLoRA: 4.127-bit NF4 base, states for adapters only; "
                                   "activations s*h*(34+5as/h) per layer (Korthikanti)")
        else:
            out["time_model"] = "images x epochs / measured images/s per GPU (Lambda) x scaling efficiency"
        return out


def _no_fit_reason(w: TrainingWorkload, vram: float, gpus: int, count: float, spec: GpuSpec) -> str:
    from planner.workload.memory import training_memory

    m = training_memory(w, 1, Sharding.NONE, Recompute.NONE)
    states = m.weights + m.gradients + m.optimizer
    lenient = training_memory(w, 1, Sharding.NONE, Recompute.FULL if w.recompute is Recompute.AUTO else w.recompute)
    act = f" and {lenient.activations_per_sample:.1f} GB of activations per sample" if lenient.activations_per_sample else ""
    how = "even with ZeRO-3" if w.sharding in (Sharding.AUTO, Sharding.ZERO3, Sharding.FSDP) else f"with {w.sharding.value}"
    if w.recompute is Recompute.AUTO:
        how += " and full recompute"
    return (f"needs {states:,.0f} GB for weights+gradients+optimizer{act}; {count:g}x {spec.key} has "
            f"{vram:g} GB per GPU {how}")
