"""Held-out error of the training physics per regime, for docs/performance.md (``python examples/physics_holdout.py``).

Each measured point is predicted by the model the planner uses, with the link physics of
``planner/data/link_physics.csv`` (bus bandwidth by topology, achievable share of line rate by fabric, hidden
share per link class, overlap slowdown). Those figures are sourced or estimated, never fitted to these points,
so every error here is out of sample; the two fitted figures (the cluster beta, the MoE share) are predicted
leave-one-out, each point with the figure fitted on the others.

Regimes: one node over NVLink; NVSwitch clusters over RDMA where traffic hides (sharded_runs.csv); RDMA where
traffic is exposed (bandwidth_runs.csv); data-parallel BERT clusters (multinode.csv, beta); mixtures of experts
(published_runs.csv, MoE share); TCP Ethernet (tcp_runs.csv): oumi's FSDP runs on GCP A100 nodes (32-50 Gbps TCP) are
predicted (:func:`tcp_points`); IBM's (200 Gbps TCP) lack their sequence length and give a bound instead
(:func:`tcp_bounds`: the compute per micro-batch the model needs to keep what the run kept). No measured pair ships for
PCIe boxes.
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
    from planner.plan.moe_share import moe_run_gpu_hours, moe_utilization
    from planner.workload.estimate import published_runs, run_workload

    out = []
    for r in published_runs():
        if not (r["active_params"] and r["tokens"] and r["include"] == "yes"):
            continue
        w, n = run_workload(r)
        spec = catalog.gpus[r["gpu_key"]]
        factor, _ = moe_utilization(catalog, leave_out=r["run"])
        est = moe_run_gpu_hours(w, spec, n, catalog, factor)
        # GPU-hours, inverted so that "over" means optimistic as in the other regimes (fewer hours = faster)
        out.append(Point("mixtures of experts (GPU-hours)", r["run"], float(r["gpu_hours"]), est,
                         r["source"]))
    return out


def tcp_points() -> list[Point]:
    """Sharded training across nodes over TCP Ethernet (tcp_runs.csv, use=predict): throughput per GPU the multi-node
    run keeps over one node, with compute per micro-batch at the one-node pace, the traffic the planner charges (ZeRO-3:
    3 collectives a micro-batch through each node's NIC; HSDP: one gradient all-reduce a step across nodes) at the TCP
    row's share of line rate and hidden share; at line_gbps and, where given, line_gbps_low (line rate uncertain)."""
    out = []
    for r in data_rows("tcp_runs.csv", "planner.data"):
        if r["use"] != "predict":
            continue
        params, nodes, per_node = float(r["params"]), int(r["nodes"]), int(r["gpus_per_node"])
        compute_s = int(r["micro_batch"]) * int(r["seq"]) / float(r["one_node_tokens_s_gpu"])
        if r["strategy"] == "hsdp":
            b_mb, b_step = comm.traffic("ddp", 2 * params, nodes)
        else:
            b_mb, b_step = comm.traffic(r["strategy"], 2 * params, per_node * nodes)
        for gbps in [float(g) for g in (r["line_gbps"], r["line_gbps_low"]) if g]:
            net = links.network(gbps, r["fabric"])
            nic = net.gbytes_s * 1e9
            pred = comm.efficiency(compute_s, b_mb / nic, b_step / nic, float(r["accumulation"] or 1),
                                   net.hidden_share, links.overlap_slowdown())
            out.append(Point("TCP Ethernet", f"{r['run']} @ {gbps:g} Gbps", pred, float(r["kept"]), r["source"]))
    return out


def flash_points(catalog: Catalog) -> list[Point]:
    """GPT-2 trained end to end with standard attention and with FlashAttention (data/flash_pairs.csv): how many times
    longer the standard run took, predicted as gpuplan's estimate with --no-flash over --flash (same stack, layout,
    micro-batch), without recompute as the runs trained."""
    from planner.plan.estimate_cluster import estimate_with_layout
    from planner.workload.inputs import workload_from_options

    out = []
    for r in data_rows("flash_pairs.csv", "planner.data"):
        hours = []
        for flash in (False, True):
            w = workload_from_options(params=float(r["params"]), layers=int(r["layers"]), hidden=int(r["hidden"]),
                                      heads=int(r["heads"]), vocab=int(r["vocab"]), tokens=1e10,
                                      seq_len=int(r["seq"]), batch=8, recompute="none", overhead=0.0,
                                      stack="megatron", flash=flash)
            est, _ = estimate_with_layout(w, catalog.gpus[r["gpu_key"]], int(r["gpus"]), catalog)
            hours.append(est.wall_hours)
        out.append(Point("standard vs flash attention (end to end)", r["run"], hours[0] / hours[1],
                         float(r["standard_days"]) / float(r["flash_days"]), r["source"]))
    return out


def all_points(catalog: Catalog) -> list[Point]:
    return (sharded_points(catalog) + bandwidth_points() + bandwidth_points(8.0) + tcp_points() + cluster_points()
            + moe_points(catalog) + utilisation_points(catalog) + heldout_points(catalog) + fp8_points(catalog)
            + flash_points(catalog))


def summary(points: list[Point]) -> dict[str, tuple[int, float, float]]:
    """regime -> (points, median |error|, worst |error|)."""
    by: dict[str, list[float]] = {}
    for p in points:
        by.setdefault(p.regime, []).append(abs(p.error))
    return {k: (len(v), statistics.median(v), max(v)) for k, v in by.items()}


@dataclass(frozen=True)
class Bound:
    """What a measured TCP run that lacks its sequence length says about the model: the compute per micro-batch (in
    seconds, and as a multiple of the traffic) the link physics would need to keep the measured share."""

    name: str
    measured: float
    traffic_s: float
    ratio: float
    source: str

    @property
    def compute_s(self) -> float:
        return self.ratio * self.traffic_s


def compute_over_traffic(kept: float, hidden: float, slowdown: float) -> float:
    """Compute over traffic per micro-batch (r = c/T) at which :func:`comm.efficiency` keeps ``kept``.

    Traffic partly exposed (T > hidden*c): kept = c / (c + T - hidden*c + slowdown*hidden*c), so
    r = kept / (1 - kept*(1 - hidden + slowdown*hidden)); fully hidden (T <= hidden*c): kept = c / (c + slowdown*T),
    so r = slowdown*kept / (1 - kept), which applies once r >= 1/hidden.
    """
    r = kept / (1.0 - kept * (1.0 - hidden + slowdown * hidden))
    return r if r < 1.0 / hidden else slowdown * kept / (1.0 - kept)


def tcp_bounds() -> list[Bound]:
    """ZeRO-3/FSDP across nodes over TCP Ethernet (tcp_runs.csv, use=bound): traffic per micro-batch at the TCP row's
    share of line rate, and the compute per micro-batch the model needs to keep what each run kept."""
    net_cls = links.link_classes()[("network", "ethernet")]
    out = []
    for r in data_rows("tcp_runs.csv", "planner.data"):
        if r["use"] != "bound":
            continue
        gpus = int(r["gpus_per_node"]) * int(r["nodes"])
        net = links.network(float(r["line_gbps"]), r["fabric"])
        per_mb, _ = comm.comm_seconds(r["strategy"], 2 * float(r["params"]), gpus, net.gbytes_s)
        kept = float(r["kept"])
        out.append(Bound(r["run"], kept, per_mb,
                         compute_over_traffic(kept, net_cls.hidden_share, links.overlap_slowdown()), r["source"]))
    return out


def utilisation_points(catalog: Catalog) -> list[Point]:
    """Each keyed anchor of data/mfu.csv predicted by the utilisation model fitted on the others of its architecture
    (planner.workload.utilisation): hardware utilisation with the attention scores counted."""
    from planner.workload.utilisation import leave_one_out

    return [Point(f"utilisation (leave-one-out), {k.arch}", k.label, pred, k.utilization,
                  "data/mfu.csv (llm-foundry benchmark table)") for k, pred in leave_one_out(catalog)]


def fsdp_x_tp(r: dict[str, str]) -> bool:
    """Whether a heldout_throughput.csv row ran FSDP x TP (its layout 'FSDP 32 x TP 8 ...', torchtitan's 2D layout):
    timed at its published tp with FSDP (ZeRO-3) over the replicas, not the distributed optimizer (ZeRO-1)."""
    import re

    return re.match(r"FSDP \d+ x TP \d+", r["layout"]) is not None


def _heldout_estimate(r: dict[str, str], catalog: Catalog, recompute: str, published: bool = True) -> tuple[float, str]:
    """(tokens/s per GPU, layout) of gpuplan's estimate path for a heldout_throughput.csv row at one recompute: at the
    run's published tensor/pipeline degrees (its tp, pp columns) where ``published`` and gpuplan's memory count fits
    them (FSDP x TP rows with FSDP over the replicas, :func:`fsdp_x_tp`), else at gpuplan's own layout choice (said in
    the layout text)."""
    from planner.plan.estimate_cluster import estimate_with_layout
    from planner.plan.moe_share import share
    from planner.workload.inputs import workload_from_options
    from planner.workload.spec import Recompute, Sharding, TrainingWorkload

    gpus, seq = int(r["gpus"]), int(r["seq"])
    mb = int(r["micro_batch"]) if r["micro_batch"] else None  # blank: the layout picks it, as for a user
    shape = {k: (float(r[k]) if k == "params" else int(r[k])) for k in ("params", "layers", "hidden", "heads", "vocab")
             if r[k]}
    model = None if r["model"] == "custom" else r["model"]
    w = workload_from_options(model=model, tokens=1e12, seq_len=seq, batch=mb, precision=r["precision"],
                              recompute=recompute, overhead=0.0, stack=r["stack"], flash=r["flash"] != "no",
                              optimizer=r["optimizer"] or None,
                              global_batch=float(r["global_batch"]) * seq, **shape)  # type: ignore[arg-type]
    assert isinstance(w, TrainingWorkload) and w.tokens is not None
    spec = catalog.gpus[r["gpu_key"]]
    if published and r["tp"]:
        from pricing.errors import InputError

        pinned = w.model_copy(update={"tensor_parallel": int(r["tp"]), "pipeline_parallel": int(r["pp"]),
                                      "context_parallel": int(r["cp"]) if r["cp"] else None,
                                      **({"sharding": Sharding.ZERO3} if fsdp_x_tp(r) else {})})
        try:
            est, scaling = estimate_with_layout(pinned, spec, gpus, catalog, moe_factor=share(w, catalog))
        except InputError:
            scaling = None  # the published split does not fit gpuplan's memory count at this recompute
        if scaling is not None:
            return pinned.tokens / (est.wall_hours * 3600) / gpus, str(scaling["layout"])  # type: ignore[operator]
        tps, lay = _heldout_estimate(r, catalog, recompute, published=False)
        return tps, f"{lay} (tp{r['tp']} pp{r['pp']} does not fit in gpuplan)"
    est, scaling = estimate_with_layout(w, spec, gpus, catalog, moe_factor=share(w, catalog))
    note = ""
    if scaling is None:
        # gpuplan's memory count says the published recompute does not fit: predicted with the recompute it picks
        w, note = w.model_copy(update={"recompute": Recompute.AUTO}), f" ({recompute} does not fit in gpuplan)"
        est, scaling = estimate_with_layout(w, spec, gpus, catalog, moe_factor=share(w, catalog))
    if scaling is None:
        return 0.0, "does not fit"
    return w.tokens / (est.wall_hours * 3600) / gpus, str(scaling["layout"]) + note


def heldout_prediction(r: dict[str, str], catalog: Catalog, published: bool = True) -> tuple[float, str]:
    """(tokens/s per GPU gpuplan's estimate path predicts for a heldout_throughput.csv row, the layout it chose).

    The path of `gpuplan estimate --gpus N` (:func:`planner.plan.estimate_cluster.estimate_with_layout`): the node
    shape `plan` would time it on, the layout search (data-parallel and tensor/pipeline) at the published
    micro-batch, recompute and global batch, and the utilisation keyed by that work. Where no layout fits with the
    published recompute in gpuplan's memory count, the recompute gpuplan picks. Goodput overhead is set to 0: the
    sources time steady training steps.

    Recompute 'partial:F' (torchtitan's selective AC, which checkpoints every second layer or recomputes every second
    matmul of a layer, and MaxText's custom remat that recomputes the MLP up-projections): a share F of the layers'
    forward matmul FLOPs runs twice, (6 + 2F)N FLOPs a token between none (6N) and full (8N). gpuplan has no such
    setting, and its 'selective' is Korthikanti's (attention scores only, ~6N), so such a row is timed as a share F of
    its work with full recompute and the rest without: seconds per token (1 - F) t_none + F t_full."""
    if not r["recompute"].startswith("partial:"):
        return _heldout_estimate(r, catalog, r["recompute"], published)
    share = float(r["recompute"].split(":")[1])
    (none_tps, none_lay), (full_tps, full_lay) = (_heldout_estimate(r, catalog, rc, published)
                                                  for rc in ("none", "full"))
    if not (none_tps and full_tps):
        return 0.0, "does not fit"
    return 1.0 / ((1.0 - share) / none_tps + share / full_tps), f"{share:g} of {full_lay}, rest {none_lay}"


def measured_tokens_per_s(r: dict[str, str]) -> float:
    """A heldout_throughput.csv row's measurement in tokens/s per GPU. Megatron-LM's TFLOP/s count (Narayanan et al.
    2021, eq. 3) is 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)) FLOPs an iteration of B sequences: per token
    96*l*h^2*(1 + s/(6h) + V/(16*l*h))."""
    value = float(r["measured"])
    if r["unit"] == "tokens/s/GPU":
        return value
    if r["unit"] == "tokens/s":  # the whole job's tokens per second (NVIDIA's dgxc-benchmarking tables)
        return value / int(r["gpus"])
    assert r["unit"].startswith("TFLOP/s/GPU (Narayanan eq. 3)"), r["unit"]
    layers, h, s, v = int(r["layers"]), int(r["hidden"]), int(r["seq"]), int(r["vocab"])
    per_token = 96.0 * layers * h * h * (1 + s / (6 * h) + v / (16 * layers * h))
    return value * 1e12 / per_token


def heldout_points(catalog: Catalog, published: bool = True) -> list[Point]:
    """Measured tokens/s per GPU of data/heldout_throughput.csv against gpuplan's prediction: no row was fitted on. Each
    run at its published tensor/pipeline degrees where gpuplan fits them (``published``), else at gpuplan's own
    layout choice."""
    out = []
    for r in data_rows("heldout_throughput.csv", "planner.data"):
        pred, lay = heldout_prediction(r, catalog, published)
        out.append(Point(f"held out, {r['run'].split()[0]} ({r['gpu_key'].split('-')[0]} {r['precision']})",
                         f"{r['run']} [{lay}]", pred,
                         measured_tokens_per_s(r), r["source"]))
    return out


def fp8_points(catalog: Catalog) -> list[Point]:
    """Each measured bf16/FP8 pair of data/fp8_pairs.csv: its FP8-over-bf16 speed-up predicted with the GEMM speed-up
    calibrated on the other pairs (planner.workload.fp8)."""
    from planner.workload.fp8 import leave_one_out

    return [Point("fp8 speed-up (leave-one-out)", f"{p.name} (g {g:.2f})", pred, p.ratio, p.source)
            for p, g, pred in leave_one_out(catalog)]
