"""Held-out error of the training physics per regime, for docs/performance.md (``python examples/physics_holdout.py``).

Each measured point is predicted by the model the planner uses, with the link physics of
``planner/data/link_physics.csv`` (bus bandwidth by topology, achievable share of line rate by fabric, hidden
share per link class, overlap slowdown). Those figures are sourced or estimated, never fitted to these points,
so every error here is out of sample; the two fitted figures (the cluster beta, the MoE share) are predicted
leave-one-out, each point with the figure fitted on the others.

Regimes: one node over NVLink; NVSwitch clusters over RDMA where traffic hides (sharded_runs.csv); RDMA where
traffic is exposed (bandwidth_runs.csv); data-parallel BERT clusters (multinode.csv, beta); mixtures of experts
(published_runs.csv, MoE share). No measured pair ships for PCIe boxes or TCP networks.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from planner.perf import comm, links
from pricing.catalog import Catalog
from pricing.datafiles import data_rows


@dataclass(frozen=True)
class Point:
    regime: str
    name: str
    predicted: float
    measured: float
    source: str

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1


def _kept(compute_s: float, strategy: str, state: float, gpus: int, gbytes_s: float, hidden: float) -> float:
    per_mb, per_step = comm.comm_seconds(strategy, state, gpus, gbytes_s)
    return comm.efficiency(compute_s, per_mb, per_step, 1.0, hidden, links.overlap_slowdown())


def sharded_points(catalog: Catalog) -> list[Point]:
    """ZeRO-3/FSDP at two GPU counts: throughput per GPU the larger run keeps (compute at the smaller run's pace)."""
    out = []
    for r in data_rows("sharded_runs.csv", "planner.data"):
        params, seq, base = float(r["params"]), int(r["seq"]), float(r["small_throughput"])

        def eff(gpus: int, mb: int, r: dict[str, str] = r, params: float = params, seq: int = seq,
                base: float = base) -> float:
            tokens = mb * seq
            compute_s = tokens / base if r["unit"] == "tokens/s/GPU" else 6 * params * tokens / (base * 1e12)
            per_node = int(r["gpus_per_node"])
            if gpus <= per_node:
                spec = catalog.gpus[r["gpu_key"]]
                link = links.collective_link(r["gpu_key"], str(spec.interconnect.among(gpus)), gpus)
                assert link is not None
                return _kept(compute_s, r["strategy"], 2 * params, gpus, link.bus_gbytes_s, link.hidden_share)
            net = links.network(float(r["inter_node_gbps"]), "rdma")  # RoCE/InfiniBand in every multi-node row
            return _kept(compute_s, r["strategy"], 2 * params, gpus, net.gbytes_s, net.hidden_share)

        pred = eff(int(r["big_gpus"]), int(r["big_micro_batch"])) / eff(int(r["small_gpus"]),
                                                                        int(r["small_micro_batch"]))
        regime = "one node, NVLink" if int(r["big_gpus"]) <= int(r["gpus_per_node"]) else "NVSwitch clusters, RDMA"
        out.append(Point(regime, r["run"], pred, float(r["big_throughput"]) / base, r["source"]))
    return out


def bandwidth_points(flops_per_token: float = 6.0) -> list[Point]:
    """ZeRO-3 at two bandwidths between nodes: throughput the slower network keeps (traffic exposed). The figures do
    not say how they count FLOPs: 6N per token (gpuplan's convention) or 8N (full recompute counted)."""
    out = []
    for r in data_rows("bandwidth_runs.csv", "planner.data"):
        params, tokens, gpus = float(r["params"]), int(r["tokens_per_gpu"]), int(r["gpus"])
        compute_s = flops_per_token * params * tokens / (float(r["fast_tflops"]) * 1e12)

        def eff(gbps: float, r: dict[str, str] = r, params: float = params, gpus: int = gpus,
                compute_s: float = compute_s) -> float:
            net = links.network(gbps, "rdma")  # InfiniBand links
            return _kept(compute_s, r["strategy"], 2 * params, gpus, net.gbytes_s, net.hidden_share)

        pred = eff(float(r["slow_gbps"])) / eff(float(r["fast_gbps"]))
        regime = "RDMA, traffic exposed" + ("" if flops_per_token == 6.0 else f" (read as {flops_per_token:g}N)")
        out.append(Point(regime, r["run"], pred, float(r["slow_tflops"]) / float(r["fast_tflops"]),
                         r["source"]))
    return out


def cluster_points() -> list[Point]:
    """Data-parallel BERT-Large on DGX clusters, each predicted with beta fitted on the others."""
    from planner.perf.cluster import calibration_points, loo_errors

    return [Point("data-parallel clusters (beta)", f"{p.system} {p.nodes} x {p.gpus_per_node}", pred,
                  p.scaling_efficiency, p.source) for p, pred, _ in loo_errors(calibration_points())]


def moe_points(catalog: Catalog) -> list[Point]:
    """Published MoE pretraining GPU-hours, each predicted with the MoE share fitted on the other MoE runs."""
    from planner.workload.estimate import (
        estimate_training,
        moe_utilization,
        published_runs,
        run_workload,
    )

    out = []
    for r in published_runs():
        if not (r["active_params"] and r["tokens"] and r["include"] == "yes"):
            continue
        w, n = run_workload(r)
        spec = catalog.gpus[r["gpu_key"]]
        factor, _ = moe_utilization(catalog, leave_out=r["run"])
        est = estimate_training(w, spec, n, spec.interconnect, catalog=catalog, moe_factor=factor)
        # GPU-hours, inverted so that "over" means optimistic as in the other regimes (fewer hours = faster)
        out.append(Point("mixtures of experts (GPU-hours)", r["run"], float(r["gpu_hours"]), float(est.gpu_hours),
                         r["source"]))
    return out


def all_points(catalog: Catalog) -> list[Point]:
    return (sharded_points(catalog) + bandwidth_points() + bandwidth_points(8.0) + cluster_points()
            + moe_points(catalog) + utilisation_points(catalog) + heldout_points(catalog))


def summary(points: list[Point]) -> dict[str, tuple[int, float, float]]:
    """regime -> (points, median |error|, worst |error|)."""
    by: dict[str, list[float]] = {}
    for p in points:
        by.setdefault(p.regime, []).append(abs(p.error))
    return {k: (len(v), statistics.median(v), max(v)) for k, v in by.items()}


def utilisation_points(catalog: Catalog) -> list[Point]:
    """Each keyed anchor of data/mfu.csv predicted by the utilisation model fitted on the others of its architecture
    (planner.workload.utilisation): hardware utilisation with the attention scores counted."""
    from planner.workload.utilisation import leave_one_out

    return [Point(f"utilisation (leave-one-out), {k.arch}", k.label, pred, k.utilization,
                  "data/mfu.csv (llm-foundry benchmark table)") for k, pred in leave_one_out(catalog)]


def heldout_prediction(r: dict[str, str], catalog: Catalog) -> tuple[float, str]:
    """(tokens/s per GPU gpuplan's estimate path predicts for a heldout_throughput.csv row, the layout it chose).

    The path of `gpuplan estimate --gpus N`: the least-memory layout that fits, the node shape `plan` would time it
    on, the layout choice's per-micro-batch traffic at the published micro-batch and global batch, and the
    utilisation keyed by that work. Goodput overhead is set to 0: the sources time steady training steps."""
    from planner.perf.links import collective_link
    from planner.plan.estimate_cluster import estimate_cluster
    from planner.plan.keyed_choice import choose_keyed
    from planner.plan.layout_choice import choose
    from planner.workload.estimate import estimate_training
    from planner.workload.inputs import workload_from_options
    from planner.workload.memory import layout, usable_vram
    from planner.workload.spec import Recompute, TrainingWorkload

    gpus, seq = int(r["gpus"]), int(r["seq"])
    mb = int(r["micro_batch"]) if r["micro_batch"] else None  # blank: the layout picks it, as for a user
    shape = {k: (float(r[k]) if k == "params" else int(r[k])) for k in ("params", "layers", "hidden", "heads", "vocab")
             if r[k]}
    model = None if r["model"] == "custom" else r["model"]
    w = workload_from_options(model=model, tokens=1e12, seq_len=seq, batch=mb, precision=r["precision"],
                              recompute=r["recompute"], overhead=0.0,
                              global_batch=float(r["global_batch"]) * seq, **shape)  # type: ignore[arg-type]
    assert isinstance(w, TrainingWorkload)
    spec = catalog.gpus[r["gpu_key"]]
    vram = usable_vram(spec)[0]
    lay, note = layout(w, vram, gpus), ""
    if lay is None:
        # gpuplan's memory count says the published recompute does not fit: predicted with the recompute it picks
        w, note = w.model_copy(update={"recompute": Recompute.AUTO}), f" ({r['recompute']} does not fit in gpuplan)"
        lay = layout(w, vram, gpus)
    if lay is None:
        return 0.0, "does not fit"
    est = estimate_training(w, spec, gpus, spec.interconnect, lay.recompute, catalog=catalog, micro_batch=mb)
    shape = estimate_cluster(spec, gpus, catalog)
    link = collective_link(spec.key, spec.interconnect.among(shape.per_node), shape.per_node)
    eff, name = 1.0, lay.describe()
    if link is not None:
        wl, ly = w, lay
        chosen, keyed = choose_keyed(
            lambda rc, m: estimate_training(wl, spec, gpus, spec.interconnect, rc, catalog=catalog, micro_batch=m),
            lambda rate: choose(wl, ly, vram, shape.per_node, shape.nodes, link, shape.gbps, rate, shape.fabric))
        if not isinstance(chosen, str):
            est = keyed
            eff, name = chosen.efficiency / float(est.assumptions["interconnect_factor"]), chosen.layout
    seconds = est.wall_hours * 3600 / eff
    assert w.tokens is not None
    return w.tokens / seconds / gpus, name + note


def measured_tokens_per_s(r: dict[str, str]) -> float:
    """A heldout_throughput.csv row's measurement in tokens/s per GPU. Megatron-LM's TFLOP/s count (Narayanan et al.
    2021, eq. 3) is 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)) FLOPs an iteration of B sequences: per token
    96*l*h^2*(1 + s/(6h) + V/(16*l*h))."""
    value = float(r["measured"])
    if r["unit"] == "tokens/s/GPU":
        return value
    assert r["unit"].startswith("TFLOP/s/GPU (Narayanan eq. 3)"), r["unit"]
    layers, h, s, v = int(r["layers"]), int(r["hidden"]), int(r["seq"]), int(r["vocab"])
    per_token = 96.0 * layers * h * h * (1 + s / (6 * h) + v / (16 * layers * h))
    return value * 1e12 / per_token


def heldout_points(catalog: Catalog) -> list[Point]:
    """Measured tokens/s per GPU of data/heldout_throughput.csv against gpuplan's prediction: no row was fitted on."""
    out = []
    for r in data_rows("heldout_throughput.csv", "planner.data"):
        pred, lay = heldout_prediction(r, catalog)
        out.append(Point(f"held out, {r['run'].split()[0]} ({r['gpu_key'].split('-')[0]} {r['precision']})",
                         f"{r['run']} [{lay}]", pred,
                         measured_tokens_per_s(r), r["source"]))
    return out
