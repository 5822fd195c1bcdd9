"""A model-based workload as the planner's demand: fit on each offer's GPUs, then time it there.

Kept apart from :mod:`planner.plan.demand` so a plan of GPU-hours never loads the workload model.
"""

from __future__ import annotations

from typing import Any

from pricing.catalog import Catalog, GpuSpec
from pricing.errors import InputError
from pricing.money import to_decimal
from planner.plan.demand import Run
from planner.plan.layout_choice import Scaling
from planner.workload.estimate import estimate_images, estimate_training, goodput_overhead
from planner.workload.ranges import Spread
from planner.workload.spec import ImageWorkload, Precision, Recompute, Sharding, TrainingWorkload


class WorkloadDemand:
    """A model-based workload as the planner's Demand: fit on each offer, then time it on that GPU."""

    runs_by_shape = True  # run() reads the spec, gpu_count, interconnect and (nodes > 1) the network
    # more nodes can let a layout with less sharding fit, so a larger count may take fewer node-hours (NodeRuns)
    layouts_vary_with_nodes = True

    def __init__(self, workload: TrainingWorkload | ImageWorkload, catalog: Catalog) -> None:
        self.workload = workload
        self.catalog = catalog

    def run(self, offer: Any, spec: GpuSpec, nodes: int = 1) -> Any:
        """Run time on ``nodes`` identical nodes of ``offer`` (sharded across all their GPUs), or why not."""
        from planner.perf.cluster import internode
        from planner.perf.links import collective_link
        from planner.perf.offload import host_for
        from planner.perf.speed import WorkloadClass
        from planner.plan.keyed_choice import KeyedRate
        from planner.plan.moe_share import share
        from planner.plan.layout_choice import choose, global_batch, split_may_fit
        from planner.workload.memory import image_max_batch, layout, usable_vram

        w = self.workload
        # a transformer is fitted to the memory a process can use; image batches were measured on the card
        vram = (spec.vram_gb if isinstance(w, ImageWorkload) else usable_vram(spec)[0]) * min(offer.gpu_count, 1)
        per_node = max(1, int(offer.gpu_count))
        gpus = per_node * nodes
        count = offer.gpu_count * nodes
        notes: list[str] = []
        chosen: Scaling | None = None
        wall_f = 0.0
        try:
            if isinstance(w, TrainingWorkload):
                lay = layout(w, vram, gpus)
                # no data-parallel layout fits: a tensor/pipeline layout (planner.perf.parallel3d) still may
                if lay is None and not split_may_fit(w, gpus):
                    return _no_fit_reason(w, vram, gpus, count, spec)
                moe = share(w, self.catalog)
                est = estimate_training(w, spec, count, offer.interconnect, lay.recompute if lay else None,
                                        catalog=self.catalog, moe_factor=moe)
                notes.append(f"fits with {lay.describe()}" + (f", max micro-batch {lay.max_batch}"
                                                               if lay.max_batch else "") if lay else "")
                grad_bytes = w.arch.params * (4.0 if w.precision is Precision.FP32 else 2.0)
                zero3 = lay is None or lay.sharding in (Sharding.ZERO3, Sharding.FSDP)
                cls = WorkloadClass.TRANSFORMER
                # compute per GPU between two all-reduces: its share of a 4M-token global batch
                tokens = max(global_batch(w) / gpus, float(((lay.max_batch if lay else 1) or 1) * w.seq_len))
                rate = est.assumptions["peak_tflops"] * 1e12 * est.assumptions["hardware_utilization"]
                step = 6.0 * w.arch.params * tokens / rate
                link = collective_link(spec.key, offer.interconnect, per_node)
                if link is None and lay is None:
                    return _no_fit_reason(w, vram, gpus, count, spec)
                if link is not None:
                    net = self.catalog.network(offer.provider, offer.name) if nodes > 1 else None
                    if nodes > 1 and (net is None or net.gbps is None):
                        return "its network is unknown to the catalog, so scaling across nodes cannot be estimated"
                    # the utilisation is keyed by the micro-batch the layout runs, known only once it is chosen
                    keyed = KeyedRate(w, spec, count, offer.interconnect, self.catalog, moe)
                    # the node's RAM lets the search try optimizer offload (unknown RAM, 0 in the catalog: not tried)
                    host = host_for(spec.arch, getattr(offer, "mem_gb", None))
                    chosen = choose(w, lay, vram, per_node, nodes, link, net.gbps if net else None, keyed,
                                    str(net.fabric) if net else "unknown", host)
                    if isinstance(chosen, str):
                        return chosen if lay else _no_fit_reason(w, vram, gpus, count, spec)
                    est = keyed.at(chosen)
                    # the per-micro-batch model replaces the measured PCIe-vs-NVLink factor
                    ic = float(est.assumptions["interconnect_factor"])
                    wall_f = est.wall_hours * ic / chosen.efficiency
                    notes[0] = f"fits with {chosen.fits}"  # the chosen layout, not the least-memory one
                    notes.insert(0, chosen.describe())
                    if net is not None:
                        notes.insert(0, f"{chosen.inter_node:.0%} scaling over {chosen.network or net.describe()} "
                                        f"across {nodes} nodes")
            else:
                mb, basis = image_max_batch(w, spec, vram, self.catalog)
                if mb is not None and mb < (w.batch or 1):
                    return (f"{w.model} fits a batch of {mb} in {vram:g} GB ({basis}), below the {w.batch or 1} "
                            "asked for")
                est = estimate_images(w, spec, count, offer.interconnect, catalog=self.catalog)
                grad_bytes = w.preset.params * (4.0 if w.precision is Precision.FP32 else 2.0)
                zero3, cls = False, WorkloadClass.CNN
                step = float(w.batch or mb or 64) / est.assumptions["images_per_sec_per_gpu"]
        except InputError as exc:
            return exc.message
        wall = to_decimal(est.wall_hours if chosen is None else wall_f)
        if nodes > 1 and chosen is None:
            scaling = internode(nodes, self.catalog.network(offer.provider, offer.name), cls, grad_bytes=grad_bytes,
                                step_seconds=step, zero3=zero3)
            if isinstance(scaling, str):
                return scaling
            wall = wall / to_decimal(scaling.efficiency)
            notes.insert(0, scaling.note)
        notes.append(f"MFU {est.assumptions['mfu']:.0%}" if "mfu" in est.assumptions
                     else f"{est.assumptions['images_per_sec_per_gpu']:g} images/s per GPU")
        notes.extend(est.notes)
        from planner.workload.ranges import range_for

        s = range_for(w, spec, count, self.catalog)
        return Run(wall_hours=wall, gpu_hours=wall * to_decimal(count), notes=tuple(notes), spread=(s.low, s.high),
                   scaling=chosen.as_json() if chosen is not None else None)

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
    act = (f" and {lenient.activations_per_sample:.1f} GB of activations per sample"
           if lenient.activations_per_sample else "")
    how = ("even with ZeRO-3" if w.sharding in (Sharding.AUTO, Sharding.ZERO3, Sharding.FSDP)
           else f"with {w.sharding.value}")
    if w.recompute is Recompute.AUTO:
        how += " and full recompute"
    return (f"needs {states:,.0f} GB for weights+gradients+optimizer{act}; {count:g}x {spec.key} has "
            f"{vram:g} GB per GPU {how}")
